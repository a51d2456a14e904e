#!/usr/bin/env bash
# Installs what the kwire crate, its tests and the Rust example need: a Rust toolchain
# (rustup's, else Debian's) and the crates of both lock files, fetched into cargo's cache.
# Linking needs a C toolchain, which bindings/c/ci-install.sh installs. Quick when done.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v cargo > /dev/null && [ -x "$HOME/.cargo/bin/cargo" ]; then
	export PATH="$HOME/.cargo/bin:$PATH"
	echo "bindings/rust: cargo is in ~/.cargo/bin, which must be on the PATH of make"
fi
if ! command -v cargo > /dev/null; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update
	apt-get install -y --no-install-recommends cargo rustc
fi
cargo fetch --locked --manifest-path Cargo.toml
cargo fetch --locked --manifest-path ../../examples/rust/Cargo.toml
echo "bindings/rust: $(cargo --version); crates fetched"
