package kafkafilter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/envoy/kafkatest"
)

// quickConfigs are the configurations run's quick paths (quickProduce,
// quickResponse) take part in, and some beside them.
var quickConfigs = []struct{ name, cfg string }{
	{"no-rule", `{"schema":{"rules":[{"topic":"other","policy":"enforce","schema_ids":[1]}]}}`},
	{"prefix-rule", `{"schema":{"rules":[{"prefix":"ot","policy":"enforce","schema_ids":[1]}]}}`},
	{"enforce", `{"schema":{"rules":[{"topic":"bench","policy":"enforce","schema_ids":[1]}]}}`},
	{"safeguards", `{"schema":{"rules":[{"topic":"other","policy":"enforce","schema_ids":[1]}]},"rules":[{"api":"Produce","field":"acks","in":[-1,1]},{"api":"Produce","field":"timeoutMs","max":60000},{"api":"*","field":"header.clientId","pattern":"^[a-z0-9-]+$"}]}`},
	{"safeguards-no-policy", `{"rules":[{"api":"Produce","field":"acks","in":[-1,1]}]}`},
	{"safeguards-broken", `{"schema":{"rules":[{"topic":"other","policy":"enforce","schema_ids":[1]}]},"rules":[{"api":"Produce","field":"acks","in":[-1]}]}`},
	{"skeleton", `{"rules":[{"api":"Produce","field":"topicData[].partitionData[].index","max":99}]}`},
	{"nopolicy", `{}`},
	{"brokers", `{"brokers":{"1":"proxy:9000"},"schema":{"rules":[{"topic":"other","policy":"enforce","schema_ids":[1]}]}}`},
	{"tenant", `{"tenant":{"prefix":"team-a."}}`},
	{"deny-produce", `{"api_keys":{"deny":[0]}}`},
	{"small-frames", `{"max_frame_bytes":1000,"schema":{"rules":[{"topic":"other","policy":"enforce","schema_ids":[1]}]}}`},
}

// quickTraffic is Produce requests at v3, v9 and v12 (acks 1, 0 and -1; one of two
// topics, one under a 1-byte lz4 batch) and their responses.
func quickTraffic(t *testing.T) (reqs, resps [][]byte) {
	for i, tc := range []struct {
		ver  int16
		acks int16
		n    int
	}{{9, 1, 64}, {9, 1, 64}, {3, 1, 2}, {9, 0, 3}, {12, -1, 64}, {9, 1, 1}} {
		var msgs []records.Message
		for j := 0; j < tc.n; j++ {
			v := make([]byte, 1024)
			binary.BigEndian.PutUint32(v[1:], 1)
			msgs = append(msgs, records.Message{Topic: "bench", Partition: int32(j % 4), Value: v,
				Headers: []records.Header{{Key: []byte("schema.id"), Value: []byte("1")}}})
		}
		body, err := kafkatest.Produce(tc.ver, tc.acks, records.CompressionLZ4, msgs)
		if err != nil {
			t.Fatal(err)
		}
		corr := int32(100 + i)
		reqs = append(reqs, kafkatest.MustRequest(corr, tc.ver, body))
		if tc.acks == 0 {
			continue
		}
		resp := codec.NewProduceResponse()
		pr := codec.NewProduceResponsePartitionProduceResponse()
		resp.Responses = []codec.ProduceResponseTopicProduceResponse{{Name: "bench", PartitionResponses: []codec.ProduceResponsePartitionProduceResponse{*pr}}}
		frame, err := codec.EncodeResponseFrame(nil, &codec.ResponseHeader{CorrelationID: corr}, tc.ver, resp)
		if err != nil {
			t.Fatal(err)
		}
		resps = append(resps, frame)
	}
	return reqs, resps
}

// run's quick paths do what the full path does: the same bytes forwarded, the same
// metrics (the fake host's clock advances per call: the same number of clock reads
// too), the same connection closes, in every chunking.
func TestQuickPathsMatchFullPath(t *testing.T) {
	reqs, resps := quickTraffic(t)
	type result struct {
		down, up       []byte
		closed         bool
		metrics, calls string
	}
	run := func(cfg string, quick bool, chunk chunker, perFrame bool) result {
		h := newHost()
		f := mustFilter(t, h, cfg)
		f.noQuick = !quick
		c := f.NewConn()
		var dn, up proxyDir
		var r result
		send := func(b []byte, downstream bool) {
			for _, piece := range chunk(b) {
				p := &up
				if downstream {
					p = &dn
				}
				o, closed := p.deliver(t, c, piece, downstream)
				r.closed = r.closed || closed
				if downstream {
					r.down = append(r.down, o...)
				} else {
					r.up = append(r.up, o...)
				}
			}
		}
		if perFrame {
			for i, q := range reqs {
				send(q, true)
				if i < len(resps) {
					send(resps[i], false)
				}
			}
		} else {
			send(bytes.Join(reqs, nil), true)
			send(bytes.Join(resps, nil), false)
		}
		h.flush()
		for _, m := range h.metrics {
			r.metrics += fmt.Sprintf("%s=%d %v; ", m.name, m.value, m.samples)
		}
		r.calls = fmt.Sprint(h.now, len(h.logs), h.logs)
		return r
	}
	for _, qc := range quickConfigs {
		for ci, chunk := range []chunker{whole, chunk64K, randomly(5), randomly(11)} {
			for _, perFrame := range []bool{true, false} {
				full, quick := run(qc.cfg, false, chunk, perFrame), run(qc.cfg, true, chunk, perFrame)
				what := fmt.Sprintf("%s, chunking %d, per frame %v", qc.name, ci, perFrame)
				if !bytes.Equal(full.down, quick.down) || !bytes.Equal(full.up, quick.up) || full.closed != quick.closed {
					t.Fatalf("%s: forwarded %d/%d bytes (closed %v) on the quick path, %d/%d (closed %v) on the full one", what, len(quick.down), len(quick.up), quick.closed, len(full.down), len(full.up), full.closed)
				}
				if full.metrics != quick.metrics || full.calls != quick.calls {
					t.Fatalf("%s:\nquick %s\n      %s\nfull  %s\n      %s", what, quick.metrics, quick.calls, full.metrics, full.calls)
				}
			}
		}
	}
}

// allocHost is a Host that allocates nothing after its metrics are defined.
type allocHost struct {
	values  [64]int64
	records int
	ids     uint32
	now     int64
}

func (h *allocHost) Log(Level, string) {}
func (h *allocHost) DefineMetric(MetricKind, string) (uint32, bool) {
	h.ids++
	return h.ids, int(h.ids) < len(h.values)
}
func (h *allocHost) IncrementMetric(id uint32, d int64) { h.values[id] += d }
func (h *allocHost) RecordMetric(uint32, uint64)        { h.records++ }
func (h *allocHost) NowNanos() int64                    { h.now += 1e6; return h.now }
func (h *allocHost) SetTickPeriod(uint32)               {}

// ptrBuffer is a proxy buffer behind a pointer, as the module's is: passing it as a
// Buffer allocates nothing.
type ptrBuffer struct{ b []byte }

func (b *ptrBuffer) Len() int { return len(b.b) }
func (b *ptrBuffer) ReadAt(p []byte, off int) bool {
	if off < 0 || off+len(p) > len(b.b) {
		return false
	}
	copy(p, b.b[off:])
	return true
}

// A Produce request that no rule covers, in the module's 64 KiB reads, and its
// response allocate nothing in the filter once the connection is warm: under a
// schema policy for another topic, under rules on the request's head, and with
// neither.
func TestStreamedProduceAllocatesNothing(t *testing.T) {
	reqs, resps := quickTraffic(t)
	req, resp := reqs[0], resps[0]
	for _, qc := range quickConfigs {
		switch qc.name {
		case "no-rule", "prefix-rule", "safeguards", "safeguards-no-policy", "nopolicy":
		default:
			continue
		}
		h := &allocHost{}
		f := mustFilter(t, h, qc.cfg)
		c := f.NewConn()
		var buf ptrBuffer
		pieces := chunk64K(req)
		op := func() {
			for _, piece := range pieces {
				buf.b = piece
				if act := c.OnDownstream(&buf, false); act.Edit || act.Pause || act.Close {
					t.Fatalf("%s: request action %+v", qc.name, act)
				}
			}
			buf.b = resp
			if act := c.OnUpstream(&buf, false); act.Edit || act.Pause || act.Close {
				t.Fatalf("%s: response action %+v", qc.name, act)
			}
		}
		for i := 0; i < 10; i++ {
			op()
		}
		if a := testing.AllocsPerRun(200, op); a != 0 {
			t.Errorf("%s: %.1f allocations per request and response", qc.name, a)
		}
	}
}

// FuzzQuickPaths: on arbitrary client and broker bytes, in arbitrary chunks, run's
// quick paths and the full path forward the same bytes, close alike and leave the
// same metrics and logs, under each of quickConfigs.
//
// fuzz-rate: 300 (each input runs two filters over up to 256 chunks a direction)
func FuzzQuickPaths(f *testing.F) {
	reqs, resps := quickTraffic(&testing.T{})
	// The small requests (a few records) and their responses; the others seed
	// TestQuickPathsMatchFullPath.
	f.Add(bytes.Join([][]byte{reqs[5], reqs[2]}, nil), bytes.Join([][]byte{resps[4], resps[2]}, nil), uint8(0), uint16(0))
	f.Add(reqs[3], resps[1], uint8(3), uint16(7))
	f.Add(reqs[2][:200], resps[2], uint8(1), uint16(65535))
	f.Fuzz(func(t *testing.T, down, up []byte, cfg uint8, step uint16) {
		qc := quickConfigs[int(cfg)%len(quickConfigs)]
		// At most about 256 callbacks a direction: a paused request is delivered again
		// whole with each chunk.
		n := max(int(step)+1, (len(down)+len(up))/256)
		type result struct {
			out            [2][]byte
			closed         bool
			metrics, calls string
		}
		run := func(quick bool) result {
			h := newHost()
			fl := mustFilter(t, h, qc.cfg)
			fl.noQuick = !quick
			c := fl.NewConn()
			var dirs [2]proxyDir
			var r result
			for i := 0; i < max(len(down), len(up)) && !r.closed; i += n {
				for j, b := range [][]byte{down, up} {
					if i >= len(b) {
						continue
					}
					o, closed := dirs[j].deliver(t, c, b[i:min(i+n, len(b))], j == 0)
					r.out[j] = append(r.out[j], o...)
					r.closed = r.closed || closed
				}
			}
			h.flush()
			for _, m := range h.metrics {
				r.metrics += fmt.Sprintf("%s=%d %v; ", m.name, m.value, m.samples)
			}
			r.calls = fmt.Sprint(h.now, h.logs)
			return r
		}
		a, b := run(true), run(false)
		if !bytes.Equal(a.out[0], b.out[0]) || !bytes.Equal(a.out[1], b.out[1]) || a.closed != b.closed || a.metrics != b.metrics || a.calls != b.calls {
			t.Fatalf("%s, step %d: the quick paths differ from the full one:\nquick %d/%d bytes, closed %v, %s %s\nfull  %d/%d bytes, closed %v, %s %s",
				qc.name, n, len(a.out[0]), len(a.out[1]), a.closed, a.metrics, a.calls, len(b.out[0]), len(b.out[1]), b.closed, b.metrics, b.calls)
		}
	})
}

// Through takes a Produce request that starts a buffer and streams: under a schema
// policy when no rule covers its topic; under rules on the head when the head repeats
// the last one the rules passed (the first goes the full path, which checks it). It
// does not take a request to a topic a schema rule covers, one whose head changed, or
// any request under a tenant.
func TestThroughTakesProduce(t *testing.T) {
	msg := func(topic string) records.Message {
		return records.Message{Topic: topic, Value: []byte("v")}
	}
	for _, tc := range []struct {
		name, cfg string
		takes     []bool // for free (acks 1) twice, free (acks -1) twice, enforced (acks -1)
	}{
		{"policy", `{"schema":{"rules":[{"topic":"enforced","policy":"enforce","schema_ids":[1]}]}}`, []bool{true, true, true, true, false}},
		{"head rules", `{"rules":[{"api":"Produce","field":"acks","in":[-1,1]}]}`, []bool{false, true, false, true, true}},
		{"head rules and policy", `{"schema":{"rules":[{"topic":"enforced","policy":"enforce","schema_ids":[1]}]},"rules":[{"api":"Produce","field":"acks","in":[-1,1]}]}`, []bool{false, true, false, true, false}},
		{"tenant", `{"tenant":{"prefix":"team-a."}}`, []bool{false, false, false, false, false}},
	} {
		c := mustFilter(t, newHost(), tc.cfg).NewConn()
		frames := [][]byte{
			produceFrame(t, 1, 9, 1, records.CompressionNone, msg("free")),
			produceFrame(t, 2, 9, 1, records.CompressionNone, msg("free")),
			produceFrame(t, 3, 9, -1, records.CompressionNone, msg("free")),
			produceFrame(t, 4, 9, -1, records.CompressionNone, msg("free")),
			produceFrame(t, 5, 9, -1, records.CompressionNone, msg("enforced")),
		}
		for i, fr := range frames {
			took := c.Through(true, sliceBuffer(fr))
			if took != tc.takes[i] {
				t.Errorf("%s, request %d: Through took it: %v, want %v", tc.name, i, took, tc.takes[i])
			}
			if !took {
				if act := c.OnDownstream(sliceBuffer(fr), false); act.Close {
					t.Fatalf("%s, request %d: closed", tc.name, i)
				}
			}
		}
	}
}

// TestThroughTakesResponseHead checks which buffers of broker bytes that start with a
// response's head Through takes: those of responses the filter only counts and times,
// and not one it changes (a Metadata response under broker address rewriting), one
// that ends inside the buffer, or one whose correlation id is not the oldest pending.
func TestThroughTakesResponseHead(t *testing.T) {
	h := newHost()
	c := mustFilter(t, h, `{"brokers":{"1":"proxy:9000"}}`).NewConn()
	br := kafkatest.NewBroker()
	request := func(frame []byte) []byte {
		if act := c.OnDownstream(sliceBuffer(frame), false); act.Close || act.Pause {
			t.Fatalf("request: %+v", act)
		}
		resp, err := br.Handle(frame)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	produce := request(produceFrame(t, 1, 9, 1, records.CompressionNone, records.Message{Topic: "t", Value: []byte("v")}))
	if !c.Through(false, sliceBuffer(produce[:len(produce)-1])) {
		t.Fatal("Through did not take the head of a Produce v9 response")
	}
	if c.Through(false, sliceBuffer(produce[len(produce)-1:])) || !c.PassThrough(false, 1) {
		t.Fatal("the response's last byte is not PassThrough's")
	}
	if got := h.value("response.produce"); got != 1 {
		t.Errorf("response.produce %d, want 1", got)
	}
	metadata := request(metadataFrame(2, 12, "t"))
	if c.Through(false, sliceBuffer(metadata)) {
		t.Error("Through took a Metadata response whose broker addresses the filter rewrites")
	}
	if act := c.OnUpstream(sliceBuffer(metadata), false); act.Close {
		t.Fatal("metadata response closed the connection")
	}
	p1 := request(produceFrame(t, 3, 9, 1, records.CompressionNone, records.Message{Topic: "t", Value: []byte("v")}))
	p2 := request(produceFrame(t, 4, 9, 1, records.CompressionNone, records.Message{Topic: "t", Value: []byte("v")}))
	if c.Through(false, sliceBuffer(p2)) {
		t.Error("Through took a response that is not the oldest pending request's")
	}
	if c.Through(false, sliceBuffer(append(append([]byte(nil), p1...), p2...))) {
		t.Error("Through took a buffer holding two responses")
	}
}
