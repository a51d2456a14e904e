# kwire — `make` builds every artifact and runs the examples; `make test` runs every test.
# Build outputs go to build/ (ignored by git).

GO        ?= go
BUILD     := build
SPEC_DIR  := $(BUILD)/spec
FUZZTIME  ?= 10m
SPEC_RELEASES := $(shell awk '!/^\#/ && NF { print $$1 }' codec/spec.lock)

.DEFAULT_GOAL := all

.PHONY: all build test go-test fmt-check ports spec generate check-generated vectors bench bench-codec fuzz fuzz-codec clean

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

all: build $(BUILD_TARGETS)

# The whole module builds for linux and for both WebAssembly ports; programs that only a
# host can run (benchmarks reading getrusage, the broker command) say so with a build
# constraint and its reason.
build:
	$(GO) build ./...
	GOOS=wasip1 GOARCH=wasm $(GO) build ./...
	GOOS=js GOARCH=wasm $(GO) build ./...

# ports: make build's three builds, then go vet of the whole module, tests included, for
# GOOS=wasip1 and GOOS=js (part of `make test`).
ports: build
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./...

# spec: fetch the pinned kafka-clients jars with Maven and extract their message descriptors.
spec:
	$(GO) run ./codec/internal/gen/fetchspec -lock codec/spec.lock -out $(SPEC_DIR)

# generate: rewrite the generated Go code from the descriptors in build/spec.
generate:
	$(GO) run ./codec/internal/gen -lock codec/spec.lock -spec $(SPEC_DIR)

# check-generated: fail when the committed generated code differs from what `make generate`
# writes. Fetches the spec first when build/spec is missing.
check-generated:
	@for r in $(SPEC_RELEASES); do [ -d $(SPEC_DIR)/$$r ] || { $(MAKE) --no-print-directory spec; break; }; done
	$(GO) run ./codec/internal/gen -lock codec/spec.lock -spec $(SPEC_DIR) -check

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

fuzz: fuzz-codec $(FUZZ_TARGETS)

# kwire vs franz-go's kmsg on the same messages, side by side in one process.
bench-codec:
	cd codec/bench && $(GO) run ./cmd/kmsgtable

# Each fuzz target of the codec runs for FUZZTIME (one at a time: fuzzing uses every core).
fuzz-codec:
	$(GO) test ./codec/ -run '^$$' -fuzz '^FuzzDecodeRequestFrame$$' -fuzztime $(FUZZTIME)
	$(GO) test ./codec/ -run '^$$' -fuzz '^FuzzDecodeResponseFrame$$' -fuzztime $(FUZZTIME)
	$(GO) test ./codec/ -run '^$$' -fuzz '^FuzzUnmarshalJSON$$' -fuzztime $(FUZZTIME)
	$(GO) test ./codec/transcode/ -run '^$$' -fuzz '^FuzzBothEngines$$' -fuzztime $(FUZZTIME) -parallel 1
	$(GO) test ./codec/transcode/ -run '^$$' -fuzz '^FuzzDoc$$' -fuzztime $(FUZZTIME) -parallel 1
	$(GO) test ./codec/internal/zstd/ -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) -parallel 1 -fuzzminimizetime 5s
	$(GO) test ./codec/internal/zstd/ -run '^$$' -fuzz '^FuzzFrames$$' -fuzztime $(FUZZTIME) -parallel 1 -fuzzminimizetime 5s
	$(GO) test ./codec/internal/crc32c/ -run '^$$' -fuzz '^FuzzUpdate$$' -fuzztime $(FUZZTIME) -parallel 1 -fuzzminimizetime 5s
	$(GO) test ./codec/internal/inflate/ -run '^$$' -fuzz '^FuzzInflate$$' -fuzztime $(FUZZTIME) -parallel 1 -fuzzminimizetime 5s
	$(GO) test ./codec/internal/inflate/ -run '^$$' -fuzz '^FuzzGunzip$$' -fuzztime $(FUZZTIME) -parallel 1 -fuzzminimizetime 5s

clean:
	rm -rf $(BUILD)

