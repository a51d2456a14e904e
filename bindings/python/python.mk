# The Python binding (included by the top-level Makefile through bindings/bindings.mk).
#
#   make python         build the wheel $(BUILD)/python/dist/kwire-<version>-py3-none-any.whl
#                       (kwire.wasm inside), install it into bindings/python/.venv and compile
#                       the module into the cache
#   make python-test    pytest (API, records, columns, decode_fetch/decode_produce, every
#                       conformance vector, frames), mypy --strict, and the wheel installed
#                       into a fresh venv running the example (python-test-wheel)
#   make python-bench   kwire vs kafka-python and aiokafka's C record reader on the same Fetch
#                       responses, the module call alone against native Go, the 48 MB
#                       response against native Go, and the start-up times
#   make python-bench-profile   cProfile of kwire's Python side and, where perf works, a
#                       sampling of the module's code (wasmtime's perfmap profiler)
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
PY_SOURCES := $(wildcard $(PY_DIR)/kwire/*.py $(PY_DIR)/kwire/*.pyi) $(PY_DIR)/kwire/py.typed $(PY_DIR)/pyproject.toml $(PY_DIR)/setup.py $(PY_DIR)/README.md
PY_PKG_VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' $(PY_DIR)/pyproject.toml)
PY_WHEEL   := $(BUILD)/python/dist/kwire-$(PY_PKG_VERSION)-py3-none-any.whl

.PHONY: python python-test python-test-unit python-test-wheel python-bench python-bench-profile

PY_DEPS    := $(PY_VENV)/.requirements-installed
FLOCK      := $(shell command -v flock 2>/dev/null)

# ci-install.sh writes the stamp when it installs requirements-dev.txt.
$(PY_DEPS): $(PY_DIR)/requirements-dev.txt $(PY_DIR)/ci-install.sh
	bash $(PY_DIR)/ci-install.sh
	@touch $@

# The wheel is built from a private copy of the sources (setuptools writes build/ and
# *.egg-info beside them) with the venv's setuptools, offline (no build isolation), under
# a lock, so two makes running at once in one checkout do not trip over each other.
$(PY_WHEEL): $(BUILD)/kwire.wasm $(PY_DEPS) $(PY_SOURCES)
	@mkdir -p $(dir $@)
	@tmp=$$(mktemp -d $(abspath $(BUILD))/python/src.XXXXXX) && \
	cp -r $(PY_DIR)/pyproject.toml $(PY_DIR)/setup.py $(PY_DIR)/README.md $(PY_DIR)/kwire $$tmp/ && \
	rm -rf $$tmp/kwire/__pycache__ $$tmp/kwire/kwire.wasm && \
	echo "pip wheel $(PY_DIR) (with $(BUILD)/kwire.wasm) -> $@" && \
	KWIRE_WASM=$(abspath $(BUILD)/kwire.wasm) $(if $(FLOCK),$(FLOCK) $(BUILD)/python/.lock) $(PY) -m pip wheel -q \
		--disable-pip-version-check --no-build-isolation --no-deps -w $(abspath $(dir $@)) $$tmp; \
	rc=$$?; rm -rf $$tmp; exit $$rc
	@$(PY) -c 'import sys, zipfile; n = zipfile.ZipFile(sys.argv[1]).namelist(); \
		missing = [f for f in ("kwire/kwire.wasm", "kwire/py.typed", "kwire/__init__.py") if f not in n]; \
		sys.exit("wheel lacks " + ", ".join(missing) if missing else 0)' $@

$(PY_STAMP): $(PY_WHEEL)
	$(if $(FLOCK),$(FLOCK) $(BUILD)/python/.lock) $(PY) -m pip install -q --disable-pip-version-check --no-deps --force-reinstall $(PY_WHEEL)
	$(PY_ENV) $(PY) -m kwire precompile
	@touch $@

python: $(PY_STAMP)

# -p no:cacheprovider: no .pytest_cache; the conftest fails a run that tests nothing.
python-test-unit: $(PY_STAMP)
	cd $(PY_DIR) && $(PY_ENV) .venv/bin/pytest -p no:cacheprovider -q
	cd $(PY_DIR) && .venv/bin/mypy --strict --no-incremental --cache-dir=/dev/null kwire tests/typed_usage.py ../../examples/python/example.py

# The wheel in a fresh venv (offline: wasmtime from the wheelhouse ci-install.sh fills),
# then the example run from it must print what the Go example prints.
python-test-wheel: $(PY_WHEEL)
	bash $(PY_DIR)/tests/wheel_check.sh $(PY_WHEEL) $(BUILD)/python/wheel-check "$(GO)"

python-test: python-test-unit python-test-wheel

python-bench: $(PY_STAMP)
	$(PY_ENV) $(PY) $(PY_DIR)/bench/fetch_vs_kafka_python.py --go "$(GO)"
	$(PY_ENV) $(PY) $(PY_DIR)/bench/at_scale.py --go "$(GO)"
	$(PY) $(PY_DIR)/bench/startup.py

python-bench-profile: $(PY_STAMP)
	$(PY_ENV) $(PY) $(PY_DIR)/bench/fetch_vs_kafka_python.py --profile --go "$(GO)"

BUILD_TARGETS += python
TEST_TARGETS  += python-test
BENCH_TARGETS += python-bench

# Sessions (kwire/session.py) against a real broker: tests/test_session_broker.py starts one
# with conformance/broker/cmd/kwire-broker, so python-test-unit needs the broker's jars first
# and fails rather than skips when Java or the jars are missing. The session tests and the
# broker example are type-checked too (python-test-session-types).
#   make python-broker-example   examples/python/broker_example.py: connect to a launched
#                                broker, produce three records and fetch them back
.PHONY: python-broker-example python-test-session-types
python-test-unit: broker-deps
python-test-unit: export KWIRE_REQUIRE_BROKER := 1
python-test-unit: export GO := $(GO)
python-test: python-test-session-types

python-test-session-types: $(PY_STAMP)
	cd $(PY_DIR) && .venv/bin/mypy --strict --no-incremental --cache-dir=/dev/null tests/test_session.py tests/test_session_broker.py tests/test_session_broker_392.py tests/test_session_sasl.py tests/test_session_reauth_fake.py ../../examples/python/broker_example.py

python-broker-example: $(PY_STAMP) broker-deps
	GO="$(GO)" $(PY_ENV) $(PY) examples/python/broker_example.py

# make examples runs it when Java is there (examples/examples.mk).
BROKER_EXAMPLES += python-broker-example
