package kafkafilter

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/codec/rules"
	"github.com/kwire/kwire/envoy/kafkatest"
)

const safeguards = `{"rules": [
 {"api": "CreateTopics", "field": "topics[].replicationFactor", "min": 3, "message": "replication factor below 3"},
 {"api": "CreateTopics", "field": "topics[].numPartitions", "max": 64},
 {"api": "Produce", "field": "acks", "in": [-1]},
 {"api": "JoinGroup", "field": "sessionTimeoutMs", "max": 30000}
]}`

func createTopicsFrame(corr int32, rf int16, names ...string) []byte {
	ct := codec.NewCreateTopicsRequest()
	for _, n := range names {
		ct.Topics = append(ct.Topics, codec.CreateTopicsRequestCreatableTopic{Name: n, NumPartitions: 3, ReplicationFactor: rf})
	}
	return kafkatest.MustRequest(corr, 7, ct)
}

// Requests that break a rule are answered in their api's shape with the rule's message
// and never reach the broker; requests that follow the rules reach it byte for byte;
// apis no rule names stream through. A refused acks=0 Produce, which gets no answer,
// closes the connection as Kafka's broker does: after the responses to the requests
// before it, and nothing after it reaches the broker. Whole, byte by byte and in
// random chunks.
func TestRules(t *testing.T) {
	for name, chunk := range map[string]chunker{"whole": whole, "bytewise": bytewise, "random": randomly(7)} {
		t.Run(name, func(t *testing.T) {
			h := newHost()
			f := mustFilter(t, h, safeguards)
			if want := "configured: no schema policy, 4 request rules,"; len(h.logs) == 0 || !strings.Contains(h.logs[0], want) {
				t.Errorf("logs %v, want the first to say %q", h.logs, want)
			}
			p := newPipe(t, f, chunk)
			good := createTopicsFrame(2, 3, "ok")
			goodProduce := produceFrame(t, 4, 9, -1, records.CompressionNone, rec("t", 0, []byte("v")))
			p.send(
				createTopicsFrame(1, 1, "a", "b"),
				good,
				produceFrame(t, 3, 9, 1, records.CompressionNone, rec("t", 0, []byte("v")), rec("t", 2, []byte("w"))),
				goodProduce,
				metadataFrame(5, 12, "t"),
				produceFrame(t, 6, 9, 0, records.CompressionNone, rec("t", 0, []byte("v"))), // acks=0: refused, no answer
				produceFrame(t, 7, 9, -1, records.CompressionNone, rec("t", 1, []byte("after"))),
			)
			if len(p.replies) != 5 || !p.closed {
				t.Fatalf("%d replies, closed %v; want 5 and closed", len(p.replies), p.closed)
			}
			for i, c := range []int32{1, 2, 3, 4, 5} {
				if corrOf(p.replies[i]) != c {
					t.Errorf("reply %d has correlation id %d, want %d", i, corrOf(p.replies[i]), c)
				}
			}
			rf, err := codec.DecodeResponseFrame(p.replies[0], 19, 7)
			if err != nil || corrOf(p.replies[0]) != 1 {
				t.Fatalf("create topics: %v", err)
			}
			ts := rf.Body.(*codec.CreateTopicsResponse).Topics
			if len(ts) != 2 || ts[0].Name != "a" || ts[1].Name != "b" {
				t.Fatalf("topics %+v", ts)
			}
			for _, tp := range ts {
				if tp.ErrorCode != 44 || tp.ErrorMessage == nil || *tp.ErrorMessage != "replication factor below 3" {
					t.Errorf("topic %s: %d %v", tp.Name, tp.ErrorCode, tp.ErrorMessage)
				}
			}
			if got := codes(decodeProduce(t, p.replies[2], 9)); strings.Join(got, " ") != "t/0=44 t/2=44" {
				t.Errorf("produce acks=1: %v", got)
			}
			// What reached the broker: the good requests exactly, ApiVersions in place of
			// each refused one (the acks=0 one's response is when the connection
			// closes), nothing after the acks=0 one.
			var sawGood, sawGoodProduce bool
			for _, fr := range p.upFrames {
				sawGood = sawGood || bytes.Equal(fr, good)
				sawGoodProduce = sawGoodProduce || bytes.Equal(fr, goodProduce)
			}
			if !sawGood || !sawGoodProduce {
				t.Errorf("the requests that follow the rules did not reach the broker unchanged")
			}
			if r := p.br.Requests(); r[19] != 1 || r[0] != 1 || r[3] != 1 || r[18] != 3 {
				t.Errorf("broker saw %v", r)
			}
			if h.value("rules.requests_refused") != 3 || h.value("rules.connections_closed") != 1 {
				t.Errorf("refused %d, closed %d", h.value("rules.requests_refused"), h.value("rules.connections_closed"))
			}
		})
	}
}

// A refused request whose response has no field for the error closes the connection,
// counted; so does a CreateTopics with no topic to carry it.
func TestRulesCloseWhereNoErrorField(t *testing.T) {
	h := newHost()
	f := mustFilter(t, h, `{"rules":[{"api":"CreateTopics","field":"timeoutMs","max":1000}]}`)
	p := newPipe(t, f, whole)
	ct := codec.NewCreateTopicsRequest()
	ct.TimeoutMs = 5000
	p.send(kafkatest.MustRequest(1, 7, ct))
	if !p.closed || len(p.replies) != 0 || h.value("rules.connections_closed") != 1 {
		t.Fatalf("closed %v, %d replies, closed count %d", p.closed, len(p.replies), h.value("rules.connections_closed"))
	}
}

func TestRulesBadConfig(t *testing.T) {
	for _, tc := range []struct{ cfg, want string }{
		{`{"rules":[{"api":"CreateTopic","field":"x","min":1}]}`, `$.rules: [0].api: no api "CreateTopic"; did you mean CreateTopics? (at byte 17)`},
		{`{"rules":[{"api":"CreateTopics","field":"topics[].replicationFactr","min":1}]}`, "replicationFactor"},
		{`{"rules":{}}`, "rules"},
		{`{"rule_error_code":9999}`, "rule_error_code: 9999"},
	} {
		_, err := New(newHost(), []byte(tc.cfg))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// A Produce request under rules is checked without its records when it starts the
// proxy's buffer: one that follows the rules reaches the broker byte for byte, one
// that breaks them (at any field, the last partition's index included) gets its
// api's answer, and the records are never copied into the filter. At v3 (no tagged
// fields), v9 (flexible) and v13 (topic ids).
func TestRulesProduceSkeleton(t *testing.T) {
	big := bytes.Repeat([]byte("record "), 8<<10)
	h := newHost()
	f := mustFilter(t, h, `{"rules":[
		{"api":"Produce","field":"acks","in":[-1,1]},
		{"api":"Produce","field":"topicData[].partitionData[].index","max":99,"message":"partition index over 99"}]}`)
	p := newPipe(t, f, whole)
	good3 := produceFrame(t, 1, 3, 1, records.CompressionNone, rec("t", 0, big), rec("t", 1, big))
	good9 := produceFrame(t, 2, 9, -1, records.CompressionNone, rec("t", 0, big), rec("u", 5, big))
	badIndex := produceFrame(t, 3, 9, -1, records.CompressionNone, rec("t", 0, big), rec("u", 120, big))
	badAcks := produceFrame(t, 4, 3, 0, records.CompressionNone, rec("t", 0, big)) // acks=0: no answer
	req13, err := kafkatest.Produce(13, -1, records.CompressionNone, []records.Message{rec("t", 0, big), rec("t", 101, big)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range req13.TopicData {
		req13.TopicData[i].TopicID = kafkatest.TopicID("t")
	}
	bad13 := kafkatest.MustRequest(5, 13, req13)
	for _, fr := range [][]byte{metadataFrame(9, 12, "t"), good3, good9, badIndex, bad13, badAcks, good3} {
		p.send(fr)
	}
	// The acks=0 one closes the connection; the request after it goes nowhere.
	if !p.closed || len(p.replies) != 5 {
		t.Fatalf("closed %v, %d replies, want closed and 5 (logs %v)", p.closed, len(p.replies), h.logs)
	}
	if got := codes(decodeProduce(t, p.replies[3], 9)); strings.Join(got, " ") != "t/0=44 u/120=44" {
		t.Errorf("bad index: %v", got)
	}
	if r := decodeProduce(t, p.replies[4], 13); len(r.Responses) != 1 || len(r.Responses[0].PartitionResponses) != 2 || r.Responses[0].PartitionResponses[1].ErrorCode != 44 {
		t.Errorf("bad v13: %+v", r.Responses)
	}
	var sawGood3, sawGood9 bool
	for _, fr := range p.upFrames {
		sawGood3 = sawGood3 || bytes.Equal(fr, good3)
		sawGood9 = sawGood9 || bytes.Equal(fr, good9)
	}
	if !sawGood3 || !sawGood9 {
		t.Errorf("the requests that follow the rules did not reach the broker unchanged")
	}
	if r := p.br.Requests(); r[0] != 2 {
		t.Errorf("the broker saw %d Produce requests, want 2", r[0])
	}
	if n := h.value("rules.requests_refused"); n != 3 {
		t.Errorf("rules.requests_refused = %d, want 3", n)
	}
	if c := p.c.Copied(); c > 16<<10 {
		t.Errorf("%d bytes copied into the filter: the records were copied", c)
	}
}

// FuzzRulesDownstream feeds arbitrary client bytes to a filter with Produce and
// CreateTopics rules, in reads of any size: no panic, and every request that reaches
// the broker whole and readable follows the rules (nothing that breaks one passes,
// whether the request was checked whole or on its skeleton).
func FuzzRulesDownstream(f *testing.F) {
	// A rule on every partition (the skeleton path), and rules on head fields only
	// under a schema policy (decided from the first bytes, then the policy's walk).
	configs := []struct{ rules, extra string }{
		{`[{"api":"Produce","field":"acks","in":[-1,1]},
		   {"api":"Produce","field":"topicData[].partitionData[].index","max":99},
		   {"api":"CreateTopics","field":"topics[].numPartitions","max":64}]`, ``},
		{`[{"api":"Produce","field":"acks","in":[-1,1]},{"api":"Produce","field":"timeoutMs","max":60000},
		   {"api":"*","field":"header.clientId","pattern":"^[a-z]+$"}]`,
			`,"schema":{"default":"none","rules":[{"topic":"orders","policy":"enforce","schema_ids":[1]}]}`},
	}
	var sets []*rules.Set
	for _, c := range configs {
		set, err := rules.Parse([]byte(c.rules))
		if err != nil {
			f.Fatal(err)
		}
		sets = append(sets, set)
	}
	f.Add(produceFrame(&testing.T{}, 1, 9, -1, records.CompressionNone, rec("t", 0, []byte("x")), rec("t", 100, []byte("y"))), uint8(255), false)
	f.Add(produceFrame(&testing.T{}, 1, 3, 1, records.CompressionNone, rec("t", 0, []byte("x"))), uint8(255), true)
	f.Add(produceFrame(&testing.T{}, 1, 9, 0, records.CompressionNone, rec("orders", 0, []byte("x"))), uint8(255), true)
	f.Add(createTopicsFrame(2, 3, "a"), uint8(7), false)
	f.Fuzz(func(t *testing.T, data []byte, step uint8, second bool) {
		i := 0
		if second {
			i = 1
		}
		fl, err := New(newHost(), []byte(`{"rules":`+configs[i].rules+configs[i].extra+`}`))
		if err != nil {
			t.Fatal(err)
		}
		feedDownstream(t, fl.NewConn(), data, int(step)+1, func(fr []byte) {
			rf, err := codec.DecodeRequestFrame(fr)
			if err != nil {
				return
			}
			hlen, _ := codec.RequestHeaderLen(fr)
			key, ver := rf.Header.RequestAPIKey, rf.Header.RequestAPIVersion
			var clientID *string // none in a v0 request header (ControlledShutdown v0)
			if hlen >= 14 {
				clientID = rf.Header.ClientID
			}
			if v, err := sets[btoi(second)].Check(key, ver, clientID, fr[hlen:]); err == nil && v != nil {
				t.Fatalf("api %d v%d reached the broker breaking a rule: %s", key, ver, v.Message)
			}
		})
	})
}

// feedDownstream delivers data to c as client bytes in reads of step bytes, and each
// whole frame the filter forwards to check, until the filter closes the connection.
func feedDownstream(t *testing.T, c *Conn, data []byte, step int, check func(frame []byte)) {
	var dn proxyDir
	var split kafkatest.Splitter
	for i := 0; i < len(data); i += step {
		out, closed := dn.deliver(t, c, data[i:min(i+step, len(data))], true)
		for _, fr := range split.Push(out) {
			check(fr)
		}
		if closed {
			break
		}
	}
	c.Done()
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Rules and a schema policy together: a Produce to a topic no policy rule covers is
// checked on its skeleton and forwarded from the proxy's buffer; one to a covered
// topic goes the whole-frame path, where the policy reads its records.
func TestRulesSkeletonWithPolicy(t *testing.T) {
	big := bytes.Repeat([]byte("record "), 8<<10)
	h := newHost()
	f := mustFilter(t, h, `{"rules":[{"api":"Produce","field":"acks","in":[-1,1]}],
		"schema":{"default":"none","rules":[{"topic":"orders","policy":"enforce","schema_ids":[1]}]}}`)
	p := newPipe(t, f, whole)
	free := produceFrame(t, 1, 9, 1, records.CompressionNone, rec("free", 0, big))
	unchecked := produceFrame(t, 2, 9, 1, records.CompressionNone, rec("orders", 0, []byte("no schema id")))
	badAcks := produceFrame(t, 3, 9, 0, records.CompressionNone, rec("free", 0, big))
	for _, fr := range [][]byte{free, unchecked, badAcks} {
		p.send(fr)
	}
	// The refused acks=0 one closes the connection after the two responses.
	if !p.closed || len(p.replies) != 2 {
		t.Fatalf("closed %v, %d replies, want closed and 2 (logs %v)", p.closed, len(p.replies), h.logs)
	}
	if got := codes(decodeProduce(t, p.replies[1], 9)); strings.Join(got, " ") != "orders/0=87" {
		t.Errorf("a record without a schema id to the enforced topic: %v", got)
	}
	if len(p.upFrames) < 1 || !bytes.Equal(p.upFrames[0], free) {
		t.Errorf("the request to the free topic did not reach the broker unchanged")
	}
	if h.value("policy.requests_streamed") != 1 || h.value("rules.requests_refused") != 1 || h.value("policy.records_rejected") != 1 {
		t.Errorf("streamed %d, refused %d, rejected %d", h.value("policy.requests_streamed"), h.value("rules.requests_refused"), h.value("policy.records_rejected"))
	}
	if c := p.c.Copied(); c > 16<<10 {
		t.Errorf("%d bytes copied into the filter", c)
	}
}

// A request the filter decides on while gathering it in the VM (it starts in the
// middle of a buffer) and that turns out to need the whole-frame path is handled as
// soon as it is whole, even when nothing more comes from the client: the last request
// of a buffer under a schema policy, under head rules, and to a tenant.
func TestDecidedLastInBuffer(t *testing.T) {
	for _, tc := range []struct{ name, cfg string }{
		{"policy", enforceCfg},
		{"head rules", `{"rules":[{"api":"Produce","field":"acks","in":[-1]}]}`},
		{"tenant", `{"tenant":{"prefix":"a."}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost()
			p := newPipe(t, mustFilter(t, h, tc.cfg), whole)
			last := produceFrame(t, 2, 9, 1, records.CompressionNone, rec("orders", 0, []byte("no schema id")), rec("b", 1, []byte("x")))
			p.send(append(metadataFrame(1, 12, "orders"), last...))
			if len(p.replies) != 2 {
				t.Fatalf("%d replies, want 2: the last request was left waiting (logs %v)", len(p.replies), h.logs)
			}
		})
	}
}

// Produce rules on head fields only: a request that follows them streams from its
// first bytes (nothing of its records read), one that breaks them is answered per
// partition from its skeleton.
func TestRulesProduceHead(t *testing.T) {
	big := bytes.Repeat([]byte("record "), 8<<10)
	h := newHost()
	f := mustFilter(t, h, `{"rules":[{"api":"Produce","field":"acks","in":[-1],"message":"acks must be all"},
		{"api":"Produce","field":"timeoutMs","max":60000}]}`)
	for i, chunk := range []chunker{whole, randomly(9)} {
		p := newPipe(t, f, chunk)
		good := produceFrame(t, 1, 9, -1, records.CompressionNone, rec("t", 0, big), rec("t", 1, big))
		good3 := produceFrame(t, 2, 3, -1, records.CompressionNone, rec("t", 0, big))
		bad := produceFrame(t, 3, 9, 1, records.CompressionNone, rec("t", 0, big), rec("u", 2, big))
		for _, fr := range [][]byte{good, good3, bad} {
			p.send(fr)
		}
		if p.closed || len(p.replies) != 3 {
			t.Fatalf("closed %v, %d replies (logs %v)", p.closed, len(p.replies), h.logs)
		}
		if got := codes(decodeProduce(t, p.replies[2], 9)); strings.Join(got, " ") != "t/0=44 u/2=44" {
			t.Errorf("bad acks: %v", got)
		}
		if len(p.upFrames) < 2 || !bytes.Equal(p.upFrames[0], good) || !bytes.Equal(p.upFrames[1], good3) {
			t.Errorf("the requests that follow the rules did not reach the broker unchanged")
		}
		if c := p.c.Copied(); i == 0 && c > 8<<10 {
			t.Errorf("%d bytes copied into the filter", c)
		}
	}
}
