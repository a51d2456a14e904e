package policyabi

import (
	"encoding/json"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
)

// plain is the records field of a Produce partition holding one record with no schema
// reference.
func plain(t *testing.T) []byte {
	t.Helper()
	req := codec.NewProduceRequest()
	var e records.Encoder
	msgs := []records.Message{{Topic: "t", Value: []byte("plain")}}
	if err := e.AppendProduceMessages(req, 9, msgs, records.ProduceOptions{PartitionLeaderEpoch: -1}); err != nil {
		t.Fatal(err)
	}
	return req.TopicData[0].PartitionData[0].Records
}

func TestCheck(t *testing.T) {
	recs := plain(t)
	out, err := Check([]byte("x"), []byte(`{"default":"enforce"}`), "t", 1, recs)
	if err != nil {
		t.Fatal(err)
	}
	if out[0] != 'x' {
		t.Fatalf("dst not kept: %s", out)
	}
	var got map[string]any
	if err := json.Unmarshal(out[1:], &got); err != nil {
		t.Fatal(err)
	}
	if got["accept"] != false || got["errorCode"] != float64(87) || got["policy"] != "enforce" || got["rule"] != "default" || got["records"] != float64(1) {
		t.Errorf("verdict %s", out)
	}
	f := got["failures"].([]any)[0].(map[string]any)
	if f["reason"] != "no-schema" || f["field"] != "value" || f["schema"].(map[string]any)["source"] != "none" || f["offset"] != "0" || f["index"] != float64(0) {
		t.Errorf("failure %v", f)
	}
	if _, err := Check(nil, []byte(`{"default":"maybe"}`), "t", 0, recs); err == nil {
		t.Error("a bad policy is not an error")
	}
}
