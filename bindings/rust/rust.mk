# bindings/rust — the kwire crate (included through bindings/bindings.mk).
#
#   make rust        cargo build --release of the crate (links build/libkwire.a)
#   make rust-test   cargo test (static link: unit, API, int64, every conformance vector,
#                    frames with their records in one table, doc tests), then the API
#                    tests again linked against libkwire.so, then the package check
#                    (tests/package_check.sh: cargo package's file list, the packaged
#                    crate building, and where build.rs finds libkwire)
#
# Cargo's output stays in bindings/rust/target (git-ignored). build.rs is told where the
# library is (KWIRE_LIB_DIR); it never builds into the checkout.

CARGO      ?= cargo
RUST_CARGO := cd bindings/rust && CARGO_TARGET_DIR=target KWIRE_LIB_DIR=$(abspath $(BUILD)) $(CARGO)

.PHONY: rust rust-test

rust: $(BUILD)/libkwire.a
	$(RUST_CARGO) build --release --locked

rust-test: $(BUILD)/libkwire.a $(BUILD)/libkwire.so $(BUILD)/kwire.pc $(BUILD)/kwire-static.pc
	$(RUST_CARGO) test --locked
	$(RUST_CARGO) test --locked --features dynamic --test api
	CARGO="$(CARGO)" CARGO_TARGET_DIR=$(abspath bindings/rust/target) bash bindings/rust/tests/package_check.sh $(BUILD)

BUILD_TARGETS += rust
TEST_TARGETS  += rust-test
