package kafkafilter

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/codectest"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/envoy/kafkatest"
)

// fetchResponse is a Fetch response frame at ver: parts partitions of size bytes of
// records each (one batch of random values, uncompressed), and endpoints.
func fetchResponse(t testing.TB, corr int32, ver int16, parts, size int, endpoints []codec.FetchResponseNodeEndpoint) []byte {
	t.Helper()
	rnd := rand.New(rand.NewSource(int64(parts*size) + int64(ver)))
	var enc records.Encoder
	resp := codec.NewFetchResponse()
	topic := codec.FetchResponseFetchableTopicResponse{Topic: "events"}
	topic.TopicID[3] = 9
	for p := 0; p < parts; p++ {
		var rs []records.Record
		for n := 0; n < size; n += 1000 {
			v := make([]byte, 1000)
			rnd.Read(v)
			rs = append(rs, records.Record{Value: v})
		}
		batch := records.Batch{BaseOffset: 100, PartitionLeaderEpoch: 1}
		batch.SetDeltas(rs)
		recs, err := enc.AppendBatch(nil, &batch, rs)
		if err != nil {
			t.Fatal(err)
		}
		var pd codec.FetchResponsePartitionData
		pd.SetDefaults()
		pd.PartitionIndex, pd.HighWatermark, pd.Records = int32(p), 200, recs
		if p == 1 && len(endpoints) > 0 {
			pd.ErrorCode = 6 // NOT_LEADER_OR_FOLLOWER, with the new leader
			pd.CurrentLeader.LeaderID, pd.CurrentLeader.LeaderEpoch = 1, 7
			pd.Records = []byte{}
		}
		topic.Partitions = append(topic.Partitions, pd)
	}
	resp.Responses = append(resp.Responses, topic)
	resp.NodeEndpoints = endpoints
	frame, err := codec.EncodeResponseFrame(nil, &codec.ResponseHeader{CorrelationID: corr}, ver, resp)
	if err != nil {
		t.Fatal(err)
	}
	return frame
}

func fetchRequest(t testing.TB, corr int32, ver int16) []byte {
	t.Helper()
	req := codec.NewFetchRequest()
	req.MaxWaitMs, req.MaxBytes = 500, 1<<20
	req.Topics = []codec.FetchRequestFetchTopic{{Topic: "events", Partitions: []codec.FetchRequestFetchPartition{{Partition: 0}}}}
	req.Topics[0].TopicID[3] = 9
	return kafkatest.MustRequest(corr, ver, req)
}

func chunk64K(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := min(len(b), 64<<10)
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// through sends request downstream, then response upstream in chunks, and returns
// what reached the client.
func through(t *testing.T, c *Conn, request, response []byte, chunk chunker) []byte {
	t.Helper()
	var dn, up proxyDir
	out, closed := dn.deliver(t, c, request, true)
	if closed || !bytes.Equal(out, request) {
		t.Fatalf("request: closed %v, forwarded changed %v", closed, !bytes.Equal(out, request))
	}
	var got []byte
	for _, piece := range chunk(response) {
		o, closed := up.deliver(t, c, piece, false)
		if closed {
			t.Fatal("the filter closed the connection")
		}
		got = append(got, o...)
	}
	return got
}

// Under address rewriting, a Fetch response streams through: its node endpoints are
// rewritten where they are, at the same size (the size prefix went first), in every
// chunking; endpoints that would not fit are removed; everything else is unchanged.
func TestFetchEndpointsInPlace(t *testing.T) {
	endpoints := []codec.FetchResponseNodeEndpoint{{NodeID: 1, Host: "broker-1.kafka.internal", Port: 9092}, {NodeID: 2, Host: "broker-2.kafka.internal", Port: 9092}}
	for _, tc := range []struct {
		name, proxy string
		dropped     bool
	}{
		{"shorter", "proxy-1:19092", false},
		{"same size", "broker-1.kafka.proxied:9092", false},
		{"one byte shorter", "broker-1.kafka.interna:9092", false},
		{"two bytes shorter", "broker-1.kafka.intern:9092", false},
		{"longer", "a-much-longer-proxy-host-name.example.com:19092", true},
	} {
		for _, ver := range []int16{16, 17, 18} {
			for ci, chunk := range []chunker{whole, bytewise, randomly(3), chunk64K} {
				h := newHost()
				f := mustFilter(t, h, `{"brokers":{"1":"`+tc.proxy+`"}}`)
				c := f.NewConn()
				resp := fetchResponse(t, 5, ver, 3, 3000, endpoints)
				got := through(t, c, fetchRequest(t, 5, ver), resp, chunk)
				if len(got) != len(resp) {
					t.Fatalf("%s v%d chunking %d: %d bytes forwarded, want %d", tc.name, ver, ci, len(got), len(resp))
				}
				rf, err := codec.DecodeResponseFrame(got, apiFetch, ver)
				if err != nil {
					t.Fatalf("%s v%d chunking %d: the client cannot read the response: %v", tc.name, ver, ci, err)
				}
				want, _ := codec.DecodeResponseFrame(resp, apiFetch, ver)
				gr, wr := rf.Body.(*codec.FetchResponse), want.Body.(*codec.FetchResponse)
				if tc.dropped {
					if len(gr.NodeEndpoints) != 0 || h.value("rewrite.endpoints_dropped") != 1 {
						t.Fatalf("%s v%d: endpoints %+v, dropped %d", tc.name, ver, gr.NodeEndpoints, h.value("rewrite.endpoints_dropped"))
					}
				} else {
					host, port, _ := splitHostPort(tc.proxy)
					e := gr.NodeEndpoints
					if len(e) != 2 || e[0].Host != host || itoa(e[0].Port) != port || e[1].Host != endpoints[1].Host || e[1].Port != endpoints[1].Port || h.value("rewrite.endpoints_in_place") != 1 {
						t.Fatalf("%s v%d chunking %d: endpoints %+v, in place %d", tc.name, ver, ci, e, h.value("rewrite.endpoints_in_place"))
					}
				}
				gr.NodeEndpoints, wr.NodeEndpoints = nil, nil
				gb, _ := gr.Encode(nil, ver)
				wb, _ := wr.Encode(nil, ver)
				if !bytes.Equal(stripUnknown(t, gb, ver), stripUnknown(t, wb, ver)) {
					t.Fatalf("%s v%d: the rest of the response changed", tc.name, ver)
				}
			}
		}
	}
}

// stripUnknown drops the unknown tagged fields (the padding) of a Fetch response body.
func stripUnknown(t *testing.T, body []byte, ver int16) []byte {
	var r codec.FetchResponse
	if err := r.Decode(body, ver); err != nil {
		t.Fatal(err)
	}
	r.UnknownTaggedFields = nil
	b, _ := r.Encode(nil, ver)
	return b
}

// A Fetch response of 1 MiB through a filter that rewrites addresses (and has a
// schema policy) but no rule for its records is not copied into the filter: only
// frame heads and the walk's small reads are, a few KiB at most; the bytes reach the
// client unchanged.
func TestFetchResponseNotCopied(t *testing.T) {
	for _, ver := range []int16{12, 16, 18} {
		for _, mode := range []string{"in_place", "forward"} {
			h := newHost()
			f := mustFilter(t, h, `{"brokers":{"1":"proxy:9000"},"fetch_endpoints":"`+mode+`","schema":{"rules":[{"topic":"orders","policy":"enforce","schema_ids":[1]}]}}`)
			c := f.NewConn()
			resp := fetchResponse(t, 5, ver, 10, 105<<10, nil)
			if len(resp) < 1<<20 {
				t.Fatalf("response of %d bytes", len(resp))
			}
			req := fetchRequest(t, 5, ver)
			got := through(t, c, req, resp, chunk64K)
			if !bytes.Equal(got, resp) {
				t.Fatalf("v%d %s: the response changed", ver, mode)
			}
			copied := c.Copied()
			t.Logf("Fetch v%d (%s): %d of %d response bytes copied into the filter", ver, mode, copied, len(resp))
			if copied > 16<<10 {
				t.Fatalf("Fetch v%d (%s): %d bytes copied into the filter for a %d-byte response", ver, mode, copied, len(resp))
			}
		}
	}
}

// Under "hold", the response is held whole and rewritten exactly (its size changes).
func TestFetchEndpointsHold(t *testing.T) {
	endpoints := []codec.FetchResponseNodeEndpoint{{NodeID: 1, Host: "b1", Port: 9092}}
	h := newHost()
	f := mustFilter(t, h, `{"brokers":{"1":"a-much-longer-proxy-host-name.example.com:19092"},"fetch_endpoints":"hold"}`)
	c := f.NewConn()
	resp := fetchResponse(t, 5, 18, 3, 3000, endpoints)
	got := through(t, c, fetchRequest(t, 5, 18), resp, randomly(5))
	rf, err := codec.DecodeResponseFrame(got, apiFetch, 18)
	if err != nil {
		t.Fatal(err)
	}
	if e := rf.Body.(*codec.FetchResponse).NodeEndpoints; len(e) != 1 || e[0].Host != "a-much-longer-proxy-host-name.example.com" || e[0].Port != 19092 {
		t.Fatalf("endpoints %+v", e)
	}
	if c.Copied() < int64(len(resp)) {
		t.Fatalf("held whole, yet only %d of %d bytes copied", c.Copied(), len(resp))
	}
}

// A Produce request whose topic no rule covers streams through: the proxy holds only
// its first bytes (until the topic is known), nothing of its records is copied, and
// the broker receives it unchanged.
func TestProduceWithoutRuleStreams(t *testing.T) {
	var big []records.Message
	for i := 0; i < 64; i++ {
		big = append(big, rec("events", int32(i%4), bytes.Repeat([]byte{byte(i)}, 1024)))
	}
	for ci, chunk := range []chunker{whole, chunk64K, randomly(9)} {
		h := newHost()
		f := mustFilter(t, h, enforceCfg)
		p := newPipe(t, f, chunk)
		frame := produceFrame(t, 1, 9, -1, records.CompressionNone, big...)
		p.send(frame)
		if len(p.upFrames) != 1 || !bytes.Equal(p.upFrames[0], frame) {
			t.Fatalf("chunking %d: %d frames reached the broker", ci, len(p.upFrames))
		}
		if len(p.replies) != 1 {
			t.Fatalf("chunking %d: %d replies", ci, len(p.replies))
		}
		if got := h.value("policy.requests_streamed"); got != 1 {
			t.Fatalf("chunking %d: policy.requests_streamed %d", ci, got)
		}
		if ci < 2 && p.c.Copied() > 4<<10 {
			t.Fatalf("chunking %d: %d bytes of a %d-byte request copied", ci, p.c.Copied(), len(frame))
		}
	}
}

// Each api is counted once, under kwire's names (request.<api>, response.<api>,
// response.<api>_duration_ms); nothing is defined under the kafka_broker filter's
// names (<api>_request, <api>_response, <api>_duration).
func TestAPIMetricNames(t *testing.T) {
	h := newHost()
	f := mustFilter(t, h, `{"stat_prefix":"kafka.edge","schema":{"rules":[{"topic":"orders","policy":"enforce","schema_ids":[1]}]}}`)
	p := newPipe(t, f, randomly(1))
	p.send(produceFrame(t, 1, 9, -1, records.CompressionNone, rec("events", 0, []byte("v"))),
		metadataFrame(2, 12, "events"), metadataFrame(3, 12, "events"))
	if len(p.replies) != 3 {
		t.Fatalf("%d replies", len(p.replies))
	}
	for _, tc := range []struct {
		name  string
		kind  MetricKind
		count int // the counter's value, or the histogram's samples
	}{
		{"kafka.edge.request.produce", Counter, 1},
		{"kafka.edge.response.produce", Counter, 1},
		{"kafka.edge.response.produce_duration_ms", Histogram, 1},
		{"kafka.edge.request.metadata", Counter, 2},
		{"kafka.edge.response.metadata", Counter, 2},
		{"kafka.edge.response.metadata_duration_ms", Histogram, 2},
		{"kafka.edge.request.unknown", Counter, 0},
		{"kafka.edge.request.failure", Counter, 0},
		{"kafka.edge.response.unknown", Counter, 0},
		{"kafka.edge.response.failure", Counter, 0},
	} {
		id, ok := h.byName[tc.name]
		if !ok {
			t.Errorf("no metric %s", tc.name)
			continue
		}
		h.flush()
		m := h.metrics[id-1]
		if m.kind != tc.kind {
			t.Errorf("%s is a %d, want %d", tc.name, m.kind, tc.kind)
		}
		if got := int(m.value); tc.kind == Histogram {
			if len(m.samples) != tc.count {
				t.Errorf("%s has %d samples, want %d", tc.name, len(m.samples), tc.count)
			}
		} else if got != tc.count {
			t.Errorf("%s = %d, want %d", tc.name, got, tc.count)
		}
	}
	for name := range h.byName {
		for _, suffix := range []string{"_request", "_response", "_duration"} {
			if strings.HasSuffix(name, suffix) {
				t.Errorf("metric %s defined: an api is counted twice", name)
			}
		}
	}
}

// Random Fetch responses (every field filled, at every version with node
// endpoints) streamed through the in-place walk in random chunkings, several per
// buffer: what reaches the client is exactly what the broker sent (no endpoint is
// mapped), and the connection stays in step.
func TestFetchWalkRandomResponses(t *testing.T) {
	rnd := rand.New(rand.NewSource(11))
	for ver := int16(16); ver <= 18; ver++ {
		h := newHost()
		f := mustFilter(t, h, `{"brokers":{"2147483000":"proxy:9000"}}`)
		c := f.NewConn()
		var dn, up proxyDir
		var reqs, resps []byte
		for i := 0; i < 40; i++ {
			m := codec.NewFetchResponse()
			codectest.Fill(m, rnd, ver)
			if i%3 == 0 {
				for ti := range m.Responses {
					for pi := range m.Responses[ti].Partitions {
						big := make([]byte, rnd.Intn(150<<10))
						rnd.Read(big)
						m.Responses[ti].Partitions[pi].Records = big
					}
				}
			}
			frame, err := codec.EncodeResponseFrame(nil, &codec.ResponseHeader{CorrelationID: int32(i + 1)}, ver, m)
			if err != nil {
				t.Fatal(err)
			}
			resps = append(resps, frame...)
			reqs = append(reqs, fetchRequest(t, int32(i+1), ver)...)
		}
		if out, _ := dn.deliver(t, c, reqs, true); !bytes.Equal(out, reqs) {
			t.Fatal("requests changed")
		}
		var got []byte
		for _, piece := range bigChunks(rnd)(resps) {
			o, closed := up.deliver(t, c, piece, false)
			if closed {
				t.Fatalf("v%d: closed; logs %v", ver, h.logs)
			}
			got = append(got, o...)
		}
		if !bytes.Equal(got, resps) {
			t.Fatalf("v%d: %d bytes forwarded of %d, equal %v; logs %v", ver, len(got), len(resps), bytes.Equal(got, resps[:min(len(got), len(resps))]), h.logs)
		}
		if n := h.value("response.failure"); n != 0 {
			t.Fatalf("v%d: %d response failures; logs %v", ver, n, h.logs)
		}
	}
}

// bigChunks cuts like socket reads of a busy proxy: mostly 64 KiB, sometimes less.
func bigChunks(r *rand.Rand) chunker {
	return func(b []byte) [][]byte {
		var out [][]byte
		for len(b) > 0 {
			n := 64 << 10
			switch r.Intn(4) {
			case 0:
				n = 1 + r.Intn(16)
			case 1:
				n = 1 + r.Intn(70<<10)
			}
			n = min(n, len(b))
			out = append(out, b[:n])
			b = b[n:]
		}
		return out
	}
}

// FuzzUpstream feeds arbitrary broker bytes after three Fetch v18 requests, through a
// filter that rewrites node endpoints in place: no panic, nothing forwarded beyond
// what came in, and a well-formed response whose endpoints are not mapped comes out
// unchanged.
func FuzzUpstream(f *testing.F) {
	ep := []codec.FetchResponseNodeEndpoint{{NodeID: 1, Host: "broker-1.kafka.internal", Port: 9092}}
	f.Add(fetchResponse(f, 1, 18, 2, 2000, nil), uint16(700))
	f.Add(fetchResponse(f, 1, 18, 3, 1000, ep), uint16(3))
	f.Add(append(fetchResponse(f, 1, 18, 1, 100, nil), fetchResponse(f, 2, 18, 1, 100, ep)...), uint16(64))
	f.Fuzz(func(t *testing.T, data []byte, step uint16) {
		h := newHost()
		fl, err := New(h, []byte(`{"brokers":{"1":"p:9","2":"a-much-longer-proxy-host-name.example:19092"}}`))
		if err != nil {
			t.Fatal(err)
		}
		c := fl.NewConn()
		var dn, up proxyDir
		for corr := int32(1); corr <= 3; corr++ {
			dn.deliver(t, c, fetchRequest(t, corr, 18), true)
		}
		n := int(step) + 1
		var out []byte
		for i := 0; i < len(data); i += n {
			o, closed := up.deliver(t, c, data[i:min(i+n, len(data))], false)
			out = append(out, o...)
			if closed {
				break
			}
		}
		if len(out) > len(data) {
			t.Fatalf("%d bytes out for %d in", len(out), len(data))
		}
		if rf, err := codec.DecodeResponseFrame(data, apiFetch, 18); err == nil && int(binary.BigEndian.Uint32(data))+4 == len(data) {
			if len(rf.Body.(*codec.FetchResponse).NodeEndpoints) == 0 && !bytes.Equal(out, data) {
				t.Fatal("a response without node endpoints changed")
			}
		}
		c.Done()
	})
}

// Under a rule, a partition Kafka's validateRecords refuses (here two batches at v9)
// is answered by the filter with the broker's error, and never reaches the broker;
// the other partitions of the request go on.
func TestProduceValidatedAsKafkaDoes(t *testing.T) {
	h := newHost()
	f := mustFilter(t, h, enforceCfg)
	p := newPipe(t, f, whole)
	good := produceFrame(t, 1, 9, -1, records.CompressionNone, rec("orders", 0, prefixed(1)), rec("orders", 1, prefixed(1)))
	rf, err := codec.DecodeRequestFrame(good)
	if err != nil {
		t.Fatal(err)
	}
	req := *rf.Body.(*codec.ProduceRequest)
	part := &req.TopicData[0].PartitionData[1]
	part.Records = append(append([]byte(nil), part.Records...), part.Records...) // two batches
	frame := kafkatest.MustRequest(1, 9, &req)
	p.send(frame)
	if len(p.replies) != 1 {
		t.Fatalf("%d replies", len(p.replies))
	}
	r := decodeProduce(t, p.replies[0], 9)
	got := codes(r)
	if len(got) != 2 {
		t.Fatalf("codes %v", got)
	}
	if h.value("policy.partitions_rejected") != 1 {
		t.Fatalf("partitions_rejected %d, codes %v", h.value("policy.partitions_rejected"), got)
	}
	for _, c := range got {
		if strings.HasSuffix(c, "/1=87") {
			return
		}
	}
	t.Fatalf("partition 1 not answered INVALID_RECORD: %v", got)
}

// PassThrough takes the callbacks in the middle of a frame that streams through, and
// only those: for a 1 MiB Fetch response at v12 (no rewrite needed) every 64 KiB read
// after the first; at v18, walked to its endpoints, the reads that fall inside a
// records field the walk steps over; never one that starts a frame. What reaches the
// client is the response, unchanged (it has no endpoints to rewrite).
func TestPassThroughMidFrame(t *testing.T) {
	for _, tc := range []struct {
		ver         int16
		least, most int // reads PassThrough takes, of 17
	}{{12, 16, 16}, {18, 3, 15}} {
		c := mustFilter(t, newHost(), `{"brokers":{"1":"127.0.0.1:19092"}}`).NewConn()
		if act := c.OnDownstream(sliceBuffer(fetchRequest(t, 5, tc.ver)), false); act.Edit || act.Pause || act.Close {
			t.Fatalf("v%d: request %+v", tc.ver, act)
		}
		if c.PassThrough(false, 100) {
			t.Fatalf("v%d: PassThrough took the first bytes of a response", tc.ver)
		}
		resp := fetchResponse(t, 5, tc.ver, 10, 105<<10, nil)
		taken := 0
		var up proxyDir // calls reset to 0 below: deliver then never asks PassThrough itself
		var got []byte
		for i, piece := range chunk64K(resp) {
			if i > 0 && c.PassThrough(false, len(piece)) {
				taken++
				got = append(got, piece...)
				continue
			}
			o, closed := up.deliver(t, c, piece, false)
			if closed {
				t.Fatalf("v%d, read %d: closed", tc.ver, i)
			}
			got = append(got, o...)
			up.calls = 0
		}
		if taken < tc.least || taken > tc.most {
			t.Errorf("v%d: PassThrough took %d of %d reads, want %d to %d", tc.ver, taken, len(chunk64K(resp)), tc.least, tc.most)
		}
		if !bytes.Equal(got, resp) {
			t.Errorf("v%d: the client got %d bytes, not the %d-byte response", tc.ver, len(got), len(resp))
		}
		// The next frame starts a buffer: not taken, and read.
		if c.PassThrough(false, 8) {
			t.Errorf("v%d: PassThrough took the start of the next frame", tc.ver)
		}
	}
}

// walkThrough takes the reads of a walked Fetch response (v16+, node endpoints
// rewritten in place) that PassThrough leaves, but for the first and the one the frame
// ends in: 10 partitions of 105 KiB in 64 KiB reads go through the full path twice or
// a little more (a read whose partition fields a read boundary splits). What reaches
// the client is what the full path alone sends, endpoints rewritten.
func TestWalkThroughMidFrame(t *testing.T) {
	endpoints := []codec.FetchResponseNodeEndpoint{{NodeID: 1, Host: "broker-1.kafka.internal", Port: 9092}}
	for _, ver := range []int16{16, 18} {
		for _, eps := range [][]codec.FetchResponseNodeEndpoint{nil, endpoints} {
			resp := fetchResponse(t, 5, ver, 10, 105<<10, eps)
			run := func(cheap bool) (out []byte, full, walked int) {
				c := mustFilter(t, newHost(), `{"brokers":{"1":"proxy-1:19092"}}`).NewConn()
				if act := c.OnDownstream(sliceBuffer(fetchRequest(t, 5, ver)), false); act.Edit || act.Pause || act.Close {
					t.Fatalf("v%d: request %+v", ver, act)
				}
				var up proxyDir
				for _, piece := range chunk64K(resp) {
					if cheap && c.PassThrough(false, len(piece)) {
						out = append(out, piece...)
						continue
					}
					if cheap && c.walkThrough(sliceBuffer(piece)) {
						walked++
						out = append(out, piece...)
						continue
					}
					full++
					o, closed := up.deliver(t, c, piece, false)
					if closed {
						t.Fatalf("v%d: closed", ver)
					}
					out = append(out, o...)
					up.calls = 0 // deliver counts it to 1, odd: the full path
				}
				return out, full, walked
			}
			want, _, _ := run(false)
			got, full, walked := run(true)
			t.Logf("v%d, %d endpoints: %d full, %d walkThrough, of %d reads", ver, len(eps), full, walked, len(chunk64K(resp)))
			if !bytes.Equal(got, want) {
				t.Fatalf("v%d, %d endpoints: the cheap paths sent other bytes than the full path", ver, len(eps))
			}
			if full > 3 || walked < 8 {
				t.Errorf("v%d, %d endpoints: %d reads took the full path and %d walkThrough, of %d", ver, len(eps), full, walked, len(chunk64K(resp)))
			}
			if len(eps) > 0 {
				rf, err := codec.DecodeResponseFrame(got, apiFetch, ver)
				if err != nil {
					t.Fatal(err)
				}
				if e := rf.Body.(*codec.FetchResponse).NodeEndpoints; len(e) != 1 || e[0].Host != "proxy-1" {
					t.Fatalf("v%d: endpoints %+v, want proxy-1", ver, e)
				}
			}
		}
	}
}
