package proxywasm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/conformance/broker"
	"github.com/kwire/kwire/envoy/kafkatest"
)

// validationConfigTmpl is one rule per validation mode (%[1]s is the topic
// prefix, %[2]s the proxy's address).
const validationConfigTmpl = `{"schema":{"default":"none","rules":[
	{"topic":"%[1]s.json","policy":"enforce","value":{"require_schema":false,"json":true}},
	{"topic":"%[1]s.uniq","policy":"enforce","value":{"require_schema":false,"unique_keys":true},"error":"POLICY_VIOLATION"},
	{"topic":"%[1]s.tomb","policy":"enforce","value":{"require_schema":false,"null":"refuse"}},
	{"topic":"%[1]s.tombok","policy":"enforce","schema_ids":[1]},
	{"topic":"%[1]s.key","policy":"enforce","value":{"require_schema":false},"key":{"json":true,"null":"refuse"}},
	{"topic":"%[1]s.framed","policy":"enforce","value":{"schema_ids":[1],"json":true}},
	{"topic":"%[1]s.pv","policy":"enforce","schema_ids":[1],"error":"POLICY_VIOLATION"},
	{"topic":"%[1]s.warn","policy":"warn","value":{"require_schema":false,"json":true}}]},
	"brokers":{"1":"%[2]s"}}`

// validationSend is one record the Java producer sends and what it must see.
type validationSend struct {
	name, topic string // topic without the prefix
	key, value  []byte // nil: null
	header      []string
	want        string // "ok", or the exception class and a part of its message
}

func framed(id uint32, payload string) []byte {
	b := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], id)
	return append(b, payload...)
}

var validationSends = []validationSend{
	{"json-ok", "json", nil, []byte(`{"a":[1,2.5,"x"]}`), nil, "ok"},
	{"json-bad", "json", nil, []byte(`{"a":`), nil, "InvalidRecordException value: not JSON: unexpected end of JSON at byte 5"},
	{"uniq-ok", "uniq", nil, []byte(`{"a":1,"b":{"a":2}}`), nil, "ok"},
	{"uniq-dup", "uniq", nil, []byte(`{"a":1,"a":2}`), nil, `PolicyViolationException value: duplicate object key "a" at byte 7`},
	{"tomb-value", "tomb", []byte("k"), []byte("v"), nil, "ok"},
	{"tomb-null", "tomb", []byte("k"), nil, nil, "InvalidRecordException value: null (a tombstone), and the rule refuses null values"},
	{"tombok-null", "tombok", []byte("k"), nil, nil, "ok"},
	{"tombok-noschema", "tombok", nil, []byte("x"), nil, "InvalidRecordException no schema reference"},
	{"key-ok", "key", []byte(`{"id":7}`), []byte("v"), nil, "ok"},
	{"key-bad", "key", []byte(`id7`), []byte("v"), nil, "InvalidRecordException key: not JSON"},
	{"key-null", "key", nil, []byte("v"), nil, "InvalidRecordException key: null, and the rule refuses null keys"},
	{"framed-ok", "framed", nil, framed(1, `{"x":1}`), nil, "ok"},
	{"framed-header", "framed", nil, []byte(`{"x":2}`), []string{"schema.id", "1"}, "ok"},
	{"framed-bad", "framed", nil, framed(1, `{x}`), nil, "InvalidRecordException value: not JSON: invalid character 'x' looking for an object key at byte 1"},
	{"pv-ok", "pv", nil, framed(1, "p"), nil, "ok"},
	{"pv-wrong-id", "pv", nil, framed(2, "p"), nil, "PolicyViolationException schema id 2 is not allowed"},
	{"warn-bad", "warn", nil, []byte("not json"), nil, "ok"},
}

// goValidationSends are the records of one Produce request the Go client sends
// through each proxy (one partition per topic), at v12 and at v7, after the Java
// producer: the response merges the broker's answers with the filter's.
var goValidationSends = []struct {
	topic      string
	key, value []byte
	code       kerr.Code
	msg        string
}{
	{"json", nil, []byte(`{"go":1}`), 0, ""},
	{"uniq", nil, []byte(`{"a":1,"a":1}`), kerr.PolicyViolation, `value: duplicate object key "a" at byte 7`},
	{"tomb", []byte("k"), nil, kerr.InvalidRecord, "value: null (a tombstone)"},
	{"tombok", nil, []byte("noschema"), kerr.InvalidRecord, "no schema reference"},
	{"key", []byte(`"k"`), []byte("v"), 0, ""},
	{"framed", nil, framed(1, `[1]`), 0, ""},
	{"pv", nil, framed(5, "x"), kerr.PolicyViolation, "schema id 5 is not allowed"},
	{"warn", nil, []byte("no"), 0, ""},
}

// TestEndToEndValidation sends a Java 4.4 producer's records through the harness
// proxy with the filter to a real 4.4.0 broker, once per chunking (whole reads,
// random sizes, one byte at a time), all in one JVM: each record the rules refuse
// gets its rule's error (INVALID_RECORD or POLICY_VIOLATION) with the record's
// message in the producer's callback, the accepted ones land on the broker (read
// back directly), and the per-topic counters say what failed where. Then a Go
// client sends one Produce request mixing accepted and rejected partitions through
// each proxy, at v12 (record errors and messages) and v7 (codes only).
func TestEndToEndValidation(t *testing.T) {
	java := javaClients(t)
	java[len(java)-1] = "io.kwire.proxywasm.ValidationClients"
	b := broker.SharedT(t, broker.Options{Version: "4.4.0"})
	direct := dialKafka(t, b.Addr("PLAINTEXT"))

	r := rand.New(rand.NewSource(17))
	var mu sync.Mutex
	chunkings := []struct {
		name string
		size func() int
	}{
		{"whole", nil},
		{"random", func() int { mu.Lock(); defer mu.Unlock(); return 1 + r.Intn(1500) }},
		{"bytes", func() int { return 1 }},
	}
	topicSet := map[string]bool{}
	for _, s := range validationSends {
		topicSet[s.topic] = true
	}
	plugins := map[string]*Plugin{}
	proxies := map[string]string{}
	var args, topics []string
	for _, ck := range chunkings {
		prefix := "val" + ck.name
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlugin(context.Background(), Config{Module: module(t), PluginConfiguration: []byte(fmt.Sprintf(validationConfigTmpl, prefix, ln.Addr())), Cache: cache})
		if err != nil {
			ln.Close()
			t.Fatal(err)
		}
		px := NewProxyOn(ln, p, b.Addr("PLAINTEXT"), ck.size)
		t.Cleanup(func() {
			px.Close()
			if t.Failed() {
				for _, l := range p.Logs() {
					t.Logf("%s filter log [%d] %s", prefix, l.Level, l.Message)
				}
			}
			p.Close()
		})
		plugins[prefix] = p
		proxies[prefix] = px.Addr()
		args = append(args, px.Addr()+","+prefix)
		for topic := range topicSet {
			topics = append(topics, prefix+"."+topic)
		}
	}
	createTopics(t, direct, 1, topics...)

	var spec bytes.Buffer
	enc := func(b []byte) string {
		switch {
		case b == nil:
			return "null"
		case len(b) == 0:
			return "-"
		}
		return hex.EncodeToString(b)
	}
	for _, s := range validationSends {
		fields := []string{s.name, "{P}." + s.topic, enc(s.key), enc(s.value)}
		for i := 0; i+1 < len(s.header); i += 2 {
			fields = append(fields, s.header[i], enc([]byte(s.header[i+1])))
		}
		spec.WriteString(strings.Join(fields, "\t") + "\n")
	}
	specFile := filepath.Join(t.TempDir(), "spec.tsv")
	if err := os.WriteFile(specFile, spec.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, java[0], append(java[1:], append([]string{specFile}, args...)...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	t.Logf("Java producer (%v):\n%s", time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("Java producer: %v\n%s", err, stderr.String())
	}
	got := map[string]string{} // prefix/name -> outcome
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if f := strings.SplitN(sc.Text(), " ", 4); len(f) == 4 && f[0] == "send" {
			got[f[1]+"/"+f[2]] = f[3]
		}
	}

	for _, ck := range chunkings {
		prefix := "val" + ck.name
		t.Run(ck.name, func(t *testing.T) {
			landed := map[string][]string{}
			for _, s := range validationSends {
				outcome := got[prefix+"/"+s.name]
				if s.want == "ok" {
					if !strings.HasPrefix(outcome, "ok "+prefix+"."+s.topic+" 0 ") {
						t.Errorf("%s: %q, want it accepted", s.name, outcome)
					}
					v := "<null>"
					if s.value != nil {
						v = string(s.value)
					}
					landed[s.topic] = append(landed[s.topic], v)
					continue
				}
				class, msg, _ := strings.Cut(s.want, " ")
				if !strings.HasPrefix(outcome, "error "+class+" ") || !strings.Contains(outcome, msg) {
					t.Errorf("%s: %q, want %s with %q", s.name, outcome, class, msg)
				}
			}
			// The Go client: one request mixing accepted and rejected partitions.
			k := dialKafka(t, proxies[prefix])
			for _, ver := range []int16{12, 7} {
				var msgs []records.Message
				for _, g := range goValidationSends {
					msgs = append(msgs, records.Message{Topic: prefix + "." + g.topic, Key: g.key, Value: g.value})
				}
				req, err := kafkatest.Produce(ver, -1, records.CompressionLZ4, msgs)
				if err != nil {
					t.Fatal(err)
				}
				resp := k.call(ver, req).(*codec.ProduceResponse)
				seen := 0
				for _, tr := range resp.Responses {
					for _, pr := range tr.PartitionResponses {
						for _, g := range goValidationSends {
							if tr.Name != prefix+"."+g.topic {
								continue
							}
							seen++
							if pr.ErrorCode != int16(g.code) {
								t.Errorf("go v%d %s: %s, want %s", ver, g.topic, kerr.Code(pr.ErrorCode), g.code)
							}
							if g.code == 0 || ver < 8 {
								if len(pr.RecordErrors) != 0 || (ver < 8 && pr.ErrorMessage != nil) {
									t.Errorf("go v%d %s: record errors %+v, message %v", ver, g.topic, pr.RecordErrors, pr.ErrorMessage)
								}
								continue
							}
							if pr.ErrorMessage == nil || !strings.Contains(*pr.ErrorMessage, g.msg) || len(pr.RecordErrors) != 1 ||
								pr.RecordErrors[0].BatchIndex != 0 || pr.RecordErrors[0].BatchIndexErrorMessage == nil ||
								!strings.Contains(*pr.RecordErrors[0].BatchIndexErrorMessage, g.msg) {
								t.Errorf("go v%d %s: message %v, record errors %+v, want %q", ver, g.topic, pr.ErrorMessage, pr.RecordErrors, g.msg)
							}
						}
					}
				}
				if seen != len(goValidationSends) {
					t.Errorf("go v%d: %d partitions answered, want %d", ver, seen, len(goValidationSends))
				}
				for _, g := range goValidationSends {
					if g.code == 0 {
						landed[g.topic] = append(landed[g.topic], string(g.value))
					}
				}
			}
			// What the broker holds, read directly: the accepted records, in order.
			for topic := range topicSet {
				var vals []string
				for _, m := range fetchAll(t, direct, prefix+"."+topic, 0) {
					v := "<null>"
					if m.Value != nil {
						v = string(m.Value)
					}
					vals = append(vals, v)
				}
				if g, w := strings.Join(vals, " | "), strings.Join(landed[topic], " | "); g != w {
					t.Errorf("%s.%s holds %q, want %q", prefix, topic, g, w)
				}
			}
			p := plugins[prefix]
			// The Java producer's records and the Go client's two requests.
			for name, want := range map[string]int64{
				"policy.topic." + prefix + ".json.value_json.rejected":     1,
				"policy.topic." + prefix + ".json.records_checked":         2 + 2,
				"policy.topic." + prefix + ".uniq.value_json.rejected":     1 + 2,
				"policy.topic." + prefix + ".tomb.value_null.rejected":     1 + 2,
				"policy.topic." + prefix + ".tombok.value_schema.rejected": 1 + 2,
				"policy.topic." + prefix + ".key.key_json.rejected":        1,
				"policy.topic." + prefix + ".key.key_null.rejected":        1,
				"policy.topic." + prefix + ".framed.value_json.rejected":   1,
				"policy.topic." + prefix + ".framed.records_checked":       3 + 2,
				"policy.topic." + prefix + ".pv.value_schema.rejected":     1 + 2,
				"policy.topic." + prefix + ".warn.value_json.warned":       1 + 2,
				"policy.records_rejected":                                  8 + 8,
				"policy.records_warned":                                    1 + 2,
				"policy.partitions_rejected":                               8 + 8,
			} {
				if g := metricValue(p, name); g != want {
					t.Errorf("%s = %d, want %d", name, g, want)
				}
			}
		})
	}
}
