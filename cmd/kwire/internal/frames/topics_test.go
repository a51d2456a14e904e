package frames

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec/transcode"
)

// TestTopicsLearn: the responses that state topic ids and names teach them (a zero id
// and a null name teach nothing); other responses, other versions and frames that do
// not decode teach nothing.
func TestTopicsLearn(t *testing.T) {
	const a, b, c, d = "AQEBAQEBAQEBAQEBAQEBAQ", "AgICAgICAgICAgICAgICAg", "AwMDAwMDAwMDAwMDAwMDAw", "BAQEBAQEBAQEBAQEBAQEBA"
	var f transcode.Framer
	frame := func(js string, key, version int16) []byte {
		t.Helper()
		b, err := f.AppendResponseFrame(nil, []byte(`{"header":{"correlationId":1},"body":`+js+`}`), key, version)
		if err != nil {
			t.Fatalf("%v\n%s", err, js)
		}
		return b
	}
	topics := NewTopics()
	for _, c := range []struct {
		frame      []byte
		key, ver   int16
		learns     bool
		wantLength int
	}{
		{frame(`{"throttleTimeMs":0,"brokers":[],"clusterId":null,"controllerId":1,"topics":[{"errorCode":0,"name":"orders","topicId":"`+a+`","isInternal":false,"partitions":[],"topicAuthorizedOperations":0},{"errorCode":3,"name":"gone","topicId":"AAAAAAAAAAAAAAAAAAAAAA","isInternal":false,"partitions":[],"topicAuthorizedOperations":0}]}`, 3, 10), 3, 10, true, 1},
		{frame(`{"throttleTimeMs":0,"topics":[{"name":"payments","topicId":"`+b+`","errorCode":0,"errorMessage":null,"numPartitions":1,"replicationFactor":1,"configs":[]}]}`, 19, 7), 19, 7, true, 2},
		{frame(`{"throttleTimeMs":0,"responses":[{"name":"old","topicId":"`+c+`","errorCode":0,"errorMessage":null}]}`, 20, 6), 20, 6, true, 3},
		{frame(`{"throttleTimeMs":0,"topics":[{"errorCode":0,"name":"audit","topicId":"`+d+`","isInternal":false,"partitions":[],"topicAuthorizedOperations":0},{"errorCode":100,"name":null,"topicId":"`+a+`","isInternal":false,"partitions":[],"topicAuthorizedOperations":0}],"nextCursor":null}`, 75, 0), 75, 0, true, 4},
		// Metadata v9 carries no ids; a cut frame does not decode.
		{frame(`{"throttleTimeMs":0,"brokers":[],"clusterId":null,"controllerId":1,"topics":[{"errorCode":0,"name":"v9","isInternal":false,"partitions":[],"topicAuthorizedOperations":0}],"clusterAuthorizedOperations":0}`, 3, 9), 3, 9, false, 4},
		{frame(`{"throttleTimeMs":0,"topics":[{"name":"cut","topicId":"BgYGBgYGBgYGBgYGBgYGBg","errorCode":0,"errorMessage":null,"numPartitions":1,"replicationFactor":1,"configs":[]}]}`, 19, 7)[:30], 19, 7, true, 4},
	} {
		if Learns(c.key, c.ver) != c.learns {
			t.Errorf("Learns(%d, %d) = %v", c.key, c.ver, !c.learns)
		}
		topics.Learn(c.frame, c.key, c.ver)
		if topics.Len() != c.wantLength {
			t.Errorf("after api %d v%d: %d names, want %d", c.key, c.ver, topics.Len(), c.wantLength)
		}
	}
	for id, want := range map[string]string{a: "orders", b: "payments", c: "old", d: "audit"} {
		var u [16]byte
		copy(u[:], mustUUID(t, id))
		if got, ok := topics.Name(u); !ok || got != want {
			t.Errorf("%s: %q %v, want %q", id, got, ok, want)
		}
	}
	if Learns(0, 13) || Learns(1, 17) {
		t.Error("Produce and Fetch responses do not name topic ids")
	}

	// A writer with the names puts them beside the ids of a Produce v13 request.
	req, err := f.AppendRequestFrame(nil, []byte(`{"header":{"requestApiKey":0,"requestApiVersion":13,"correlationId":2,"clientId":"c"},"body":{"transactionalId":null,"acks":1,"timeoutMs":1000,"topicData":[{"topicId":"`+b+`","partitionData":[]},{"topicId":"BQUFBQUFBQUFBQUFBQUFBQ","partitionData":[]}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(false)
	w.ResolveTopics(topics)
	line, err := w.AppendRequest(nil, &Meta{Latency: -1}, req)
	if err != nil || !strings.Contains(string(line), `[{"topicId":"`+b+`","name":"payments","partitionData":[]},{"topicId":"BQUFBQUFBQUFBQUFBQUFBQ","partitionData":[]}]`) {
		t.Errorf("%v\n%s", err, line)
	}
	w.ResolveTopics(nil)
	if line, _ = w.AppendRequest(nil, &Meta{Latency: -1}, req); strings.Contains(string(line), "payments") {
		t.Errorf("ResolveTopics(nil) still names: %s", line)
	}
}

func mustUUID(t *testing.T, s string) []byte {
	t.Helper()
	b := make([]byte, 16)
	n, err := base64.RawURLEncoding.Decode(b, []byte(s))
	if err != nil || n != 16 {
		t.Fatalf("uuid %q: %v", s, err)
	}
	return b
}

// TestTopicsMissing: Missing runs once, on the first id Topics does not know (not on
// a known id, not on the zero id), and what it learns answers that very call.
func TestTopicsMissing(t *testing.T) {
	known, later, never := [16]byte{1}, [16]byte{2}, [16]byte{3}
	topics := NewTopics()
	topics.Add(known, "orders")
	calls := 0
	topics.Missing = func(t *Topics) {
		calls++
		t.Add(later, "payments")
	}
	if name, ok := topics.Name(known); !ok || name != "orders" || calls != 0 {
		t.Fatalf("known id: %q %v, %d calls", name, ok, calls)
	}
	if _, ok := topics.Name([16]byte{}); ok || calls != 0 {
		t.Fatalf("zero id: %v, %d calls", ok, calls)
	}
	if name, ok := topics.Name(later); !ok || name != "payments" || calls != 1 {
		t.Fatalf("id named later: %q %v, %d calls", name, ok, calls)
	}
	if _, ok := topics.Name(never); ok || calls != 1 {
		t.Fatalf("id never named: %v, %d calls", ok, calls)
	}
}
