# The Go connection (conn/), the sans-IO session (codec/session/) and the broker launcher
# (conformance/broker/) (included by the top-level Makefile, which defines GO and BUILD).
#
#   make conn-test         the tests of the three packages against real Kafka brokers
#                          (4.4.0 and 3.9.2); KWIRE_REQUIRE_BROKER=1 turns a missing Java
#                          or jar set into a failure instead of a skip (also in `make test`)
#   make conn-bench        pipelined round trips on one connection, conn vs franz-go's kgo,
#                          against one launched broker (conn/bench, a module of its own)
#   make conn-fuzz         the session's fuzz target for FUZZTIME (`make fuzz` runs it with
#                          every other target)
#   make broker-examples   the Go example against a launched broker (examples/broker/go)

CONN_BENCH := conn/bench

.PHONY: conn-test conn-bench conn-fuzz broker-examples

# The broker tests of conn, codec/session and conformance/broker run in make's go-test
# (the main module's go test, with KWIRE_REQUIRE_BROKER=1); this checks the bench module.
conn-test:
	cd $(CONN_BENCH) && $(GO) vet ./...

conn-bench: broker-deps
	cd $(CONN_BENCH) && KWIRE_REQUIRE_BROKER=1 $(GO) run ./cmd/connbench

conn-fuzz:
	$(MAKE) --no-print-directory fuzz-go FUZZ_ONLY='^codec/session/'

broker-examples: broker-deps
	$(GO) run ./examples/broker/go

TEST_TARGETS  += conn-test
BENCH_TARGETS += conn-bench
