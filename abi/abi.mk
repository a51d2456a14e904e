# The flat ABI (included by the top-level Makefile, which defines GO and BUILD).
#
#   make wasm            build/kwire.wasm (GOOS=wasip1 reactor, //go:wasmexport shims in wasm/)
#   make capi            build/libkwire.so, build/libkwire.a, build/kwire.pc, build/include/kwire.h
#   make abi-test        every ABI test below (also part of `make test`)
#     abi-header-check   capi/kwire.h compiles with -Wall -Wextra -Werror as C11 and as C++
#     abi-test-wazero    kwire.wasm in wazero: imports, every vector, frames, records, misuse,
#                        garbage, 10^6 decode/free cycles with flat memory
#     abi-test-wasmtime  kwire.wasm in wasmtime-go: every vector, frames, records, misuse
#     abi-test-c         libkwire from C: every vector, misuse, 8 threads, static link
#   make abi-bench       the wasm table: call overhead, decode/encode throughput in wazero and
#                        wasmtime against native Go, module size, compile and instantiate times
#
# The wazero and wasmtime-go hosts are Go modules of their own (conformance/hosts/*), so
# the library's go.mod carries neither; they use the repository through a replace.

ABI_WASM     := $(BUILD)/kwire.wasm
ABI_SO       := $(BUILD)/libkwire.so
ABI_PC_STATIC := $(BUILD)/kwire-static.pc
ABI_A        := $(BUILD)/libkwire.a
ABI_PC       := $(BUILD)/kwire.pc
ABI_H        := $(BUILD)/include/kwire.h
ABI_CTEST    := $(BUILD)/capi-test
ABI_GO_SRC   := $(shell find abi codec internal wasm capi -name '*.go' -not -name '*_test.go' 2>/dev/null) go.mod go.sum
ABI_CC       ?= gcc
ABI_CXX      ?= g++
ABI_CFLAGS   ?= -std=c11 -O2 -Wall -Wextra -Werror
ABI_WAZERO   := conformance/hosts/wazero
ABI_WASMTIME := conformance/hosts/wasmtime
# Version of the library in kwire.pc: the ABI version of kwire.h. The shared library's
# SONAME carries the major version (libkwire.so.1); libkwire.so links to it.
ABI_MAJOR     = $(shell sed -n 's/^\#define KW_ABI_MAJOR \([0-9]*\)/\1/p' capi/kwire.h)
ABI_VERSION   = $(ABI_MAJOR).$(shell sed -n 's/^\#define KW_ABI_MINOR \([0-9]*\)/\1/p' capi/kwire.h)
ABI_SONAME    = libkwire.so.$(ABI_MAJOR)

.PHONY: wasm capi abi-test abi-header-check abi-link-check abi-test-wazero abi-test-wasmtime abi-test-c abi-bench

wasm: $(ABI_WASM)

# The module's size budget: 4 MB as built, 1.1 MB after gzip -9 (what a browser or a
# package download carries); a build over either fails.
ABI_WASM_BUDGET    := 4000000
ABI_WASM_GZ_BUDGET := 1100000

$(ABI_WASM): $(ABI_GO_SRC)
	@mkdir -p $(BUILD)
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags='-s -w' -o $@ ./wasm
	@raw=$$(wc -c < $@); gz=$$(gzip -9 -c $@ | wc -c); \
		echo "kwire.wasm: $$raw bytes, $$gz after gzip -9 (budgets $(ABI_WASM_BUDGET) and $(ABI_WASM_GZ_BUDGET))"; \
		if [ $$raw -gt $(ABI_WASM_BUDGET) ] || [ $$gz -gt $(ABI_WASM_GZ_BUDGET) ]; then \
			echo "kwire.wasm is over its size budget" >&2; rm -f $@; exit 1; fi

capi: $(ABI_SO) $(ABI_A) $(ABI_PC) $(ABI_PC_STATIC) $(ABI_H)

# cgo also writes a header of its own next to each library; kwire.h is the ABI, so the
# generated one is dropped (each build writes into its own folder, so `make -j` is safe).
$(ABI_SO): $(ABI_GO_SRC)
	@mkdir -p $(BUILD)/capi-so
	$(GO) build -buildmode=c-shared -trimpath -ldflags='-extldflags=-Wl,-soname,$(ABI_SONAME)' -o $(BUILD)/capi-so/libkwire.so ./capi
	mv $(BUILD)/capi-so/libkwire.so $(BUILD)/$(ABI_SONAME) && rm -rf $(BUILD)/capi-so
	ln -sf $(ABI_SONAME) $@

$(ABI_A): $(ABI_GO_SRC)
	@mkdir -p $(BUILD)/capi-a
	$(GO) build -buildmode=c-archive -trimpath -o $(BUILD)/capi-a/libkwire.a ./capi
	mv $(BUILD)/capi-a/libkwire.a $@ && rm -rf $(BUILD)/capi-a

# build/include holds every header of the C package: the ABI, the generated constants and
# the JSON reader, so that PKG_CONFIG_PATH=build compiles what bindings/c/README.md shows.
$(ABI_H): capi/kwire.h capi/kwire_constants.h bindings/c/include/kwire_json.h
	@mkdir -p $(dir $@)
	cp capi/kwire.h capi/kwire_constants.h bindings/c/include/kwire_json.h $(dir $@)

# pkg-config file for the libraries in build/, un-installed: it names build/ by its
# absolute path and records it as the run path, so a program linked through it starts
# without LD_LIBRARY_PATH (an installed package, build/c or `make c-install`, is relocatable).
$(ABI_PC): capi/kwire.h abi/abi.mk
	@mkdir -p $(BUILD)
	@printf '%s\n' 'libdir=$(abspath $(BUILD))' 'includedir=$${libdir}/include' '' \
		'Name: kwire' 'Description: Kafka wire-protocol codec, flat C ABI (un-installed, in its build folder)' 'Version: $(ABI_VERSION)' \
		'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -lkwire' 'Libs.private: -lpthread' 'Cflags: -I$${includedir}' > $@
	@echo "wrote $@"

# kwire.pc's -lkwire makes the linker take libkwire.so when both libraries sit in one
# folder, even with --static; kwire-static.pc names the archive itself.
$(ABI_PC_STATIC): capi/kwire.h
	@mkdir -p $(BUILD)
	@printf '%s\n' 'libdir=$${pcfiledir}' 'includedir=$${pcfiledir}/include' '' \
		'Name: kwire-static' 'Description: Kafka wire-protocol codec, flat C ABI (static library)' 'Version: $(ABI_VERSION)' \
		'Libs: $${libdir}/libkwire.a -lpthread' 'Cflags: -I$${includedir}' > $@
	@echo "wrote $@"

abi-header-check:
	@mkdir -p $(ABI_CTEST)
	$(ABI_CC) -std=c11 -pedantic -Wall -Wextra -Werror -Icapi -c capi/test/header_check.c -o $(ABI_CTEST)/header_check_c.o
	$(ABI_CXX) -x c++ -std=c++11 -pedantic -Wall -Wextra -Werror -Icapi -c capi/test/header_check.c -o $(ABI_CTEST)/header_check_cxx.o
	@echo "kwire.h: clean as C11 and C++11 (-Wall -Wextra -Werror -pedantic)"

abi-test-wazero: $(ABI_WASM)
	cd $(ABI_WAZERO) && $(GO) test -count=1 -timeout 20m -v .

abi-test-wasmtime: $(ABI_WASM)
	cd $(ABI_WASMTIME) && $(GO) test -count=1 -timeout 20m -v .

ABI_CTESTS := conformance misuse threads policy rules

$(ABI_CTEST)/%: capi/test/%.c capi/test/common.h capi/test/check.h capi/test/minijson.h capi/kwire.h $(ABI_SO)
	@mkdir -p $(ABI_CTEST)
	$(ABI_CC) $(ABI_CFLAGS) -Icapi -Icapi/test $< -L$(BUILD) -lkwire -lpthread -Wl,-rpath,'$$ORIGIN/..' -o $@

# The misuse test once more, linked statically through kwire-static.pc (libkwire.so sits
# in the same folder; the test checks below that the program does not need it).
$(ABI_CTEST)/misuse-static: capi/test/misuse.c capi/test/common.h capi/test/check.h capi/test/minijson.h $(ABI_A) $(ABI_SO) $(ABI_PC_STATIC) $(ABI_H)
	@mkdir -p $(ABI_CTEST)
	$(ABI_CC) $(ABI_CFLAGS) $$(PKG_CONFIG_PATH=$(BUILD) pkg-config --cflags kwire-static) -Icapi/test $< -o $@.tmp \
		$$(PKG_CONFIG_PATH=$(BUILD) pkg-config --libs kwire-static)
	@if readelf -d $@.tmp | grep -q 'libkwire'; then echo "misuse-static links libkwire dynamically"; exit 1; fi
	mv $@.tmp $@

abi-test-c: $(addprefix $(ABI_CTEST)/,$(ABI_CTESTS)) $(ABI_CTEST)/misuse-static
	$(ABI_CTEST)/conformance conformance/vectors
	$(ABI_CTEST)/misuse
	$(ABI_CTEST)/misuse-static > $(ABI_CTEST)/misuse-static.log; tail -n 1 $(ABI_CTEST)/misuse-static.log
	@readelf -d $(BUILD)/$(ABI_SONAME) | grep -q 'SONAME.*\[$(ABI_SONAME)\]' && echo "$(ABI_SONAME): SONAME $(ABI_SONAME)"
	$(ABI_CTEST)/threads conformance/vectors/kafka-clients-4.4.0.jsonl 3
	$(ABI_CTEST)/policy
	$(ABI_CTEST)/rules

# The library links the transcoder, not the typed codec's generated methods: none of
# their decode or encode methods may be in libkwire (the wasm build links the same
# abi package), except APIVersions', which the session's negotiation uses. The
# transcoder's interpreter must be there, so the check can fail.
abi-link-check: $(ABI_SO)
	@syms=$$($(GO) tool nm $(BUILD)/$(ABI_SONAME)); \
	n=$$(printf '%s\n' "$$syms" | grep -E 'kwire/codec\.\(\*[A-Za-z0-9]+\)\.(decode|encode)$$' | grep -vc 'codec\.(\*APIVersions'); \
	t=$$(printf '%s\n' "$$syms" | grep -c 'internal/transcode\.(\*decoder)\.structJSON'); \
	if [ "$$n" != 0 ] || [ "$$t" = 0 ]; then echo "libkwire: $$n generated codec methods, $$t transcoder interpreters linked"; exit 1; fi; \
	echo "libkwire: no generated per-message code linked (the transcoder's interpreter is)"

abi-test: abi-header-check abi-link-check abi-test-c abi-test-wazero abi-test-wasmtime

abi-bench: $(ABI_WASM)
	cd $(ABI_WASMTIME) && KWIRE_BENCH=1 $(GO) test -count=1 -timeout 30m -run '^TestWasmBenchTable$$' -v .

BUILD_TARGETS += wasm capi
TEST_TARGETS  += abi-header-check abi-link-check abi-test-c abi-test-wazero abi-test-wasmtime
BENCH_TARGETS += abi-bench
