#!/usr/bin/env bash
# Installs what the C package, its tests and the C example need: a C compiler with the C
# library headers, pkg-config, make and zlib's headers (Debian packages). Quick when they are present.
set -euo pipefail
need=()
command -v cc > /dev/null || need+=(gcc libc6-dev)
command -v pkg-config > /dev/null || need+=(pkg-config)
command -v make > /dev/null || need+=(make)
# zlib: the C tests decompress gzip batches with it, as a host with its own zlib does
[ -f /usr/include/zlib.h ] || need+=(zlib1g-dev)
if [ "${#need[@]}" -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update
	apt-get install -y --no-install-recommends "${need[@]}"
fi
echo "bindings/c: $(cc --version | awk "NR==1"); pkg-config $(pkg-config --version)"
