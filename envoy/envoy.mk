# kwire's proxy-wasm Kafka filter (included by the top-level Makefile, which defines GO and BUILD).
#
#   make envoy         build/kwire-envoy.wasm (GOOS=wasip1 reactor, proxy-wasm ABI 0.2.1), with its size,
#                      its SHA-256 and its version beside it
#   make envoy-test    the proxy-wasm host harness (conformance/hosts/proxywasm, wazero): the module's
#                      imports and exports against the spec, the filter through the harness against a
#                      fake broker and, with KWIRE_REQUIRE_BROKER=1, the end-to-end tests against a real
#                      Kafka broker with Go and Java clients
#   make envoy-bench   the harness proxy with the filter vs without it (consume, produce-no-rule,
#                      produce-enforce, request by request in turn; and the floor, a Go module that
#                      returns at once, on produce-no-rule's requests), a real Java consumer through both,
#                      the same comparison on V8 (a Node proxy, v8/proxy.mjs), and the module alone on
#                      wazero beside V8 (v8/callbacks.mjs)
#   make envoy-fuzz    the fuzz targets of the filter's data path, its policy and the module in the
#                      harness, FUZZTIME each (`make fuzz` runs them with every other target)

ENVOY_WASM    := $(BUILD)/kwire-envoy.wasm
ENVOY_GO_SRC  := $(shell find envoy codec internal -name '*.go' -not -name '*_test.go' 2>/dev/null) go.mod go.sum
ENVOY_HARNESS := conformance/hosts/proxywasm
# The module's size budget (4 MB): a build over it fails. What keeps it small: the filter
# reads messages with internal/transcode (no typed messages), is built with kwire_nocompress
# (records' decoders only: ours, and the standard library's inflate), and nothing it
# reaches calls fmt.
ENVOY_BUDGET  := 4000000
# The module's version (the project's, as the bindings carry it), written beside it with
# its SHA-256 (build/kwire-envoy.wasm.version, build/kwire-envoy.wasm.sha256).
ENVOY_VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' bindings/python/pyproject.toml)

.PHONY: envoy envoy-test envoy-bench envoy-fuzz

envoy: $(ENVOY_WASM)

$(ENVOY_WASM): $(ENVOY_GO_SRC)
	@mkdir -p $(BUILD)
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags='-s -w' -tags kwire_nocompress -o $@ ./envoy
	@ls -l $@ | awk '{printf "kwire-envoy.wasm: %d bytes (%.2f MiB), budget %d\n", $$5, $$5/1048576, $(ENVOY_BUDGET)}'
	@test $$(wc -c < $@) -le $(ENVOY_BUDGET) || { echo "kwire-envoy.wasm is over its size budget of $(ENVOY_BUDGET) bytes" >&2; rm -f $@; exit 1; }
	@cd $(BUILD) && sha256sum kwire-envoy.wasm > kwire-envoy.wasm.sha256 && cat kwire-envoy.wasm.sha256
	@echo "kwire-envoy $(ENVOY_VERSION) ($$(git rev-parse --short HEAD 2>/dev/null || echo unknown))" > $(BUILD)/kwire-envoy.wasm.version && cat $(BUILD)/kwire-envoy.wasm.version

envoy-test: $(ENVOY_WASM)
	cd $(ENVOY_HARNESS) && $(GO) vet ./... && KWIRE_REQUIRE_BROKER=1 $(GO) test -count=1 -timeout 20m ./...

envoy-bench: $(ENVOY_WASM)
	cd $(ENVOY_HARNESS) && KWIRE_BENCH=1 $(GO) test -count=1 -timeout 20m -run '^(TestProxyBench(Table|Java|V8)|TestModuleCallbacksV8)$$' -v .

envoy-fuzz:
	$(MAKE) --no-print-directory fuzz-go FUZZ_ONLY='^(envoy/|codec/policy/|$(ENVOY_HARNESS)/)'

BUILD_TARGETS += envoy
TEST_TARGETS  += envoy-test
BENCH_TARGETS += envoy-bench
