# The GOOS=js WebAssembly test binaries under Node, many times (included by the top-level
# Makefile, which defines GO and BUILD).
#
#   make wasm-node-soak   each js/wasm test binary (codec/records, internal/transcode,
#                         internal/crc32c, internal/inflate, internal/zstd, each also with kwire_purego, and the
#                         kernels' in-wasm fuzz tests, -run KernelFuzz, for
#                         KWIRE_KERNEL_FUZZTIME each, 2s by default) run WASM_SOAK_N times
#                         (20 by default) directly under Node and WASM_SOAK_N times through
#                         `go test -exec` with Go's go_js_wasm_exec; any run that does not exit
#                         0 with PASS fails it, its log kept in build/wasm-node-soak/. It
#                         ends with a line such as `wasm-node-soak: records direct 20/20 ok,
#                         records exec 20/20 ok, ...`. NODE=path runs another Node (both ways),
#                         WASM_SOAK_ONLY=regexp a subset of the binaries (by name),
#                         WASM_SOAK_JOBS=N how many binaries are soaked at once (2).
#
# Why: "node exits 139 after PASS" was reported for these binaries (records run directly,
# 2 of 7 transcode runs). It did not reproduce here (Node 20.20.2: 40 direct runs of
# records and transcode, 20 more of transcode with go_js_wasm_exec's --stack-size or a
# pipe, none failed), so nothing in how the tests run was changed for it; this target is
# how to look again. Again with Node 20.20.2 and go1.26.8, at 20 runs each way: records,
# transcode, crc32c and both kernel fuzz binaries, 200 runs, none failed. It is not part
# of `make test`: those 200 runs took an hour in three streams on two cores shared with
# other builds (a run of the records binary takes 30 s alone, minutes under load), and a
# short version would not find a rare crash.

WASM_SOAK_N    ?= 20
WASM_SOAK_ONLY ?=
WASM_SOAK_JOBS ?= 2

.PHONY: wasm-node-soak

wasm-node-soak:
	GO='$(GO)' NODE='$(or $(NODE),node)' KWIRE_SOAK_N=$(WASM_SOAK_N) KWIRE_SOAK_ONLY='$(WASM_SOAK_ONLY)' KWIRE_SOAK_JOBS=$(WASM_SOAK_JOBS) \
		bash internal/jswasm/soak.sh $(BUILD)/wasm-node-soak
