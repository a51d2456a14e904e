#!/usr/bin/env bash
# The Python example: builds and installs the kwire package into bindings/python/.venv
# (`make python`: it needs build/kwire.wasm), then decodes examples/data. Run it from the
# repository root; it prints what `go run ./examples/go` prints.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x bindings/python/.venv/bin/python ] || bash bindings/python/ci-install.sh >&2
make --no-print-directory -s python >&2
export KWIRE_CACHE_DIR="${KWIRE_CACHE_DIR:-$PWD/build/python-cache}"
exec bindings/python/.venv/bin/python examples/python/example.py "$@"
