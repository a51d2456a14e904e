# Real Apache Kafka brokers for tests, examples and benchmarks (included by the top-level
# Makefile). The Go launcher is the package conformance/broker; its jars come from the
# Maven project conformance/broker/pom.xml.
#
#   make broker-deps   fetch kafka_2.13 and its runtime dependencies for every release in
#                      BROKER_VERSIONS into build/kafka/<release>/lib (once; Java 17 + Maven)
#   make broker        a local broker to try kwire against: Kafka BROKER_VERSION (4.4.0) on
#                      127.0.0.1 with PLAINTEXT, SSL and SASL listeners; prints each
#                      listener's address with the SASL usernames and passwords, and runs
#                      until Ctrl-C, which stops the broker and removes its files
#                      (build/kwire-broker -text; `build/kwire-broker -h` documents it)
#
# The launcher fetches missing jars itself on first use (LibDir), so `go test ./...` works
# without this target; it exists so CI and `make test` fetch them once, up front.

BROKER_VERSIONS ?= 4.4.0 3.9.2
BROKER_VERSION  ?= 4.4.0
MVN             ?= mvn

.PHONY: broker-deps broker

# The launcher is built and then exec'd, so that no shell or `go run` stands between
# the terminal's Ctrl-C and it; make waits for it to stop the broker.
broker: BROKER_VERSIONS = $(BROKER_VERSION)
broker: broker-deps
	@mkdir -p $(BUILD)
	@$(GO) build -o $(BUILD)/kwire-broker ./conformance/broker/cmd/kwire-broker
	@exec $(BUILD)/kwire-broker -text -version $(BROKER_VERSION)

broker-deps:
	@for v in $(BROKER_VERSIONS); do \
		[ -f $(BUILD)/kafka/$$v/.complete ] && continue; \
		echo "mvn: kafka_2.13 $$v -> $(BUILD)/kafka/$$v/lib"; \
		mkdir -p $(BUILD)/kafka; \
		$(MVN) -B -q -Dstyle.color=never -f conformance/broker/pom.xml -Dkafka.version=$$v generate-resources \
			> $(BUILD)/kafka/mvn-$$v.log 2>&1 || { cat $(BUILD)/kafka/mvn-$$v.log; exit 1; }; \
		ls $(BUILD)/kafka/$$v/lib > $(BUILD)/kafka/$$v/.complete || exit 1; \
	done
