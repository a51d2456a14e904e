#!/usr/bin/env bash
# Fetches the Kafka broker jars the connection tests run (build/kafka/<release>/lib).
# Idempotent and quiet on success; needs Java 17 and Maven.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s --no-print-directory broker-deps >/dev/null
