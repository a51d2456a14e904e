package kafkafilter

import (
	"os"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec/records"
)

const validationCfg = `{"schema":{"default":"none","rules":[
	{"topic":"js","policy":"enforce","value":{"require_schema":false,"json":true}},
	{"topic":"uk","policy":"enforce","value":{"require_schema":false,"unique_keys":true},"error":"POLICY_VIOLATION"},
	{"topic":"tomb","policy":"enforce","value":{"require_schema":false,"null":"refuse"}},
	{"topic":"key","policy":"enforce","value":{"require_schema":false},"key":{"json":true,"null":"refuse"}},
	{"prefix":"w.","policy":"warn","value":{"require_schema":false,"json":true}}]}}`

func krec(topic string, part int32, key, value []byte) records.Message {
	return records.Message{Topic: topic, Partition: part, Key: key, Value: value}
}

// TestValidationModes sends one Produce request with a partition per mode through
// the filter: the failing ones get their rule's error, with the record's message
// in error_message and record_errors from Produce v8 (which has them), the others reach the broker, and the per-topic
// counters say what failed where.
func TestValidationModes(t *testing.T) {
	for _, ver := range []int16{7, 9} {
		for _, ck := range chunkings {
			t.Run(ck.name+"/v"+itoa(int32(ver)), func(t *testing.T) {
				h := newHost()
				f := mustFilter(t, h, validationCfg)
				p := newPipe(t, f, ck.c)
				p.send(produceFrame(t, 1, ver, -1, records.CompressionLZ4,
					krec("js", 0, nil, []byte(`{"ok":true}`)),
					krec("js", 1, nil, []byte(`{"ok":true}`)), krec("js", 1, nil, []byte(`{"ok":`)),
					krec("uk", 0, nil, []byte(`{"a":1,"a":2}`)),
					krec("uk", 1, nil, []byte(`{"a":1,"b":2}`)),
					krec("tomb", 0, []byte("k"), nil),
					krec("tomb", 1, []byte("k"), []byte("v")),
					krec("key", 0, nil, []byte("v")),
					krec("key", 1, []byte(`{"id":1}`), nil),
					krec("key", 2, []byte(`id`), []byte("v")),
					krec("w.a", 0, nil, []byte("not json")),
				))
				if p.closed || len(p.replies) != 1 {
					t.Fatalf("closed %v, %d replies; logs %v", p.closed, len(p.replies), h.logs)
				}
				resp := decodeProduce(t, p.replies[0], ver)
				want := "js/0=0 js/1=87 uk/1=0 uk/0=44 tomb/1=0 tomb/0=87 key/1=0 key/0=87 key/2=87 w.a/0=0"
				if got := strings.Join(codes(resp), " "); got != want {
					t.Errorf("codes %s, want %s", got, want)
				}
				msgs := map[string]string{
					"js/1":   "value: not JSON: unexpected end of JSON at byte 6",
					"uk/0":   `value: duplicate object key "a" at byte 7`,
					"tomb/0": "value: null (a tombstone)",
					"key/0":  "key: null",
					"key/2":  "key: not JSON",
				}
				for _, tr := range resp.Responses {
					for _, pr := range tr.PartitionResponses {
						m, ok := msgs[tr.Name+"/"+itoa(pr.Index)]
						if !ok {
							continue
						}
						if ver >= 8 && (pr.ErrorMessage == nil || !strings.Contains(*pr.ErrorMessage, m)) {
							t.Errorf("%s/%d: error message %v, want it to contain %q", tr.Name, pr.Index, pr.ErrorMessage, m)
						}
						wantIdx := int32(0)
						if tr.Name == "js" {
							wantIdx = 1
						}
						switch {
						case ver < 8 && len(pr.RecordErrors) != 0:
							t.Errorf("%s/%d: record errors at v%d", tr.Name, pr.Index, ver)
						case ver >= 8 && (len(pr.RecordErrors) != 1 || pr.RecordErrors[0].BatchIndex != wantIdx ||
							pr.RecordErrors[0].BatchIndexErrorMessage == nil || !strings.Contains(*pr.RecordErrors[0].BatchIndexErrorMessage, m)):
							t.Errorf("%s/%d: record errors %+v, want batch index %d with %q", tr.Name, pr.Index, pr.RecordErrors, wantIdx, m)
						}
					}
				}
				var delivered []string
				for _, pd := range p.br.Produced() {
					delivered = append(delivered, pd.Topic+"/"+itoa(pd.Partition))
				}
				if got := strings.Join(delivered, " "); got != "js/0 uk/1 tomb/1 key/1 w.a/0" {
					t.Errorf("broker received %s", got)
				}
				for name, want := range map[string]int64{
					"policy.topic.js.records_checked":       3,
					"policy.topic.js.value_json.rejected":   1,
					"policy.topic.uk.value_json.rejected":   1,
					"policy.topic.tomb.value_null.rejected": 1,
					"policy.topic.key.key_null.rejected":    1,
					"policy.topic.key.key_json.rejected":    1,
					"policy.topic.key.records_checked":      3,
					"policy.topic.w.a.value_json.warned":    1,
					"policy.topic.w.a.records_checked":      1,
					"policy.records_failed":                 6,
					"policy.partitions_rejected":            5,
				} {
					if got := h.value(name); got != want {
						t.Errorf("%s = %d, want %d", name, got, want)
					}
				}
				h.flush()
				for _, m := range h.metrics {
					if strings.Contains(m.name, ".policy.topic.") && m.value == 0 {
						t.Errorf("%s defined with no count", m.name)
					}
				}
			})
		}
	}
}

// TestPolicyCountsOneCallPerCounter checks that a request's counts reach the
// host once per counter, and that topics past the bound count as "_other".
func TestPolicyCountsOneCallPerCounter(t *testing.T) {
	h := &countingHost{fakeHost: newHost(), calls: map[uint32]int{}}
	f := mustFilter(t, h, `{"schema":{"rules":[{"prefix":"t","policy":"warn","value":{"require_schema":false,"json":true}}]}}`)
	p := newPipe(t, f, whole)
	var msgs []records.Message
	for i := int32(0); i < 4; i++ {
		msgs = append(msgs, krec("t1", i, nil, []byte("x")), krec("t1", i, nil, []byte("{}")))
	}
	p.send(produceFrame(t, 1, 9, -1, records.CompressionNone, msgs...))
	h.flush()
	id := h.byName["kafka.kwire.policy.topic.t1.value_json.warned"]
	if id == 0 || h.calls[id] != 1 || h.value("policy.topic.t1.value_json.warned") != 4 || h.value("policy.topic.t1.records_checked") != 8 {
		t.Errorf("value_json.warned: %d calls, value %d; checked %d", h.calls[id], h.value("policy.topic.t1.value_json.warned"), h.value("policy.topic.t1.records_checked"))
	}
	for i := 0; i < maxStatTopics+2; i++ {
		f.s.stats.topics["t-"+itoa(int32(i))] = &topicStats{}
	}
	p.send(produceFrame(t, 2, 9, -1, records.CompressionNone, krec("tz", 0, nil, []byte("x"))))
	if h.value("policy.topic._other.value_json.warned") != 1 || h.byName["kafka.kwire.policy.topic.tz.value_json.warned"] != 0 {
		t.Errorf("past the bound: _other %d", h.value("policy.topic._other.value_json.warned"))
	}
}

type countingHost struct {
	*fakeHost
	calls map[uint32]int
}

func (h *countingHost) IncrementMetric(id uint32, d int64) {
	h.calls[id]++
	h.fakeHost.IncrementMetric(id, d)
}

// TestReadmeValidationExamples configures a filter with every example of the
// record validation section of examples/envoy/README.md.
func TestReadmeValidationExamples(t *testing.T) {
	b, err := os.ReadFile("../../examples/envoy/README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Record validation")
	if !ok {
		t.Fatal("no record validation section in examples/envoy/README.md")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	n := 0
	for _, part := range strings.Split(sec, "```json\n")[1:] {
		cfg, _, _ := strings.Cut(part, "```")
		if _, err := New(newHost(), []byte(cfg)); err != nil {
			t.Errorf("example %d refused: %v\n%s", n, err, cfg)
		}
		n++
	}
	if n < 5 {
		t.Errorf("%d examples, want one per mode (5)", n)
	}
}
