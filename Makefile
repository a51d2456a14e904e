# kwire — `make` builds every artifact and runs the examples; `make test` runs every test.
# Build outputs go to build/ (ignored by git).

GO        ?= go
BUILD     := build
SPEC_DIR  := $(BUILD)/spec
FUZZTIME  ?= 10m
# make fuzz-rate: FUZZRATE_TIME per target. FUZZ_ONLY: a regexp over folder/FuzzName that
# picks the targets of make fuzz and make fuzz-rate (all by default). FUZZ_MINIMIZE: how
# long a new input is minimized, in executions (internal/fuzzrate says why not a time).
FUZZRATE_TIME ?= 20s
FUZZ_ONLY     ?=
FUZZ_MINIMIZE ?= 2000x
# Every Go fuzz target of the repository, in every module, found by internal/fuzzrate.
FUZZ_RUN       = $(GO) run ./internal/fuzzrate -go '$(GO)' -minimize $(FUZZ_MINIMIZE) -only '$(FUZZ_ONLY)'
SPEC_RELEASES := $(shell awk '!/^\#/ && NF { print $$1 }' codec/spec.lock)

.DEFAULT_GOAL := all

.PHONY: all build test go-test fmt-check ports spec generate check-generated vectors bench bench-codec fuzz fuzz-go fuzz-rate clean

# Each area keeps its own targets beside its code. A fragment may add to
# BUILD_TARGETS (run by `make`), TEST_TARGETS (run by `make test` after the Go tests),
# BENCH_TARGETS (run by `make bench`) and FUZZ_TARGETS (run by `make fuzz`).
BUILD_TARGETS :=
TEST_TARGETS  :=
BENCH_TARGETS :=
FUZZ_TARGETS  :=
-include codec/records/records.mk
-include codec/kerr/kerr.mk
-include conformance/conformance.mk
-include abi/abi.mk
-include bindings/bindings.mk
-include examples/examples.mk
-include conformance/broker/broker.mk
-include conn/conn.mk
-include envoy/envoy.mk
-include cmd/kwire/kwire.mk
-include internal/jswasm/jswasm.mk

all: build $(BUILD_TARGETS)

# The whole module builds for linux and for both WebAssembly ports; programs that only a
# host can run (benchmarks reading getrusage, the broker command) say so with a build
# constraint and its reason.
build:
	$(GO) build ./...
	GOOS=wasip1 GOARCH=wasm $(GO) build ./...
	GOOS=js GOARCH=wasm $(GO) build ./...

# ports: make build's three builds, then go vet of the whole module, tests included, for
# GOOS=wasip1 and GOOS=js, and for GOOS=js with the kernels off (kwire_purego: every
# `_wasm.s` must carry the build constraint of its Go declarations) (part of `make test`).
ports: build
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet -tags kwire_purego ./...

# spec: fetch the pinned kafka-clients jars with Maven and extract their message descriptors.
spec:
	$(GO) run ./internal/gen/fetchspec -lock codec/spec.lock -out $(SPEC_DIR)

# generate: rewrite the generated Go code from the descriptors in build/spec.
# The ABI's shims, kwire.h's declarations and the bindings' ABI constants come from
# internal/abitable (internal/abitable/gen).
generate:
	$(GO) run ./internal/gen -lock codec/spec.lock -spec $(SPEC_DIR)
	$(GO) run ./internal/abitable/gen

# check-generated: fail when the committed generated code differs from what `make generate`
# writes. Fetches the spec first when build/spec is missing.
check-generated:
	@for r in $(SPEC_RELEASES); do [ -d $(SPEC_DIR)/$$r ] || { $(MAKE) --no-print-directory spec; break; }; done
	$(GO) run ./internal/gen -lock codec/spec.lock -spec $(SPEC_DIR) -check
	$(GO) run ./internal/abitable/gen -check

test: check-generated go-test ports $(TEST_TARGETS)

# The tests of conn, codec/session and conformance/broker start real Kafka brokers; under
# make they must run (KWIRE_REQUIRE_BROKER=1 turns a missing Java or jar into a failure).
go-test: fmt-check broker-deps
	$(GO) vet ./...
	KWIRE_REQUIRE_BROKER=1 $(GO) test -timeout 20m ./...
	cd codec/bench && $(GO) vet ./... && $(GO) test ./...

# fmt-check: every tracked Go file is gofmt-clean.
fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@echo "gofmt: clean"

bench: bench-codec $(BENCH_TARGETS)

# make fuzz: first the rate check (a target too slow to be worth fuzzing stops it), then
# every target for FUZZTIME.
fuzz: fuzz-rate fuzz-go $(FUZZ_TARGETS)

# kwire vs franz-go's kmsg on the same messages, side by side in one process.
bench-codec:
	cd codec/bench && $(GO) run ./cmd/kmsgtable

# fuzz-go: every `func Fuzz` of the repository, in every module (internal/fuzzrate finds
# them in the tracked _test.go files, so none can be left out), for FUZZTIME each, one at a
# time, on every core; it prints each target's executions per second. The fragments add to
# FUZZ_TARGETS the fuzzing that is not a Go fuzz target (the kernels' in Node).
# FuzzModuleData runs build/kwire-envoy.wasm.
fuzz-go: envoy
	$(FUZZ_RUN) -time $(FUZZTIME) -parallel 0 -check=false -v

# fuzz-rate: every Go fuzz target for FUZZRATE_TIME (20 s) on one worker (-parallel 1),
# with its executions per second: a target below 1,000 a second fails, or below the floor
# a `// fuzz-rate: N (reason)` comment directly above its func sets; so does any fuzz
# failure. It is part of make fuzz, not of make test: at 3 s a target, with warm build
# caches, the 36 targets took 2 min 31 s, and FuzzBothEngines had not finished its
# baseline (599 inputs) in those 3 s; at the 5 s that needs, the run passes the 3 minutes
# make test may spend on it, and a cold cache adds the instrumented builds (1 min 15 s for
# codec's alone). At 20 s a target it takes about 14 minutes.
fuzz-rate: envoy
	$(FUZZ_RUN) -time $(FUZZRATE_TIME) -parallel 1

clean:
	rm -rf $(BUILD)

