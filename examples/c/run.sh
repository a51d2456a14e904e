#!/usr/bin/env bash
# Builds the C package (make c) and the example, statically through pkg-config, then runs
# it. Run from the repository root; prints only the example's lines on stdout.
set -euo pipefail
make -s c >&2
out=build/examples/c
mkdir -p "$out"
export PKG_CONFIG_PATH="$PWD/build/c/lib/pkgconfig"
# shellcheck disable=SC2046
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -o "$out/example" examples/c/main.c $(pkg-config --cflags --libs kwire-static)
"$out/example" examples/data
