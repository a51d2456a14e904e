package proxywasm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/conformance/broker"
	"github.com/kwire/kwire/envoy/kafkatest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := broker.StopShared(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping brokers:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// kconn is a minimal Kafka client over one connection: typed requests, responses
// decoded with the request's api key and version.
type kconn struct {
	t     testing.TB
	c     net.Conn
	corr  int32
	sp    kafkatest.Splitter
	buf   []byte
	queue [][]byte
	sent  map[int16]int
}

func dialKafka(t testing.TB, addr string) *kconn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &kconn{t: t, c: c, buf: make([]byte, 64<<10), sent: map[int16]int{}}
}

func (k *kconn) send(ver int16, body codec.Request) int32 {
	k.t.Helper()
	if err := k.write(ver, body); err != nil {
		k.t.Fatal(err)
	}
	return k.corr
}

// sendIfOpen sends a request to a connection the proxy may have closed already: a
// write that finds it closed is not an error.
func (k *kconn) sendIfOpen(ver int16, body codec.Request) {
	k.t.Helper()
	if err := k.write(ver, body); err != nil && !closedByPeer(err) {
		k.t.Fatal(err)
	}
}

func (k *kconn) write(ver int16, body codec.Request) error {
	k.t.Helper()
	k.corr++
	f, err := kafkatest.Request(k.corr, ver, body)
	if err != nil {
		k.t.Fatal(err)
	}
	k.c.SetDeadline(time.Now().Add(60 * time.Second))
	k.sent[body.APIKey()]++
	_, err = k.c.Write(f)
	return err
}

// closedByPeer reports whether err says the other end closed the connection: the end
// of the stream, or a reset (what bytes written after the close get).
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func (k *kconn) read(key, ver int16) (int32, codec.Response) {
	k.t.Helper()
	for len(k.queue) == 0 {
		n, err := k.c.Read(k.buf)
		if err != nil {
			k.t.Fatalf("reading the response to api %d: %v", key, err)
		}
		k.queue = append(k.queue, k.sp.Push(k.buf[:n])...)
	}
	f := k.queue[0]
	k.queue = k.queue[1:]
	rf, err := codec.DecodeResponseFrame(f, key, ver)
	if err != nil {
		k.t.Fatalf("response to api %d v%d: %v", key, ver, err)
	}
	return rf.Header.CorrelationID, rf.Body
}

// untilClosed reads until the proxy closes the connection and returns the response
// frames that came before the close. A reset counts as the close: bytes the client
// wrote after it get one.
func (k *kconn) untilClosed() [][]byte {
	k.t.Helper()
	frames := k.queue
	k.queue = nil
	for {
		n, err := k.c.Read(k.buf)
		frames = append(frames, k.sp.Push(k.buf[:n])...)
		if closedByPeer(err) {
			return frames
		}
		if err != nil {
			k.t.Fatalf("waiting for the connection to close: %v", err)
		}
	}
}

func (k *kconn) call(ver int16, body codec.Request) codec.Response {
	k.t.Helper()
	c := k.send(ver, body)
	got, r := k.read(body.APIKey(), ver)
	if got != c {
		k.t.Fatalf("correlation id %d, want %d", got, c)
	}
	return r
}

func createTopics(t testing.TB, k *kconn, partitions int32, names ...string) {
	t.Helper()
	req := codec.NewCreateTopicsRequest()
	req.TimeoutMs = 30000
	for _, n := range names {
		req.Topics = append(req.Topics, codec.CreateTopicsRequestCreatableTopic{Name: n, NumPartitions: partitions, ReplicationFactor: 1})
	}
	r := k.call(7, req).(*codec.CreateTopicsResponse)
	for _, tr := range r.Topics {
		if tr.ErrorCode != 0 {
			t.Fatalf("creating %s: %s", tr.Name, kerr.Code(tr.ErrorCode))
		}
	}
	// Wait until the topics have leaders.
	for i := 0; i < 100; i++ {
		md := codec.NewMetadataRequest()
		for _, n := range names {
			n := n
			md.Topics = append(md.Topics, codec.MetadataRequestTopic{Name: &n})
		}
		mr := k.call(12, md).(*codec.MetadataResponse)
		ready := true
		for _, tp := range mr.Topics {
			if tp.ErrorCode != 0 || len(tp.Partitions) != int(partitions) {
				ready = false
			}
			for _, p := range tp.Partitions {
				ready = ready && p.LeaderID >= 0
			}
		}
		if ready && offsetsReady(t, k, partitions, names) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("topics %v have no leaders", names)
}

// offsetsReady reports whether every partition answers ListOffsets (its leader
// is serving, not only named in Metadata).
func offsetsReady(t testing.TB, k *kconn, partitions int32, names []string) bool {
	req := codec.NewListOffsetsRequest()
	req.ReplicaID = -1
	for _, n := range names {
		tp := codec.ListOffsetsRequestListOffsetsTopic{Name: n}
		for p := int32(0); p < partitions; p++ {
			tp.Partitions = append(tp.Partitions, codec.ListOffsetsRequestListOffsetsPartition{PartitionIndex: p, CurrentLeaderEpoch: -1, Timestamp: -1, MaxNumOffsets: 1})
		}
		req.Topics = append(req.Topics, tp)
	}
	r := k.call(7, req).(*codec.ListOffsetsResponse)
	for _, tp := range r.Topics {
		for _, p := range tp.Partitions {
			if p.ErrorCode != 0 {
				return false
			}
		}
	}
	return true
}

// fetchAll reads every record of topic/partition straight from the broker.
func fetchAll(t testing.TB, k *kconn, topic string, partition int32) []records.Message {
	t.Helper()
	req := codec.NewFetchRequest()
	req.ReplicaID, req.MaxWaitMs, req.MinBytes, req.MaxBytes = -1, 100, 0, 50<<20
	req.Topics = []codec.FetchRequestFetchTopic{{Topic: topic, Partitions: []codec.FetchRequestFetchPartition{{Partition: partition, FetchOffset: 0, PartitionMaxBytes: 10 << 20, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, LogStartOffset: -1}}}}
	r := k.call(12, req).(*codec.FetchResponse)
	var out []records.Message
	var d records.Decoder
	err := d.ForEachFetchMessage(r, nil, func(m *records.Message) error {
		if m.Control {
			return nil
		}
		c := *m
		c.Value = append([]byte(nil), m.Value...)
		c.Headers = nil
		out = append(out, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

const e2eConfigTmpl = `{"schema":{"default":"none","rules":[
	{"prefix":"%[1]s.orders","policy":"enforce","schema_ids":[1,2]},
	{"prefix":"%[1]s.audit","policy":"warn","schema_ids":[1]}]},
	"api_keys":{"deny":[29]},
	"brokers":{"1":"%[2]s"}}`

type e2eSetup struct {
	b      *broker.Broker
	plugin *Plugin
	proxy  *Proxy
}

func startE2E(t *testing.T, prefix string, readSize func() int) *e2eSetup {
	t.Helper()
	return startE2EWith(t, func(proxyAddr string) string { return fmt.Sprintf(e2eConfigTmpl, prefix, proxyAddr) }, readSize)
}

// startE2EWith starts the shared broker and a proxy whose plugin configuration config
// writes, given the proxy's address.
func startE2EWith(t *testing.T, config func(proxyAddr string) string, readSize func() int) *e2eSetup {
	t.Helper()
	b := broker.SharedT(t, broker.Options{Version: "4.4.0"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(ln.Addr().String())
	p, err := NewPlugin(context.Background(), Config{Module: module(t), PluginConfiguration: []byte(cfg), Cache: cache})
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	px := NewProxyOn(ln, p, b.Addr("PLAINTEXT"), readSize)
	t.Cleanup(func() {
		px.Close()
		if t.Failed() {
			for _, l := range p.Logs() {
				t.Logf("filter log [%d] %s", l.Level, l.Message)
			}
		}
		p.Close()
	})
	return &e2eSetup{b: b, plugin: p, proxy: px}
}

// metricValue reads a metric after a tick, on which the filter sends the counts its
// counters hold.
func metricValue(p *Plugin, name string) int64 {
	p.Tick()
	m, _ := p.Metric("kafka.kwire." + name)
	return m.Value
}

// goScenario runs the Go client's traffic through the proxy and returns a
// summary that must not depend on how the proxy chunked the bytes.
func goScenario(t *testing.T, name string, readSize func() int) string {
	prefix := "go" + name
	s := startE2E(t, prefix, readSize)
	direct := dialKafka(t, s.b.Addr("PLAINTEXT"))
	orders, audit, free := prefix+".orders", prefix+".audit", prefix+".free"
	createTopics(t, direct, 3, orders, audit, free)

	k := dialKafka(t, s.proxy.Addr())
	var summary []string
	add := func(format string, args ...any) { summary = append(summary, fmt.Sprintf(format, args...)) }

	// ApiVersions: Produce capped at 12 (topic names, not ids).
	avr := codec.NewAPIVersionsRequest()
	avr.ClientSoftwareName, avr.ClientSoftwareVersion = "kwire-e2e", "1"
	av := k.call(3, avr).(*codec.APIVersionsResponse)
	if av.ErrorCode != 0 {
		t.Fatalf("ApiVersions: %s", kerr.Code(av.ErrorCode))
	}
	for _, a := range av.APIKeys {
		if a.APIKey == 0 {
			add("produce max v%d", a.MaxVersion)
		}
	}
	// Metadata: the broker's address is the proxy's.
	md := codec.NewMetadataRequest()
	md.Topics = []codec.MetadataRequestTopic{{Name: &orders}}
	mr := k.call(12, md).(*codec.MetadataResponse)
	for _, br := range mr.Brokers {
		if net.JoinHostPort(br.Host, fmt.Sprint(br.Port)) != s.proxy.Addr() {
			t.Errorf("metadata advertises %s:%d, want the proxy %s", br.Host, br.Port, s.proxy.Addr())
		}
	}
	add("brokers %d rewritten", len(mr.Brokers))

	msg := func(topic string, part int32, value []byte, hdr ...string) records.Message {
		m := records.Message{Topic: topic, Partition: part, Value: value}
		for i := 0; i+1 < len(hdr); i += 2 {
			m.Headers = append(m.Headers, records.Header{Key: []byte(hdr[i]), Value: []byte(hdr[i+1])})
		}
		return m
	}
	produce := func(ver, acks int16, c records.Compression, msgs ...records.Message) *codec.ProduceResponse {
		req, err := kafkatest.Produce(ver, acks, c, msgs)
		if err != nil {
			t.Fatal(err)
		}
		if acks == 0 {
			k.send(ver, req)
			return nil
		}
		return k.call(ver, req).(*codec.ProduceResponse)
	}
	codes := func(r *codec.ProduceResponse) string {
		var out []string
		for _, tr := range r.Responses {
			for _, p := range tr.PartitionResponses {
				out = append(out, fmt.Sprintf("%s/%d=%s", strings.TrimPrefix(tr.Name, prefix+"."), p.Index, kerr.Code(p.ErrorCode)))
			}
		}
		sort.Strings(out) // the broker answers topics in no fixed order
		return strings.Join(out, " ")
	}
	// Mixed: an accepted partition, one without a schema, one with a malformed
	// header; a warned topic; an unchecked one.
	r := produce(9, -1, records.CompressionLZ4,
		msg(orders, 0, schemaValue(1, "a")), msg(orders, 0, []byte("b"), "schema.id", "2"),
		msg(orders, 1, []byte("no schema")),
		msg(orders, 2, schemaValue(1, "c"), "schema.id", "one"),
		msg(audit, 0, []byte("warned")), msg(free, 0, []byte("free")))
	add("mixed: %s", codes(r))
	// Every partition rejected (wrong id): answered by the filter.
	r = produce(9, -1, records.CompressionNone, msg(orders, 1, schemaValue(7, "wrong")))
	add("wrong id: %s", codes(r))
	// Older versions.
	r = produce(3, 1, records.CompressionGzip, msg(orders, 2, schemaValue(2, "v3")))
	add("v3: %s", codes(r))
	// acks=0: a rejected one gets what the broker gives a failed acks=0 Produce: the
	// connection closes, after the responses to the requests before it (a Metadata
	// request sent just before), and the client reconnects; an accepted one lands,
	// with no answer.
	before := k.send(12, md)
	produce(9, 0, records.CompressionNone, msg(orders, 1, []byte("acks0 bad")))
	if got, _ := k.read(3, 12); got != before {
		t.Errorf("the response before the close answers %d, want the Metadata request %d", got, before)
	}
	// The filter closes at the connection's next callback when that response came in
	// the same read as the one the close waits for: the client's next request, which
	// gets no answer.
	k.sendIfOpen(12, md)
	k.sent[3]-- // dropped unread: the filter counts no request
	if got := k.untilClosed(); len(got) != 0 {
		t.Errorf("%d responses after the rejected acks=0 Produce, want none", len(got))
	}
	add("acks0 rejected: the connection closed")
	sent := k.sent
	k = dialKafka(t, s.proxy.Addr())
	k.sent = sent // the metrics count both connections' requests
	produce(9, 0, records.CompressionZstd, msg(orders, 0, schemaValue(2, "acks0 good")))
	// The new connection is in order.
	mr = k.call(12, md).(*codec.MetadataResponse)
	add("metadata after: %d topics", len(mr.Topics))
	// Denied api key: answered by the filter with CLUSTER_AUTHORIZATION_FAILED.
	da := codec.NewDescribeACLsRequest()
	da.ResourceTypeFilter, da.PatternTypeFilter, da.PermissionType, da.Operation = 1, 1, 1, 1
	dr := k.call(3, da).(*codec.DescribeACLsResponse)
	add("describe acls: %s", kerr.Code(dr.ErrorCode))

	// What the broker holds, read directly.
	for _, tp := range []struct {
		topic string
		part  int32
	}{{orders, 0}, {orders, 1}, {orders, 2}, {audit, 0}, {free, 0}} {
		var vals []string
		for _, m := range fetchAll(t, direct, tp.topic, tp.part) {
			vals = append(vals, strings.TrimLeft(string(m.Value), "\x00\x01\x02"))
		}
		add("%s/%d holds %q", strings.TrimPrefix(tp.topic, prefix+"."), tp.part, vals)
	}
	// Metrics equal what this client sent.
	for key, n := range k.sent {
		name := map[int16]string{0: "produce", 3: "metadata", 18: "api_versions", 29: "describe_acls"}[key]
		if got := metricValue(s.plugin, "request."+name); got != int64(n) {
			t.Errorf("request.%s = %d, the client sent %d", name, got, n)
		}
	}
	if got := metricValue(s.plugin, "response.produce"); got != 3 {
		t.Errorf("response.produce = %d, want 3 (acks=0 gets none)", got)
	}
	for _, m := range []string{"policy.records_checked", "policy.records_failed", "policy.records_rejected", "policy.records_warned",
		"policy.partitions_rejected", "policy.partitions_accepted", "request.denied", "request.answered_locally"} {
		add("%s=%d", m, metricValue(s.plugin, m))
	}
	return strings.Join(summary, "\n")
}

func TestEndToEndGoClient(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	var mu sync.Mutex
	randomSize := func() int { mu.Lock(); defer mu.Unlock(); return 1 + r.Intn(1500) }
	whole := goScenario(t, "whole", nil)
	t.Logf("whole frames:\n%s", whole)
	for _, want := range []string{
		"produce max v12",
		"mixed: audit/0=NONE free/0=NONE orders/0=NONE orders/1=INVALID_RECORD orders/2=INVALID_RECORD",
		"wrong id: orders/1=INVALID_RECORD",
		"v3: orders/2=NONE",
		"describe acls: CLUSTER_AUTHORIZATION_FAILED",
		"acks0 rejected: the connection closed",
		`orders/0 holds ["a" "b" "acks0 good"]`,
		`orders/1 holds []`,
		`orders/2 holds ["v3"]`,
		`audit/0 holds ["warned"]`,
		`free/0 holds ["free"]`,
		"policy.records_warned=1",
		"policy.partitions_rejected=4",
		"request.denied=1",
	} {
		if !strings.Contains(whole, want) {
			t.Errorf("missing %q", want)
		}
	}
	for _, tc := range []struct {
		name string
		size func() int
	}{{"bytes", func() int { return 1 }}, {"random", randomSize}} {
		got := goScenario(t, tc.name, tc.size)
		if got != whole {
			t.Errorf("%s chunks give\n%s\nwhole frames give\n%s", tc.name, got, whole)
		}
	}
}
