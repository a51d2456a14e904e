#!/usr/bin/env bash
# Fetches and compiles the Java clients of the proxy-wasm end-to-end test
# (java/pom.xml: kafka-clients 4.4.0) into build/proxywasm-java, so that the test
# downloads nothing. Idempotent and quiet on success; needs Java 17 and Maven.
set -euo pipefail
cd "$(dirname "$0")"
mvn -q -f java/pom.xml compile >/dev/null
