package rules_test

import (
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/rules"
)

// A refused request is answered in its api's own shape, with the violation's message:
// CreateTopics per topic, Produce per partition, JoinGroup at the top level.
func TestErrorResponseOfViolations(t *testing.T) {
	set, err := rules.Parse([]byte(safeguards))
	if err != nil {
		t.Fatal(err)
	}
	client := "app-1"
	for _, c := range []struct {
		what  string
		key   int16
		ver   int16
		req   codec.Request
		place rules.Place
		check func(t *testing.T, resp codec.Message, msg string)
	}{
		{"CreateTopics", 19, 7, createTopics(topic{name: "a", np: 3, rf: 1}, topic{name: "b", np: 3, rf: 3}), rules.PerEntity,
			func(t *testing.T, m codec.Message, msg string) {
				r := m.(*codec.CreateTopicsResponse)
				if len(r.Topics) != 2 || r.Topics[0].Name != "a" || r.Topics[1].Name != "b" {
					t.Fatalf("topics %+v", r.Topics)
				}
				for _, tp := range r.Topics {
					if tp.ErrorCode != rules.PolicyViolation || tp.ErrorMessage == nil || *tp.ErrorMessage != msg {
						t.Errorf("topic %s: error %d %v, want %d %q", tp.Name, tp.ErrorCode, tp.ErrorMessage, rules.PolicyViolation, msg)
					}
				}
			}},
		{"Produce", 0, 9, produce(1, nil, 0, 7), rules.PerEntity,
			func(t *testing.T, m codec.Message, msg string) {
				r := m.(*codec.ProduceResponse)
				if len(r.Responses) != 1 || r.Responses[0].Name != "orders" || len(r.Responses[0].PartitionResponses) != 2 ||
					r.Responses[0].PartitionResponses[1].Index != 7 || r.Responses[0].PartitionResponses[1].ErrorCode != rules.PolicyViolation {
					t.Fatalf("responses %+v", r.Responses)
				}
			}},
		{"JoinGroup", 11, 5, joinGroup(60000, ptr("i"), nil), rules.TopLevel,
			func(t *testing.T, m codec.Message, msg string) {
				if r := m.(*codec.JoinGroupResponse); r.ErrorCode != rules.PolicyViolation {
					t.Fatalf("error code %d", r.ErrorCode)
				}
			}},
	} {
		t.Run(c.what, func(t *testing.T) {
			body := encode(t, c.req, c.ver)
			v, err := set.Check(c.key, c.ver, &client, body)
			if err != nil || v == nil {
				t.Fatalf("no violation (%v)", err)
			}
			resp, place, err := rules.ErrorResponse(c.key, c.ver, body, rules.PolicyViolation, v.Message)
			if err != nil || place != c.place {
				t.Fatalf("placed %s, want %s (%v)", place, c.place, err)
			}
			var m codec.Message
			for _, api := range codec.APIs() {
				if api.Key == c.key {
					m = codec.NewMessage(api.Name + "Response")
				}
			}
			if m == nil {
				t.Fatalf("no response message for api key %d", c.key)
			}
			if err := m.Decode(resp, c.ver); err != nil {
				t.Fatalf("the response does not decode: %v", err)
			}
			c.check(t, m, v.Message)
		})
	}
}
