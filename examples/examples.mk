# Examples: each language prints the decoded sample frames; all must match Go's output.

EXAMPLE_LANGS := $(patsubst examples/%/run.sh,%,$(wildcard examples/*/run.sh))

.PHONY: examples

examples:
	@mkdir -p $(BUILD)/examples
	$(GO) run ./examples/go > $(BUILD)/examples/go.txt
	@cat $(BUILD)/examples/go.txt
	@for l in $(EXAMPLE_LANGS); do \
		echo "== example: $$l"; \
		bash examples/$$l/run.sh > $(BUILD)/examples/$$l.txt || { echo "example $$l failed"; exit 1; }; \
		diff -u $(BUILD)/examples/go.txt $(BUILD)/examples/$$l.txt || { echo "example $$l prints something else than the Go example"; exit 1; }; \
		echo "$$l: same $$(wc -l < $(BUILD)/examples/$$l.txt) lines as Go"; \
	done

# Examples that talk to a real broker (started and stopped by each example) run when Java
# is there; fragments add their targets to BROKER_EXAMPLES.
BROKER_EXAMPLES += broker-examples

.PHONY: examples-broker
examples-broker:
	@if command -v java >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory $(BROKER_EXAMPLES); \
	else \
		echo "examples: no java, so the broker examples ($(BROKER_EXAMPLES)) do not run"; \
	fi

examples: examples-broker

BUILD_TARGETS += examples

# readme-test: every code block of these READMEs compiles or runs as written (the rule,
# and the marker for blocks that need a broker, are in internal/readmecheck/main.go).
# Rust blocks run as the crate's doc tests (rust-test). Each binding's install recipe runs
# in a new folder outside the checkout, offline; the root README must list exactly those
# recipes, written the same (-recipes).
README_SNIPPETS := codec/README.md conn/README.md bindings/js/README.md bindings/python/README.md \
                   bindings/c/README.md bindings/rust/README.md examples/README.md

.PHONY: readme-test
readme-test: capi js python
	KWIRE_CACHE_DIR=$(abspath $(BUILD))/python-cache $(GO) run ./internal/readmecheck -build $(BUILD) -recipes README.md $(README_SNIPPETS)

TEST_TARGETS += readme-test
