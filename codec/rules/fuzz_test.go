package rules_test

import (
	"encoding/binary"
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
			checkFrame(t, s, int16(key), v, clientID, body, viol, err)
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

// checkFrame holds CheckFrame to Check on the same request as a whole frame: the same
// verdict, and an answer that decodes as the api's response with the request's
// correlation id.
func checkFrame(t *testing.T, s *rules.Set, key, v int16, clientID *string, body []byte, viol *rules.Violation, checkErr error) {
	hv := codec.RequestHeaderVersion(key, v)
	if hv < 1 {
		return
	}
	frame := []byte{0, 0, 0, 0, byte(key >> 8), byte(key), byte(v >> 8), byte(v), 0, 0, 0, 9}
	if clientID == nil {
		frame = append(frame, 0xff, 0xff)
	} else {
		if len(*clientID) > 1<<15-1 {
			return
		}
		frame = append(frame, byte(len(*clientID)>>8), byte(len(*clientID)))
		frame = append(frame, *clientID...)
	}
	if hv >= 2 {
		frame = append(frame, 0) // no tagged fields
	}
	frame = append(frame, body...)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	r, err := s.CheckFrame(frame, rules.PolicyViolation)
	if err != nil {
		t.Fatalf("CheckFrame of a well-framed request: %v", err)
	}
	switch {
	case checkErr == nil && viol == nil:
		if r != nil {
			t.Fatalf("Check passes it, CheckFrame refuses it: %+v", r)
		}
	case r == nil:
		t.Fatalf("Check refuses it (%v, %v), CheckFrame passes it", viol, checkErr)
	case viol != nil && (r.Violation == nil || r.Message != viol.Message):
		t.Fatalf("CheckFrame %+v, Check %+v", r, viol)
	}
	if r == nil || r.Response == nil {
		return
	}
	resp, err := codec.DecodeResponseFrame(r.Response, key, v)
	if err != nil || resp.Header.CorrelationID != 9 {
		t.Fatalf("the answer of api %d v%d does not decode: %v", key, v, err)
	}
}
