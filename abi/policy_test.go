package abi

import (
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
)

// policyRecords is the records field of one Produce partition holding values.
func policyRecords(t *testing.T, c records.Compression, values ...[]byte) []byte {
	t.Helper()
	var msgs []records.Message
	for _, v := range values {
		msgs = append(msgs, records.Message{Topic: "t", Value: v})
	}
	req := codec.NewProduceRequest()
	var e records.Encoder
	if err := e.AppendProduceMessages(req, 9, msgs, records.ProduceOptions{Compression: c, PartitionLeaderEpoch: -1}); err != nil {
		t.Fatal(err)
	}
	return req.TopicData[0].PartitionData[0].Records
}

func withID(id uint32) []byte {
	b := []byte{0, 0, 0, 0, 0, 'x'}
	binary.BigEndian.PutUint32(b[1:], id)
	return b
}

func TestPolicyCheck(t *testing.T) {
	const pol = `{"default":"none","rules":[{"topic":"orders","policy":"enforce","schema_ids":[1]},{"prefix":"audit.","policy":"warn"}]}`
	good := policyRecords(t, records.CompressionLZ4, withID(1), withID(1))
	mixed := policyRecords(t, records.CompressionZstd, withID(1), []byte("plain"), withID(2))
	for _, tc := range []struct {
		name, topic string
		recs        []byte
		accept      bool
		code        float64
		records     float64
		reasons     []string
		rule        string
	}{
		{"accepted", "orders", good, true, 0, 2, nil, "topic:orders"},
		{"rejected", "orders", mixed, false, 87, 3, []string{"no-schema", "id-not-allowed"}, "topic:orders"},
		{"warned", "audit.x", mixed, true, 0, 3, []string{"no-schema"}, "prefix:audit."},
		{"not checked", "free", mixed, true, 0, 0, nil, "default"},
		{"damaged", "orders", good[:len(good)-2], false, 2, 0, nil, "topic:orders"},
	} {
		out, err := PolicyCheck([]byte("junk"), []byte(pol), tc.topic, 3, tc.recs)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !strings.HasPrefix(string(out), "junk{") {
			t.Fatalf("%s: the verdict is not appended to dst: %.20s", tc.name, out)
		}
		var v struct {
			Topic     string
			Partition int32
			Rule      string
			Accept    bool
			ErrorCode float64
			Records   float64
			Error     string
			Failures  []struct {
				Reason, Field, Offset string
				Schema                struct{ Source string }
			}
		}
		if err := json.Unmarshal(out[4:], &v); err != nil {
			t.Fatalf("%s: verdict %s: %v", tc.name, out[4:], err)
		}
		var reasons []string
		for _, f := range v.Failures {
			reasons = append(reasons, f.Reason)
			if f.Field != "value" || f.Offset == "" || f.Schema.Source == "" {
				t.Errorf("%s: failure %+v", tc.name, f)
			}
		}
		if v.Accept != tc.accept || v.ErrorCode != tc.code || v.Records != tc.records || v.Rule != tc.rule ||
			v.Topic != tc.topic || v.Partition != 3 || strings.Join(reasons, ",") != strings.Join(tc.reasons, ",") {
			t.Errorf("%s: verdict %s", tc.name, out[4:])
		}
		if tc.name == "damaged" && v.Error == "" {
			t.Errorf("%s: no decoding error in %s", tc.name, out[4:])
		}
	}
}

func TestPolicyCheckErrors(t *testing.T) {
	recs := policyRecords(t, records.CompressionNone, withID(1))
	for _, tc := range []struct {
		name, policy, topic string
		partition           int32
		status              int32
		path                string
		offset              int
	}{
		{"unknown mode", `{"rules":[{"topic":"a","policy":"block"}]}`, "a", 0, StatusJSON, "$.rules[0].policy", 32},
		{"unknown key", `{"colour":1}`, "a", 0, StatusJSON, "$.colour", 10},
		{"not JSON", `{`, "a", 0, StatusJSON, "$", 1},
		{"duplicate rule", `{"rules":[{"topic":"a","policy":"warn"},{"topic":"a","policy":"none"}]}`, "a", 0, StatusJSON, "$.rules[1].topic", 49},
		{"empty topic", `{}`, "", 0, StatusArg, "", -1},
		{"bad UTF-8 topic", `{}`, "a\xff", 0, StatusArg, "", -1},
		{"long topic", `{}`, strings.Repeat("t", 1<<15), 0, StatusArg, "", -1},
		{"negative partition", `{}`, "a", -1, StatusArg, "", -1},
	} {
		out, err := PolicyCheck(nil, []byte(tc.policy), tc.topic, tc.partition, recs)
		if out != nil {
			t.Errorf("%s: output %q with an error", tc.name, out)
		}
		e := status(t, err, tc.status)
		if e.Path != tc.path || e.Offset != tc.offset {
			t.Errorf("%s: path %q offset %d, want %q %d (%s)", tc.name, e.Path, e.Offset, tc.path, tc.offset, e.Text)
		}
	}
}
