#!/usr/bin/env bash
# soak.sh: run each GOOS=js WebAssembly test binary many times under Node, both directly
# (node wasm_exec_node.js BINARY, from the package's folder) and through
# `go test -exec=go_js_wasm_exec -count=1`, and fail on any run that does not exit 0
# with PASS as its last line. Called by `make wasm-node-soak` (internal/jswasm/jswasm.mk
# says why).
#
#   soak.sh OUTDIR
#
# Environment: GO (go), KWIRE_SOAK_N (runs per binary and way, 20),
# KWIRE_KERNEL_FUZZTIME (how long each in-wasm kernel fuzz test runs, 2s), NODE (node),
# KWIRE_SOAK_ONLY (an extended regexp: only the binaries whose names match),
# KWIRE_SOAK_JOBS (how many binaries are soaked at once, 1; each run of a binary is
# single-threaded in Go's js/wasm port, so the number of cores is the useful most).
# The logs of failed runs stay in OUTDIR; the last line reads
#   wasm-node-soak: records direct 20/20 ok, records exec 20/20 ok, ...
set -u
out=${1:?usage: soak.sh OUTDIR}
GO=${GO:-go}
NODE=${NODE:-node}
n=${KWIRE_SOAK_N:-20}
fuzztime=${KWIRE_KERNEL_FUZZTIME:-2s}
only=${KWIRE_SOAK_ONLY:-}
jobs=${KWIRE_SOAK_JOBS:-1}
wasmdir=$("$GO" env GOROOT)/lib/wasm
mkdir -p "$out/bin"
out=$(cd "$out" && pwd)
# go_js_wasm_exec runs the node on PATH: that is $NODE here too.
ln -sf "$(command -v "$NODE")" "$out/bin/node" || exit 1
echo "wasm-node-soak: $("$NODE" --version), $("$GO" version | cut -d' ' -f3), $n runs per binary and way, $jobs at once"

# name package tags test-args: the binaries. The kernels' fuzz tests (-run KernelFuzz)
# run as binaries of their own, for KWIRE_KERNEL_FUZZTIME each.
binaries=(
	"records ./codec/records - -"
	"records-purego ./codec/records kwire_purego -"
	"transcode ./internal/transcode - -"
	"transcode-purego ./internal/transcode kwire_purego -"
	"crc32c ./internal/crc32c - -"
	"crc32c-purego ./internal/crc32c kwire_purego -"
	"inflate ./internal/inflate - -"
	"inflate-purego ./internal/inflate kwire_purego -"
	"zstd ./internal/zstd - -"
	"zstd-purego ./internal/zstd kwire_purego -"
	"records-kernelfuzz ./codec/records - KernelFuzz"
	"crc32c-kernelfuzz ./internal/crc32c - KernelFuzz"
	"inflate-kernelfuzz ./internal/inflate - KernelFuzz"
	"zstd-kernelfuzz ./internal/zstd - KernelFuzz"
)

# tally NAME WAY OKCOUNT REASONS...: one entry of the summary, kept in OUTDIR/NAME.tally
# (the binaries may be soaked in parallel) and printed as it is made.
tally() {
	local name=$1 way=$2 ok=$3
	shift 3
	local s="$name $way $ok/$n ok"
	if [ $# -gt 0 ]; then
		s="$s ($(printf '%s\n' "$@" | sort | uniq -c | awk '{c=$1; $1=""; printf "%s%s x%d", (NR>1 ? ", " : ""), substr($0, 2), c}'))"
	fi
	echo "$s" >>"$out/$name.tally"
	echo "wasm-node-soak: $s"
}

# reason RC LOG: why a run failed: the signal that ended Node, when there was one.
reason() {
	local sig
	if [ "$1" -gt 128 ] && sig=$(kill -l $(($1 - 128)) 2>/dev/null); then
		echo "exit $1 (SIG$sig)"
	elif sig=$(grep -o 'signal: [a-z /]*' "$2" | head -n 1) && [ -n "$sig" ]; then
		echo "$sig"
	else
		echo "exit $1"
	fi
}

# soak NAME PKG TAGS RUN: build one binary and run it n times each way.
soak() {
	local name=$1 pkg=$2 tags=$3 run=$4 tagflag runflag testrun bin ok codes i log rc
	tagflag=()
	[ "$tags" != - ] && tagflag=(-tags "$tags")
	runflag=() testrun=()
	[ "$run" != - ] && runflag=(-run "$run") testrun=(-test.run="$run")
	bin=$out/$name.wasm
	if ! GOOS=js GOARCH=wasm "$GO" test "${tagflag[@]}" -c -o "$bin" "$pkg" >"$out/$name-build.log" 2>&1; then
		cat "$out/$name-build.log"
		tally "$name" build 0 "build failed"
		return
	fi
	rm -f "$out/$name-build.log"

	# Directly under Node, as go_js_wasm_exec runs it but without its flags.
	ok=0 codes=()
	for i in $(seq 1 "$n"); do
		log=$out/$name-direct-$i.log
		(cd "$pkg" && KWIRE_KERNEL_FUZZTIME=$fuzztime exec "$NODE" "$wasmdir/wasm_exec_node.js" "$bin" -test.v "${testrun[@]}") >"$log" 2>&1
		rc=$?
		if [ $rc -eq 0 ] && [ "$(tail -n 1 "$log")" = PASS ]; then
			ok=$((ok + 1))
			rm -f "$log"
		else
			codes+=("$(reason $rc "$log")")
			echo "wasm-node-soak: $name direct run $i: $(reason $rc "$log"), log $log"
		fi
	done
	tally "$name" direct "$ok" "${codes[@]}"

	# Through go test, with Go's own exec wrapper.
	ok=0 codes=()
	for i in $(seq 1 "$n"); do
		log=$out/$name-exec-$i.log
		PATH=$out/bin:$PATH GOOS=js GOARCH=wasm KWIRE_KERNEL_FUZZTIME=$fuzztime "$GO" test -count=1 -v "${tagflag[@]}" "${runflag[@]}" \
			-exec="$wasmdir/go_js_wasm_exec" "$pkg" >"$log" 2>&1
		rc=$?
		if [ $rc -eq 0 ] && tail -n 1 "$log" | grep -q '^ok '; then
			ok=$((ok + 1))
			rm -f "$log"
		else
			codes+=("$(reason $rc "$log")")
			echo "wasm-node-soak: $name exec run $i: $(reason $rc "$log"), log $log"
		fi
	done
	tally "$name" exec "$ok" "${codes[@]}"
	rm -f "$bin"
}

# The selected binaries, dealt round-robin to the streams; each stream soaks its
# binaries one after another.
selected=()
for b in "${binaries[@]}"; do
	read -r name _ <<<"$b"
	if [ -z "$only" ] || grep -Eq -- "$only" <<<"$name"; then selected+=("$b"); fi
done
if [ ${#selected[@]} -eq 0 ]; then
	echo "wasm-node-soak: no binary's name matches KWIRE_SOAK_ONLY=$only" >&2
	exit 1
fi
rm -f "$out"/*.tally
for ((j = 0; j < jobs; j++)); do
	(
		for ((k = j; k < ${#selected[@]}; k += jobs)); do
			read -r name pkg tags run <<<"${selected[k]}"
			soak "$name" "$pkg" "$tags" "$run"
		done
	) &
done
wait

# The summary in the list's order; any entry short of n/n ok fails the soak.
summary=""
failed=0
for b in "${selected[@]}"; do
	read -r name _ <<<"$b"
	while IFS= read -r s; do
		summary="${summary:+$summary, }$s"
		[[ $s == *" $n/$n ok" ]] || failed=1
	done <"$out/$name.tally"
	rm -f "$out/$name.tally"
done
echo "wasm-node-soak: $summary"
exit $failed
