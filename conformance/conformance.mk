# Conformance with Apache Kafka's own Java code (included by the top-level Makefile).
#
#   make vectors            build conformance/reference once per release and regenerate
#                           conformance/vectors/kafka-clients-<release>.{jsonl,manifest.json}
#   make conformance-verify kwire writes random messages (cmd/kwirevectors); Kafka reads them,
#                           and compares kwire's error responses with its own
#   make conformance-java   both, then fail when the committed vectors drifted
#   make conformance-table  the Go runner's coverage table (also part of `make test`)
#
# Needs Java 17 and Maven; Maven fetches kafka-clients and Jackson into ~/.m2 once.

CONFORMANCE_RELEASES ?= 3.9.2 4.4.0
CONFORMANCE_REF      := conformance/reference
CONFORMANCE_VECTORS  := conformance/vectors
CONFORMANCE_OUT      := $(BUILD)/conformance
MVN                  ?= mvn
JAVA                 ?= java
MVN_FLAGS            ?= -B -q

# java -cp for one release, from the classpath file its Maven build writes
conformance_cp = $(CONFORMANCE_REF)/target/$(1)/classes:$$(cat $(CONFORMANCE_REF)/target/$(1)/classpath.txt)
CONFORMANCE_MAIN := io.kwire.conformance.Main

.PHONY: vectors conformance-ref conformance-verify conformance-java conformance-table

# The reference tool, built once per release into conformance/reference/target/<release>/.
conformance-ref:
	@for r in $(CONFORMANCE_RELEASES); do \
		echo "mvn compile (kafka-clients $$r)"; \
		$(MVN) $(MVN_FLAGS) -f $(CONFORMANCE_REF)/pom.xml -Dkafka.version=$$r compile || exit 1; \
	done

vectors: conformance-ref
	@for r in $(CONFORMANCE_RELEASES); do \
		$(JAVA) -cp $(call conformance_cp,$$r) $(CONFORMANCE_MAIN) generate --release $$r \
			--out $(CONFORMANCE_VECTORS)/kafka-clients-$$r.jsonl \
			--manifest $(CONFORMANCE_VECTORS)/kafka-clients-$$r.manifest.json || exit 1; \
	done

# Verification mode: kwire encodes its own random messages for every (message, version) the
# release lists; Kafka parses each, re-serializes it and compares bytes and JSON. Then the
# errors mode: kwire's error response to each random request (codec/rules.ErrorResponse)
# beside the one Kafka's request class builds (getErrorResponse), compared field by field.
conformance-verify: conformance-ref
	@mkdir -p $(CONFORMANCE_OUT)
	@rc=0; for r in $(CONFORMANCE_RELEASES); do \
		$(GO) run ./conformance/cmd/kwirevectors \
			-manifest $(CONFORMANCE_VECTORS)/kafka-clients-$$r.manifest.json \
			-out $(CONFORMANCE_OUT)/kwire-$$r.jsonl -errors $(CONFORMANCE_OUT)/kwire-errors-$$r.jsonl || rc=1; \
		$(JAVA) -cp $(call conformance_cp,$$r) $(CONFORMANCE_MAIN) verify --release $$r \
			--in $(CONFORMANCE_OUT)/kwire-$$r.jsonl || rc=1; \
		$(JAVA) -cp $(call conformance_cp,$$r) $(CONFORMANCE_MAIN) errors --release $$r \
			--in $(CONFORMANCE_OUT)/kwire-errors-$$r.jsonl || rc=1; \
	done; exit $$rc

# Regenerate, verify, and fail when the committed vectors differ from what Kafka writes now.
conformance-java: vectors conformance-verify
	@git diff --exit-code --stat -- $(CONFORMANCE_VECTORS)/kafka-clients-* || \
		{ echo "conformance-java: committed vectors drifted from 'make vectors'"; exit 1; }
	@untracked=$$(git ls-files --others --exclude-standard -- $(CONFORMANCE_VECTORS)/kafka-clients-*); \
		if [ -n "$$untracked" ]; then echo "conformance-java: untracked vectors: $$untracked"; exit 1; fi

# The coverage table of the Go runner (go test -v shows it; plain `go test ./...` hides it).
conformance-table:
	$(GO) test -count=1 -run '^TestKafkaVectors$$' -v ./conformance/

# Both are cheap enough for every CI run (measured on the 2-core machine with a warm
# ~/.m2: conformance-java takes about 36 s of CPU, 1-2 minutes of wall time under load).
TEST_TARGETS += conformance-table conformance-java
