package rules_test

import (
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/rules"
)

// fuzzRules adds to the safeguards rules on Fetch, Metadata and OffsetCommit, so that
// random bodies of those apis are read too.
const fuzzRules = `[
 {"api": "Fetch", "field": "topics[].partitions[].partitionMaxBytes", "max": 1048576},
 {"api": "Fetch", "field": "clusterId", "pattern": "^c", "ifMissing": "refuse"},
 {"api": "Metadata", "field": "topics", "maxItems": 2},
 {"api": "Metadata", "field": "topics[].name", "required": true},
 {"api": "OffsetCommit", "field": "topics[].partitions[].committedMetadata", "absent": true}
]`

// bodyRules are the api keys with rules on the body: in the safeguards set (false)
// and in fuzzRules (true).
var bodyRules = map[bool]map[uint8]bool{false: {0: true, 11: true, 19: true}, true: {1: true, 3: true, 8: true}}

// FuzzCheck feeds random bodies at random versions of the ruled apis to a fixed rule
// set: Check must not panic, must fail exactly where the typed decoder fails, and a
// violation must say where and why.
func FuzzCheck(f *testing.F) {
	set, err := rules.Parse([]byte(safeguards))
	if err != nil {
		f.Fatal(err)
	}
	more, err := rules.Parse([]byte(fuzzRules))
	if err != nil {
		f.Fatal(err)
	}
	good := topic{name: "a", np: 6, rf: 3, configs: []string{"retention.ms"}, brokers: []int32{1, 2, 3}}
	seeds := []struct {
		m codec.Request
		v int16
	}{
		{createTopics(good, topic{name: "b", np: 1, rf: 1}), 0},
		{createTopics(good), 7},
		{produce(1, nil, 0, 1), 3},
		{produce(-1, ptr("tx-1"), 2), 9},
		{joinGroup(45000, ptr("i"), ptr("r")), 8},
		{joinGroup(1, nil, nil), 0},
		{codec.NewFetchRequest(), 12},
		{codec.NewMetadataRequest(), 12},
	}
	for _, s := range seeds {
		b, err := s.m.Encode(nil, s.v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(s.m.APIKey()), s.v, true, "app-1", b)
	}
	f.Fuzz(func(t *testing.T, key uint8, v int16, hasID bool, id string, body []byte) {
		if len(body) > 1<<16 {
			return
		}
		var clientID *string
		if hasID {
			clientID = &id
		}
		for _, s := range []*rules.Set{set, more} {
			viol, err := s.Check(int16(key), v, clientID, body)
			if viol != nil && (err != nil || viol.Message == "" || viol.Path == "" || viol.Field == "") {
				t.Fatalf("violation %+v, error %v", viol, err)
			}
			if !bodyRules[s == more][key] {
				continue
			}
			// Where a body rule applies, Check reads the body as the codec does,
			// failing exactly where the typed decoder fails.
			m := codec.NewRequest(int16(key))
			if decErr := m.Decode(body, v); (err == nil) != (decErr == nil) {
				t.Fatalf("api %d v%d: Check error %v, Decode error %v", key, v, err, decErr)
			}
		}
	})
}
