package abi

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
)

// rulesFrame is a CreateTopics v7 request frame of one topic with replication rf.
func rulesFrame(t *testing.T, rf int16) []byte {
	t.Helper()
	m := codec.NewCreateTopicsRequest()
	m.Topics = []codec.CreateTopicsRequestCreatableTopic{{Name: "orders", NumPartitions: 3, ReplicationFactor: rf}}
	f, err := codec.EncodeRequestFrame(nil, codec.NewRequestHeaderFor(m, 7, 5, "app"), m)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// kw_rules_check: a frame that follows the rules is allowed; one that breaks a rule
// gets the rule, the path, the value and the whole response frame to send; a bad rule
// set names its JSON path, a bad frame or error code is an error of its own.
func TestRulesCheck(t *testing.T) {
	const set = `[{"api":"CreateTopics","field":"topics[].replicationFactor","min":3}]`
	out, err := RulesCheck(nil, []byte(set), rulesFrame(t, 3), 44)
	if err != nil || string(out) != `{"allowed":true}` {
		t.Fatalf("allowed: %s, %v", out, err)
	}
	out, err = RulesCheck(nil, []byte(set), rulesFrame(t, 1), 44)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Allowed                        bool
		Rule                           int
		API, Field, Path, Value, Place string
		Message                        string
		Response                       *string
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if v.Allowed || v.Rule != 0 || v.API != "CreateTopics" || v.Path != "topics[0].replicationFactor" || v.Value != "1" || v.Place != "perEntity" || v.Response == nil {
		t.Fatalf("refused: %s", out)
	}
	frame, err := base64.StdEncoding.DecodeString(*v.Response)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := codec.DecodeResponseFrame(frame, 19, 7)
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Body.(*codec.CreateTopicsResponse)
	if resp.Header.CorrelationID != 5 || len(r.Topics) != 1 || r.Topics[0].ErrorCode != 44 || r.Topics[0].ErrorMessage == nil || *r.Topics[0].ErrorMessage != v.Message {
		t.Fatalf("the answer: %+v %+v", resp.Header, r.Topics)
	}

	for _, tc := range []struct {
		what   string
		rules  string
		frame  []byte
		code   int32
		status int32
		text   string
	}{
		{"a misspelt field", `[{"api":"CreateTopics","field":"topics[].replicationFactr","min":3}]`, rulesFrame(t, 1), 44, StatusJSON, "did you mean"},
		{"not JSON", `[{`, rulesFrame(t, 1), 44, StatusJSON, "rules"},
		{"a frame shorter than its size", set, rulesFrame(t, 1)[:20], 44, StatusDecode, "rules check"},
		{"error code 0", set, rulesFrame(t, 1), 0, StatusArg, "error code 0"},
		{"error code beyond int16", set, rulesFrame(t, 1), 40000, StatusArg, "error code 40000"},
	} {
		_, err := RulesCheck(nil, []byte(tc.rules), tc.frame, tc.code)
		var e *Error
		if !errors.As(err, &e) || e.Status != tc.status || !strings.Contains(e.Text, tc.text) {
			t.Errorf("%s: %v, want status %d with %q", tc.what, err, tc.status, tc.text)
		}
	}
	// The JSON error names the offending value's path.
	_, err = RulesCheck(nil, []byte(`[{"api":"CreateTopics","field":"topics[].replicationFactor","min":"x"}]`), rulesFrame(t, 1), 44)
	var e *Error
	if !errors.As(err, &e) || e.Path != "$[0].min" {
		t.Errorf("a string minimum: %+v", err)
	}
}
