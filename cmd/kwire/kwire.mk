# The kwire command (included by the top-level Makefile). Its own Go module
# (cmd/kwire/go.mod): it depends on gopacket and the proxy-wasm host module (wazero), and its
# tests on franz-go.
#
#   make kwire          build/kwire
#   make kwire-example  kwire pcap --summary on the committed capture examples/data/sample.pcap (part of `make`)
#   make kwire-test     vet and the tests: unit tests, and the capture tests, in which tcpdump records
#                       Java and franz-go clients talking to a real 4.4.0 broker and tshark reads the
#                       same capture (part of `make test`; needs cmd/kwire/ci-install.sh's tcpdump and tshark)
#   make kwire-install-test     go install github.com/kwire/kwire/cmd/kwire@latest as a user would after a
#                               release, from a module proxy made of this tree (internal/modproxy: the
#                               library, the proxy-wasm host module and the command): no workspace, no
#                               replace; then the installed kwire runs (part of `make test`)
#   make kwire-sample   make examples/data/sample.pcap again: launcher, tcpdump, franz-go clients
#   make kwire-bench    MB/s of kwire pcap on one core beside tshark -Y kafka -T json, peak RSS (part of `make bench`)
#   make kwire-fuzz     the capture reader and the line writer under fuzzing, FUZZTIME each (`make fuzz`
#                       runs them with every other target)
#   make kwire-inspector        bindings/js/kwire-inspect.wasm: the capture reader for the browser
#                               inspector (bindings/js/inspector.html), GOOS=wasip1 c-shared (part of `make`)
#   make kwire-inspector-test   the inspector in Debian's headless Chromium on the committed capture,
#                               against the native command; screenshot build/js/inspector.png (part of `make test`)

KWIRE_DIR    := cmd/kwire
KWIRE_BIN    := $(BUILD)/kwire
KWIRE_SAMPLE := examples/data/sample.pcap

.PHONY: kwire kwire-example kwire-test kwire-install-test kwire-deps kwire-sample kwire-bench kwire-fuzz kwire-inspector kwire-inspector-test

# Go 1.26 randomizes the heap's base address (GOEXPERIMENT randomizedheapbase64, on by
# default), and with it about 1 start in 20 of any Go program fails with "fatal error: out
# of memory" under a 1 GB address-space limit (ulimit -v 1000000), before main runs: the
# runtime's reservations sit close to that limit and a random base sometimes needs one
# more arena. People run capture readers under such limits, so the command is built
# without it (a program with no C code of its own gains little from it). cmd/kwire/README.md
# gives the same setting for go install; TestPcapHostileUnderMemoryLimit builds it so.
KWIRE_GOEXPERIMENT := norandomizedheapbase64

kwire:
	@mkdir -p $(BUILD)
	cd $(KWIRE_DIR) && GOEXPERIMENT=$(KWIRE_GOEXPERIMENT) $(GO) build -trimpath -o $(CURDIR)/$(KWIRE_BIN) .

kwire-example: kwire
	$(KWIRE_BIN) pcap --summary $(KWIRE_SAMPLE)

kwire-deps:
	@command -v tcpdump >/dev/null 2>&1 && command -v tshark >/dev/null 2>&1 || bash $(KWIRE_DIR)/ci-install.sh

# The kwire envoy tests run build/kwire-envoy.wasm (ENVOY_WASM, envoy/envoy.mk).
kwire-test: kwire-deps broker-deps $(ENVOY_WASM)
	cd $(KWIRE_DIR) && $(GO) vet ./... && KWIRE_REQUIRE_BROKER=1 $(GO) test -count=1 -timeout 15m ./...

# The proxy's kwire modules come first; the other modules come from the local module
# cache's download directory when they are there, else from the configured GOPROXY. A
# module cache of its own keeps the release version from mixing with earlier runs, and
# GODEBUG=goindex=0 keeps the go command from reading the files of a module version from
# its index in the build cache, made by an earlier run from another state of the tree
# (the same module path, version and module cache directory each time).
KWIRE_INSTALL := $(BUILD)/kwire-install
kwire-install-test: $(ENVOY_WASM)
	rm -rf $(KWIRE_INSTALL) && mkdir -p $(KWIRE_INSTALL)
	cd $(KWIRE_DIR) && $(GO) run ./internal/modproxy -repo $(CURDIR) -version v0.1.0 -out $(CURDIR)/$(KWIRE_INSTALL)/proxy
	cd $(KWIRE_INSTALL) && env GOWORK=off GODEBUG=goindex=0 GOFLAGS=-modcacherw GOMODCACHE=$(CURDIR)/$(KWIRE_INSTALL)/modcache \
		GOPROXY=file://$(CURDIR)/$(KWIRE_INSTALL)/proxy,file://$$($(GO) env GOMODCACHE)/cache/download,$$($(GO) env GOPROXY) \
		GONOSUMDB=github.com/kwire GOBIN=$(CURDIR)/$(KWIRE_INSTALL)/bin \
		$(GO) install github.com/kwire/kwire/cmd/kwire@latest
	$(KWIRE_INSTALL)/bin/kwire apis > $(KWIRE_INSTALL)/apis.txt
	grep -q '^ *0  Produce ' $(KWIRE_INSTALL)/apis.txt
	$(KWIRE_INSTALL)/bin/kwire pcap --summary $(KWIRE_SAMPLE) > $(KWIRE_INSTALL)/summary.txt
	grep -q '^Produce (0) ' $(KWIRE_INSTALL)/summary.txt
	$(KWIRE_INSTALL)/bin/kwire envoy check --wasm $(ENVOY_WASM) examples/envoy/envoy.yaml > $(KWIRE_INSTALL)/envoy-check.txt
	grep -q ': accepted$$' $(KWIRE_INSTALL)/envoy-check.txt
	rm -rf $(KWIRE_INSTALL)/modcache
	@echo "kwire-install-test: go install github.com/kwire/kwire/cmd/kwire@latest from $(KWIRE_INSTALL)/proxy: kwire apis, kwire pcap and kwire envoy check ran"

kwire-sample: broker-deps kwire-deps
	cd $(KWIRE_DIR) && $(GO) run ./internal/samplecapture -out $(CURDIR)/$(KWIRE_SAMPLE)

kwire-bench: kwire kwire-deps broker-deps
	cd $(KWIRE_DIR) && $(GO) run ./internal/bench -kwire $(CURDIR)/$(KWIRE_BIN) -dir $(CURDIR)/$(BUILD)/kwire-bench

kwire-fuzz:
	$(MAKE) --no-print-directory fuzz-go FUZZ_ONLY='^$(KWIRE_DIR)/'

kwire-inspector:
	cd $(KWIRE_DIR) && GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags='-s -w' \
		-o $(CURDIR)/$(JS_DIR)/kwire-inspect.wasm ./internal/inspectwasm

kwire-inspector-test: kwire kwire-inspector js js-deps
	cd $(JS_DIR) && $(NODE) test/browser/inspector.js $(CURDIR)/$(KWIRE_BIN)

BUILD_TARGETS += kwire kwire-example kwire-inspector
TEST_TARGETS  += kwire-test kwire-install-test kwire-inspector-test
BENCH_TARGETS += kwire-bench
