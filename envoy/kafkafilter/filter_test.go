package kafkafilter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/codectest"
	"github.com/kwire/kwire/codec/kerr"
	"github.com/kwire/kwire/codec/policy"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/envoy/kafkatest"
	"github.com/kwire/kwire/internal/transcode"
)

type fakeMetric struct {
	name    string
	kind    MetricKind
	value   int64
	samples []uint64
}

type fakeHost struct {
	logs    []string
	metrics []*fakeMetric
	byName  map[string]uint32
	now     int64
	tick    uint32
	f       *Filter // the filter whose counters value and flush send first
}

func newHost() *fakeHost { return &fakeHost{byName: map[string]uint32{}} }

func (h *fakeHost) Log(l Level, msg string) { h.logs = append(h.logs, msg) }
func (h *fakeHost) DefineMetric(k MetricKind, name string) (uint32, bool) {
	if id, ok := h.byName[name]; ok {
		return id, true
	}
	h.metrics = append(h.metrics, &fakeMetric{name: name, kind: k})
	h.byName[name] = uint32(len(h.metrics))
	return uint32(len(h.metrics)), true
}
func (h *fakeHost) IncrementMetric(id uint32, d int64) { h.metrics[id-1].value += d }
func (h *fakeHost) RecordMetric(id uint32, v uint64) {
	h.metrics[id-1].samples = append(h.metrics[id-1].samples, v)
}
func (h *fakeHost) NowNanos() int64         { h.now += 1e6; return h.now }
func (h *fakeHost) SetTickPeriod(ms uint32) { h.tick = ms }
func (h *fakeHost) bind(f *Filter)          { h.f = f }

// flush has the filter send the counts its counters hold.
func (h *fakeHost) flush() {
	if h.f != nil {
		h.f.FlushMetrics()
	}
}

func (h *fakeHost) value(name string) int64 {
	h.flush()
	id, ok := h.byName["kafka.kwire."+name]
	if !ok {
		return 0
	}
	return h.metrics[id-1].value
}

// chunker cuts a byte slice into the pieces one delivery uses.
type chunker func(b []byte) [][]byte

func whole(b []byte) [][]byte { return [][]byte{b} }

func bytewise(b []byte) [][]byte {
	var out [][]byte
	for i := range b {
		out = append(out, b[i:i+1])
	}
	return out
}

func randomly(seed int64) chunker {
	r := rand.New(rand.NewSource(seed))
	return func(b []byte) [][]byte {
		var out [][]byte
		for len(b) > 0 {
			n := 1 + r.Intn(min(len(b), 700))
			out = append(out, b[:n])
			b = b[n:]
		}
		return out
	}
}

// pipe runs a Conn between a client and the fake broker as a proxy would: held
// downstream bytes stay with the proxy while the filter waits (Envoy's Pause).
type pipe struct {
	t        *testing.T
	c        *Conn
	br       *kafkatest.Broker
	chunk    chunker
	upSplit  kafkatest.Splitter
	dnSplit  kafkatest.Splitter
	dn, up   proxyDir
	upFrames [][]byte // what reached the broker
	replies  [][]byte // what reached the client
	closed   bool
}

func newPipe(t *testing.T, f *Filter, chunk chunker) *pipe {
	return &pipe{t: t, c: f.NewConn(), br: kafkatest.NewBroker(), chunk: chunk}
}

func (p *pipe) send(frames ...[]byte) {
	var all []byte
	for _, f := range frames {
		all = append(all, f...)
	}
	for _, piece := range p.chunk(all) {
		if p.closed {
			return
		}
		out, closed := p.dn.deliver(p.t, p.c, piece, true)
		for _, f := range p.upSplit.Push(out) {
			p.upFrames = append(p.upFrames, f)
			resp, err := p.br.Handle(f)
			if err != nil {
				p.t.Fatalf("broker: %v", err)
			}
			for _, rp := range p.chunk(resp) {
				o, cl := p.up.deliver(p.t, p.c, rp, false)
				p.replies = append(p.replies, p.dnSplit.Push(o)...)
				if cl {
					p.closed = true
				}
			}
		}
		if closed {
			p.closed = true
		}
	}
}

// sliceBuffer is a proxy buffer in memory.
type sliceBuffer []byte

func (b sliceBuffer) Len() int { return len(b) }
func (b sliceBuffer) ReadAt(p []byte, off int) bool {
	if off < 0 || off+len(p) > len(b) {
		return false
	}
	copy(p, b[off:])
	return true
}

// proxyDir is one direction of a proxy with Envoy's buffer semantics: a callback
// that pauses keeps the buffer, which the next callback sees with the new bytes
// after it; an edit drains a prefix and prepends the filter's bytes; the rest is
// forwarded.
type proxyDir struct {
	buf   []byte
	calls int
}

func (p *proxyDir) deliver(t testing.TB, c *Conn, data []byte, downstream bool) ([]byte, bool) {
	p.buf = append(p.buf, data...)
	// Every other callback asks PassThrough and then Through first, as the module does,
	// so that every test drives both the cheap paths and the full one.
	p.calls++
	if p.calls%2 == 0 && (c.PassThrough(downstream, len(p.buf)) || c.Through(downstream, sliceBuffer(p.buf))) {
		out := p.buf
		p.buf = nil
		return out, false
	}
	var act Action
	if downstream {
		act = c.OnDownstream(sliceBuffer(p.buf), false)
	} else {
		act = c.OnUpstream(sliceBuffer(p.buf), false)
	}
	if act.Pause {
		if !downstream {
			t.Fatal("the filter paused the upstream direction")
		}
		if act.Edit {
			t.Fatal("the filter paused and edited")
		}
		return nil, act.Close
	}
	out := p.buf
	if act.Edit {
		if act.Drain > len(out) || act.Drain < 0 {
			t.Fatalf("drain %d of %d bytes", act.Drain, len(out))
		}
		out = append(append([]byte(nil), act.Prefix...), out[act.Drain:]...)
	}
	p.buf = nil
	return out, act.Close
}

func mustFilter(t *testing.T, h Host, cfg string) *Filter {
	t.Helper()
	f, err := New(h, []byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := h.(interface{ bind(*Filter) }); ok {
		b.bind(f)
	}
	return f
}

func prefixed(id uint32) []byte {
	b := []byte{0, 0, 0, 0, 0, 'x'}
	binary.BigEndian.PutUint32(b[1:], id)
	return b
}

func rec(topic string, part int32, value []byte, hdr ...string) records.Message {
	m := records.Message{Topic: topic, Partition: part, Value: value}
	for i := 0; i+1 < len(hdr); i += 2 {
		m.Headers = append(m.Headers, records.Header{Key: []byte(hdr[i]), Value: []byte(hdr[i+1])})
	}
	return m
}

func produceFrame(t *testing.T, corr int32, ver, acks int16, c records.Compression, msgs ...records.Message) []byte {
	t.Helper()
	req, err := kafkatest.Produce(ver, acks, c, msgs)
	if err != nil {
		t.Fatal(err)
	}
	return kafkatest.MustRequest(corr, ver, req)
}

func metadataFrame(corr int32, ver int16, topics ...string) []byte {
	req := codec.NewMetadataRequest()
	for _, n := range topics {
		n := n
		req.Topics = append(req.Topics, codec.MetadataRequestTopic{Name: &n})
	}
	return kafkatest.MustRequest(corr, ver, req)
}

func corrOf(frame []byte) int32 { return int32(binary.BigEndian.Uint32(frame[4:])) }

func decodeProduce(t *testing.T, frame []byte, ver int16) *codec.ProduceResponse {
	t.Helper()
	rf, err := codec.DecodeResponseFrame(frame, 0, ver)
	if err != nil {
		t.Fatal(err)
	}
	return rf.Body.(*codec.ProduceResponse)
}

// codes flattens a Produce response to "topic/partition=code" in order.
func codes(r *codec.ProduceResponse) []string {
	var out []string
	for _, t := range r.Responses {
		for _, p := range t.PartitionResponses {
			out = append(out, t.Name+"/"+itoa(p.Index)+"="+itoa(int32(p.ErrorCode)))
		}
	}
	return out
}

func itoa(v int32) string { return strconv.Itoa(int(v)) }

const enforceCfg = `{"schema":{"default":"none","rules":[
	{"topic":"orders","policy":"enforce","schema_ids":[1,2]},
	{"prefix":"audit.","policy":"warn","schema_ids":[1]}]},
	"brokers":{"1":"127.0.0.1:19092"}}`

var chunkings = []struct {
	name string
	c    chunker
}{{"whole", whole}, {"bytewise", bytewise}, {"random", randomly(7)}}

func TestEnforceMixedProduce(t *testing.T) {
	for _, ck := range chunkings {
		t.Run(ck.name, func(t *testing.T) {
			h := newHost()
			f := mustFilter(t, h, enforceCfg)
			p := newPipe(t, f, ck.c)
			good := rec("orders", 0, prefixed(1))
			bad := rec("orders", 1, []byte("no schema"))
			wrong := rec("orders", 2, prefixed(9))
			free := rec("free", 0, []byte("anything"))
			p.send(
				metadataFrame(1, 12, "orders"),
				produceFrame(t, 2, 9, -1, records.CompressionLZ4, good, bad, wrong, free),
				metadataFrame(3, 12, "orders"),
			)
			if p.closed {
				t.Fatalf("connection closed; logs %v", h.logs)
			}
			if len(p.replies) != 3 {
				t.Fatalf("%d replies, want 3", len(p.replies))
			}
			for i, want := range []int32{1, 2, 3} {
				if corrOf(p.replies[i]) != want {
					t.Fatalf("reply %d has correlation id %d, want %d", i, corrOf(p.replies[i]), want)
				}
			}
			got := codes(decodeProduce(t, p.replies[1], 9))
			want := []string{"orders/0=0", "orders/1=87", "orders/2=87", "free/0=0"}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("produce response %v, want %v", got, want)
			}
			resp := decodeProduce(t, p.replies[1], 9)
			pr := resp.Responses[0].PartitionResponses[1]
			if pr.ErrorMessage == nil || !strings.Contains(*pr.ErrorMessage, "no schema reference") || len(pr.RecordErrors) != 1 || pr.RecordErrors[0].BatchIndex != 0 {
				t.Errorf("rejected partition message %v record errors %+v", pr.ErrorMessage, pr.RecordErrors)
			}
			var delivered []string
			for _, pd := range p.br.Produced() {
				delivered = append(delivered, pd.Topic+"/"+itoa(pd.Partition))
			}
			if strings.Join(delivered, " ") != "orders/0 free/0" {
				t.Errorf("broker received %v, want orders/0 free/0", delivered)
			}
			// Broker addresses rewritten.
			rf, err := codec.DecodeResponseFrame(p.replies[2], 3, 12)
			if err != nil {
				t.Fatal(err)
			}
			b := rf.Body.(*codec.MetadataResponse).Brokers[0]
			if b.Host != "127.0.0.1" || b.Port != 19092 {
				t.Errorf("metadata broker %s:%d, want 127.0.0.1:19092", b.Host, b.Port)
			}
			for name, want := range map[string]int64{
				"request.produce": 1, "response.produce": 1, "request.metadata": 2, "response.metadata": 2,
				"policy.records_checked": 3, "policy.records_failed": 2, "policy.records_rejected": 2,
				"policy.partitions_rejected": 2, "policy.partitions_accepted": 2, "rewrite.broker_addresses": 2,
			} {
				if got := h.value(name); got != want {
					t.Errorf("%s = %d, want %d", name, got, want)
				}
			}
		})
	}
}

func TestEnforceAllRejectedKeepsOrder(t *testing.T) {
	for _, ck := range chunkings {
		t.Run(ck.name, func(t *testing.T) {
			h := newHost()
			f := mustFilter(t, h, enforceCfg)
			p := newPipe(t, f, ck.c)
			p.send(
				metadataFrame(10, 12, "orders"),
				produceFrame(t, 11, 8, 1, records.CompressionNone, rec("orders", 0, []byte("plain"))),
				produceFrame(t, 12, 3, 1, records.CompressionZstd, rec("orders", 1, prefixed(2), "schema.id", "bad")),
				metadataFrame(13, 12, "orders"),
			)
			if len(p.replies) != 4 {
				t.Fatalf("%d replies, want 4; logs %v", len(p.replies), h.logs)
			}
			for i, c := range []int32{10, 11, 12, 13} {
				if corrOf(p.replies[i]) != c {
					t.Fatalf("reply %d correlation %d, want %d", i, corrOf(p.replies[i]), c)
				}
			}
			if got := codes(decodeProduce(t, p.replies[1], 8)); strings.Join(got, " ") != "orders/0=87" {
				t.Errorf("v8 response %v", got)
			}
			// zstd at v3: the broker's UNSUPPORTED_COMPRESSION_TYPE, before the rule looks.
			if got := codes(decodeProduce(t, p.replies[2], 3)); strings.Join(got, " ") != "orders/1=76" {
				t.Errorf("v3 response %v", got)
			}
			if n := len(p.br.Produced()); n != 0 {
				t.Errorf("broker received %d partitions, want none", n)
			}
			// The broker saw ApiVersions v0 in place of each rejected Produce.
			if r := p.br.Requests(); r[0] != 0 || r[18] != 2 {
				t.Errorf("broker requests %v, want 2 ApiVersions and no Produce", r)
			}
		})
	}
}

// TestAcksZero: an acks=0 Produce the schema policy rejects, wholly or in part, gets
// what Kafka's broker gives a failed acks=0 Produce (which has no response to carry
// the error): the connection closes, after the responses to the requests before it,
// and the requests after it never reach the broker. The accepted partitions of one
// rejected in part are written first, as the broker appends them.
func TestAcksZero(t *testing.T) {
	for _, tc := range []struct {
		name     string
		produce  []byte
		produced string // the partitions the broker writes
	}{
		{"every partition rejected", produceFrame(t, 2, 9, 0, records.CompressionNone, rec("orders", 0, []byte("bad"))), ""},
		{"one of two rejected", produceFrame(t, 2, 9, 0, records.CompressionNone, rec("orders", 0, prefixed(2)), rec("orders", 1, []byte("bad"))), "orders/0"},
	} {
		for name, chunk := range map[string]chunker{"whole": whole, "bytewise": bytewise, "random": randomly(3)} {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				h := newHost()
				p := newPipe(t, mustFilter(t, h, enforceCfg), chunk)
				p.send(
					metadataFrame(1, 12, "orders"),
					tc.produce,
					metadataFrame(3, 12, "orders"),
					produceFrame(t, 4, 9, -1, records.CompressionNone, rec("orders", 1, prefixed(2))),
				)
				if !p.closed || len(p.replies) != 1 || corrOf(p.replies[0]) != 1 {
					t.Fatalf("closed %v, %d replies; want closed after the first Metadata response only", p.closed, len(p.replies))
				}
				var got []string
				for _, pd := range p.br.Produced() {
					got = append(got, fmt.Sprintf("%s/%d", pd.Topic, pd.Partition))
				}
				if strings.Join(got, " ") != tc.produced {
					t.Errorf("broker wrote %v, want %q", got, tc.produced)
				}
				if r := p.br.Requests(); r[3] != 1 || r[18] != 1 {
					t.Errorf("broker saw %v, want one Metadata and the ApiVersions the close waits for", r)
				}
				if h.value("policy.partitions_rejected") != 1 {
					t.Errorf("partitions_rejected %d", h.value("policy.partitions_rejected"))
				}
				if !strings.Contains(strings.Join(h.logs, "\n"), "closing the connection: produce v9 with acks=0") {
					t.Errorf("no log line says why the connection closed: %v", h.logs)
				}
			})
		}
	}
}

// When the response to the request before a refused acks=0 Produce comes in the same
// read as the response the close waits for, the callback forwards that response and
// the connection closes at its next callback, or when the host asks CloseIfDue (on a
// tick): Envoy would drop the bytes of a callback that closes before it writes them.
// Both callback orders (full path, quick paths).
func TestAcksZeroCloseAfterTheBytesBefore(t *testing.T) {
	for _, first := range []int{0, 1} {
		h := newHost()
		c := mustFilter(t, h, enforceCfg).NewConn()
		dn, up := proxyDir{calls: first}, proxyDir{calls: first}
		md := metadataFrame(1, 12, "orders")
		bad := produceFrame(t, 2, 9, 0, records.CompressionNone, rec("orders", 0, []byte("bad")))
		out, closed := dn.deliver(t, c, append(append([]byte(nil), md...), bad...), true)
		var sp kafkatest.Splitter
		frames := sp.Push(out)
		if closed || len(frames) != 2 || !bytes.Equal(frames[0], md) || binary.BigEndian.Uint16(frames[1][4:]) != 18 {
			t.Fatalf("closed %v, %d frames to the broker; want the Metadata request and an ApiVersions", closed, len(frames))
		}
		br := kafkatest.NewBroker()
		var answers []byte
		for _, fr := range frames {
			r, err := br.Handle(fr)
			if err != nil {
				t.Fatal(err)
			}
			answers = append(answers, r...)
		}
		got, closed := up.deliver(t, c, answers, false)
		var cs kafkatest.Splitter
		if replies := cs.Push(got); closed || len(replies) != 1 || len(replies[0]) != len(got) || corrOf(replies[0]) != 1 {
			t.Fatalf("closed %v, %d responses to the client; want the whole Metadata response and no close yet", closed, len(replies))
		}
		if first == 1 {
			// A client that sends nothing more: the host closes it on a tick.
			if !c.CloseIfDue() || c.CloseIfDue() {
				t.Fatal("CloseIfDue: want true once")
			}
		}
		got, closed = dn.deliver(t, c, metadataFrame(3, 12, "orders"), true)
		if !closed || len(got) != 0 {
			t.Fatalf("the next callback: closed %v, %d bytes to the broker; want the close and nothing", closed, len(got))
		}
	}
	// Nothing is due on a connection that refused nothing.
	c := mustFilter(t, newHost(), enforceCfg).NewConn()
	if c.CloseIfDue() {
		t.Error("CloseIfDue on a fresh connection")
	}
}

func TestWarnAndNone(t *testing.T) {
	h := newHost()
	f := mustFilter(t, h, enforceCfg)
	p := newPipe(t, f, whole)
	p.send(produceFrame(t, 1, 9, -1, records.CompressionGzip,
		rec("audit.x", 0, []byte("plain")), rec("audit.x", 0, prefixed(5)), rec("audit.x", 0, prefixed(1)),
		rec("other", 0, []byte("plain"))))
	if got := codes(decodeProduce(t, p.replies[0], 9)); strings.Join(got, " ") != "audit.x/0=0 other/0=0" {
		t.Errorf("response %v", got)
	}
	if h.value("policy.records_warned") != 2 || h.value("policy.records_checked") != 3 || h.value("policy.records_rejected") != 0 {
		t.Errorf("warned %d checked %d rejected %d", h.value("policy.records_warned"), h.value("policy.records_checked"), h.value("policy.records_rejected"))
	}
	if len(p.br.Produced()) != 2 {
		t.Errorf("broker got %d partitions", len(p.br.Produced()))
	}
	warned := false
	for _, l := range h.logs {
		warned = warned || strings.Contains(l, "(warn) on audit.x/0: 2 of 3 records")
	}
	if !warned {
		t.Errorf("no warn log line: %v", h.logs)
	}
}

func TestFailClosed(t *testing.T) {
	good := produceFrame(t, 1, 9, -1, records.CompressionNone, rec("orders", 0, prefixed(1)))
	crc := append([]byte(nil), good...)
	crc[len(crc)-5] ^= 0x55 // inside the record bytes: CRC mismatch
	body := append([]byte(nil), good...)
	body = body[:len(body)-20]
	binary.BigEndian.PutUint32(body, uint32(len(body)-4))
	unknownVer := append([]byte(nil), good...)
	binary.BigEndian.PutUint16(unknownVer[6:], 99)
	huge := []byte{0x7f, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 1}
	for _, tc := range []struct {
		name   string
		frame  []byte
		closed bool
		code   string
	}{
		{"corrupt batch", crc, false, "orders/0=2"},
		{"truncated body", body, true, ""},
		{"unknown version", unknownVer, true, ""},
		{"frame over the limit", huge, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost()
			p := newPipe(t, mustFilter(t, h, enforceCfg), whole)
			p.send(tc.frame)
			if p.closed != tc.closed {
				t.Fatalf("closed %v, want %v (logs %v)", p.closed, tc.closed, h.logs)
			}
			if len(p.br.Produced()) != 0 {
				t.Errorf("the broker received %v", p.br.Produced())
			}
			if tc.code != "" {
				if got := codes(decodeProduce(t, p.replies[0], 9)); strings.Join(got, " ") != tc.code {
					t.Errorf("response %v, want %s", got, tc.code)
				}
			}
		})
	}
}

func TestDenied(t *testing.T) {
	h := newHost()
	f := mustFilter(t, h, `{"api_keys":{"deny":[3,19,0]}}`)
	p := newPipe(t, f, bytewise)
	ct := codec.NewCreateTopicsRequest()
	ct.Topics = []codec.CreateTopicsRequestCreatableTopic{{Name: "x", NumPartitions: 1, ReplicationFactor: 1}}
	fc := codec.NewFindCoordinatorRequest()
	fc.CoordinatorKeys = []string{"g"}
	p.send(
		metadataFrame(1, 12, "a"),
		kafkatest.MustRequest(2, 7, ct),
		produceFrame(t, 3, 9, 1, records.CompressionNone, rec("t", 0, []byte("v"))),
		kafkatest.MustRequest(4, 4, fc),
	)
	if len(p.replies) != 4 {
		t.Fatalf("%d replies", len(p.replies))
	}
	rf, err := codec.DecodeResponseFrame(p.replies[0], 3, 12)
	if err != nil || rf.Body.(*codec.MetadataResponse).Topics[0].ErrorCode != int16(kerr.ClusterAuthorizationFailed) {
		t.Errorf("metadata: %v %+v", err, rf)
	}
	rf, err = codec.DecodeResponseFrame(p.replies[1], 19, 7)
	if err != nil {
		t.Fatal(err)
	}
	if corrOf(p.replies[1]) != 2 {
		t.Errorf("create topics correlation %d", corrOf(p.replies[1]))
	}
	if got := codes(decodeProduce(t, p.replies[2], 9)); strings.Join(got, " ") != "t/0=31" {
		t.Errorf("produce %v", got)
	}
	rf, err = codec.DecodeResponseFrame(p.replies[3], 10, 4)
	if err != nil || len(rf.Body.(*codec.FindCoordinatorResponse).Coordinators) != 1 || rf.Body.(*codec.FindCoordinatorResponse).Coordinators[0].NodeID != 1 {
		t.Errorf("find coordinator passes: %v %+v", err, rf)
	}
	if r := p.br.Requests(); r[3] != 0 || r[19] != 0 || r[0] != 0 || r[18] != 3 || r[10] != 1 {
		t.Errorf("broker saw %v", r)
	}
	if h.value("request.denied") != 3 {
		t.Errorf("denied %d", h.value("request.denied"))
	}
	// An acks=0 Produce to a denied api has no response to carry the error: the
	// connection closes after the response before it, and what follows goes nowhere.
	p.send(
		kafkatest.MustRequest(5, 4, fc),
		produceFrame(t, 6, 9, 0, records.CompressionNone, rec("t", 0, []byte("v"))),
		kafkatest.MustRequest(7, 4, fc),
	)
	if !p.closed || len(p.replies) != 5 || corrOf(p.replies[4]) != 5 {
		t.Fatalf("closed %v, %d replies; want the close after the FindCoordinator response 5", p.closed, len(p.replies))
	}
	if r := p.br.Requests(); r[0] != 0 || r[10] != 2 || r[18] != 4 {
		t.Errorf("broker saw %v, want the first two FindCoordinator requests and the close's ApiVersions", r)
	}
}

func TestApiVersionsCapAndTopicIDs(t *testing.T) {
	h := newHost()
	f := mustFilter(t, h, enforceCfg)
	p := newPipe(t, f, whole)
	p.send(kafkatest.MustRequest(1, 3, codec.NewAPIVersionsRequest()))
	rf, err := codec.DecodeResponseFrame(p.replies[0], 18, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range rf.Body.(*codec.APIVersionsResponse).APIKeys {
		if k.APIKey == 0 && k.MaxVersion != 12 {
			t.Errorf("Produce max version %d, want 12", k.MaxVersion)
		}
	}
	// v13 names topics by id: unknown until a Metadata response named it.
	m := rec("orders", 0, prefixed(1))
	m.TopicID = kafkatest.TopicID("orders")
	p.send(produceFrame(t, 2, 13, -1, records.CompressionNone, m))
	r := decodeProduce(t, p.replies[1], 13)
	if r.Responses[0].PartitionResponses[0].ErrorCode != int16(kerr.UnknownTopicID) {
		t.Errorf("unknown id: %+v", r.Responses[0].PartitionResponses[0])
	}
	p.send(metadataFrame(3, 12, "orders"))
	p.send(produceFrame(t, 4, 13, -1, records.CompressionNone, m))
	r = decodeProduce(t, p.replies[3], 13)
	if r.Responses[0].PartitionResponses[0].ErrorCode != 0 {
		t.Errorf("known id: %+v (logs %v)", r.Responses[0].PartitionResponses[0], h.logs)
	}
}

func TestChunkingGivesSameBytes(t *testing.T) {
	frames := func(t *testing.T) [][]byte {
		return [][]byte{
			kafkatest.MustRequest(1, 3, codec.NewAPIVersionsRequest()),
			metadataFrame(2, 12, "orders", "audit.a"),
			produceFrame(t, 3, 9, -1, records.CompressionLZ4, rec("orders", 0, prefixed(1)), rec("orders", 1, []byte("x")), rec("audit.a", 2, []byte("y"))),
			produceFrame(t, 5, 7, -1, records.CompressionSnappy, rec("orders", 2, prefixed(2))),
			metadataFrame(6, 4, "orders"),
			produceFrame(t, 4, 9, 0, records.CompressionNone, rec("orders", 0, []byte("x"))), // refused: the connection closes
			metadataFrame(7, 4, "orders"),
		}
	}
	var ref *pipe
	var refHost *fakeHost
	for _, ck := range []struct {
		name string
		c    chunker
	}{{"whole", whole}, {"bytewise", bytewise}, {"random1", randomly(1)}, {"random2", randomly(2)}} {
		h := newHost()
		p := newPipe(t, mustFilter(t, h, enforceCfg), ck.c)
		p.send(frames(t)...)
		if ref == nil {
			ref, refHost = p, h
			if len(p.replies) != 5 {
				t.Fatalf("%d replies", len(p.replies))
			}
			continue
		}
		if !equalFrames(ref.upFrames, p.upFrames) || !equalFrames(ref.replies, p.replies) {
			t.Errorf("%s: different bytes than whole frames", ck.name)
		}
		refHost.flush()
		for _, m := range refHost.metrics {
			if m.kind != Histogram && h.value(strings.TrimPrefix(m.name, "kafka.kwire.")) != m.value {
				t.Errorf("%s: metric %s = %d, whole gives %d", ck.name, m.name, h.value(strings.TrimPrefix(m.name, "kafka.kwire.")), m.value)
			}
		}
	}
}

func equalFrames(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func TestBadConfig(t *testing.T) {
	for _, tc := range []struct{ cfg, want string }{
		{`{"api_keys":{"allow":[0],"deny":[1]}}`, "allow or deny, not both"},
		{`{"api_keys":{"deny":[999]}}`, "api_keys.deny[0]: 999 is not a Kafka api key"},
		{`{"brokers":{"x":"a:1"}}`, `brokers: key "x" is not a node id`},
		{`{"brokers":{"1":"nohost"}}`, `brokers[1]: "nohost" is not host:port`},
		{`{"brokers":{"1":"h:99999"}}`, `brokers[1]: port "99999"`},
		{`{"schema":{"default":"strict"}}`, `unknown mode "strict"`},
		{`{"schema":{"rules":[{"policy":"warn"}]}}`, "kafka filter configuration: $.schema.rules[0]: needs a topic or a prefix (at byte 20)"},
		{`{"schema":{"rules":[{"topic":"a","policy":"warn","schema_ids":[1,-1]}]}}`, "$.schema.rules[0].schema_ids[1]: -1 is negative (at byte 65)"},
		{`{"verify_crc":1}`, "$.verify_crc: wrong type"},
		{`{"brokers":{"1":"a:1","1":"b:2"}}`, `$.brokers: duplicate key: "1"`},
		{`{"max_produce_version":14}`, "max_produce_version: 14"},
		{`{"schema":{"default":"warn"},"max_produce_version":2}`, "no record headers"},
		{`{"deny_error_code":5000}`, "deny_error_code: 5000"},
		{`{"colour":"red"}`, `$.colour: unknown key: "colour" (at byte 10)`},
		{`{"max_frame_bytes":-1}`, "max_frame_bytes: -1"},
		{`{"metrics_flush_ms":-5}`, "metrics_flush_ms: -5 is negative"},
		{`nope`, "kafka filter configuration"},
	} {
		_, err := New(newHost(), []byte(tc.cfg))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.cfg, err, tc.want)
		}
	}
	if _, err := New(newHost(), nil); err != nil {
		t.Errorf("empty configuration: %v", err)
	}
}

// clockHost is a fakeHost whose clock moves only when the test moves it, and which
// counts the counter updates it receives.
type clockHost struct {
	*fakeHost
	at      int64
	updates int
}

func (h *clockHost) NowNanos() int64 { return h.at }
func (h *clockHost) IncrementMetric(id uint32, d int64) {
	h.updates++
	h.fakeHost.IncrementMetric(id, d)
}

// counted reads a counter as the host holds it, without flushing the filter's.
func (h *clockHost) counted(name string) int64 {
	id, ok := h.byName["kafka.kwire."+name]
	if !ok {
		return 0
	}
	return h.metrics[id-1].value
}

// TestCountersWaitInTheFilter checks when the counters' counts reach the host: on
// the first response metrics_flush_ms after they last went, on a tick, when a
// connection ends; at once with metrics_flush_ms 0. Nothing is lost on the way.
func TestCountersWaitInTheFilter(t *testing.T) {
	produce := func(corr int32) []byte {
		return produceFrame(t, corr, 9, -1, records.CompressionNone, rec("t", 0, []byte("x")))
	}
	t.Run("default", func(t *testing.T) {
		h := &clockHost{fakeHost: newHost(), at: 5e9}
		f := mustFilter(t, h, `{"tick_ms":5000}`)
		if h.tick != 1000 {
			t.Errorf("tick period %d ms, want 1000 (metrics_flush_ms's, shorter than tick_ms)", h.tick)
		}
		p := newPipe(t, f, whole)
		p.send(produce(1)) // the first response sends what is counted by then
		base, before := h.updates, h.counted("request.produce")
		for corr := int32(2); corr < 12; corr++ {
			h.at += 50e6 // 50 ms a request: 500 ms in all
			p.send(produce(corr))
		}
		if len(p.replies) != 11 {
			t.Fatalf("%d replies", len(p.replies))
		}
		if h.updates != base || h.counted("request.produce") != before {
			t.Errorf("within metrics_flush_ms: %d updates, request.produce %d at the host; want none, %d", h.updates-base, h.counted("request.produce"), before)
		}
		h.at += 600e6
		p.send(produce(12)) // 1.1 s after the first flush: this request's response sends them
		if got := h.counted("request.produce"); got < 11 {
			t.Errorf("after metrics_flush_ms: request.produce %d at the host, want at least 11", got)
		}
		p.send(produce(13))
		f.OnTick()
		if got, resp := h.counted("request.produce"), h.counted("response.produce"); got != 13 || resp != 13 {
			t.Errorf("after a tick: request.produce %d, response.produce %d at the host, want 13 and 13", got, resp)
		}
		logs := len(h.logs)
		h.at += 1000e6
		f.OnTick()
		if len(h.logs) != logs {
			t.Errorf("a tick 1 s after the summary logged another: %q", h.logs[logs:])
		}
		h.at += 4000e6
		f.OnTick()
		if len(h.logs) != logs+1 {
			t.Errorf("no summary 5 s after the last one")
		}
		p.send(produce(14))
		p.c.Done()
		if got := h.counted("request.produce"); got != 14 {
			t.Errorf("after the connection ended: request.produce %d at the host, want 14", got)
		}
	})
	t.Run("at once", func(t *testing.T) {
		h := &clockHost{fakeHost: newHost(), at: 5e9}
		f := mustFilter(t, h, `{"metrics_flush_ms":0}`)
		if h.tick != 0 {
			t.Errorf("tick period %d ms, want none", h.tick)
		}
		p := newPipe(t, f, whole)
		for corr := int32(1); corr <= 3; corr++ {
			p.send(produce(corr))
			if got := h.counted("response.produce"); got != int64(corr) {
				t.Errorf("after request %d: response.produce %d at the host", corr, got)
			}
		}
	})
}

// FuzzDownstream feeds arbitrary client bytes: the filter must never panic and
// must keep its invariants (output bounded by what it was given plus what it
// synthesizes).
func FuzzDownstream(f *testing.F) {
	f.Add(produceFrame(&testing.T{}, 1, 9, -1, records.CompressionNone, rec("orders", 0, []byte("x"))), uint8(3))
	f.Add(metadataFrame(1, 12, "orders"), uint8(1))
	f.Add([]byte{0, 0, 0, 8, 0, 0, 0, 9, 0, 0, 0, 1}, uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		h := newHost()
		fl, err := New(h, []byte(enforceCfg))
		if err != nil {
			t.Fatal(err)
		}
		c := fl.NewConn()
		n := int(step) + 1
		var dn, up proxyDir
		for i := 0; i < len(data); i += n {
			out, closed := dn.deliver(t, c, data[i:min(i+n, len(data))], true)
			if len(out) > 2*len(data)+64 {
				t.Fatalf("output %d bytes for %d in", len(out), len(data))
			}
			_, upClosed := up.deliver(t, c, data[i:min(i+n, len(data))], false)
			if closed || upClosed {
				break
			}
		}
		c.Done()
	})
}

// TestExampleConfiguration: every plugin configuration in examples/envoy/envoy.yaml and
// tenants.yaml (each block scalar after "value: |") is one the filter accepts.
func TestExampleConfiguration(t *testing.T) {
	for _, file := range []string{"envoy.yaml", "tenants.yaml"} {
		y, err := os.ReadFile("../../examples/envoy/" + file)
		if err != nil {
			t.Fatal(err)
		}
		var blocks []string
		var cfg []string
		indent := -1
		for _, line := range strings.Split(string(y), "\n") {
			if indent < 0 {
				if strings.HasSuffix(strings.TrimSpace(line), "value: |") {
					indent, cfg = 0, nil
				}
				continue
			}
			n := len(line) - len(strings.TrimLeft(line, " "))
			if indent == 0 {
				indent = n
			}
			if strings.TrimSpace(line) != "" && n < indent {
				blocks = append(blocks, strings.Join(cfg, "\n"))
				indent = -1
				continue
			}
			cfg = append(cfg, line)
		}
		if len(blocks) == 0 {
			t.Fatalf("no plugin configuration found in %s", file)
		}
		for i, b := range blocks {
			if _, err := New(newHost(), []byte(b)); err != nil {
				t.Errorf("%s, configuration %d: refused: %v", file, i+1, err)
			}
		}
		if file == "tenants.yaml" && (len(blocks) != 2 || !strings.Contains(blocks[0], `"team-a."`) || !strings.Contains(blocks[1], `"team-b."`)) {
			t.Errorf("tenants.yaml: %d configurations, want team-a's and team-b's", len(blocks))
		}
	}
}

// TestExampleAdminOnLoopback: examples/envoy/envoy.yaml has a top-level admin block
// (where the filter's metrics are read) and it listens on loopback only.
func TestExampleAdminOnLoopback(t *testing.T) {
	y, err := os.ReadFile("../../examples/envoy/envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var block []string
	in := false
	for _, line := range strings.Split(string(y), "\n") {
		top := line != "" && line[0] != ' ' && line[0] != '#'
		switch {
		case top && strings.HasPrefix(line, "admin:"):
			in = true
		case top:
			in = false
		case in:
			block = append(block, strings.TrimSpace(line))
		}
	}
	admin := strings.Join(block, " ")
	if !strings.Contains(admin, "socket_address:") {
		t.Fatalf("envoy.yaml has no admin listener (admin block %q)", admin)
	}
	if !strings.Contains(admin, "address: 127.0.0.1,") {
		t.Errorf("the admin listener is not on 127.0.0.1: %q", admin)
	}
}

// Every response that carries a broker address (a struct with host, port and a node
// id, found in random messages of every version) is one the filter rewrites.
func TestAddressRewriteCoversEveryResponse(t *testing.T) {
	rewritten := map[int16]bool{apiMetadata: true, apiFindCoordinator: true, apiDescribeCluster: true,
		apiProduce: true, apiFetch: true, apiShareFetch: true, apiShareAcknowledge: true,
		// KRaft's controller-to-controller RPCs: they name controller listeners and
		// never pass between a client and a broker.
		53: true, 54: true}
	for _, info := range codec.Messages() {
		if info.Kind != codec.KindResponse {
			continue
		}
		for v := info.MinVersion; v <= info.MaxVersion; v++ {
			m := codec.NewMessage(info.Name)
			codectest.Fill(m, rand.New(rand.NewSource(int64(v))), v)
			body, err := m.Encode(nil, v)
			if err != nil {
				t.Fatal(err)
			}
			var d transcode.Doc
			if err := d.Parse(body, info.Name, v); err != nil {
				t.Fatal(err)
			}
			if hasAddress(&d, d.Root()) && !rewritten[info.APIKey] {
				t.Errorf("%s v%d carries broker addresses but the filter does not rewrite them", info.Name, v)
			}
		}
	}
}

func hasAddress(d *transcode.Doc, n transcode.Node) bool {
	if d.Field(n, "host") != transcode.NoNode && d.Field(n, "port") != transcode.NoNode &&
		(d.Field(n, "nodeId") != transcode.NoNode || d.Field(n, "brokerId") != transcode.NoNode) {
		return true
	}
	for c := d.First(n); c != transcode.NoNode; c = d.Next(c) {
		if hasAddress(d, c) {
			return true
		}
	}
	return false
}

func TestNodeEndpointsRewritten(t *testing.T) {
	h := newHost()
	f := mustFilter(t, h, `{"brokers":{"1":"proxy.example:9000"}}`)
	c := f.NewConn()
	frameOf := func(key, ver int16, m interface {
		Encode([]byte, int16) ([]byte, error)
	}) []byte {
		b := []byte{0, 0, 0, 0, 0, 0, 0, 7, 0}
		b, err := m.Encode(b, ver)
		if err != nil {
			t.Fatal(err)
		}
		binary.BigEndian.PutUint32(b, uint32(len(b)-4))
		return b
	}
	fetch := codec.NewFetchResponse()
	fetch.NodeEndpoints = []codec.FetchResponseNodeEndpoint{{NodeID: 1, Host: "broker-1.internal", Port: 9092}, {NodeID: 2, Host: "broker-2.internal", Port: 9092}}
	fetch.Responses = []codec.FetchResponseFetchableTopicResponse{{Partitions: []codec.FetchResponsePartitionData{{PartitionIndex: 0, Records: []byte{}}}}}
	out, err := c.rewriteResponse(&pend{key: apiFetch, ver: 16, kind: kindAddresses}, frameOf(apiFetch, 16, fetch))
	if err != nil || out == nil {
		t.Fatalf("Fetch v16: %v, changed %v", err, out != nil)
	}
	var got codec.FetchResponse
	if err := got.Decode(out[9:], 16); err != nil {
		t.Fatal(err)
	}
	if e := got.NodeEndpoints; len(e) != 2 || e[0].Host != "proxy.example" || e[0].Port != 9000 || e[1].Host != "broker-2.internal" || e[1].Port != 9092 {
		t.Errorf("node endpoints %+v", e)
	}
	if len(got.Responses) != 1 || got.Responses[0].Partitions[0].Records == nil {
		t.Errorf("the rest of the response changed: %+v", got.Responses)
	}
	if got, want := h.value("rewrite.broker_addresses"), int64(1); got != want {
		t.Errorf("rewrite.broker_addresses %d, want %d", got, want)
	}
	if got, want := h.value("rewrite.unmapped_nodes"), int64(1); got != want {
		t.Errorf("rewrite.unmapped_nodes %d, want %d", got, want)
	}
	// An address whose entry carries an error stays as it is.
	fc := codec.NewFindCoordinatorResponse()
	fc.Coordinators = []codec.FindCoordinatorResponseCoordinator{{Key: "g", NodeID: 1, Host: "broker-1.internal", Port: 9092, ErrorCode: 15}}
	out, err = c.rewriteResponse(&pend{key: apiFindCoordinator, ver: 4, kind: kindFindCoord}, frameOf(apiFindCoordinator, 4, fc))
	if err != nil || out != nil {
		t.Errorf("FindCoordinator with an error: %v, changed %v", err, out != nil)
	}
}

// Every version of every request the filter may deny gets a response it can build,
// that the typed codec decodes, with the configured code in its error fields and the
// request's entities named (topics and partitions, coordinator keys).
func TestDenyResponseEveryVersion(t *testing.T) {
	const code = 29 // TOPIC_AUTHORIZATION_FAILED
	h := newHost()
	f := mustFilter(t, h, `{"api_keys":{"allow":[18]},"deny_error_code":29}`)
	n := 0
	for _, api := range codec.APIs() {
		for v := api.Request.MinVersion; v <= api.Request.MaxVersion; v++ {
			req := codec.NewRequest(api.Key)
			codectest.Fill(req, rand.New(rand.NewSource(int64(v)+int64(api.Key)*100)), v)
			frame, err := kafkatest.Request(77, v, req)
			if err != nil {
				t.Fatal(err)
			}
			out, err := f.denyResponse(frame, api.Key)
			if err != nil {
				t.Errorf("%s v%d: %v", api.Name, v, err)
				continue
			}
			if out == nil {
				if p, ok := req.(*codec.ProduceRequest); !ok || p.Acks != 0 {
					t.Errorf("%s v%d: no response", api.Name, v)
				}
				continue
			}
			n++
			rf, err := codec.DecodeResponseFrame(out, api.Key, v)
			if err != nil {
				t.Errorf("%s v%d: the response does not decode: %v", api.Name, v, err)
				continue
			}
			if rf.Header.CorrelationID != 77 {
				t.Errorf("%s v%d: correlation id %d", api.Name, v, rf.Header.CorrelationID)
			}
			switch r := rf.Body.(type) {
			case *codec.ProduceResponse:
				p := req.(*codec.ProduceRequest)
				var want, got []string
				for _, tp := range p.TopicData {
					for _, pp := range tp.PartitionData {
						want = append(want, tp.Name+tp.TopicID.String()+"/"+itoa(pp.Index))
					}
				}
				for _, tp := range r.Responses {
					for _, pp := range tp.PartitionResponses {
						got = append(got, tp.Name+tp.TopicID.String()+"/"+itoa(pp.Index))
						if pp.ErrorCode != code || pp.BaseOffset != -1 {
							t.Errorf("Produce v%d: partition %+v", v, pp)
						}
					}
				}
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("Produce v%d: partitions %v, want %v", v, got, want)
				}
			case *codec.MetadataResponse:
				m := req.(*codec.MetadataRequest)
				if len(r.Topics) != len(m.Topics) {
					t.Errorf("Metadata v%d: %d topics, want %d", v, len(r.Topics), len(m.Topics))
				}
				for i := range r.Topics {
					want := fmtPtr(m.Topics[min(i, len(m.Topics)-1)].Name)
					if want == "<nil>" && v < 12 {
						want = "" // the response names a topic asked for by id with ""
					}
					if i < len(m.Topics) && (r.Topics[i].ErrorCode != code || r.Topics[i].TopicID != m.Topics[i].TopicID ||
						(v >= 1 && fmtPtr(r.Topics[i].Name) != want)) {
						t.Errorf("Metadata v%d: topic %+v for %+v", v, r.Topics[i], m.Topics[i])
					}
				}
				if v >= 13 && r.ErrorCode != code {
					t.Errorf("Metadata v%d: top-level error %d", v, r.ErrorCode)
				}
			case *codec.FindCoordinatorResponse:
				fc := req.(*codec.FindCoordinatorRequest)
				if v < 4 && r.ErrorCode != code {
					t.Errorf("FindCoordinator v%d: error %d", v, r.ErrorCode)
				}
				if v >= 4 {
					if len(r.Coordinators) != len(fc.CoordinatorKeys) {
						t.Errorf("FindCoordinator v%d: %d coordinators for %d keys", v, len(r.Coordinators), len(fc.CoordinatorKeys))
					}
					for i, c := range r.Coordinators {
						if c.ErrorCode != code || i < len(fc.CoordinatorKeys) && c.Key != fc.CoordinatorKeys[i] {
							t.Errorf("FindCoordinator v%d: coordinator %+v", v, c)
						}
					}
				}
			case *codec.DescribeClusterResponse:
				// Kafka's error response keeps the default endpoint type (brokers),
				// whatever the request asked for.
				if r.ErrorCode != code || (v >= 1 && r.EndpointType != 1) {
					t.Errorf("DescribeCluster v%d: %+v", v, r)
				}
			}
		}
	}
	if n < 300 {
		t.Fatalf("only %d responses built", n)
	}
	t.Logf("%d deny responses built and decoded", n)
}

func fmtPtr(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// The broker's Produce response gains the partitions the filter rejected, at every
// version: into the topic's entry when it has one, as a new entry otherwise.
func TestMergeRejectedEveryVersion(t *testing.T) {
	idA, idB := codec.UUID{1}, codec.UUID{2}
	for v := int16(0); v <= 13; v++ {
		resp := codec.NewProduceResponse()
		pa := codec.NewProduceResponsePartitionProduceResponse()
		pa.BaseOffset = 5
		ta := codec.ProduceResponseTopicProduceResponse{PartitionResponses: []codec.ProduceResponsePartitionProduceResponse{*pa}}
		if v >= 13 {
			ta.TopicID = idA
		} else {
			ta.Name = "a"
		}
		resp.Responses = []codec.ProduceResponseTopicProduceResponse{ta}
		body, err := resp.Encode(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		rejected := []rejectedTopic{
			{name: "a", id: idA, parts: []rejectedPartition{{index: 1, code: 87, msg: "no schema", failures: []policy.RecordVerdict{{Index: 2, Detail: "record 2"}}}}},
			{name: "b", id: idB, parts: []rejectedPartition{{index: 0, code: 87, msg: "no schema"}}},
		}
		if v >= 13 {
			rejected[0].name, rejected[1].name = "", ""
		}
		var d transcode.Doc
		if err := d.Parse(body, "ProduceResponse", v); err != nil {
			t.Fatal(err)
		}
		if err := mergeRejected(&d, v, rejected); err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		out, err := d.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		var got codec.ProduceResponse
		if err := got.Decode(out, v); err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		var parts []string
		for _, tp := range got.Responses {
			for _, p := range tp.PartitionResponses {
				s := tp.Name + tp.TopicID.String()[:2] + "/" + itoa(p.Index) + "=" + itoa(int32(p.ErrorCode))
				if v >= 8 && p.ErrorCode != 0 && (p.ErrorMessage == nil || *p.ErrorMessage != "no schema") {
					t.Errorf("v%d: %s message %v", v, s, p.ErrorMessage)
				}
				if v >= 8 && p.Index == 1 && (len(p.RecordErrors) != 1 || p.RecordErrors[0].BatchIndex != 2) {
					t.Errorf("v%d: record errors %+v", v, p.RecordErrors)
				}
				parts = append(parts, s)
			}
		}
		want := "aAA/0=0 aAA/1=87 bAA/0=87"
		if v >= 13 {
			want = "AQ/0=0 AQ/1=87 Ag/0=87"
		}
		if strings.Join(parts, " ") != want {
			t.Errorf("v%d: %s, want %s", v, strings.Join(parts, " "), want)
		}
	}
}

// A record error's detail may end inside a UTF-8 sequence (the policy clips what it
// quotes of a record): the Produce response is still built, the broken bytes as U+FFFD.
func TestProduceErrorResponseInvalidUTF8(t *testing.T) {
	rej := []rejectedTopic{{name: "t", parts: []rejectedPartition{{msg: "m",
		failures: []policy.RecordVerdict{{Index: 0, Detail: "not JSON: \"\xc3"}}}}}}
	if _, err := produceErrorResponse(1, 9, rej); err != nil {
		t.Fatal(err)
	}
}
