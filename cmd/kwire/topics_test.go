package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kwire/kwire/cmd/kwire/internal/inspect"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/codec/transcode"
	"github.com/kwire/kwire/internal/recordsjson"
)

// ordersTopicID is the topic id the synthetic captures' Metadata response names
// "orders".
const ordersTopicID = "_hyza6vnTRaNTdFA_ireoQ"

// topicIDExchanges are the frames of three exchanges on one connection: a Metadata v12
// request and its response naming ordersTopicID "orders" (correlation id 1), a Produce
// v13 request and response (2) and a Fetch v13 request and response (3), the last two
// naming the topic by its id alone.
func topicIDExchanges(t *testing.T) (metadata, produce, fetch [2][]byte) {
	t.Helper()
	spec := recordsjson.NewBatchSpec()
	spec.Records = []records.Record{{Key: []byte("k"), Value: []byte("order 1")}}
	recs, err := spec.Append(nil, records.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(recs)
	var f transcode.Framer
	req := func(js string) []byte {
		t.Helper()
		b, err := f.AppendRequestFrame(nil, []byte(js))
		if err != nil {
			t.Fatalf("%v\n%s", err, js)
		}
		return b
	}
	resp := func(js string, key, version int16) []byte {
		t.Helper()
		b, err := f.AppendResponseFrame(nil, []byte(js), key, version)
		if err != nil {
			t.Fatalf("%v\n%s", err, js)
		}
		return b
	}
	metadata = [2][]byte{
		req(`{"header":{"requestApiKey":3,"requestApiVersion":12,"correlationId":1,"clientId":"c"},"body":{"topics":[{"topicId":"AAAAAAAAAAAAAAAAAAAAAA","name":"orders"}],"allowAutoTopicCreation":false,"includeTopicAuthorizedOperations":false}}`),
		resp(`{"header":{"correlationId":1},"body":{"throttleTimeMs":0,"brokers":[{"nodeId":1,"host":"10.0.0.2","port":9092,"rack":null}],"clusterId":"c1","controllerId":1,"topics":[{"errorCode":0,"name":"orders","topicId":"`+ordersTopicID+`","isInternal":false,"partitions":[{"errorCode":0,"partitionIndex":0,"leaderId":1,"leaderEpoch":0,"replicaNodes":[1],"isrNodes":[1],"offlineReplicas":[]}],"topicAuthorizedOperations":-2147483648}]}}`, 3, 12),
	}
	produce = [2][]byte{
		req(`{"header":{"requestApiKey":0,"requestApiVersion":13,"correlationId":2,"clientId":"c"},"body":{"transactionalId":null,"acks":-1,"timeoutMs":1000,"topicData":[{"topicId":"` + ordersTopicID + `","partitionData":[{"index":0,"records":"` + b64 + `"}]}]}}`),
		resp(`{"header":{"correlationId":2},"body":{"responses":[{"topicId":"`+ordersTopicID+`","partitionResponses":[{"index":0,"errorCode":0,"baseOffset":"0","logAppendTimeMs":"-1","logStartOffset":"0","recordErrors":[],"errorMessage":null}]}],"throttleTimeMs":0}}`, 0, 13),
	}
	fetch = [2][]byte{
		req(`{"header":{"requestApiKey":1,"requestApiVersion":13,"correlationId":3,"clientId":"c"},"body":{"replicaId":-1,"maxWaitMs":500,"minBytes":1,"maxBytes":1000000,"isolationLevel":0,"sessionId":0,"sessionEpoch":-1,"topics":[{"topicId":"` + ordersTopicID + `","partitions":[{"partition":0,"currentLeaderEpoch":0,"fetchOffset":"0","lastFetchedEpoch":-1,"logStartOffset":"-1","partitionMaxBytes":1000000}]}],"forgottenTopicsData":[],"rackId":""}}`),
		resp(`{"header":{"correlationId":3},"body":{"throttleTimeMs":0,"errorCode":0,"sessionId":0,"responses":[{"topicId":"`+ordersTopicID+`","partitions":[{"partitionIndex":0,"errorCode":0,"highWatermark":"1","lastStableOffset":"1","logStartOffset":"0","abortedTransactions":[],"preferredReadReplica":-1,"records":"`+b64+`"}]}]}}`, 1, 13),
	}
	return metadata, produce, fetch
}

// topicLine is what the topic tests read of a line: the topics of Produce and Fetch.
type topicLine struct {
	Dir    string `json:"dir"`
	APIKey int16  `json:"apiKey"`
	Body   struct {
		TopicData []struct { // Produce request
			TopicID       string          `json:"topicId"`
			Name          *string         `json:"name"`
			PartitionData json.RawMessage `json:"partitionData"`
		} `json:"topicData"`
		Topics []struct { // Fetch request, Metadata response
			TopicID string  `json:"topicId"`
			Topic   *string `json:"topic"`
			Name    *string `json:"name"`
		} `json:"topics"`
		Responses []struct { // Produce and Fetch responses
			TopicID    string          `json:"topicId"`
			Name       *string         `json:"name"`  // Produce
			Topic      *string         `json:"topic"` // Fetch
			Partitions json.RawMessage `json:"partitions"`
		} `json:"responses"`
	} `json:"body"`
	Error json.RawMessage `json:"error"`
}

// topicOf is the name a Produce or Fetch line gives its topic, "<null>" when it gives
// none, and the topic id it gives.
func (l *topicLine) topicOf() (name, id string) {
	s := func(p *string) string {
		if p == nil {
			return "<null>"
		}
		return *p
	}
	b := &l.Body
	switch {
	case l.APIKey == 0 && l.Dir == "request" && len(b.TopicData) == 1:
		return s(b.TopicData[0].Name), b.TopicData[0].TopicID
	case l.APIKey == 0 && len(b.Responses) == 1:
		return s(b.Responses[0].Name), b.Responses[0].TopicID
	case l.APIKey == 1 && l.Dir == "request" && len(b.Topics) == 1:
		return s(b.Topics[0].Topic), b.Topics[0].TopicID
	case l.APIKey == 1 && len(b.Responses) == 1:
		return s(b.Responses[0].Topic), b.Responses[0].TopicID
	}
	return "<no topic>", ""
}

func runPcapInput(t *testing.T, stdin []byte, args ...string) ([]topicLine, []byte, int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append([]string{"pcap"}, args...), bytes.NewReader(stdin), &out, &errOut)
	var lines []topicLine
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l topicLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, sc.Text())
		}
		lines = append(lines, l)
	}
	return lines, out.Bytes(), code, errOut.String()
}

// TestPcapTopicNames: kwire pcap names the topics of Produce v13 and Fetch v13, which
// carry topic ids alone, from the capture's Metadata response: one before them in any
// input; one after them in a regular file (read twice), not on standard input (read
// once); never with --no-resolve. The names are not wire fields: kwire encode writes
// the captured frames back byte for byte.
func TestPcapTopicNames(t *testing.T) {
	metadata, produce, fetch := topicIDExchanges(t)
	dir := t.TempDir()
	capture := func(name string, exchanges ...[2][]byte) (string, []byte) {
		c := newSynthConn(t, 9092)
		c.handshake()
		for _, e := range exchanges {
			c.send(false, e[0], 1460)
			c.send(true, e[1], 1460)
		}
		file := filepath.Join(dir, name+".pcap")
		writePcap(t, file, false, c.pkts)
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return file, data
	}
	before, beforeData := capture("before", metadata, produce, fetch)
	after, afterData := capture("after", produce, fetch, metadata)

	for _, c := range []struct {
		what  string
		stdin []byte
		args  []string
		want  string // the name of each Produce and Fetch line
	}{
		{"Metadata first, file", nil, []string{before}, "orders"},
		{"Metadata first, standard input", beforeData, []string{"-"}, "orders"},
		{"Metadata last, file (two passes)", nil, []string{after}, "orders"},
		{"Metadata last, standard input (one pass)", afterData, []string{"-"}, "<null>"},
		{"Metadata first, --no-resolve", nil, []string{"--no-resolve", before}, "<null>"},
		{"Metadata last, --no-resolve", nil, []string{after, "--no-resolve"}, "<null>"},
	} {
		lines, out, code, stderr := runPcapInput(t, c.stdin, c.args...)
		if code != 0 || len(lines) != 6 {
			t.Errorf("%s: exit %d, %d lines (%s)", c.what, code, len(lines), stderr)
			continue
		}
		named := 0
		for i, l := range lines {
			if l.APIKey == 3 {
				continue
			}
			name, id := l.topicOf()
			if name != c.want || id != ordersTopicID {
				t.Errorf("%s: line %d (%s %d): topic %q id %q, want %q beside %s", c.what, i+1, l.Dir, l.APIKey, name, id, c.want, ordersTopicID)
			}
			named++
		}
		if named != 4 {
			t.Errorf("%s: %d Produce and Fetch lines, want 4", c.what, named)
		}
		// The records are there as without names.
		if n := strings.Count(string(out), `"value":{"text":"order 1"}`); n != 2 {
			t.Errorf("%s: %d decoded records, want 2 (Produce request, Fetch response)", c.what, n)
		}
		if c.want == "orders" {
			for _, key := range []string{`"topicId":"` + ordersTopicID + `","name":"orders","partitionData":`, `"topicId":"` + ordersTopicID + `","topic":"orders","partitions":`} {
				if !strings.Contains(string(out), key) {
					t.Errorf("%s: no %s in the lines", c.what, key)
				}
			}
		}
	}

	// Encoding the named lines again gives the frames of the capture.
	var raw, frames, errOut bytes.Buffer
	if code := run([]string{"pcap", "--raw-records", after}, nil, &raw, &errOut); code != 0 || !strings.Contains(raw.String(), `"topic":"orders"`) {
		t.Fatalf("pcap --raw-records: exit %d (%s)", code, errOut.String())
	}
	if code := run([]string{"encode"}, &raw, &frames, &errOut); code != 0 {
		t.Fatalf("encode: exit %d: %s", code, errOut.String())
	}
	var want []byte
	for _, e := range [][2][]byte{produce, fetch, metadata} {
		want = append(append(want, e[0]...), e[1]...)
	}
	if !bytes.Equal(frames.Bytes(), want) {
		t.Errorf("encode of the named lines: %d bytes, not the %d of the captured frames", frames.Len(), len(want))
	}

	// The browser inspector holds the whole capture: it names them in two passes too.
	page, err := inspect.Pcap(nil, afterData, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"topicId":"` + ordersTopicID + `","name":"orders","partitionData":`, `"topicId":"` + ordersTopicID + `","topic":"orders","partitions":`} {
		if !strings.Contains(string(page), key) {
			t.Errorf("inspector: no %s in\n%s", key, page)
		}
	}

	// Standard input is read once: a second "-" is a usage error.
	if _, _, code, _ := runPcapInput(t, beforeData, "-", "-"); code != exitUsage {
		t.Errorf("pcap - -: exit %d, want %d", code, exitUsage)
	}
}
