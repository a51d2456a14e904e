# codec/kerr: Kafka's error-code table.
#
# errors-dump rewrites conformance/vectors/errors/kafka-clients-<release>.json for every
# release in codec/spec.lock by running Kafka's own Errors enum through the Maven project
# in conformance/reference/errors (Maven fetches kafka-clients). The committed dumps are
# checked against the Go table by `go test ./codec/kerr`, so this target is not part of
# `make test`; run it when codec/spec.lock changes.

MVN ?= mvn
KERR_RELEASES   := $(SPEC_RELEASES)
KERR_DUMP_DIR   := conformance/vectors/errors
KERR_REFERENCE  := conformance/reference/errors/pom.xml

.PHONY: errors-dump

errors-dump:
	@test -n "$(KERR_RELEASES)" || { echo "errors-dump: no release in codec/spec.lock"; exit 1; }
	@mkdir -p $(KERR_DUMP_DIR)
	@for r in $(KERR_RELEASES); do \
		echo "errors-dump: kafka-clients $$r -> $(KERR_DUMP_DIR)/kafka-clients-$$r.json"; \
		$(MVN) -B -q -f $(KERR_REFERENCE) -Dkafka.version=$$r compile exec:java \
			-Dexec.args="$(CURDIR)/$(KERR_DUMP_DIR)/kafka-clients-$$r.json" || exit 1; \
	done
