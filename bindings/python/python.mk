# The Python binding (included by the top-level Makefile through bindings/bindings.mk).
#
#   make python         build the kwire package with build/kwire.wasm inside, install it in
#                       bindings/python/.venv and compile the module into the cache
#   make python-test    pytest (API, records, every conformance vector, frames) and mypy --strict
#   make python-bench   kwire vs kafka-python decoding the same 1000-record Fetch response
#
# The package ships $(BUILD)/kwire.wasm (abi/abi.mk's `wasm` rule builds it).
# bindings/python/ci-install.sh creates the venv (run by .ci/run; the targets below run it
# too when the venv is missing). Compiled wasm code is cached in build/python-cache.

PY_DIR     := bindings/python
PY_VENV    := $(PY_DIR)/.venv
PY         := $(PY_VENV)/bin/python
PY_STAMP   := $(BUILD)/python/installed
PY_CACHE   := $(abspath $(BUILD))/python-cache
PY_ENV     := KWIRE_CACHE_DIR=$(PY_CACHE)
PY_SOURCES := $(wildcard $(PY_DIR)/kwire/*.py) $(PY_DIR)/kwire/py.typed $(PY_DIR)/pyproject.toml $(PY_DIR)/setup.py

.PHONY: python python-test python-bench

PY_DEPS    := $(PY_VENV)/.requirements-installed
FLOCK      := $(shell command -v flock 2>/dev/null)

# ci-install.sh writes the stamp when it installs requirements-dev.txt.
$(PY_DEPS): $(PY_DIR)/requirements-dev.txt
	bash $(PY_DIR)/ci-install.sh
	@touch $@

# The package is built from a private copy of its sources (setuptools writes build/ and
# *.egg-info beside them) and installed under a lock, so two makes running at once in one
# checkout do not trip over each other.
$(PY_STAMP): $(BUILD)/kwire.wasm $(PY_DEPS) $(PY_SOURCES)
	@mkdir -p $(dir $@)
	@tmp=$$(mktemp -d $(abspath $(BUILD))/python/src.XXXXXX) && \
	cp -r $(PY_DIR)/pyproject.toml $(PY_DIR)/setup.py $(PY_DIR)/README.md $(PY_DIR)/kwire $$tmp/ && \
	echo "pip install $(PY_DIR) (with $(BUILD)/kwire.wasm) into $(PY_VENV)" && \
	KWIRE_WASM=$(abspath $(BUILD)/kwire.wasm) $(if $(FLOCK),$(FLOCK) $(BUILD)/python/.lock) $(PY) -m pip install -q \
		--disable-pip-version-check --no-build-isolation --no-deps --force-reinstall $$tmp; \
	rc=$$?; rm -rf $$tmp; exit $$rc
	$(PY_ENV) $(PY) -m kwire precompile
	@touch $@

python: $(PY_STAMP)

# -p no:cacheprovider: no .pytest_cache; the conftest fails a run that tests nothing.
python-test: $(PY_STAMP)
	cd $(PY_DIR) && $(PY_ENV) .venv/bin/pytest -p no:cacheprovider -q
	cd $(PY_DIR) && .venv/bin/mypy --strict --no-incremental --cache-dir=/dev/null kwire tests/typed_usage.py ../../examples/python/example.py

python-bench: $(PY_STAMP)
	$(PY_ENV) $(PY) $(PY_DIR)/bench/fetch_vs_kafka_python.py --breakdown

BUILD_TARGETS += python
TEST_TARGETS  += python-test
BENCH_TARGETS += python-bench
