// Package rules checks Kafka requests against rules on their fields, named by path in
// the JSON form (codec/JSON.md). It is written once against Kafka's message
// descriptors: a rule may name any field of any request, in every version Kafka
// defines, and nothing here is specific to one api.
//
// A rule set is a JSON array of rules:
//
//	[{"api": "CreateTopics", "field": "topics[].replicationFactor", "min": 3},
//	 {"api": "CreateTopics", "field": "topics[].numPartitions", "max": 64},
//	 {"api": "Produce", "field": "acks", "in": [-1]},
//	 {"api": "JoinGroup", "field": "sessionTimeoutMs", "max": 30000},
//	 {"api": "*", "field": "header.clientId", "pattern": "^[a-z0-9-]+$"}]
//
// The keys of a rule:
//
//   - api: the api's name as the descriptors give it ("CreateTopics", "Produce"), or
//     "*" for every api, whose rules may name only header.clientId.
//   - field: a dotted path of JSON names (lowerCamelCase, as Kafka's JSON converters
//     write them). A step into each element of an array field is written with []
//     ("topics[].configs[].name"); a path that ends at an array without [] names the
//     array itself. header.clientId is the request header's client id.
//   - predicates, at least one: min and max (integers, compared exactly as int64), in
//     (a set of integers, or of strings), pattern (a regular expression in a subset
//     of RE2's syntax: literals, ., bracket classes, \d \w \s, ^ $, groups, | and
//     repetition up to {1000}; matched anywhere unless anchored, in time linear in the
//     input, with no backtracking; see pattern.go), required (the field is present and not null),
//     absent (the field is missing or null), minItems and maxItems (an array's length).
//   - ifMissing: "pass" (the default) or "refuse": what happens when the field is not
//     in the request as the client sent it (the version lacks it, a null lies on the
//     way, or a tagged field was left out). A null value counts as missing for every
//     predicate but required and absent.
//   - message: the text of the refusal; without it, one is made that says what
//     failed ("topics[1].replicationFactor is 1, below the minimum 3").
//
// Parse checks every rule against the descriptors: an unknown api or field (with a
// "did you mean"), a path that names no field of that api's request in any version,
// and a predicate that does not fit the field's type (min on a string, pattern on an
// integer, minItems on a non-array) are errors naming the JSON path and byte offset of
// the offending value. A field that exists only in some versions is fine.
//
// Set.Check applies the rules of one api (and of "*") to one request and returns the
// first violation, in configuration order; a rule on a path through arrays applies to
// every element. A body that cannot be read is an error, which a caller enforcing the
// rules turns into a refusal: policy fails closed. Requests of an api that no rule
// names cost a table lookup and are not read; when only header rules apply, neither
// is the body. Otherwise the body is indexed once (transcode.Doc: spans, no copies)
// and every rule of the api reads what it names.
//
// ErrorResponse turns a refusal into the api's own error response, built from the
// descriptors for every api and version: CreateTopics' POLICY_VIOLATION per topic,
// Produce's per partition, a top-level error code where the response has one, and
// Nowhere (close the connection) where it has no error field.
//
// CheckFrame does both for a whole request frame, as a proxy needs: the violation and
// the response frame to send in the broker's place (none for Produce with acks=0).
//
// Where it runs: the Envoy filter's "rules" key (examples/envoy), and the flat ABI's
// kw_rules_check (kwire.h), which libkwire (C, Rust) exports. The default kwire.wasm
// leaves the engine out, for its size budget, and its kw_rules_check reports
// KW_ERR_UNSUPPORTED saying so; a module built with -tags kwire_rules has it.
package rules
