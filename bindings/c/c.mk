# bindings/c — the C package (included through bindings/bindings.mk).
#
#   make c           build/c/: include/kwire.h (capi/kwire.h, copied), include/kwire_json.h,
#                    lib/libkwire.a, lib/libkwire.so, lib/pkgconfig/kwire.pc and
#                    kwire-static.pc (relocatable: they find the tree from their own path)
#   make c-test      the C test suite, built through pkg-config twice (static and shared)
#   make c-install   installs the package under $(DESTDIR)$(PREFIX) (PREFIX=/usr/local)
#
# The libraries come from the ABI's `capi` rules (abi/abi.mk).

C_PKG     := $(BUILD)/c
C_STAMP   := $(C_PKG)/.package
C_SOURCES := capi/kwire.h capi/kwire_constants.h bindings/c/include/kwire_json.h bindings/c/kwire.pc.in \
             bindings/c/kwire-static.pc.in bindings/c/package.sh
PREFIX    ?= /usr/local

.PHONY: c c-test c-install

c: $(C_STAMP)

$(C_STAMP): $(BUILD)/libkwire.a $(BUILD)/libkwire.so $(C_SOURCES)
	bash bindings/c/package.sh $(BUILD) $(C_PKG)
	@touch $@

c-test: $(C_STAMP)
	bash bindings/c/test/run.sh $(C_PKG) $(BUILD)/c-test

c-install: $(BUILD)/libkwire.a $(BUILD)/libkwire.so
	bash bindings/c/package.sh $(BUILD) $(DESTDIR)$(PREFIX) $(PREFIX)

BUILD_TARGETS += c
TEST_TARGETS  += c-test
