# Record batches, compression and the message view (codec/records).
#
#   make records-java     kwire-built batches checked by Kafka's reader (compressed by the
#                         libraries, as native builds do, and by kwire's own encoders, as
#                         the WebAssembly builds do), and the committed Java vectors
#                         checked against what kafka-clients writes now (part of `make test`)
#   make records-ownenc-broker
#                         batches compressed by kwire's own encoders (tag kwire_ownenc)
#                         produced to a real 4.4.0 broker and fetched back (part of
#                         `make test`)
#   make records-js-test  the package's tests, and those of the packages with WebAssembly
#                         kernels (record scan, CRC-32C, inflate, zstd), compiled to
#                         GOOS=js/wasm and run in Node, with and without the kernels
#                         (part of `make test`; `make wasm-node-soak` runs these binaries
#                         many times, internal/jswasm/jswasm.mk)
#   make records-nocompress-test
#                         the package's tests built with the tag kwire_nocompress (no
#                         compressors: decoding must work fully, encoding must refuse), and
#                         a check that such a wasm build links no compression library, and
#                         that kwire.wasm links none either (its encoders are kwire's own)
#                         (part of `make test`)
#   make records-vectors  rewrite conformance/vectors/records from kafka-clients
#   make records-fuzz     every record fuzz target for $(FUZZTIME) each, one at a time: the kernels'
#                         in Node (records-kernel-fuzz, part of `make fuzz`), then the Go fuzz
#                         targets of codec/records and of kwire's own encoders (`make fuzz` runs
#                         those with every other target)
#   make records-bench    the batch benchmark table

RECORDS_MVN     ?= mvn -q -B -Dstyle.color=never -f conformance/reference/records/pom.xml
RECORDS_VECTORS := conformance/vectors/records/kafka-clients-4.4.0.jsonl
# The Go fuzz targets of records-fuzz: the package's, and the encoders' differential ones
# (encode, then the reference library decodes), as a FUZZ_ONLY regexp.
RECORDS_FUZZ    := ^codec/records/|^internal/(lz4enc|deflate|recordscan)/|^internal/zstd/FuzzEncode

.PHONY: records-ownenc-broker records-java records-js-test records-nocompress-test records-vectors records-fuzz records-kernel-fuzz records-bench

TEST_TARGETS  += records-java records-ownenc-broker records-js-test records-nocompress-test
BENCH_TARGETS += records-bench
FUZZ_TARGETS  += records-kernel-fuzz

vectors: records-vectors

records-vectors:
	$(RECORDS_MVN) compile exec:java -Dexec.args="generate $(RECORDS_VECTORS)"

records-java:
	@mkdir -p $(BUILD)
	$(GO) run ./codec/records/internal/kwirebatches -out $(BUILD)/records-kwire-lib.jsonl
	$(GO) run -tags kwire_ownenc ./codec/records/internal/kwirebatches -out $(BUILD)/records-kwire-own.jsonl
	cat $(BUILD)/records-kwire-lib.jsonl $(BUILD)/records-kwire-own.jsonl > $(BUILD)/records-kwire.jsonl
	$(RECORDS_MVN) compile exec:java -Dexec.args="verify $(BUILD)/records-kwire.jsonl"
	@# The checker must also reject spoilt batches and wrong expectations: every one.
	$(GO) run ./codec/records/internal/kwirebatches -mutate -out $(BUILD)/records-kwire-spoilt.jsonl
	@$(RECORDS_MVN) exec:java -Dexec.args="verify $(BUILD)/records-kwire-spoilt.jsonl" > $(BUILD)/records-spoilt.log 2>&1; \
		n=$$(grep -c . $(BUILD)/records-kwire-spoilt.jsonl); \
		if grep -q "records verify: 0 passed, $$n failed" $(BUILD)/records-spoilt.log; then \
			echo "records-java: Kafka's reader rejected all $$n spoilt vectors"; \
		else echo "records-java: the checker accepted a spoilt vector:"; cat $(BUILD)/records-spoilt.log; exit 1; fi
	$(RECORDS_MVN) exec:java -Dexec.args="generate $(BUILD)/records-java.jsonl"
	@cmp -s $(BUILD)/records-java.jsonl $(RECORDS_VECTORS) || \
		{ echo "records-java: $(RECORDS_VECTORS) differs from what kafka-clients writes now; run make records-vectors"; exit 1; }
	@echo "records-java: committed vectors match kafka-clients"

# conn's produce-and-fetch check of every codec, built with kwire's own encoders, against
# the 4.4.0 broker only (the library-compressed run is part of conn's own tests).
records-ownenc-broker: broker-deps
	KWIRE_REQUIRE_BROKER=1 $(GO) test -count=1 -tags kwire_ownenc -run '^TestBroker$$/^4\.4\.0$$/^ProduceFetchCompression$$' -v ./conn

# In Node (V8): with the WebAssembly kernels, and with them off (kwire_purego).
records-js-test:
	GOOS=js GOARCH=wasm $(GO) test -exec="$$($(GO) env GOROOT)/lib/wasm/go_js_wasm_exec" ./codec/records ./internal/recordscan ./internal/crc32c ./internal/inflate ./internal/zstd
	GOOS=js GOARCH=wasm $(GO) test -tags kwire_purego -exec="$$($(GO) env GOROOT)/lib/wasm/go_js_wasm_exec" ./codec/records ./internal/recordscan ./internal/crc32c ./internal/inflate ./internal/zstd

records-nocompress-test:
	$(GO) vet -tags kwire_nocompress ./codec/records/...
	$(GO) test -tags kwire_nocompress ./codec/records/...
	@deps=$$(GOOS=wasip1 GOARCH=wasm $(GO) list -tags kwire_nocompress -deps ./codec/records) || exit 1; \
		if echo "$$deps" | grep -E 'klauspost|pierrec|^crypto/'; then \
			echo "records-nocompress-test: a kwire_nocompress build links the compression libraries above"; exit 1; \
		else echo "records-nocompress-test: a kwire_nocompress wasm build links no compression library"; fi
	@deps=$$(GOOS=wasip1 GOARCH=wasm $(GO) list -deps ./wasm) || exit 1; \
		if echo "$$deps" | grep -E 'klauspost|pierrec|^crypto/'; then \
			echo "records-nocompress-test: kwire.wasm links the compression libraries above"; exit 1; \
		else echo "records-nocompress-test: kwire.wasm compresses with kwire's own encoders only"; fi

# The kernels' differential fuzzing runs inside the WebAssembly build (in Node), where the
# kernels are: Go's coverage-guided fuzzer does not run WebAssembly, so the Test*KernelFuzz
# tests mutate random inputs for KWIRE_KERNEL_FUZZTIME each.
records-kernel-fuzz:
	GOOS=js GOARCH=wasm KWIRE_KERNEL_FUZZTIME=$(FUZZTIME) $(GO) test -exec="$$($(GO) env GOROOT)/lib/wasm/go_js_wasm_exec" \
		-run 'KernelFuzz' -v -timeout 0 -p 1 ./codec/records ./internal/recordscan ./internal/crc32c ./internal/inflate ./internal/zstd

records-fuzz: records-kernel-fuzz
	$(MAKE) --no-print-directory fuzz-go FUZZ_ONLY='$(RECORDS_FUZZ)'

records-bench:
	$(GO) run ./codec/records/internal/benchtable
