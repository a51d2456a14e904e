package transcode

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/kwire/kwire/internal/proto"
)

// errResponse builds the error response to a request given as JSON and returns it
// decoded again as JSON, from its wire bytes.
func errResponse(t *testing.T, key, ver int16, reqJSON string, code int16, msg string) (map[string]any, ErrorPlace) {
	t.Helper()
	rq := apiMessage(key, proto.KindRequest)
	body, err := AppendWire(nil, rq.name, ver, []byte(reqJSON))
	if err != nil {
		t.Fatalf("%s v%d: the request: %v", rq.name, ver, err)
	}
	return decodeErrResponse(t, key, ver, body, code, msg)
}

func decodeErrResponse(t *testing.T, key, ver int16, body []byte, code int16, msg string) (map[string]any, ErrorPlace) {
	t.Helper()
	wire, place, err := ErrorResponse(key, ver, body, code, msg)
	if err != nil {
		t.Fatalf("api %d v%d: %v", key, ver, err)
	}
	j, err := AppendJSON(nil, apiMessage(key, proto.KindResponse).name, ver, wire, nil)
	if err != nil {
		t.Fatalf("api %d v%d: the error response does not decode: %v", key, ver, err)
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		t.Fatal(err)
	}
	return m, place
}

// at reads a path of keys and indexes ("topics", 0, "name") in decoded JSON.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func TestErrorResponseShapes(t *testing.T) {
	const msg = "refused by rule 2"
	for _, c := range []struct {
		what     string
		key, ver int16
		req      string
		place    ErrorPlace
		want     map[string]any // path (dotted, [i] for elements) -> value
	}{
		{"CreateTopics answers each topic with POLICY_VIOLATION", 19, 7,
			`{"topics":[{"name":"a","numPartitions":100,"replicationFactor":1,"assignments":[],"configs":[]},{"name":"b","numPartitions":1,"replicationFactor":1,"assignments":[],"configs":[]}],"timeoutMs":1000,"validateOnly":false}`,
			PerEntity, map[string]any{"topics.0.name": "a", "topics.0.errorCode": 44.0, "topics.0.errorMessage": msg, "topics.1.name": "b", "topics.1.errorCode": 44.0}},
		{"Produce answers each partition of each topic", 0, 9,
			`{"transactionalId":null,"acks":-1,"timeoutMs":1000,"topicData":[{"name":"t","partitionData":[{"index":0,"records":null},{"index":3,"records":null}]}]}`,
			PerEntity, map[string]any{"responses.0.name": "t", "responses.0.partitionResponses.0.index": 0.0, "responses.0.partitionResponses.1.index": 3.0,
				"responses.0.partitionResponses.1.errorCode": 44.0, "responses.0.partitionResponses.1.errorMessage": msg,
				"responses.0.partitionResponses.1.baseOffset": "-1", "responses.0.partitionResponses.1.logStartOffset": "-1"}},
		{"FindCoordinator v3 names no node", 10, 3, `{"key":"g","keyType":0}`,
			TopLevel, map[string]any{"errorCode": 44.0, "errorMessage": msg, "nodeId": -1.0, "host": "", "port": -1.0}},
		{"FindCoordinator v4 answers each key, with no node", 10, 4, `{"keyType":0,"coordinatorKeys":["g1","g2"]}`,
			PerEntity, map[string]any{"coordinators.0.key": "g1", "coordinators.1.key": "g2", "coordinators.1.errorCode": 44.0,
				"coordinators.1.nodeId": -1.0, "coordinators.1.port": -1.0, "coordinators.1.host": ""}},
		{"DeleteTopics v5 answers each name of topicNames", 20, 5, `{"topicNames":["x","y"],"timeoutMs":1}`,
			PerEntity, map[string]any{"responses.0.name": "x", "responses.1.name": "y", "responses.1.errorCode": 44.0, "responses.1.errorMessage": msg}},
		{"DeleteTopics v6 answers each topic", 20, 6, `{"topics":[{"name":"x","topicId":"AAAAAAAAAAAAAAAAAAAAAA"}],"timeoutMs":1}`,
			PerEntity, map[string]any{"responses.0.name": "x", "responses.0.errorCode": 44.0}},
		{"JoinGroup has a top-level error", 11, 5,
			`{"groupId":"g","sessionTimeoutMs":10,"rebalanceTimeoutMs":10,"memberId":"","groupInstanceId":null,"protocolType":"consumer","protocols":[]}`,
			TopLevel, map[string]any{"errorCode": 44.0}},
		{"Fetch v12: top level, and each partition under its own name", 1, 12,
			`{"replicaId":-1,"maxWaitMs":1,"minBytes":1,"maxBytes":1,"isolationLevel":0,"sessionId":0,"sessionEpoch":-1,"topics":[{"topic":"t","partitions":[{"partition":2,"currentLeaderEpoch":-1,"fetchOffset":"0","lastFetchedEpoch":-1,"logStartOffset":"-1","partitionMaxBytes":1}]}],"forgottenTopicsData":[],"rackId":""}`,
			TopLevel, map[string]any{"errorCode": 44.0, "responses.0.topic": "t", "responses.0.partitions.0.partitionIndex": 2.0, "responses.0.partitions.0.errorCode": 44.0}},
		{"DescribeGroups answers each group id", 15, 5, `{"groups":["g1","g2"],"includeAuthorizedOperations":false}`,
			PerEntity, map[string]any{"groups.0.groupId": "g1", "groups.1.groupId": "g2", "groups.1.errorCode": 44.0}},
		{"OffsetCommit answers topics and partitions", 8, 8,
			`{"groupId":"g","generationIdOrMemberEpoch":1,"memberId":"m","groupInstanceId":null,"topics":[{"name":"t","partitions":[{"partitionIndex":5,"committedOffset":"1","committedLeaderEpoch":-1,"committedMetadata":""}]}]}`,
			PerEntity, map[string]any{"topics.0.name": "t", "topics.0.partitions.0.partitionIndex": 5.0, "topics.0.partitions.0.errorCode": 44.0}},
		{"ApiVersions has a top-level error", 18, 3, `{"clientSoftwareName":"x","clientSoftwareVersion":"1"}`,
			TopLevel, map[string]any{"errorCode": 44.0}},
		{"CreateTopics sends back no count nor config of the request", 19, 7,
			`{"topics":[{"name":"a","numPartitions":100,"replicationFactor":5,"assignments":[],"configs":[{"name":"retention.ms","value":"1"}]}],"timeoutMs":1000,"validateOnly":false}`,
			PerEntity, map[string]any{"topics.0.name": "a", "topics.0.numPartitions": -1.0, "topics.0.replicationFactor": -1.0, "topics.0.configs": []any{}}},
		{"ListOffsets: no offset and no timestamp, not the one asked for", 2, 7,
			`{"replicaId":-1,"isolationLevel":0,"topics":[{"name":"t","partitions":[{"partitionIndex":1,"currentLeaderEpoch":-1,"timestamp":"-2"}]}]}`,
			PerEntity, map[string]any{"topics.0.partitions.0.partitionIndex": 1.0, "topics.0.partitions.0.timestamp": "-1", "topics.0.partitions.0.offset": "-1"}},
		{"Fetch v12 partitions: no high watermark, no log start offset, empty records", 1, 12,
			`{"replicaId":-1,"maxWaitMs":1,"minBytes":1,"maxBytes":1,"isolationLevel":0,"sessionId":7,"sessionEpoch":-1,"topics":[{"topic":"t","partitions":[{"partition":2,"currentLeaderEpoch":-1,"fetchOffset":"5","lastFetchedEpoch":-1,"logStartOffset":"3","partitionMaxBytes":1}]}],"forgottenTopicsData":[],"rackId":""}`,
			TopLevel, map[string]any{"sessionId": 7.0, "responses.0.partitions.0.highWatermark": "-1", "responses.0.partitions.0.logStartOffset": "-1", "responses.0.partitions.0.records": ""}},
		{"InitProducerId: no producer, whatever the request named", 22, 4,
			`{"transactionalId":"tx","transactionTimeoutMs":1000,"producerId":"17","producerEpoch":3}`,
			TopLevel, map[string]any{"producerId": "-1", "producerEpoch": -1.0}},
		{"JoinGroup v7: no member id, protocol type or name of the request", 11, 7,
			`{"groupId":"g","sessionTimeoutMs":10,"rebalanceTimeoutMs":10,"memberId":"m-1","groupInstanceId":null,"protocolType":"consumer","protocols":[]}`,
			TopLevel, map[string]any{"memberId": "", "protocolType": nil, "protocolName": nil, "generationId": -1.0}},
		{"OffsetFetch v1: no committed offset", 9, 1, `{"groupId":"g","topics":[{"name":"t","partitionIndexes":[4]}]}`,
			PerEntity, map[string]any{"topics.0.partitions.0.partitionIndex": 4.0, "topics.0.partitions.0.committedOffset": "-1", "topics.0.partitions.0.errorCode": 44.0}},
		{"AlterReplicaLogDirs answers the topics under every dir", 34, 2,
			`{"dirs":[{"path":"/a","topics":[{"name":"x","partitions":[1,2]}]},{"path":"/b","topics":[{"name":"y","partitions":[3]}]}]}`,
			PerEntity, map[string]any{"results.0.topicName": "x", "results.0.partitions.1.partitionIndex": 2.0, "results.1.topicName": "y",
				"results.1.partitions.0.partitionIndex": 3.0, "results.1.partitions.0.errorCode": 44.0}},
		{"AlterUserScramCredentials answers each user once, in order", 51, 0,
			`{"deletions":[{"name":"bob","mechanism":1}],"upsertions":[{"name":"alice","mechanism":1,"iterations":4096,"salt":"","saltedPassword":""},{"name":"bob","mechanism":2,"iterations":4096,"salt":"","saltedPassword":""}]}`,
			PerEntity, map[string]any{"results.0.user": "alice", "results.1.user": "bob", "results.1.errorCode": 44.0, "results.1.errorMessage": msg}},
		{"CreateTopics with no topic has nowhere to say it", 19, 7, `{"topics":[],"timeoutMs":1000,"validateOnly":false}`,
			NoErrorField, map[string]any{}},
	} {
		t.Run(c.what, func(t *testing.T) {
			m, place := errResponse(t, c.key, c.ver, c.req, 44, msg)
			if place != c.place {
				t.Errorf("placed %s, want %s", place, c.place)
			}
			for path, want := range c.want {
				var p []any
				for _, s := range strings.Split(path, ".") {
					var i int
					if _, err := fmt.Sscanf(s, "%d", &i); err == nil {
						p = append(p, i)
					} else {
						p = append(p, s)
					}
				}
				if got := at(m, p...); !reflect.DeepEqual(got, want) {
					t.Errorf("%s = %v, want %v (response %v)", path, got, want, m)
				}
			}
		})
	}
}

// errorCodes collects every errorCode of decoded JSON with its path; tops counts those
// of the root.
func errorCodes(v any, path string, out map[string]float64) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "errorCode" || k == "partitionErrorCode" {
				if f, ok := e.(float64); ok {
					out[path+"."+k] = f
				}
				continue
			}
			errorCodes(e, path+"."+k, out)
		}
	case []any:
		for i, e := range x {
			errorCodes(e, fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
}

// hasTopErrorCode reports whether the response of key has a root errorCode at ver.
func hasTopErrorCode(key, ver int16) bool {
	for _, f := range fieldsOf(&schemaStructs[apiMessage(key, proto.KindResponse).root]) {
		if f.name == "errorCode" && f.ver.has(ver) && !f.tagged.has(ver) {
			return true
		}
	}
	return false
}

// Every request vector Kafka's own classes wrote, of every api and version: the error
// response encodes at that version and decodes again, every errorCode in it is the
// code, a response with a root errorCode is answered there, and per-entity answers
// carry at least one. And every api and version with an all-default request: the
// answer encodes, and where it cannot carry the error is listed.
func TestErrorResponseEveryVector(t *testing.T) {
	files, _ := filepath.Glob("../../conformance/vectors/kafka-clients-*.jsonl")
	if len(files) == 0 {
		t.Fatal("no vectors")
	}
	seen := map[string]bool{}
	places := map[ErrorPlace]int{}
	for _, file := range files {
		for _, vec := range readVectorFile(t, file) {
			m := lookup(vec.Name)
			if m == nil || m.kind != kindRequest || apiMessage(m.apiKey, proto.KindResponse) == nil || !apiMessage(m.apiKey, proto.KindResponse).valid.has(vec.Version) {
				continue
			}
			if err := (&Doc{}).Parse(vec.Bytes, vec.Name, vec.Version); err != nil {
				continue // a version this build's schema refuses (superseded)
			}
			seen[fmt.Sprintf("%s v%d", vec.Name, vec.Version)] = true
			resp, place := decodeErrResponse(t, m.apiKey, vec.Version, vec.Bytes, 87, "no")
			places[place]++
			codes := map[string]float64{}
			errorCodes(resp, "", codes)
			for p, c := range codes {
				if c != 87 {
					t.Errorf("%s: %s is %v", vec.ID, p, c)
				}
			}
			top := hasTopErrorCode(m.apiKey, vec.Version)
			_, hasTop := codes[".errorCode"]
			switch {
			case top && (place != TopLevel || !hasTop):
				t.Errorf("%s: a root errorCode, placed %s", vec.ID, place)
			case !top && place == TopLevel:
				t.Errorf("%s: no root errorCode, placed %s", vec.ID, place)
			case place == PerEntity && len(codes) == 0:
				t.Errorf("%s: per entity, with no errorCode", vec.ID)
			case place == NoErrorField && len(codes) > 0:
				t.Errorf("%s: no error field, but %v", vec.ID, codes)
			}
		}
	}
	if len(seen) < 300 {
		t.Errorf("only %d request versions had vectors", len(seen))
	}
	t.Logf("%d request versions; answered %d top-level, %d per entity, %d with nowhere to say it", len(seen), places[TopLevel], places[PerEntity], places[NoErrorField])

	var nowhere []string
	for i := range schemaMessages {
		m := &schemaMessages[i]
		if m.kind != kindRequest || apiMessage(m.apiKey, proto.KindResponse) == nil {
			continue
		}
		for v := m.valid.lo; v <= m.valid.hi; v++ {
			if !apiMessage(m.apiKey, proto.KindResponse).valid.has(v) {
				continue
			}
			body, err := AppendWire(nil, m.name, v, []byte("{}"))
			if err != nil {
				t.Fatalf("%s v%d: the default request: %v", m.name, v, err)
			}
			_, place := decodeErrResponse(t, m.apiKey, v, body, 87, "no")
			if hasTopErrorCode(m.apiKey, v) != (place == TopLevel) {
				t.Errorf("%s v%d: placed %s", m.name, v, place)
			}
			if place == NoErrorField && v == m.valid.hi {
				nowhere = append(nowhere, m.name)
			}
		}
	}
	sort.Strings(nowhere)
	t.Logf("requests whose newest version, with no entity, has nowhere for the error: %s", strings.Join(nowhere, ", "))
}

type vector struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Version int16  `json:"version"`
	Bytes   []byte `json:"bytes"`
}

// readVectorFile reads a conformance vector file (the conformance package imports this
// one, so its reader is not at hand here).
func readVectorFile(t *testing.T, path string) []vector {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []vector
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var v vector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// FuzzErrorResponse: whatever the request bytes, api and version, the builder returns
// an error or a response that encodes at that version, without panicking.
func FuzzErrorResponse(f *testing.F) {
	t := &testing.T{}
	files, _ := filepath.Glob("../../conformance/vectors/kafka-clients-4.4.0.jsonl")
	for _, file := range files {
		for i, vec := range readVectorFile(t, file) {
			if m := lookup(vec.Name); m != nil && m.kind == kindRequest && i%7 == 0 {
				f.Add(m.apiKey, vec.Version, vec.Bytes)
			}
		}
	}
	f.Fuzz(func(t *testing.T, key, ver int16, body []byte) {
		wire, place, err := ErrorResponse(key, ver, body, 44, "refused")
		if err != nil {
			return
		}
		if _, err := AppendJSON(nil, apiMessage(key, proto.KindResponse).name, ver, wire, nil); err != nil {
			t.Fatalf("api %d v%d: the error response (%s) does not decode: %v", key, ver, place, err)
		}
	})
}
