#!/usr/bin/env bash
# Installs what the kwire command's tests need: Debian's tcpdump (to capture real
# traffic on the loopback interface) and tshark (Wireshark's Kafka dissector, the
# reference the capture tests compare with). Safe to run again: it installs only what
# is missing, and never asks a question.
set -euo pipefail

need=()
command -v tcpdump >/dev/null 2>&1 || need+=(tcpdump)
command -v tshark >/dev/null 2>&1 || need+=(tshark)
if [ ${#need[@]} -eq 0 ]; then
	echo "cmd/kwire: tcpdump and tshark present"
	exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || { echo "cmd/kwire: need root or sudo to install ${need[*]}" >&2; exit 1; }
	sudo=(sudo -n)
fi
export DEBIAN_FRONTEND=noninteractive
# tshark's package asks whether non-root users may capture; answer it beforehand.
echo "wireshark-common wireshark-common/install-setuid boolean false" | "${sudo[@]}" debconf-set-selections 2>/dev/null || true
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${need[@]}"
command -v tcpdump >/dev/null && command -v tshark >/dev/null
echo "cmd/kwire: installed ${need[*]}"
