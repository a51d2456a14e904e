#!/usr/bin/env bash
# run.sh — builds the C test suite twice through pkg-config, as a user would (statically
# with kwire-static.pc, dynamically with kwire.pc), runs both and prints the total as the
# last line: "N passed, N failed".
#
#   bash bindings/c/test/run.sh <package dir, e.g. build/c> <scratch dir>
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
pkg="$(cd "$1" && pwd)"
out="$2"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
export PKG_CONFIG_PATH="$pkg/lib/pkgconfig"
CC="${CC:-cc}"
CFLAGS="-std=c11 -O1 -g -Wall -Wextra -Werror"

total_pass=0
total_fail=0
for linkage in static shared; do
	if [ "$linkage" = static ]; then
		flags="$(pkg-config --cflags --libs kwire-static)"
	else
		flags="$(pkg-config --cflags --libs kwire) -Wl,-rpath,$(pkg-config --variable=libdir kwire)"
	fi
	bin="$out/kwire_test_$linkage"
	echo "== C tests, $linkage: $CC ... $flags"
	# shellcheck disable=SC2086
	# -lz: the tests decompress gzip with zlib, as a host with its own zlib does.
	if ! $CC $CFLAGS -o "$bin" "$here/kwire_test.c" $flags -lz; then
		echo "build failed ($linkage)"
		total_fail=$((total_fail + 1))
		continue
	fi
	"$bin" "$repo" "$linkage" | tee "$out/$linkage.log"
	last="$(tail -n 1 "$out/$linkage.log")"
	if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		total_pass=$((total_pass + BASH_REMATCH[1]))
		total_fail=$((total_fail + BASH_REMATCH[2]))
	else
		echo "the $linkage run ended without a result line (crashed?)"
		total_fail=$((total_fail + 1))
	fi
done
# The headers also compile as C++ (kwire.h and kwire_json.h declare extern "C").
if command -v "${CXX:-c++}" > /dev/null; then
	printf '#include "kwire.h"\n#include "kwire_json.h"\nint main() { kwj_value *v = kwj_parse("[1]", 3, nullptr, 0); int r = kwj_len(v) == 1 ? 0 : 1; kwj_free(v); return r; }\n' > "$out/cxx.cc"
	# shellcheck disable=SC2046
	if "${CXX:-c++}" -std=c++11 -pedantic -Wall -Wextra -Werror -o "$out/cxx" "$out/cxx.cc" $(pkg-config --cflags --libs kwire-static) && "$out/cxx"; then
		echo "c++: the headers compile and link as C++11"
		total_pass=$((total_pass + 1))
	else
		echo "FAIL c++: the headers as C++11"
		total_fail=$((total_fail + 1))
	fi
fi

# An install (`make c-install` with PREFIX): the .pc files name the prefix; a program
# built against it links and reports the header's ABI version.
inst="$out/install"
rm -rf "$inst"
bash "$here/../package.sh" "$pkg/lib" "$inst" "$inst" > /dev/null
cat > "$out/installed.c" <<'PROG'
#include <stdio.h>
#include "kwire.h"
int main(void) {
    int32_t v = kw_abi_version();
    printf("kwire %d.%d\n", v >> 16, v & 0xffff);
    return v == KW_ABI_VERSION ? 0 : 1;
}
PROG
want="kwire $(PKG_CONFIG_PATH="$inst/lib/pkgconfig" pkg-config --modversion kwire-static)"
# shellcheck disable=SC2046
if $CC $CFLAGS -o "$out/installed" "$out/installed.c" $(PKG_CONFIG_PATH="$inst/lib/pkgconfig" pkg-config --cflags --libs kwire-static) &&
	got="$("$out/installed")" && [ "$got" = "$want" ] &&
	grep -qx "prefix=$inst" "$inst/lib/pkgconfig/kwire.pc"; then
	echo "install: a program built against $inst prints '$got'"
	total_pass=$((total_pass + 1))
else
	echo "FAIL install: a program built against the installed package (want '$want')"
	total_fail=$((total_fail + 1))
fi

echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ] && [ "$total_pass" -gt 0 ]
