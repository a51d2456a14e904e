package rules_test

import (
	"errors"
	"testing"

	"github.com/kwire/kwire/codec/rules"
)

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ json, want string }{
		// Reading: the JSON itself.
		{`{}`, `rules: $: wrong type: want array, got object (at byte 0)`},
		{`[{"api": "Produce", "field": "acks", "in": [-1], "colour": 1}]`, `rules: $[0].colour: unknown key: "colour" (at byte 49)`},
		{`[{"api": "Produce", "api": "Fetch"}]`, `rules: $[0].api: duplicate key: "api" (at byte 20)`},
		{`[{"api": 19, "field": "acks"}]`, `rules: $[0].api: wrong type: want string, got number (at byte 9)`},
		{`[{"api": "Produce", "field": "acks", "min": "3"}]`, `rules: $[0].min: wrong type: want number, got string (at byte 44)`},
		{`[{"api": "Produce", "field": "acks", "min": 1.5}]`, `rules: $[0].min: wrong type: want an integer, got 1.5 (at byte 44)`},
		{`[{"api": "Produce", "field": "acks", "max": 9223372036854775808}]`, `rules: $[0].max: number out of range: 9223372036854775808 is outside [-9223372036854775808, 9223372036854775807] (at byte 44)`},
		{`[{"api": "Produce", "field": "acks", "in": [1, "a"]}]`, `rules: $[0].in[1]: mixes numbers and strings (at byte 47)`},
		{`[{"api": "Produce", "field": "acks", "required": 1}]`, `rules: $[0].required: wrong type: want boolean, got number (at byte 49)`},
		{`[{"api": "Produce", "field": "acks", "in": [-1]}] x`, `rules: $: invalid JSON: unexpected data after the top-level value (at byte 50)`},
		// Shape of a rule.
		{`[{"field": "acks", "min": 1}]`, `rules: $[0]: a rule needs "api" (at byte 1)`},
		{`[{"api": "Produce", "min": 1}]`, `rules: $[0]: a rule needs "field" (at byte 1)`},
		{`[{"api": "Produce", "field": "acks"}]`, `rules: $[0]: the rule for acks has no predicate (min, max, in, pattern, required, absent, minItems or maxItems) (at byte 1)`},
		{`[{"api": "Produce", "field": "acks", "in": []}]`, `rules: $[0].in: in is empty: nothing could pass (at byte 43)`},
		{`[{"api": "Produce", "field": "acks", "min": 2, "max": 1}]`, `rules: $[0].max: max 1 is below min 2 (at byte 54)`},
		{`[{"api": "Produce", "field": "acks", "min": 1, "ifMissing": "skip"}]`, `rules: $[0].ifMissing: ifMissing is "skip"; want pass or refuse (at byte 60)`},
		{`[{"api": "Produce", "field": "acks", "required": true, "absent": true}]`, `rules: $[0].absent: a field cannot be both required and absent (at byte 65)`},
		// Names.
		{`[{"api": "CreateTopic", "field": "timeoutMs", "max": 1}]`, `rules: $[0].api: no api "CreateTopic"; did you mean CreateTopics? (at byte 9)`},
		{`[{"api": "CreateTopics", "field": "topics[].replicationFactr", "min": 3}]`, `rules: $[0].field: CreateTopicsRequest has no field topics[].replicationFactr in any version; did you mean replicationFactor? (at byte 34)`},
		{`[{"api": "CreateTopics", "field": "topic[].numPartitions", "min": 3}]`, `rules: $[0].field: CreateTopicsRequest has no field topic[].numPartitions in any version; did you mean topics? (at byte 34)`},
		{`[{"api": "JoinGroup", "field": "sessionTimeout", "max": 3}]`, `rules: $[0].field: JoinGroupRequest has no field sessionTimeout in any version; did you mean sessionTimeoutMs? (at byte 31)`},
		{`[{"api": "Produce", "field": "topicData.name", "pattern": "a"}]`, `rules: $[0].field: topicData is an array of structs: write topicData[] to check each element (at byte 29)`},
		{`[{"api": "Produce", "field": "acks[]", "min": 1}]`, `rules: $[0].field: acks is an integer, not an array: write it without [] (at byte 29)`},
		{`[{"api": "Produce", "field": "acks.x", "min": 1}]`, `rules: $[0].field: acks is an integer, which has no field x (at byte 29)`},
		{`[{"api": "Produce", "field": "topicData[]..name", "min": 1}]`, `rules: $[0].field: the path "topicData[]..name" has an empty name (at byte 29)`},
		{`[{"api": "*", "field": "acks", "in": [-1]}]`, `rules: $[0].field: a rule for every api ("*") can check only header.clientId (at byte 23)`},
		{`[{"api": "*", "field": "header.clientID", "pattern": "a"}]`, `rules: $[0].field: the request header's field that rules can check is header.clientId; did you mean clientId? (at byte 23)`},
		// Predicates against types.
		{`[{"api": "CreateTopics", "field": "topics[].name", "min": 3}]`, `rules: $[0].min: min needs an integer; topics[].name is a string (at byte 58)`},
		{`[{"api": "Produce", "field": "acks", "pattern": "^1$"}]`, `rules: $[0].pattern: pattern needs a string; acks is an integer (at byte 48)`},
		{`[{"api": "Produce", "field": "acks", "minItems": 1}]`, `rules: $[0].minItems: minItems needs an array; acks is an integer (at byte 49)`},
		{`[{"api": "Produce", "field": "topicData[]", "maxItems": 1}]`, `rules: $[0].maxItems: maxItems counts the array itself: write topicData, without [] (at byte 56)`},
		{`[{"api": "Produce", "field": "topicData", "max": 1}]`, `rules: $[0].max: max needs an integer; topicData is an array of structs (at byte 49)`},
		{`[{"api": "Produce", "field": "acks", "in": ["all"]}]`, `rules: $[0].in: in holds strings; acks is an integer (at byte 43)`},
		{`[{"api": "Produce", "field": "transactionalId", "in": [1]}]`, `rules: $[0].in: in holds numbers; transactionalId is a string (at byte 54)`},
		{`[{"api": "Produce", "field": "topicData[].partitionData[].records", "in": [1]}]`, `rules: $[0].in: in needs an integer or a string; topicData[].partitionData[].records is a byte string (at byte 74)`},
		{`[{"api": "*", "field": "header.clientId", "pattern": "a("}]`, `rules: $[0].pattern: pattern: missing ) at offset 2 (at byte 53)`},
		{`[{"api": "*", "field": "header.clientId", "min": 1}]`, `rules: $[0].min: min needs an integer; header.clientId is a string (at byte 49)`},
	} {
		_, err := rules.Parse([]byte(tc.json))
		if err == nil {
			t.Errorf("%s: no error", tc.json)
			continue
		}
		var ce *rules.ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s: %T, want *ConfigError", tc.json, err)
		}
		if err.Error() != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.json, err, tc.want)
		}
	}
}
