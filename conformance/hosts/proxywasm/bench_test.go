package proxywasm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/envoy/kafkatest"
)

// sink answers every request frame with the response its api key maps to
// (correlation id patched in), so that the upstream costs the same with and without
// the filter, and little.
func sink(t testing.TB, answers map[int16][]byte) (addr string, stop func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var sp kafkatest.Splitter
				buf := make([]byte, 256<<10)
				for {
					n, err := c.Read(buf)
					for _, f := range sp.Push(buf[:n]) {
						tmpl := answers[int16(binary.BigEndian.Uint16(f[4:]))]
						if tmpl == nil {
							return
						}
						copy(tmpl[4:8], f[8:12])
						if _, werr := c.Write(tmpl); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), func() { ln.Close() }
}

// produceRequests is n Produce v9 requests to topic, each one lz4 batch of 64
// records of 1 KiB (a 64 KiB batch) whose records carry schema id 1 in a header.
func produceRequests(t testing.TB, topic string, n int) [][]byte {
	rnd := rand.New(rand.NewSource(1))
	var out [][]byte
	for i := 0; i < n; i++ {
		var msgs []records.Message
		for j := 0; j < 64; j++ {
			v := make([]byte, 1024)
			rnd.Read(v)
			msgs = append(msgs, records.Message{Topic: topic, Partition: int32(i % 4), Value: v,
				Headers: []records.Header{{Key: []byte("schema.id"), Value: []byte("1")}}})
		}
		req, err := kafkatest.Produce(9, 1, records.CompressionLZ4, msgs)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, kafkatest.MustRequest(int32(i+1), 9, req))
	}
	return out
}

// fetchResponseFrame is a Fetch response of about 1 MiB at ver: 10 partitions of
// two lz4 batches of 130 records of 1 KiB of text.
func fetchResponseFrame(t testing.TB, ver int16) []byte {
	rnd := rand.New(rand.NewSource(2))
	words := strings.Fields("kafka record value order payment user event stream topic partition offset leader broker")
	var enc records.Encoder
	resp := codec.NewFetchResponse()
	topic := codec.FetchResponseFetchableTopicResponse{Topic: "bench"}
	topic.TopicID[15] = 1
	for p := 0; p < 10; p++ {
		var recs []byte
		for b := 0; b < 2; b++ {
			rs := make([]records.Record, 130)
			for i := range rs {
				var v []byte
				for len(v) < 1024 {
					v = append(v, words[rnd.Intn(len(words))]...)
					v = append(v, ' ')
				}
				rs[i] = records.Record{Key: []byte(fmt.Sprint("k", i)), Value: v[:1024]}
			}
			batch := records.Batch{BaseOffset: int64(b * 130), Attributes: int16(records.CompressionLZ4), PartitionLeaderEpoch: 3}
			batch.SetDeltas(rs)
			var err error
			if recs, err = enc.AppendBatch(recs, &batch, rs); err != nil {
				t.Fatal(err)
			}
		}
		var pd codec.FetchResponsePartitionData
		pd.SetDefaults()
		pd.PartitionIndex, pd.HighWatermark, pd.LastStableOffset, pd.Records = int32(p), 260, 260, recs
		pd.AbortedTransactions = []codec.FetchResponseAbortedTransaction{}
		topic.Partitions = append(topic.Partitions, pd)
	}
	resp.Responses = append(resp.Responses, topic)
	frame, err := codec.EncodeResponseFrame(nil, &codec.ResponseHeader{}, ver, resp)
	if err != nil {
		t.Fatal(err)
	}
	return frame
}

func fetchRequestFrame(t testing.TB, ver int16) []byte {
	req := codec.NewFetchRequest()
	req.MaxWaitMs, req.MaxBytes = 500, 1<<20
	ft := codec.FetchRequestFetchTopic{Topic: "bench"}
	ft.TopicID[15] = 1
	for p := 0; p < 10; p++ {
		fp := codec.NewFetchRequestFetchPartition()
		fp.Partition, fp.PartitionMaxBytes = int32(p), 256<<10
		ft.Partitions = append(ft.Partitions, *fp)
	}
	req.Topics = []codec.FetchRequestFetchTopic{ft}
	return kafkatest.MustRequest(1, ver, req)
}

// loopConn is one client connection of a closed loop: it sends a request and waits
// for its response, as a consumer does with one broker.
type loopConn struct {
	c   net.Conn
	sp  kafkatest.Splitter
	buf []byte
}

func dialLoop(t testing.TB, addr string) *loopConn {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Minute))
	return &loopConn{c: c, buf: make([]byte, 256<<10)}
}

// roundTrip sends r and returns when its response has arrived.
func (l *loopConn) roundTrip(t testing.TB, r []byte) time.Duration {
	start := time.Now()
	if _, err := l.c.Write(r); err != nil {
		t.Fatalf("request: %v", err)
	}
	for got := false; !got; {
		n, err := l.c.Read(l.buf)
		if len(l.sp.Push(l.buf[:n])) > 0 {
			got = true
		}
		if err != nil && !(err == io.EOF && got) {
			t.Fatalf("response: %v", err)
		}
	}
	return time.Since(start)
}

// closedLoop sends each request and waits for its response before the next, and
// returns each request's time and the total.
func closedLoop(t testing.TB, addr string, reqs [][]byte) ([]time.Duration, time.Duration) {
	l := dialLoop(t, addr)
	defer l.c.Close()
	times := make([]time.Duration, 0, len(reqs))
	begin := time.Now()
	for _, r := range reqs {
		times = append(times, l.roundTrip(t, r))
	}
	return times, time.Since(begin)
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// vmProbe reads a VM's totals: time in the module's callbacks, and their number.
type vmProbe interface {
	VMTime() time.Duration
	Callbacks() int64
}

// benchResult is one workload's comparison.
type benchResult struct {
	name                  string
	bytes                 int
	pass, filter          time.Duration // totals over every round
	passTimes, filterTime []time.Duration
	vmTimes               []time.Duration // per request, the time in the module's callbacks
	callbacks             int64           // the module's callbacks over the rounds
	filterRequests        int             // requests sent through the filter, warm-up included
}

func (r benchResult) ratio() float64 { return r.pass.Seconds() / r.filter.Seconds() }
func (r benchResult) added(p float64) float64 {
	return float64(percentile(r.filterTime, p)-percentile(r.passTimes, p)) / 1e3
}
func (r benchResult) vm(p float64) float64 { return float64(percentile(r.vmTimes, p)) / 1e3 }

// compare sends reqs through the proxy without a module and the one with the
// filter, interleaved request by request (each request goes through both, in
// alternating order), so that both sides see the same machine: on a shared machine
// the noise of separate runs is larger than what the filter adds. It also records
// the time each request spent in the module's callbacks.
func compare(t testing.TB, name string, passAddr, filterAddr string, p vmProbe, reqs [][]byte, bytesPerRound int) benchResult {
	const rounds = 3
	closedLoop(t, filterAddr, reqs[:min(len(reqs), 20)])
	closedLoop(t, passAddr, reqs[:min(len(reqs), 20)])
	r := benchResult{name: name, bytes: bytesPerRound, filterRequests: min(len(reqs), 20) + rounds*len(reqs)}
	pass, filter := dialLoop(t, passAddr), dialLoop(t, filterAddr)
	calls0 := p.Callbacks()
	defer pass.c.Close()
	defer filter.c.Close()
	for round := 0; round < rounds; round++ {
		for i, req := range reqs {
			var tp, tf time.Duration
			vm0 := p.VMTime()
			if (round+i)%2 == 0 {
				tp = pass.roundTrip(t, req)
				tf = filter.roundTrip(t, req)
			} else {
				tf = filter.roundTrip(t, req)
				tp = pass.roundTrip(t, req)
			}
			r.vmTimes = append(r.vmTimes, p.VMTime()-vm0)
			r.passTimes, r.filterTime = append(r.passTimes, tp), append(r.filterTime, tf)
			r.pass += tp
			r.filter += tf
		}
	}
	r.bytes *= rounds
	r.callbacks = p.Callbacks() - calls0
	return r
}

// benchProduceResponse is the upstream's answer to the benchmarks' Produce requests.
func benchProduceResponse(t testing.TB, topic string) []byte {
	resp := codec.NewProduceResponse()
	pr := codec.NewProduceResponsePartitionProduceResponse()
	resp.Responses = []codec.ProduceResponseTopicProduceResponse{{Name: topic, PartitionResponses: []codec.ProduceResponsePartitionProduceResponse{*pr}}}
	frame, err := codec.EncodeResponseFrame(nil, &codec.ResponseHeader{}, 9, resp)
	if err != nil {
		t.Fatal(err)
	}
	return frame
}

// benchSafeguards are the safeguards of a gateway's operator (the issue's own set:
// CreateTopics limits, Produce acks, a JoinGroup session timeout bound, a client id
// pattern), which the safeguards workload's Produce requests (acks=1, to a topic no
// schema rule names) follow. Every Produce rule names a field of the request's head,
// so each request is decided from its first bytes and streams.
const benchSafeguards = `"rules":[
	{"api":"CreateTopics","field":"topics[].numPartitions","max":64},
	{"api":"CreateTopics","field":"topics[].replicationFactor","min":1},
	{"api":"Produce","field":"acks","in":[-1,1]},
	{"api":"Produce","field":"timeoutMs","max":60000},
	{"api":"JoinGroup","field":"sessionTimeoutMs","max":30000},
	{"api":"*","field":"header.clientId","pattern":"^[a-z0-9-]+$"}]`

// benchSafeguardsPartitions adds a rule on every partition of a Produce request: each
// request is held by the proxy until whole and checked on its skeleton (its records
// stepped over, never copied into the filter).
const benchSafeguardsPartitions = `"rules":[
	{"api":"CreateTopics","field":"topics[].numPartitions","max":64},
	{"api":"Produce","field":"acks","in":[-1,1]},
	{"api":"Produce","field":"topicData[].partitionData[].index","max":99}]`

// benchPolicy is the schema policy of the proxy benchmarks: one topic enforced.
const benchPolicy = `"schema":{"default":"none","rules":[{"topic":"enforced","policy":"enforce","schema_ids":[1]}]}`

// TestProxyBenchTable compares the harness proxy with the filter against the same
// proxy without a module, on three workloads in one run (KWIRE_BENCH=1, make
// envoy-bench):
//
//   - consume: Fetch responses of about 1 MiB (10 partitions, lz4 batches), address
//     rewriting on, at v12 and v18; the client waits for each response;
//   - produce-no-rule: Produce v9 of 64 KiB lz4 batches to a topic no rule names;
//   - produce-enforce: the same to a topic whose rule enforces schema ids in headers;
//   - safeguards: produce-no-rule's requests under an operator's safeguards
//     (benchSafeguards: Produce rules on head fields), which they follow: each is
//     decided from its first bytes and streams; safeguards-partitions adds a rule on
//     every partition (benchSafeguardsPartitions): each is held and checked on its
//     skeleton;
//   - tenancy: consume v18 through a listener with a tenant prefix (topic ids: nothing
//     to rename, the frames stream), and tenancy-produce: produce-no-rule's requests
//     through it (topic names at v9: each request is held and its names prefixed, and
//     each response's stripped).
//
// It also measures consume at v18 with fetch_endpoints "hold" (what holding each
// response costs) and, with a real broker, a Java consumer (TestProxyBenchJava).
func TestProxyBenchTable(t *testing.T) {
	if os.Getenv("KWIRE_BENCH") != "1" {
		t.Skip("set KWIRE_BENCH=1 (make envoy-bench)")
	}
	produceFrame := benchProduceResponse(t, "bench")
	newProxyOf := func(mod []byte, cfg string, answers map[int16][]byte) (*Proxy, *Proxy, *Plugin, func()) {
		up, stop := sink(t, answers)
		var p *Plugin
		if cfg != "" {
			var err error
			if p, err = NewPlugin(context.Background(), Config{Module: mod, Cache: cache, PluginConfiguration: []byte(cfg)}); err != nil {
				t.Fatal(err)
			}
		}
		with, err := NewProxy(p, up)
		if err != nil {
			t.Fatal(err)
		}
		without, err := NewProxy(nil, up)
		if err != nil {
			t.Fatal(err)
		}
		return without, with, p, func() { with.Close(); without.Close(); p.Close(); stop() }
	}
	newProxy := func(cfg string, answers map[int16][]byte) (*Proxy, *Proxy, *Plugin, func()) {
		return newProxyOf(module(t), cfg, answers)
	}
	var results []benchResult
	copied := map[string]float64{}
	for _, w := range []struct {
		name, cfg string
		ver       int16
	}{
		{"consume v12", `{"brokers":{"1":"127.0.0.1:19092"},` + benchPolicy + `}`, 12},
		{"consume v18", `{"brokers":{"1":"127.0.0.1:19092"},` + benchPolicy + `}`, 18},
		{"consume v18 hold", `{"brokers":{"1":"127.0.0.1:19092"},"fetch_endpoints":"hold",` + benchPolicy + `}`, 18},
		{"tenancy", `{"brokers":{"1":"127.0.0.1:19092"},"tenant":{"prefix":"team-a."}}`, 18},
	} {
		resp := fetchResponseFrame(t, w.ver)
		without, with, p, stop := newProxy(w.cfg, map[int16][]byte{apiFetch: resp})
		reqs := make([][]byte, 200)
		for i := range reqs {
			reqs[i] = fetchRequestFrame(t, w.ver)
		}
		before := p.BytesCopiedIn()
		r := compare(t, w.name, without.Addr(), with.Addr(), p, reqs, len(resp)*len(reqs))
		copied[w.name] = float64(p.BytesCopiedIn()-before) / float64(r.filterRequests)
		results = append(results, r)
		stop()
	}
	for _, w := range []struct{ name, topic, cfg string }{
		{"produce-no-rule", "free", `{` + benchPolicy + `}`},
		{"produce-enforce", "enforced", `{` + benchPolicy + `}`},
		{"safeguards", "free", `{` + benchPolicy + `,` + benchSafeguards + `}`},
		{"safeguards-partitions", "free", `{` + benchPolicy + `,` + benchSafeguardsPartitions + `}`},
		{"tenancy-produce", "free", `{"tenant":{"prefix":"team-a."}}`},
	} {
		reqs := produceRequests(t, w.topic, 400)
		answer := produceFrame
		if w.name == "tenancy-produce" {
			answer = benchProduceResponse(t, "team-a."+w.topic) // the broker names the prefixed topic
		}
		without, with, p, stop := newProxy(w.cfg, map[int16][]byte{apiProduce: answer})
		n := 0
		for _, r := range reqs {
			n += len(r)
		}
		before := p.BytesCopiedIn()
		r := compare(t, w.name, without.Addr(), with.Addr(), p, reqs, n)
		results = append(results, r)
		copied[w.name] = float64(p.BytesCopiedIn()-before) / float64(r.filterRequests)
		p.Tick() // the filter's counters reach the host on a tick
		if strings.HasPrefix(w.name, "safeguards") {
			if m, _ := p.Metric("kafka.kwire.rules.requests_refused"); m.Value != 0 {
				t.Fatalf("the rules refused %d requests of traffic that follows them", m.Value)
			}
		}
		if w.name == "tenancy-produce" {
			if m, _ := p.Metric("kafka.kwire.tenant.requests_renamed"); m.Value < int64(len(reqs)) {
				t.Fatalf("the tenant renamed %d requests, want at least %d", m.Value, len(reqs))
			}
		}
		if w.topic == "enforced" {
			if m, _ := p.Metric("kafka.kwire.policy.records_checked"); m.Value < int64(len(reqs)*64) {
				t.Fatalf("the filter checked %d records, want at least %d", m.Value, len(reqs)*64)
			}
		}
		stop()
	}
	// The floors, on the produce requests: a Go-built module that returns at once from
	// every callback (what any Go filter costs in this harness before it reads a byte),
	// and one that does the least a filter that counts and times requests does (reads
	// each frame's head and the clock, records each response's duration).
	for _, fl := range []struct{ name, dir string }{{"floor-produce", "floor"}, {"floor-io", "floorio"}} {
		without, with, p, stop := newProxyOf(floorModule(t, fl.dir), `{}`, map[int16][]byte{apiProduce: produceFrame})
		reqs := produceRequests(t, "free", 400)
		n := 0
		for _, r := range reqs {
			n += len(r)
		}
		results = append(results, compare(t, fl.name, without.Addr(), with.Addr(), p, reqs, n))
		stop()
	}
	fmt.Println("proxy benchmark: the harness proxy with kwire-envoy.wasm vs the same proxy without a module, 3 rounds, each request through both in turn")
	fmt.Println("  (added: the filter's percentile minus pass-through's; in VM: the time each request spent in the module's callbacks)")
	fmt.Printf("  %-18s %8s %12s %12s %8s %12s %12s %10s %10s %10s %12s\n", "workload", "MiB", "pass MiB/s", "filter MiB/s", "ratio", "added p50 us", "added p99 us", "VM p50 us", "VM p99 us", "calls/req", "copied/req")
	for _, r := range results {
		mib := float64(r.bytes) / (1 << 20)
		perReq := float64(r.bytes) / float64(len(r.passTimes))
		fmt.Printf("  %-18s %8.1f %12.1f %12.1f %7.2fx %12.1f %12.1f %10.1f %10.1f %10.1f %6.0f B %3.0f%%\n", r.name, mib, mib/r.pass.Seconds(), mib/r.filter.Seconds(), r.ratio(), r.added(0.5), r.added(0.99), r.vm(0.5), r.vm(0.99), float64(r.callbacks)/float64(len(r.vmTimes)), copied[r.name], 100*copied[r.name]/perReq)
	}
	byName := map[string]benchResult{}
	for _, r := range results {
		byName[r.name] = r
	}
	worst := byName["consume v12"]
	if r := byName["consume v18"]; r.ratio() < worst.ratio() {
		worst = r
	}
	lines := []benchResult{worst, byName["produce-no-rule"], byName["produce-enforce"], byName["safeguards"], byName["safeguards-partitions"], byName["tenancy"], byName["tenancy-produce"]}
	names := []string{"consume", "produce-no-rule", "produce-enforce", "safeguards", "safeguards-partitions", "tenancy", "tenancy-produce"}
	for i, r := range lines {
		fmt.Printf("envoy-bench %s: ratio %.2fx, added p50 %.1f us, p99 %.1f us\n", names[i], r.ratio(), r.added(0.5), r.added(0.99))
		fmt.Printf("envoy-bench %s in the VM: p50 %.1f us, p99 %.1f us per request\n", names[i], r.vm(0.5), r.vm(0.99))
	}
	floor := byName["floor-produce"]
	fmt.Printf("envoy-bench floor (produce-no-rule's requests through a Go module that returns at once): ratio %.2fx, added p50 %.1f us, p99 %.1f us (in the VM: p50 %.1f us)\n",
		floor.ratio(), floor.added(0.5), floor.added(0.99), floor.vm(0.5))
	floorIO := byName["floor-io"]
	fmt.Printf("envoy-bench floor-io (the same through a Go module that only reads each frame's head and the clock and records durations): ratio %.2fx, added p50 %.1f us, p99 %.1f us (in the VM: p50 %.1f us)\n",
		floorIO.ratio(), floorIO.added(0.5), floorIO.added(0.99), floorIO.vm(0.5))
	hold := byName["consume v18 hold"]
	fmt.Printf("envoy-bench consume-hold (fetch_endpoints \"hold\", v18): ratio %.2fx, added p50 %.1f us, p99 %.1f us\n", hold.ratio(), hold.added(0.5), hold.added(0.99))
}

const (
	apiProduce = 0
	apiFetch   = 1
)

// callbackWorkloads are the module-alone workloads: one Fetch response of about 1 MiB
// delivered upstream in 64 KiB reads, per mode, and one Produce request of a 64 KiB
// batch downstream.
var callbackWorkloads = []struct {
	name, cfg string
	ver       int16
	produce   string
}{
	{"fetch-v12-noconfig", `{}`, 12, ""},
	{"fetch-v12-pass", `{"brokers":{"1":"127.0.0.1:19092"}}`, 12, ""},
	{"fetch-v18-in-place", `{"brokers":{"1":"127.0.0.1:19092"}}`, 18, ""},
	{"fetch-v18-forward", `{"brokers":{"1":"127.0.0.1:19092"},"fetch_endpoints":"forward"}`, 18, ""},
	{"fetch-v18-hold", `{"brokers":{"1":"127.0.0.1:19092"},"fetch_endpoints":"hold"}`, 18, ""},
	{"produce-no-rule", `{"schema":{"rules":[{"topic":"enforced","policy":"enforce","schema_ids":[1]}]}}`, 9, "free"},
	{"produce-enforce", `{"schema":{"rules":[{"topic":"enforced","policy":"enforce","schema_ids":[1]}]}}`, 9, "enforced"},
	{"safeguards", `{"schema":{"rules":[{"topic":"enforced","policy":"enforce","schema_ids":[1]}]},` + benchSafeguards + `}`, 9, "free"},
	{"safeguards-partitions", `{"schema":{"rules":[{"topic":"enforced","policy":"enforce","schema_ids":[1]}]},` + benchSafeguardsPartitions + `}`, 9, "free"},
	{"tenancy-produce", `{"tenant":{"prefix":"team-a."}}`, 9, "free"},
}

// callbackFrames are a workload's request and its response, correlated.
func callbackFrames(t testing.TB, ver int16, produce string) (req, resp []byte) {
	if produce != "" {
		req = produceRequests(t, produce, 1)[0]
		resp = benchProduceResponse(t, "team-a."+produce) // a tenant's broker names the prefixed topic
	} else {
		req, resp = fetchRequestFrame(t, ver), fetchResponseFrame(t, ver)
	}
	copy(resp[4:8], req[8:12])
	return req, resp
}

// deliverOp sends one request downstream and its response upstream in 64 KiB reads
// and returns the callbacks made.
func deliverOp(t testing.TB, s *Stream, req, resp []byte) int {
	calls := 0
	for off := 0; off < len(req); off += 64 << 10 {
		if _, err := s.Downstream(req[off:min(off+64<<10, len(req))], false); err != nil {
			t.Fatal(err)
		}
		calls++
	}
	for off := 0; off < len(resp); off += 64 << 10 {
		if _, err := s.Upstream(resp[off:min(off+64<<10, len(resp))], false); err != nil {
			t.Fatal(err)
		}
		calls++
	}
	return calls
}

// BenchmarkModuleCallbacks times the module alone on wazero, without sockets
// (callbackWorkloads).
func BenchmarkModuleCallbacks(b *testing.B) {
	for _, bc := range callbackWorkloads {
		b.Run(bc.name, func(b *testing.B) {
			p := newPlugin(b, bc.cfg)
			s, err := p.NewStream()
			if err != nil {
				b.Fatal(err)
			}
			req, resp := callbackFrames(b, bc.ver, bc.produce)
			b.SetBytes(int64(len(req) + len(resp)))
			calls := 0
			for b.Loop() {
				calls += deliverOp(b, s, req, resp)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(calls), "ns/callback")
		})
	}
}

// TestModuleCallbacksV8 times the module alone on V8 (Node's WebAssembly, through
// v8/callbacks.mjs, a proxy-wasm host of its own) beside wazero, on
// callbackWorkloads, in one run (KWIRE_BENCH=1, make envoy-bench). Envoy runs Wasm
// filters on V8 by default; the harness proxy runs them on wazero.
// KWIRE_BENCH_V8_ONLY=NAME runs one workload; KWIRE_BENCH_V8_PROFILE=DIR writes a V8
// CPU profile of the run there.
func TestModuleCallbacksV8(t *testing.T) {
	node, modPath := v8Setup(t)
	dir := filepath.Dir(modPath)
	type workload struct {
		Name, Config, Request, Response string
		Ops                             int
	}
	var ws []workload
	wazeroNs := map[string]float64{}
	for i, bc := range callbackWorkloads {
		if only := os.Getenv("KWIRE_BENCH_V8_ONLY"); only != "" && bc.name != only {
			continue
		}
		req, resp := callbackFrames(t, bc.ver, bc.produce)
		p := newPlugin(t, bc.cfg)
		s, err := p.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		warm := time.Now()
		for j := 0; j < 200; j++ {
			deliverOp(t, s, req, resp)
		}
		// About a second of work on each side.
		ops := int(min(20000, max(200, time.Second/(time.Since(warm)/200))))
		w := workload{Name: bc.name, Config: bc.cfg, Request: filepath.Join(dir, fmt.Sprint(i, ".req")), Response: filepath.Join(dir, fmt.Sprint(i, ".resp")), Ops: ops}
		if os.WriteFile(w.Request, req, 0o644) != nil || os.WriteFile(w.Response, resp, 0o644) != nil {
			t.Fatal("cannot write the frames")
		}
		ws = append(ws, w)
		start := time.Now()
		for j := 0; j < ops; j++ {
			deliverOp(t, s, req, resp)
		}
		wazeroNs[bc.name] = float64(time.Since(start).Nanoseconds()) / float64(ops)
	}
	// The V8 workloads carry lowercase keys.
	type jsWorkload struct {
		Name     string `json:"name"`
		Config   string `json:"config"`
		Request  string `json:"request"`
		Response string `json:"response"`
		Ops      int    `json:"ops"`
	}
	// One node process per workload: each is timed on an engine of its own.
	var out []byte
	for i, w := range ws {
		list, _ := json.Marshal([]jsWorkload{jsWorkload(w)})
		listPath := filepath.Join(dir, fmt.Sprint(i, ".json"))
		if err := os.WriteFile(listPath, list, 0o644); err != nil {
			t.Fatal(err)
		}
		// --no-liftoff: every function compiled by the optimizing tier from the start,
		// the steady state of a long-running proxy (with lazy tier-up, a short run
		// would be timed partly on the baseline compiler).
		args := []string{"--no-warnings", "--no-liftoff"}
		if prof := os.Getenv("KWIRE_BENCH_V8_PROFILE"); prof != "" {
			// A V8 CPU profile of the run (Chrome DevTools reads it), in that directory.
			args = append(args, "--cpu-prof", "--cpu-prof-dir="+prof)
		}
		cmd := exec.Command(node, append(args, filepath.Join("v8", "callbacks.mjs"), modPath, listPath)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		o, err := cmd.Output()
		if err != nil {
			t.Fatalf("node v8/callbacks.mjs (%s): %v\n%s%s", w.Name, err, o, stderr.Bytes())
		}
		out = append(out, o...)
	}
	fmt.Println("the module alone, no sockets: wazero (the harness) beside V8 (Envoy's default runtime), us per request and its response")
	fmt.Printf("  %-20s %10s %10s %8s %10s %12s\n", "workload", "wazero us", "V8 us", "V8/wz", "calls/op", "copied/op")
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			Name          string  `json:"name"`
			NsPerOp       float64 `json:"nsPerOp"`
			Callbacks     float64 `json:"callbacks"`
			BytesCopiedIn float64 `json:"bytesCopiedIn"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("node printed %q: %v", line, err)
		}
		wz, ok := wazeroNs[r.Name]
		if !ok || r.NsPerOp <= 0 || r.Callbacks < 2 {
			t.Fatalf("node printed %+v", r)
		}
		seen++
		fmt.Printf("  %-20s %10.1f %10.1f %7.2fx %10.1f %10.0f B\n", r.Name, wz/1e3, r.NsPerOp/1e3, r.NsPerOp/wz, r.Callbacks, r.BytesCopiedIn)
	}
	if seen != len(ws) {
		t.Fatalf("node timed %d of %d workloads", seen, len(ws))
	}
}

// Through the module itself: a Fetch response of about 1 MiB, in 64 KiB reads, with
// address rewriting on and a policy with no rule for it, is not copied into the VM:
// the bytes the host copies in per response are counted and stay a few KiB.
func TestFetchResponseNotCopiedIntoModule(t *testing.T) {
	for _, ver := range []int16{12, 18} {
		p := newPlugin(t, `{"brokers":{"1":"127.0.0.1:19092"},"schema":{"rules":[{"topic":"enforced","policy":"enforce","schema_ids":[1]}]}}`)
		s, err := p.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		req, resp := fetchRequestFrame(t, ver), fetchResponseFrame(t, ver)
		copy(resp[4:8], req[8:12])
		if out, err := s.Downstream(req, false); err != nil || !bytes.Equal(out, req) {
			t.Fatalf("request: %v", err)
		}
		before := p.BytesCopiedIn()
		var got []byte
		for off := 0; off < len(resp); off += 64 << 10 {
			out, err := s.Upstream(resp[off:min(off+64<<10, len(resp))], false)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, out...)
		}
		copied := p.BytesCopiedIn() - before
		t.Logf("Fetch v%d: %d of %d bytes copied into the module", ver, copied, len(resp))
		if !bytes.Equal(got, resp) {
			t.Fatalf("Fetch v%d: the response changed", ver)
		}
		if len(resp) < 1<<20 || copied > 16<<10 {
			t.Fatalf("Fetch v%d: %d bytes copied into the module for a %d-byte response", ver, copied, len(resp))
		}
	}
}

// v8Setup skips a V8 benchmark unless KWIRE_BENCH=1, and returns node and the
// module's path in a temporary directory.
func v8Setup(t *testing.T) (node, modPath string) {
	if os.Getenv("KWIRE_BENCH") != "1" {
		t.Skip("set KWIRE_BENCH=1 (make envoy-bench)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is needed for the V8 benchmarks")
	}
	modPath = filepath.Join(t.TempDir(), "kwire-envoy.wasm")
	if err := os.WriteFile(modPath, module(t), 0o644); err != nil {
		t.Fatal(err)
	}
	return node, modPath
}

// v8Proxy is v8/proxy.mjs running: a Node proxy with the module on V8 beside the
// same proxy without it.
type v8Proxy struct {
	cmd          *exec.Cmd
	stdin        io.WriteCloser
	lines        *bufio.Scanner
	pass, filter string
	t            testing.TB
}

func startV8Proxy(t testing.TB, node, modPath, cfg, upstream string) *v8Proxy {
	cmd := exec.Command(node, "--no-warnings", "--no-liftoff", filepath.Join("v8", "proxy.mjs"), modPath, cfg, upstream)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	x := &v8Proxy{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout), t: t}
	var ports struct{ Pass, Filter int }
	if !x.lines.Scan() || json.Unmarshal(x.lines.Bytes(), &ports) != nil || ports.Pass == 0 || ports.Filter == 0 {
		cmd.Process.Kill()
		t.Fatalf("node v8/proxy.mjs did not start: %q", x.lines.Text())
	}
	x.pass, x.filter = fmt.Sprint("127.0.0.1:", ports.Pass), fmt.Sprint("127.0.0.1:", ports.Filter)
	return x
}

func (x *v8Proxy) stats() (vmNanos, callbacks int64) {
	fmt.Fprintln(x.stdin, "stats")
	var s struct{ VMNanos, Callbacks int64 }
	if !x.lines.Scan() || json.Unmarshal(x.lines.Bytes(), &s) != nil {
		x.t.Fatalf("node v8/proxy.mjs: %q", x.lines.Text())
	}
	return s.VMNanos, s.Callbacks
}

// VMTime and Callbacks make a v8Proxy a vmProbe.
func (x *v8Proxy) VMTime() time.Duration { n, _ := x.stats(); return time.Duration(n) }
func (x *v8Proxy) Callbacks() int64      { _, c := x.stats(); return c }

func (x *v8Proxy) stop() {
	x.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- x.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		x.cmd.Process.Kill()
		<-done
	}
}

// TestProxyBenchV8 is TestProxyBenchTable's comparison on V8, Envoy's default Wasm
// runtime: a Node proxy (v8/proxy.mjs) with kwire-envoy.wasm against the same Node
// proxy without a module, both in front of the same trivial upstream, each request
// through both in turn (KWIRE_BENCH=1, make envoy-bench). Node's proxy is not
// Envoy's, but both sides share it, as both sides of the harness benchmark share
// the harness.
func TestProxyBenchV8(t *testing.T) {
	node, modPath := v8Setup(t)
	produceFrame := benchProduceResponse(t, "bench")
	type workload struct {
		name, cfg string
		answers   map[int16][]byte
		reqs      [][]byte
		bytes     int // what one round moves: the responses of consume, the requests of produce
	}
	var ws []workload
	for _, ver := range []int16{12, 18} {
		resp := fetchResponseFrame(t, ver)
		reqs := make([][]byte, 200)
		for i := range reqs {
			reqs[i] = fetchRequestFrame(t, ver)
		}
		ws = append(ws, workload{fmt.Sprint("consume v", ver), `{"brokers":{"1":"127.0.0.1:19092"},` + benchPolicy + `}`, map[int16][]byte{apiFetch: resp}, reqs, len(resp) * len(reqs)})
	}
	for _, w := range []struct{ name, topic string }{{"produce-no-rule", "free"}, {"produce-enforce", "enforced"}} {
		reqs := produceRequests(t, w.topic, 400)
		n := 0
		for _, r := range reqs {
			n += len(r)
		}
		ws = append(ws, workload{w.name, `{` + benchPolicy + `}`, map[int16][]byte{apiProduce: produceFrame}, reqs, n})
	}
	{
		reqs := produceRequests(t, "free", 400)
		n := 0
		for _, r := range reqs {
			n += len(r)
		}
		ws = append(ws, workload{"safeguards", `{` + benchPolicy + `,` + benchSafeguards + `}`, map[int16][]byte{apiProduce: produceFrame}, reqs, n})
		resp := fetchResponseFrame(t, 18)
		freqs := make([][]byte, 200)
		for i := range freqs {
			freqs[i] = fetchRequestFrame(t, 18)
		}
		ws = append(ws, workload{"tenancy", `{"brokers":{"1":"127.0.0.1:19092"},"tenant":{"prefix":"team-a."}}`, map[int16][]byte{apiFetch: resp}, freqs, len(resp) * len(freqs)})
	}
	var results []benchResult
	for _, w := range ws {
		up, stopSink := sink(t, w.answers)
		x := startV8Proxy(t, node, modPath, w.cfg, up)
		results = append(results, compare(t, w.name, x.pass, x.filter, x, w.reqs, w.bytes))
		x.stop()
		stopSink()
	}
	fmt.Println("proxy benchmark on V8: a Node proxy with kwire-envoy.wasm vs the same Node proxy without a module, 3 rounds, each request through both in turn")
	fmt.Printf("  %-18s %8s %12s %12s %8s %12s %12s %10s %10s %10s\n", "workload", "MiB", "pass MiB/s", "filter MiB/s", "ratio", "added p50 us", "added p99 us", "VM p50 us", "VM p99 us", "calls/req")
	for _, r := range results {
		mib := float64(r.bytes) / (1 << 20)
		fmt.Printf("  %-18s %8.1f %12.1f %12.1f %7.2fx %12.1f %12.1f %10.1f %10.1f %10.1f\n", r.name, mib, mib/r.pass.Seconds(), mib/r.filter.Seconds(), r.ratio(), r.added(0.5), r.added(0.99), r.vm(0.5), r.vm(0.99), float64(r.callbacks)/float64(len(r.vmTimes)))
	}
	worst := results[0]
	if results[1].ratio() < worst.ratio() {
		worst = results[1]
	}
	for i, r := range []benchResult{worst, results[2], results[3], results[4], results[5]} {
		name := []string{"consume", "produce-no-rule", "produce-enforce", "safeguards", "tenancy"}[i]
		fmt.Printf("envoy-bench v8 %s: ratio %.2fx, added p50 %.1f us, p99 %.1f us (in the VM: p50 %.1f us, p99 %.1f us)\n", name, r.ratio(), r.added(0.5), r.added(0.99), r.vm(0.5), r.vm(0.99))
	}
}

// floorModule builds testdata/<dir>, one of the floor modules (floor: does nothing;
// floorio: the least a counting filter does), with the
// same toolchain as kwire-envoy.wasm.
func floorModule(t testing.TB, dir string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), dir+".wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", out, "./testdata/"+dir)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the floor module: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
