package transcode_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/codectest"
	"github.com/kwire/kwire/internal/transcode"
)

// ordersID is the topic id the tests name "orders".
var ordersID = [16]byte{0xfe, 0x1c, 0xb3, 0x6b, 0xab, 0xe7, 0x4d, 0x16, 0x8d, 0x4d, 0xd1, 0x40, 0xfe, 0x2a, 0xde, 0xa1}

func ordersName(id [16]byte) (string, bool) { return "orders", id == ordersID }

// TestTopicNameResolution: a struct that names its topic by id alone gets the name
// DecodeOptions.TopicName gives, right after the id, under the key of its name field at
// older versions (or topicName); structs that carry a name, and ids TopicName does not
// know, are left as they are. EncodeOptions.TopicNames writes the same bytes back.
func TestTopicNameResolution(t *testing.T) {
	id := base64.RawURLEncoding.EncodeToString(ordersID[:])
	other := base64.RawURLEncoding.EncodeToString(make([]byte, 16))
	for _, c := range []struct {
		what     string
		key, ver int16 // response to key at ver; key < 0: a request
		json     string
		want     string // what the output holds with names; "" when it is unchanged
		strict   bool   // an encode without EncodeOptions.TopicNames refuses the names
	}{
		{what: "Produce v13 request", key: -1, json: `{"header":{"requestApiKey":0,"requestApiVersion":13,"correlationId":1,"clientId":"c"},"body":{"transactionalId":null,"acks":-1,"timeoutMs":1000,"topicData":[{"topicId":"` + id + `","partitionData":[{"index":0,"records":null}]}]}}`,
			want: `{"topicId":"` + id + `","name":"orders","partitionData":`},
		{what: "Produce v13 response", key: 0, ver: 13, json: `{"header":{"correlationId":1},"body":{"responses":[{"topicId":"` + id + `","partitionResponses":[]}],"throttleTimeMs":0}}`,
			want: `{"topicId":"` + id + `","name":"orders","partitionResponses":`},
		{what: "Fetch v13 response", key: 1, ver: 13, json: `{"header":{"correlationId":1},"body":{"throttleTimeMs":0,"errorCode":0,"sessionId":0,"responses":[{"topicId":"` + id + `","partitions":[]}]}}`,
			want: `{"topicId":"` + id + `","topic":"orders","partitions":`},
		{what: "Fetch v13 request, forgotten topics", key: -1, json: `{"header":{"requestApiKey":1,"requestApiVersion":13,"correlationId":1,"clientId":"c"},"body":{"replicaId":-1,"maxWaitMs":500,"minBytes":1,"maxBytes":1000,"isolationLevel":0,"sessionId":0,"sessionEpoch":-1,"topics":[],"forgottenTopicsData":[{"topicId":"` + id + `","partitions":[0]}],"rackId":""}}`,
			want: `"forgottenTopicsData":[{"topicId":"` + id + `","topic":"orders","partitions":[0]}]`},
		{what: "ShareFetch request: no name field at any version", key: -1, json: `{"header":{"requestApiKey":78,"requestApiVersion":1,"correlationId":1,"clientId":"c"},"body":{"groupId":"g","memberId":"m","shareSessionEpoch":0,"maxWaitMs":500,"minBytes":1,"maxBytes":1000,"maxRecords":10,"batchSize":10,"topics":[{"topicId":"` + id + `","partitions":[]}],"forgottenTopicsData":[]}}`,
			want: `{"topicId":"` + id + `","topicName":"orders","partitions":`, strict: true},
		{what: "Metadata v12 response: the name is on the wire", key: 3, ver: 12, json: `{"header":{"correlationId":1},"body":{"throttleTimeMs":0,"brokers":[],"clusterId":null,"controllerId":1,"topics":[{"errorCode":0,"name":"orders","topicId":"` + id + `","isInternal":false,"partitions":[],"topicAuthorizedOperations":0}]}}`},
		{what: "Produce v12: names, no ids", key: -1, json: `{"header":{"requestApiKey":0,"requestApiVersion":12,"correlationId":1,"clientId":"c"},"body":{"transactionalId":null,"acks":-1,"timeoutMs":1000,"topicData":[{"name":"orders","partitionData":[]}]}}`},
		{what: "an id TopicName does not know", key: -1, json: `{"header":{"requestApiKey":0,"requestApiVersion":13,"correlationId":1,"clientId":"c"},"body":{"transactionalId":null,"acks":-1,"timeoutMs":1000,"topicData":[{"topicId":"` + other + `","partitionData":[]}]}}`},
	} {
		plain := transcode.Framer{}
		named := transcode.Framer{Decode: transcode.DecodeOptions{TopicName: ordersName}, Encode: transcode.EncodeOptions{TopicNames: true}}
		var frame, without, with []byte
		var err error
		if c.key < 0 {
			frame, err = plain.AppendRequestFrame(nil, []byte(c.json))
		} else {
			frame, err = plain.AppendResponseFrame(nil, []byte(c.json), c.key, c.ver)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		decode := func(f *transcode.Framer) []byte {
			var out []byte
			var err error
			if c.key < 0 {
				out, err = f.AppendRequestFrameJSON(nil, frame)
			} else {
				out, err = f.AppendResponseFrameJSON(nil, frame, c.key, c.ver)
			}
			if err != nil {
				t.Fatalf("%s: %v", c.what, err)
			}
			return out
		}
		encode := func(f *transcode.Framer, js []byte) ([]byte, error) {
			if c.key < 0 {
				return f.AppendRequestFrame(nil, js)
			}
			return f.AppendResponseFrame(nil, js, c.key, c.ver)
		}
		without, with = decode(&plain), decode(&named)
		if c.want == "" {
			if !bytes.Equal(with, without) {
				t.Errorf("%s: the names changed the output\n got %s\nwant %s", c.what, with, without)
			}
			continue
		}
		if !bytes.Contains(with, []byte(c.want)) || bytes.Contains(without, []byte(`"orders"`)) {
			t.Errorf("%s:\n got %s\nwant it to hold %s", c.what, with, c.want)
		}
		if back, err := encode(&named, with); err != nil || !bytes.Equal(back, frame) {
			t.Errorf("%s: encode with TopicNames: %v\n got %x\nwant %x", c.what, err, back, frame)
		}
		back, err := encode(&plain, with)
		if c.strict && err == nil {
			t.Errorf("%s: encode without TopicNames accepted %s", c.what, with)
		}
		if !c.strict && (err != nil || !bytes.Equal(back, frame)) {
			t.Errorf("%s: encode without TopicNames (the name field is ignorable): %v", c.what, err)
		}
	}
}

// TestTopicNamesEveryMessage: for random messages of every api and version, a decode
// that names every topic id and an encode with EncodeOptions.TopicNames give back the
// frame byte for byte, and the names go only where a topic id is.
func TestTopicNamesEveryMessage(t *testing.T) {
	named := transcode.Framer{Decode: transcode.DecodeOptions{TopicName: func([16]byte) (string, bool) { return "t\"1", true }},
		Encode: transcode.EncodeOptions{TopicNames: true}}
	r := rand.New(rand.NewSource(11))
	resolved := map[string]bool{}
	for _, api := range codec.APIs() {
		for v := api.Request.MinVersion; v <= api.Request.MaxVersion; v++ {
			for seed := 0; seed < 3; seed++ {
				what := fmt.Sprintf("%s v%d seed %d", api.Name, v, seed)
				frame := randomRequestFrame(r, api, v)
				js, err := named.AppendRequestFrameJSON(nil, frame)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				back, err := named.AppendRequestFrame(nil, js)
				if err != nil || !bytes.Equal(back, frame) {
					t.Fatalf("%s: request round trip with names: %v\n%s", what, err, js)
				}
				checkNamesFollowIDs(t, what, js, resolved, api.Name+"Request")

				resp := codec.NewResponse(api.Key)
				codectest.Fill(resp, r, v)
				rh := codec.NewResponseHeader()
				rframe, err := codec.EncodeResponseFrame(nil, rh, v, resp)
				if err != nil {
					t.Fatal(err)
				}
				js, err = named.AppendResponseFrameJSON(nil, rframe, api.Key, v)
				if err != nil {
					t.Fatalf("%s response: %v", what, err)
				}
				back, err = named.AppendResponseFrame(nil, js, api.Key, v)
				if err != nil || !bytes.Equal(back, rframe) {
					t.Fatalf("%s: response round trip with names: %v\n%s", what, err, js)
				}
				checkNamesFollowIDs(t, what+" response", js, resolved, api.Name+"Response")
			}
		}
	}
	// The messages the descriptors give topic ids without names: each got its names.
	for _, m := range []string{"ProduceRequest", "ProduceResponse", "FetchRequest", "FetchResponse", "OffsetCommitRequest",
		"OffsetFetchResponse", "TxnOffsetCommitRequest", "ShareFetchRequest", "ShareFetchResponse", "ShareAcknowledgeRequest",
		"ShareAcknowledgeResponse", "ConsumerGroupHeartbeatResponse", "AlterPartitionRequest"} {
		if !resolved[m] {
			t.Errorf("%s: no topic name was added (random messages with topic ids at some version)", m)
		}
	}
}

// checkNamesFollowIDs checks that every resolved name in js comes right after a topic id.
func checkNamesFollowIDs(t *testing.T, what string, js []byte, resolved map[string]bool, msg string) {
	t.Helper()
	const name = `"t\"1"`
	n := bytes.Count(js, []byte(name))
	if n == 0 {
		return
	}
	resolved[msg] = true
	after := 0
	for _, part := range strings.Split(string(js), `"topicId":"`)[1:] {
		// a uuid is 22 base64 characters and its closing quote
		if rest := part[23:]; strings.HasPrefix(rest, `,"name":`+name) || strings.HasPrefix(rest, `,"topic":`+name) ||
			strings.HasPrefix(rest, `,"topicName":`+name) {
			after++
		}
	}
	if after != n {
		t.Fatalf("%s: %d names, %d of them right after a topic id\n%s", what, n, after, js)
	}
}
