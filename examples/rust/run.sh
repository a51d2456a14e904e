#!/usr/bin/env bash
# Builds libkwire (make capi) and the Rust example over the kwire crate, then runs it.
# Run from the repository root; prints only the example's lines on stdout. Cargo's
# output goes to the crate's own target folder (bindings/rust/target).
set -euo pipefail
make -s capi >&2
export KWIRE_LIB_DIR="$PWD/build" # where build.rs finds libkwire
export CARGO_TARGET_DIR="$PWD/bindings/rust/target"
cargo build --quiet --release --manifest-path examples/rust/Cargo.toml >&2
"$CARGO_TARGET_DIR/release/kwire-example" examples/data
