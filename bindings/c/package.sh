#!/usr/bin/env bash
# package.sh — lays out the C package: the header from capi/ (copied, never edited), the
# JSON reader, libkwire.a, libkwire.so and two pkg-config files.
#
#   bash bindings/c/package.sh <dir with libkwire.a and libkwire.so> <destination> [prefix]
#
# <destination> receives include/, lib/ and lib/pkgconfig/. Without [prefix] the .pc files
# point at their own location (${pcfiledir}), so the tree can be used where it lies or
# moved; with it (`make c-install`) they name that prefix.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
libs="$1"
dest="$2"
prefix="${3:-\${pcfiledir\}/../..}"

for f in "$libs/libkwire.a" "$libs/libkwire.so"; do
	[ -f "$f" ] || { echo "package.sh: $f missing (run 'make capi')" >&2; exit 1; }
done
header="$repo/capi/kwire.h"
major="$(sed -n 's/^#define KW_ABI_MAJOR \([0-9]*\).*/\1/p' "$header")"
minor="$(sed -n 's/^#define KW_ABI_MINOR \([0-9]*\).*/\1/p' "$header")"
[ -n "$major" ] && [ -n "$minor" ] || { echo "package.sh: no KW_ABI_MAJOR/MINOR in $header" >&2; exit 1; }

install -d "$dest/include" "$dest/lib/pkgconfig"
install -m 0644 "$header" "$repo/capi/kwire_constants.h" "$here/include/kwire_json.h" "$dest/include/"
install -m 0644 "$libs/libkwire.a" "$dest/lib/libkwire.a"
# The shared library under its SONAME (libkwire.so.<major>), with the usual link.
install -m 0755 "$libs/libkwire.so" "$dest/lib/libkwire.so.$major"
ln -sf "libkwire.so.$major" "$dest/lib/libkwire.so"
for pc in kwire kwire-static; do
	sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$major.$minor|" "$here/$pc.pc.in" > "$dest/lib/pkgconfig/$pc.pc"
done
echo "package.sh: kwire $major.$minor in $dest"
