package conn

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
	"github.com/kwire/kwire/codec/records"
)

// Helpers shared by the tests against real brokers.

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func dialT(t testing.TB, addr string, opts ...Option) *Conn {
	t.Helper()
	c, err := Dial(testCtx(t), addr, opts...)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

type topic struct {
	name string
	id   codec.UUID
}

var topicSeq atomic.Int64

// createTopic creates a topic with one partition and waits until it takes writes.
func createTopic(t testing.TB, c *Conn, prefix string) topic {
	t.Helper()
	name := fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano()%1e6, topicSeq.Add(1))
	req := codec.NewCreateTopicsRequest()
	req.TimeoutMs = 30000
	req.Topics = []codec.CreateTopicsRequestCreatableTopic{{Name: name, NumPartitions: 1, ReplicationFactor: 1}}
	resp, err := c.Do(testCtx(t), req)
	if err != nil {
		t.Fatalf("CreateTopics: %v", err)
	}
	r := resp.(*codec.CreateTopicsResponse).Topics[0]
	if r.ErrorCode != 0 {
		t.Fatalf("CreateTopics %s: %v", name, kerr.Code(r.ErrorCode))
	}
	if r.TopicID == (codec.UUID{}) {
		t.Fatalf("CreateTopics %s returned no topic id", name)
	}
	return topic{name: name, id: r.TopicID}
}

// produce writes msgs to partition 0 of tp as one batch with the given compression and
// returns the base offset. A leader not elected yet is waited for (retriable errors).
func produce(t testing.TB, c *Conn, tp topic, msgs []records.Message, comp records.Compression) int64 {
	t.Helper()
	v, err := c.VersionFor(0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range msgs {
		msgs[i].Topic, msgs[i].TopicID, msgs[i].Partition = tp.name, tp.id, 0
	}
	var enc records.Encoder
	for attempt := 0; ; attempt++ {
		req := codec.NewProduceRequest()
		req.Acks = -1
		req.TimeoutMs = 30000
		if err := enc.AppendProduceMessages(req, v, msgs, records.ProduceOptions{Compression: comp, PartitionLeaderEpoch: -1}); err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(testCtx(t), req)
		if err != nil {
			t.Fatalf("Produce v%d: %v", v, err)
		}
		p := resp.(*codec.ProduceResponse).Responses[0].PartitionResponses[0]
		code := kerr.Code(p.ErrorCode)
		if code == 0 {
			return p.BaseOffset
		}
		if !code.Retriable() || attempt > 50 {
			t.Fatalf("Produce v%d to %s: %v", v, tp.name, code)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// fetchReq builds a Fetch of partition 0 of tp from offset.
func fetchReq(tp topic, offset int64, maxBytes int32, maxWait int32) *codec.FetchRequest {
	req := codec.NewFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMs = maxWait
	req.MinBytes = 1
	req.MaxBytes = maxBytes
	req.IsolationLevel = 0
	req.SessionID = 0
	req.SessionEpoch = -1
	req.Topics = []codec.FetchRequestFetchTopic{{Topic: tp.name, TopicID: tp.id, Partitions: []codec.FetchRequestFetchPartition{{
		Partition: 0, CurrentLeaderEpoch: -1, FetchOffset: offset, LastFetchedEpoch: -1, LogStartOffset: -1, PartitionMaxBytes: maxBytes,
	}}}}
	return req
}

// fetchMessages fetches from offset and returns copies of the messages at or after it.
func fetchMessages(t testing.TB, c *Conn, tp topic, offset int64, maxBytes int32) []records.Message {
	t.Helper()
	resp, err := c.Do(testCtx(t), fetchReq(tp, offset, maxBytes, 500))
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	fr := resp.(*codec.FetchResponse)
	if fr.ErrorCode != 0 {
		t.Fatalf("Fetch: %v", kerr.Code(fr.ErrorCode))
	}
	for _, tr := range fr.Responses {
		for _, p := range tr.Partitions {
			if p.ErrorCode != 0 {
				t.Fatalf("Fetch %s/%d: %v", tp.name, p.PartitionIndex, kerr.Code(p.ErrorCode))
			}
		}
	}
	var out []records.Message
	dec := records.NewDecoder(records.Options{})
	err = dec.ForEachFetchMessage(fr, map[codec.UUID]string{tp.id: tp.name}, func(m *records.Message) error {
		if m.Offset < offset || m.Control {
			return nil
		}
		cp := *m
		cp.Key = clone(m.Key)
		cp.Value = clone(m.Value)
		cp.Headers = nil
		for _, h := range m.Headers {
			cp.Headers = append(cp.Headers, records.Header{Key: clone(h.Key), Value: clone(h.Value)})
		}
		out = append(out, cp)
		return nil
	})
	if err != nil {
		t.Fatalf("Fetch records: %v", err)
	}
	return out
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// endOffset asks ListOffsets for the latest offset of partition 0.
func endOffset(t testing.TB, c *Conn, tp topic) int64 {
	t.Helper()
	req := codec.NewListOffsetsRequest()
	req.ReplicaID = -1
	req.Topics = []codec.ListOffsetsRequestListOffsetsTopic{{Name: tp.name, Partitions: []codec.ListOffsetsRequestListOffsetsPartition{{
		PartitionIndex: 0, CurrentLeaderEpoch: -1, Timestamp: -1, MaxNumOffsets: 1,
	}}}}
	resp, err := c.Do(testCtx(t), req)
	if err != nil {
		t.Fatalf("ListOffsets: %v", err)
	}
	p := resp.(*codec.ListOffsetsResponse).Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("ListOffsets: %v", kerr.Code(p.ErrorCode))
	}
	return p.Offset
}

// partitionSize asks DescribeLogDirs for the size on disk of partition 0 of tp.
func partitionSize(t testing.TB, c *Conn, tp topic) int64 {
	t.Helper()
	req := codec.NewDescribeLogDirsRequest()
	req.Topics = []codec.DescribeLogDirsRequestDescribableLogDirTopic{{Topic: tp.name, Partitions: []int32{0}}}
	resp, err := c.Do(testCtx(t), req)
	if err != nil {
		t.Fatalf("DescribeLogDirs: %v", err)
	}
	for _, r := range resp.(*codec.DescribeLogDirsResponse).Results {
		for _, tr := range r.Topics {
			if tr.Name == tp.name {
				for _, p := range tr.Partitions {
					if p.PartitionIndex == 0 {
						return p.PartitionSize
					}
				}
			}
		}
	}
	t.Fatalf("DescribeLogDirs does not list %s/0", tp.name)
	return 0
}

// countingConn counts the bytes that cross a net.Conn, and the request frames written.
type countingConn struct {
	net.Conn
	read, written atomic.Int64

	mu     sync.Mutex
	pend   []byte // bytes of a partly written frame
	frames int
	keys   map[int16]int // request frames written per api key

	// gate, when non-nil, holds every Read result until it is closed.
	gate atomic.Pointer[chan struct{}]
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	if g := c.gate.Load(); g != nil {
		<-*g
	}
	return n, err
}

// Write counts p before writing it, as the connection counts its own writes: the
// peer may answer, and the caller see the answer, before the goroutine that wrote
// gets to run again, and a count taken after the write would then lag behind.
func (c *countingConn) Write(p []byte) (int, error) {
	c.written.Add(int64(len(p)))
	c.mu.Lock()
	c.pend = append(c.pend, p...)
	for len(c.pend) >= 4 {
		size := int(binary.BigEndian.Uint32(c.pend))
		if len(c.pend) < 4+size {
			break
		}
		if size >= 2 {
			if c.keys == nil {
				c.keys = map[int16]int{}
			}
			c.keys[int16(binary.BigEndian.Uint16(c.pend[4:]))]++
		}
		c.pend = c.pend[4+size:]
		c.frames++
	}
	c.mu.Unlock()
	n, err := c.Conn.Write(p)
	if n < len(p) {
		c.written.Add(int64(n - len(p))) // what did not go out (the connection is dead then)
	}
	return n, err
}

// framesOf returns the request frames written with api key key.
func (c *countingConn) framesOf(key int16) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.keys[key]
}

func (c *countingConn) framesWritten() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.frames
}

// closeGate makes reads wait; the returned function opens it again and may be called
// more than once (a test defers it, so that a failure never leaves the reader, and so
// Close, waiting forever).
func (c *countingConn) closeGate() func() {
	g := make(chan struct{})
	c.gate.Store(&g)
	var once sync.Once
	return func() { once.Do(func() { close(g); c.gate.Store(nil) }) }
}

func dialCounting(t testing.TB, addr string, opts ...Option) (*Conn, *countingConn) {
	t.Helper()
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	cc := &countingConn{Conn: raw}
	c, err := Open(testCtx(t), cc, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, cc
}

// waitFor polls cond every 5 ms until it holds or 30 s pass.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func sameMessage(a, b records.Message) error {
	if !bytes.Equal(a.Key, b.Key) || (a.Key == nil) != (b.Key == nil) {
		return fmt.Errorf("key %q, want %q", a.Key, b.Key)
	}
	if !bytes.Equal(a.Value, b.Value) || (a.Value == nil) != (b.Value == nil) {
		return fmt.Errorf("value %q, want %q", a.Value, b.Value)
	}
	if a.Timestamp != b.Timestamp {
		return fmt.Errorf("timestamp %d, want %d", a.Timestamp, b.Timestamp)
	}
	if len(a.Headers) != len(b.Headers) {
		return fmt.Errorf("%d headers, want %d", len(a.Headers), len(b.Headers))
	}
	for i := range a.Headers {
		if !bytes.Equal(a.Headers[i].Key, b.Headers[i].Key) || !bytes.Equal(a.Headers[i].Value, b.Headers[i].Value) {
			return fmt.Errorf("header %d %s=%q, want %s=%q", i, a.Headers[i].Key, a.Headers[i].Value, b.Headers[i].Key, b.Headers[i].Value)
		}
	}
	return nil
}
