#!/usr/bin/env bash
# Installs what the Python binding needs into bindings/python/.venv: a virtualenv with
# pip, wasmtime, pytest, mypy, numpy (the optional column arrays are tested with it),
# kafka-python with its compression libraries and aiokafka (the benchmark's peers). It
# also keeps the wasmtime wheel in .venv/wheelhouse, from which the wheel test installs
# the package into a fresh venv offline. Idempotent: quick when everything is there.
set -euo pipefail
cd "$(dirname "$0")"

PY=${PYTHON:-python3}
if ! command -v "$PY" >/dev/null 2>&1 || ! "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1; then
	echo "ci-install (python): installing python3 and python3-venv"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv python3-pip
	PY=python3
fi

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import sys' >/dev/null 2>&1; then
	echo "ci-install (python): creating bindings/python/.venv with $("$PY" --version 2>&1)"
	rm -rf .venv
	"$PY" -m venv .venv
fi

stamp=.venv/.requirements-installed
if ! cmp -s requirements-dev.txt "$stamp"; then
	echo "ci-install (python): pip install -r requirements-dev.txt"
	.venv/bin/python -m pip install -q --disable-pip-version-check --no-input -r requirements-dev.txt
	cp requirements-dev.txt "$stamp"
fi
# The wasmtime wheel the venv has, for the fresh-venv test of the kwire wheel.
wt=$(.venv/bin/python -c 'from importlib.metadata import version; print(version("wasmtime"))')
if ! ls .venv/wheelhouse/wasmtime-"$wt"-*.whl >/dev/null 2>&1; then
	echo "ci-install (python): pip download wasmtime==$wt into .venv/wheelhouse"
	.venv/bin/python -m pip download -q --disable-pip-version-check --no-input --no-deps --only-binary=:all: \
		-d .venv/wheelhouse "wasmtime==$wt"
fi
.venv/bin/python -m pip list --disable-pip-version-check 2>/dev/null | grep -i -E '^(wasmtime|pytest|mypy|numpy|kafka-python|aiokafka) ' | tr -s ' ' | sed 's/^/ci-install (python): /'
