#!/usr/bin/env bash
# package_check.sh BUILD: the crate as `cargo package` makes it, and where build.rs finds
# libkwire (BUILD is the folder of `make capi`: libkwire.a, libkwire.so, kwire-static.pc).
#   - `cargo package --list` is exactly the expected list (code, build script, README:
#     no tests, no make fragments);
#   - `cargo package` builds the packaged crate (with KWIRE_LIB_DIR);
#   - the packaged crate, with no KWIRE_LIB_DIR and no pkg-config package, fails with the
#     message naming both (it is no checkout: nothing to build from);
#   - in the checkout, PKG_CONFIG_PATH=BUILD makes build.rs link BUILD's library, and with
#     neither it builds libkwire into OUT_DIR (under target/), not into the checkout.
# Prints "rust-package-check: N passed, M failed".
set -euo pipefail
build=$(realpath "$1")
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
cargo=${CARGO:-cargo}
passed=0
failed=0
check() { # name, command...
	local name=$1
	shift
	if "$@"; then
		passed=$((passed + 1))
		echo "ok: $name"
	else
		failed=$((failed + 1))
		echo "FAILED: $name"
	fi
}
# A clean environment for build.rs: no library named, no pkg-config package found
# (call in a subshell).
bare() {
	unset KWIRE_LIB_DIR KWIRE_NO_BUILD
	export PKG_CONFIG_PATH=/nonexistent PKG_CONFIG_LIBDIR=/nonexistent
}
# The folder build.rs told cargo to link from (its build-script-executed message).
linked_dir() { # cargo arguments...
	"$cargo" check --offline --locked --message-format=json "$@" 2> "$work/stderr" |
		grep '"reason":"build-script-executed"' | grep '"package_id":"[^"]*kwire' |
		sed -n 's/.*"linked_paths":\["native=\([^"]*\)".*/\1/p' | tail -n 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

want='.cargo_vcs_info.json
Cargo.lock
Cargo.toml
Cargo.toml.orig
README.md
build.rs
src/abi.rs
src/constants.rs
src/error.rs
src/ffi.rs
src/json.rs
src/lib.rs
src/records.rs
src/table.rs'
# --allow-dirty: the checkout being tested usually has changes.
"$cargo" package --list --allow-dirty --offline --locked 2> /dev/null > "$work/list"
check "cargo package --list is the code, build.rs and README" diff -u <(echo "$want") "$work/list"

check "cargo package builds the packaged crate (KWIRE_LIB_DIR=$build)" \
	env KWIRE_LIB_DIR="$build" "$cargo" package --allow-dirty --offline --locked --quiet
packaged=$CARGO_TARGET_DIR/package/kwire-$(sed -n 's/^version = "\(.*\)"/\1/p;T;q' Cargo.toml)
refused() {
	! (bare && "$cargo" check --offline --quiet --manifest-path "$packaged/Cargo.toml") 2> "$work/refused" &&
		grep -qE 'libkwire not found: set KWIRE_LIB_DIR to a folder holding libkwire.a, or let pkg-config find kwire-static >= 1\.[0-9]+' "$work/refused" ||
		{ tail -n 20 "$work/refused"; return 1; }
}
check "the packaged crate with neither KWIRE_LIB_DIR nor pkg-config fails, naming both" refused

via_pkg_config() {
	local d
	d=$(bare && export PKG_CONFIG_PATH="$build" && unset PKG_CONFIG_LIBDIR && linked_dir)
	[ "$d" = "$build" ] || { echo "linked from '$d', want $build"; tail -n 20 "$work/stderr"; return 1; }
}
check "PKG_CONFIG_PATH=$build: build.rs links that library (kwire-static)" via_pkg_config
via_pkg_config_dynamic() {
	local d
	d=$(bare && export PKG_CONFIG_PATH="$build" && unset PKG_CONFIG_LIBDIR && linked_dir --features dynamic)
	[ "$d" = "$build" ] || { echo "linked from '$d', want $build"; tail -n 20 "$work/stderr"; return 1; }
}
check "PKG_CONFIG_PATH=$build with feature dynamic: the same folder (kwire)" via_pkg_config_dynamic
in_out_dir() {
	local d target
	target=$(realpath "$CARGO_TARGET_DIR")
	d=$(bare && linked_dir)
	case "$d" in
	"$target"/*/build/kwire-*/out/libkwire) ;;
	*) echo "linked from '$d', want a folder of OUT_DIR under $target"; tail -n 20 "$work/stderr"; return 1 ;;
	esac
	[ -s "$d/libkwire.a" ] || { echo "no libkwire.a in $d"; return 1; }
	grep -q 'building libkwire.a from .* into OUT_DIR' "$work/stderr" || { echo "no warning says so"; return 1; }
}
check "with neither, build.rs builds libkwire.a into OUT_DIR (with a warning)" in_out_dir
no_build() {
	! (bare && KWIRE_NO_BUILD=1 "$cargo" check --offline --locked --quiet) 2> "$work/nobuild" &&
		grep -q 'KWIRE_NO_BUILD is set' "$work/nobuild"
}
check "KWIRE_NO_BUILD=1 fails instead of building" no_build

echo "rust-package-check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
