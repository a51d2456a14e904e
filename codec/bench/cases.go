// Package bench compares kwire's codec with franz-go's kmsg on the same messages. It is
// a module of its own so that the library's go.mod does not depend on franz-go.
package bench

import (
	"fmt"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Case is one message at one version, encoded once by kwire; both codecs decode and
// re-encode those same bytes.
type Case struct {
	Name    string
	Version int16
	Bytes   []byte
	kwire   func() codec.Message
	kmsg    func() kmsgMessage
}

// kmsgMessage is the part of kmsg's generated types the benchmark uses.
type kmsgMessage interface {
	SetVersion(int16)
	ReadFrom([]byte) error
	AppendTo([]byte) []byte
}

func str(s string) *string { return &s }

func records(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i) ^ seed
	}
	return b
}

func produce(version int16) codec.Message {
	m := codec.NewProduceRequest()
	m.Acks = -1
	m.TimeoutMs = 30000
	for t := 0; t < 3; t++ {
		tp := codec.ProduceRequestTopicProduceData{Name: fmt.Sprintf("orders-%d", t)}
		for p := 0; p < 4; p++ {
			tp.PartitionData = append(tp.PartitionData, codec.ProduceRequestPartitionProduceData{Index: int32(p), Records: records(1024, byte(p))})
		}
		m.TopicData = append(m.TopicData, tp)
	}
	return m
}

func fetch(version int16) codec.Message {
	m := codec.NewFetchResponse()
	if version >= 7 {
		m.SessionID = 7
	}
	for t := 0; t < 3; t++ {
		tp := codec.FetchResponseFetchableTopicResponse{Topic: fmt.Sprintf("events-%d", t)}
		for p := 0; p < 4; p++ {
			pd := *codec.NewFetchResponsePartitionData()
			pd.PartitionIndex = int32(p)
			pd.HighWatermark = 1 << 40
			pd.LastStableOffset = 1<<40 - 5
			if version >= 5 {
				pd.LogStartOffset = 12
			}
			pd.AbortedTransactions = []codec.FetchResponseAbortedTransaction{{ProducerID: 99, FirstOffset: 1 << 39}}
			pd.Records = records(1024, byte(p))
			tp.Partitions = append(tp.Partitions, pd)
		}
		m.Responses = append(m.Responses, tp)
	}
	return m
}

func metadata(version int16) codec.Message {
	m := codec.NewMetadataResponse()
	m.ClusterID = str("kwire-bench-cluster")
	m.ControllerID = 1
	for b := 0; b < 12; b++ {
		m.Brokers = append(m.Brokers, codec.MetadataResponseBroker{NodeID: int32(b), Host: fmt.Sprintf("broker-%d.kafka.internal", b), Port: 9092, Rack: str(fmt.Sprintf("rack-%d", b%3))})
	}
	for t := 0; t < 40; t++ {
		tp := *codec.NewMetadataResponseTopic()
		tp.Name = str(fmt.Sprintf("topic-%03d", t))
		tp.TopicID = codec.UUID{byte(t), 1}
		for p := 0; p < 6; p++ {
			pd := *codec.NewMetadataResponsePartition()
			pd.PartitionIndex = int32(p)
			pd.LeaderID = int32(p % 12)
			pd.LeaderEpoch = 5
			pd.ReplicaNodes = []int32{int32(p % 12), int32((p + 1) % 12), int32((p + 2) % 12)}
			pd.IsrNodes = []int32{int32(p % 12), int32((p + 1) % 12)}
			pd.OfflineReplicas = []int32{}
			tp.Partitions = append(tp.Partitions, pd)
		}
		m.Topics = append(m.Topics, tp)
	}
	return m
}

// Cases returns the benchmark set.
func Cases() []Case {
	type spec struct {
		name    string
		version int16
		build   func(int16) codec.Message
		kwire   func() codec.Message
		kmsg    func() kmsgMessage
	}
	specs := []spec{
		{"ProduceRequest v7 (classic)", 7, produce, func() codec.Message { return codec.NewProduceRequest() }, func() kmsgMessage { return kmsg.NewPtrProduceRequest() }},
		{"ProduceRequest v11 (flexible)", 11, produce, func() codec.Message { return codec.NewProduceRequest() }, func() kmsgMessage { return kmsg.NewPtrProduceRequest() }},
		{"FetchResponse v4 (classic)", 4, fetch, func() codec.Message { return codec.NewFetchResponse() }, func() kmsgMessage { return kmsg.NewPtrFetchResponse() }},
		{"FetchResponse v12 (flexible)", 12, fetch, func() codec.Message { return codec.NewFetchResponse() }, func() kmsgMessage { return kmsg.NewPtrFetchResponse() }},
		{"MetadataResponse v12", 12, metadata, func() codec.Message { return codec.NewMetadataResponse() }, func() kmsgMessage { return kmsg.NewPtrMetadataResponse() }},
	}
	var out []Case
	for _, s := range specs {
		b, err := s.build(s.version).Encode(nil, s.version)
		if err != nil {
			panic(err)
		}
		out = append(out, Case{Name: s.name, Version: s.version, Bytes: b, kwire: s.kwire, kmsg: s.kmsg})
	}
	return out
}

// CheckSame verifies that kmsg reads the case's bytes and writes them back identically,
// so both codecs do the same work.
func (c Case) CheckSame() error {
	k := c.kmsg()
	k.SetVersion(c.Version)
	if err := k.ReadFrom(c.Bytes); err != nil {
		return fmt.Errorf("%s: kmsg cannot read kwire's bytes: %v", c.Name, err)
	}
	if got := k.AppendTo(nil); string(got) != string(c.Bytes) {
		return fmt.Errorf("%s: kmsg writes %d bytes, kwire %d", c.Name, len(got), len(c.Bytes))
	}
	return nil
}

// DecodeKwire benchmarks kwire decoding the case.
func (c Case) DecodeKwire(b *testing.B) {
	m := c.kwire()
	b.ReportAllocs()
	b.SetBytes(int64(len(c.Bytes)))
	for i := 0; i < b.N; i++ {
		if err := m.Decode(c.Bytes, c.Version); err != nil {
			b.Fatal(err)
		}
	}
}

// DecodeKmsg benchmarks kmsg decoding the case.
func (c Case) DecodeKmsg(b *testing.B) {
	m := c.kmsg()
	m.SetVersion(c.Version)
	b.ReportAllocs()
	b.SetBytes(int64(len(c.Bytes)))
	for i := 0; i < b.N; i++ {
		if err := m.ReadFrom(c.Bytes); err != nil {
			b.Fatal(err)
		}
	}
}

// EncodeKwire benchmarks kwire encoding the decoded case into a reused buffer.
func (c Case) EncodeKwire(b *testing.B) {
	m := c.kwire()
	if err := m.Decode(c.Bytes, c.Version); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, len(c.Bytes))
	b.ReportAllocs()
	b.SetBytes(int64(len(c.Bytes)))
	for i := 0; i < b.N; i++ {
		var err error
		if buf, err = m.Encode(buf[:0], c.Version); err != nil {
			b.Fatal(err)
		}
	}
}

// EncodeKmsg benchmarks kmsg encoding the decoded case into a reused buffer.
func (c Case) EncodeKmsg(b *testing.B) {
	m := c.kmsg()
	m.SetVersion(c.Version)
	if err := m.ReadFrom(c.Bytes); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, len(c.Bytes))
	b.ReportAllocs()
	b.SetBytes(int64(len(c.Bytes)))
	for i := 0; i < b.N; i++ {
		buf = m.AppendTo(buf[:0])
	}
}
