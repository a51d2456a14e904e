package rules_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/rules"
)

// requestFrame is body as a whole request frame at version, with correlation id 77.
func requestFrame(t *testing.T, body codec.Request, version int16, clientID string) []byte {
	t.Helper()
	h := codec.NewRequestHeaderFor(body, version, 77, clientID)
	f, err := codec.EncodeRequestFrame(nil, h, body)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// CheckFrame answers a refused request frame in the broker's place, with the whole
// response frame (the request's correlation id, the api's response header), passes
// what follows the rules, and says why a frame it cannot read has no answer.
func TestCheckFrame(t *testing.T) {
	set, err := rules.Parse([]byte(safeguards))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what   string
		frame  []byte
		refuse bool
		place  rules.Place
		answer bool
		check  func(t *testing.T, resp codec.Message, msg string)
	}{
		{"CreateTopics breaking a minimum", requestFrame(t, createTopics(topic{name: "a", np: 3, rf: 1}), 7, "app-1"), true, rules.PerEntity, true,
			func(t *testing.T, m codec.Message, msg string) {
				r := m.(*codec.CreateTopicsResponse)
				if len(r.Topics) != 1 || r.Topics[0].Name != "a" || r.Topics[0].ErrorCode != rules.PolicyViolation || r.Topics[0].ErrorMessage == nil || *r.Topics[0].ErrorMessage != msg {
					t.Fatalf("topics %+v", r.Topics)
				}
			}},
		{"CreateTopics that follows the rules", requestFrame(t, createTopics(topic{name: "a", np: 3, rf: 3}), 7, "app-1"), false, 0, false, nil},
		{"Produce with acks=1", requestFrame(t, produce(1, nil, 0), 9, "app-1"), true, rules.PerEntity, true,
			func(t *testing.T, m codec.Message, msg string) {
				r := m.(*codec.ProduceResponse)
				if len(r.Responses) != 1 || r.Responses[0].PartitionResponses[0].ErrorCode != rules.PolicyViolation {
					t.Fatalf("responses %+v", r.Responses)
				}
			}},
		{"Produce with acks=0: refused, and no answer (the client reads none)", requestFrame(t, produce(0, nil, 0), 9, "app-1"), true, rules.PerEntity, false, nil},
		{"a client id the pattern refuses, on an api no other rule names", requestFrame(t, codec.NewAPIVersionsRequest(), 3, "App 1"), true, rules.TopLevel, true,
			func(t *testing.T, m codec.Message, msg string) {
				if r := m.(*codec.APIVersionsResponse); r.ErrorCode != rules.PolicyViolation {
					t.Fatalf("error code %d", r.ErrorCode)
				}
			}},
		{"CreateTopics with no topic has nowhere to say it", func() []byte {
			m := codec.NewCreateTopicsRequest()
			return requestFrame(t, m, 7, "App 1")
		}(), true, rules.Nowhere, false, nil},
	} {
		t.Run(c.what, func(t *testing.T) {
			r, err := set.CheckFrame(c.frame, rules.PolicyViolation)
			if err != nil {
				t.Fatal(err)
			}
			if (r != nil) != c.refuse {
				t.Fatalf("refusal %+v, want refused %v", r, c.refuse)
			}
			if r == nil {
				return
			}
			if r.Violation == nil || r.Message != r.Violation.Message || r.Place != c.place || (r.Response != nil) != c.answer {
				t.Fatalf("refusal %+v (violation %+v), want place %v, answer %v", r, r.Violation, c.place, c.answer)
			}
			if r.Response == nil {
				return
			}
			key := int16(binary.BigEndian.Uint16(c.frame[4:]))
			ver := int16(binary.BigEndian.Uint16(c.frame[6:]))
			resp, err := codec.DecodeResponseFrame(r.Response, key, ver)
			if err != nil {
				t.Fatalf("the answer does not decode: %v", err)
			}
			if resp.Header.CorrelationID != 77 || resp.HeaderVersion != codec.ResponseHeaderVersion(key, ver) {
				t.Fatalf("answer header %+v v%d", resp.Header, resp.HeaderVersion)
			}
			c.check(t, resp.Body, r.Message)
		})
	}

	// A body the rules cannot read is refused (fail closed), with no violation.
	f := requestFrame(t, createTopics(topic{name: "a", np: 3, rf: 3}), 7, "app-1")
	cut := append([]byte(nil), f[:len(f)-3]...)
	binary.BigEndian.PutUint32(cut, uint32(len(cut)-4))
	if r, err := set.CheckFrame(cut, rules.PolicyViolation); err != nil || r == nil || r.Violation != nil || !strings.Contains(r.Message, "could not be read") {
		t.Fatalf("an unreadable body: %+v, %v", r, err)
	}
	// A frame whose size prefix lies, or whose header is unknown, is an error.
	if _, err := set.CheckFrame(f[:len(f)-1], rules.PolicyViolation); err == nil {
		t.Fatal("a frame shorter than its size prefix: no error")
	}
	bad := append([]byte(nil), f...)
	binary.BigEndian.PutUint16(bad[4:], 32000)
	if _, err := set.CheckFrame(bad, rules.PolicyViolation); err == nil {
		t.Fatal("an unknown api key: no error")
	}
}
