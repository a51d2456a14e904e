#!/usr/bin/env bash
# wheel_check.sh WHEEL WORKDIR GO: installs the kwire wheel into a fresh venv (offline:
# wasmtime comes from bindings/python/.venv/wheelhouse, which ci-install.sh fills) and
# runs the Python example from it, outside the source tree, with an empty compiled-code
# cache and then a warm one. Both runs must print exactly what the Go example prints.
# Prints "python-test-wheel: N passed, M failed".
set -euo pipefail
wheel=$(realpath "$1")
work=$2
go=${3:-go}
repo=$(cd "$(dirname "$0")/../../.." && pwd)
py_dir="$repo/bindings/python"

rm -rf "$work"
mkdir -p "$work"
work=$(realpath "$work")
passed=0
failed=0
check() { # name, command...: counts a check
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

"$py_dir/.venv/bin/python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check --no-input --no-index \
	--find-links "$py_dir/.venv/wheelhouse" "$wheel"

(cd "$repo" && "$go" run ./examples/go) > "$work/go.txt"

# The installed package is the one imported (not the source tree), and it carries its module.
where=$(cd "$work" && "$work/venv/bin/python" -c 'import kwire, os; print(os.path.dirname(kwire.__file__))')
check "kwire is imported from the venv ($where)" test "${where#"$work/venv/"}" != "$where"
check "the wheel ships kwire.wasm and py.typed" test -s "$where/kwire.wasm" -a -f "$where/py.typed"

# The example, from a directory outside the repository, first with an empty cache.
cp "$repo/examples/python/example.py" "$work/example.py"
run_example() { # cache dir, output file
	(cd "$work" && env -u KWIRE_WASM KWIRE_CACHE_DIR="$1" "$work/venv/bin/python" example.py "$repo/examples/data") > "$2"
}
same() { # expected, got: equal files, else the start of the diff
	diff -u "$1" "$2" > "$2.diff" && return 0
	awk 'NR <= 20' "$2.diff"
	return 1
}
check "example (empty cache) runs" run_example "$work/cache" "$work/cold.txt"
check "its output equals the Go example's" same "$work/go.txt" "$work/cold.txt"
check "the cache holds the compiled module and its digest" test -n "$(ls "$work/cache"/kwire-*.cwasm "$work/cache"/kwire-*.sha256 2>/dev/null)"
check "example (warm cache) prints the same" run_example "$work/cache" "$work/warm.txt"
check "warm output equals the Go example's" same "$work/go.txt" "$work/warm.txt"
# A corrupt entry is ignored and rewritten.
for f in "$work/cache"/kwire-*.cwasm; do printf 'garbage' > "$f"; done
check "example (corrupt cache entry) prints the same" run_example "$work/cache" "$work/corrupt.txt"
check "corrupt-cache output equals the Go example's" same "$work/go.txt" "$work/corrupt.txt"
check "the corrupt entry was rewritten" test "$(stat -c %s "$work/cache"/kwire-*.cwasm)" -gt 1000

# The wheel stays where make built it and the READMEs' install recipe takes it from.
check "the wheel is still at $1" test -s "$wheel"

echo "python-test-wheel: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
