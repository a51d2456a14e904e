#!/usr/bin/env bash
# The JavaScript example (Node >= 20): decodes examples/data's frames with bindings/js.
# Run from the repository root; builds build/kwire.wasm and the package's copy first.
set -euo pipefail
make -s --no-print-directory js >&2
exec node examples/js/main.js "$@"
