# bindings/rust — the kwire crate (included through bindings/bindings.mk).
#
#   make rust        cargo build --release of the crate (links build/libkwire.a)
#   make rust-test   cargo test (static link: unit, API, int64, every conformance vector,
#                    frames with their records in one table, doc tests), then the API
#                    tests again linked against libkwire.so
#
# Cargo's output stays in bindings/rust/target (git-ignored).

CARGO      ?= cargo
RUST_CARGO := cd bindings/rust && CARGO_TARGET_DIR=target $(CARGO)

.PHONY: rust rust-test

rust: $(BUILD)/libkwire.a
	$(RUST_CARGO) build --release --locked

rust-test: $(BUILD)/libkwire.a $(BUILD)/libkwire.so
	$(RUST_CARGO) test --locked
	$(RUST_CARGO) test --locked --features dynamic --test api

BUILD_TARGETS += rust
TEST_TARGETS  += rust-test
