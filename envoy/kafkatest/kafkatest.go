// Package kafkatest is a small fake Kafka broker and frame helpers for the tests of
// kwire's proxy filter: enough of ApiVersions, Metadata, Produce, FindCoordinator
// and DescribeCluster to drive the filter without a real broker. It is for tests
// only; it links every message of package codec.
package kafkatest

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"sync"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
)

// Request encodes a request frame (client id "kafkatest").
func Request(corr int32, version int16, body codec.Request) ([]byte, error) {
	return codec.EncodeRequestFrame(nil, codec.NewRequestHeaderFor(body, version, corr, "kafkatest"), body)
}

// MustRequest is Request that panics on error (test setup).
func MustRequest(corr int32, version int16, body codec.Request) []byte {
	b, err := Request(corr, version, body)
	if err != nil {
		panic(err)
	}
	return b
}

// Produce builds a Produce request body from messages (their Topic and Partition
// say where each goes), one batch per partition, magic 2.
func Produce(version, acks int16, c records.Compression, msgs []records.Message) (*codec.ProduceRequest, error) {
	req := codec.NewProduceRequest()
	req.Acks, req.TimeoutMs = acks, 30000
	var e records.Encoder
	if err := e.AppendProduceMessages(req, version, msgs, records.ProduceOptions{Compression: c, PartitionLeaderEpoch: -1}); err != nil {
		return nil, err
	}
	return req, nil
}

// TopicID is the id the fake broker gives a topic (derived from its name).
func TopicID(name string) codec.UUID {
	h := sha256.Sum256([]byte(name))
	var u codec.UUID
	copy(u[:], h[:16])
	return u
}

// Splitter cuts a byte stream into frames.
type Splitter struct{ buf []byte }

// Push adds bytes and returns the frames completed by them.
func (s *Splitter) Push(b []byte) [][]byte {
	s.buf = append(s.buf, b...)
	var out [][]byte
	for len(s.buf) >= 4 {
		n := 4 + int(binary.BigEndian.Uint32(s.buf))
		if len(s.buf) < n {
			break
		}
		out = append(out, append([]byte(nil), s.buf[:n]...))
		s.buf = s.buf[n:]
	}
	return out
}

// Pending is how many bytes of an incomplete frame the splitter holds.
func (s *Splitter) Pending() int { return len(s.buf) }

// Produced is one partition a Produce request carried to the fake broker.
type Produced struct {
	Topic     string
	Partition int32
	Messages  []records.Message
}

// Broker is the fake broker. Its zero value is not usable; use NewBroker.
type Broker struct {
	NodeID     int32
	Host       string
	Port       int32
	Partitions int32
	// MaxProduce is the highest Produce version it advertises.
	MaxProduce int16
	// Topics are the topics a Metadata request for all topics lists; Groups are the
	// groups ListGroups lists.
	Topics, Groups []string

	mu       sync.Mutex
	produced []Produced
	requests map[int16]int
	offsets  map[string]int64
	names    map[codec.UUID]string
}

// NewBroker returns a fake broker advertising node 1 at broker.internal:9092 with
// three partitions per topic.
func NewBroker() *Broker {
	return &Broker{NodeID: 1, Host: "broker.internal", Port: 9092, Partitions: 3, MaxProduce: 13,
		requests: map[int16]int{}, offsets: map[string]int64{}, names: map[codec.UUID]string{}}
}

// Produced returns what Produce requests delivered so far, in order.
func (b *Broker) Produced() []Produced {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Produced(nil), b.produced...)
}

// Requests returns how many requests of each api key arrived.
func (b *Broker) Requests() map[int16]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[int16]int{}
	for k, v := range b.requests {
		out[k] = v
	}
	return out
}

// Handle answers one request frame; nil (and no error) for an acks=0 Produce.
func (b *Broker) Handle(frame []byte) ([]byte, error) {
	rf, err := codec.DecodeRequestFrame(frame)
	if err != nil {
		return nil, err
	}
	h := rf.Header
	v := h.RequestAPIVersion
	b.mu.Lock()
	defer b.mu.Unlock()
	b.requests[h.RequestAPIKey]++
	var resp codec.Response
	switch req := rf.Body.(type) {
	case *codec.APIVersionsRequest:
		r := codec.NewAPIVersionsResponse()
		for _, api := range codec.APIs() {
			max := api.Request.MaxVersion
			if api.Key == 0 && max > b.MaxProduce {
				max = b.MaxProduce
			}
			r.APIKeys = append(r.APIKeys, codec.APIVersionsResponseAPIVersion{APIKey: api.Key, MinVersion: api.Request.MinVersion, MaxVersion: max})
		}
		resp = r
	case *codec.MetadataRequest:
		r := codec.NewMetadataResponse()
		r.Brokers = []codec.MetadataResponseBroker{{NodeID: b.NodeID, Host: b.Host, Port: b.Port}}
		cid := "kafkatest"
		r.ClusterID, r.ControllerID = &cid, b.NodeID
		names := req.Topics
		if req.Topics == nil {
			for i := range b.Topics {
				names = append(names, codec.MetadataRequestTopic{Name: &b.Topics[i]})
			}
		}
		for _, t := range names {
			if t.Name == nil {
				continue
			}
			mt := codec.NewMetadataResponseTopic()
			mt.Name, mt.TopicID = t.Name, TopicID(*t.Name)
			b.names[mt.TopicID] = *t.Name
			for p := int32(0); p < b.Partitions; p++ {
				mp := codec.NewMetadataResponsePartition()
				mp.PartitionIndex, mp.LeaderID, mp.ReplicaNodes, mp.IsrNodes = p, b.NodeID, []int32{b.NodeID}, []int32{b.NodeID}
				mt.Partitions = append(mt.Partitions, *mp)
			}
			r.Topics = append(r.Topics, *mt)
		}
		resp = r
	case *codec.FindCoordinatorRequest:
		r := codec.NewFindCoordinatorResponse()
		if v < 4 {
			r.NodeID, r.Host, r.Port = b.NodeID, b.Host, b.Port
		}
		for _, k := range req.CoordinatorKeys {
			r.Coordinators = append(r.Coordinators, codec.FindCoordinatorResponseCoordinator{Key: k, NodeID: b.NodeID, Host: b.Host, Port: b.Port})
		}
		resp = r
	case *codec.CreateTopicsRequest:
		r := codec.NewCreateTopicsResponse()
		for _, t := range req.Topics {
			r.Topics = append(r.Topics, codec.CreateTopicsResponseCreatableTopicResult{Name: t.Name, TopicID: TopicID(t.Name),
				NumPartitions: t.NumPartitions, ReplicationFactor: t.ReplicationFactor})
		}
		resp = r
	case *codec.ListGroupsRequest:
		r := codec.NewListGroupsResponse()
		for _, g := range b.Groups {
			r.Groups = append(r.Groups, codec.ListGroupsResponseListedGroup{GroupID: g, ProtocolType: "consumer", GroupState: "Stable", GroupType: "classic"})
		}
		resp = r
	case *codec.DescribeClusterRequest:
		r := codec.NewDescribeClusterResponse()
		r.ClusterID, r.ControllerID = "kafkatest", b.NodeID
		r.Brokers = []codec.DescribeClusterResponseDescribeClusterBroker{{BrokerID: b.NodeID, Host: b.Host, Port: b.Port}}
		resp = r
	case *codec.ProduceRequest:
		r := codec.NewProduceResponse()
		var dec records.Decoder
		for _, t := range req.TopicData {
			name := t.Name
			if v >= 13 {
				name = b.topicName(t.TopicID)
			}
			rt := codec.ProduceResponseTopicProduceResponse{Name: t.Name, TopicID: t.TopicID}
			for _, p := range t.PartitionData {
				pr := codec.NewProduceResponsePartitionProduceResponse()
				pr.Index = p.Index
				got := Produced{Topic: name, Partition: p.Index}
				_, err := dec.ForEachMessage(p.Records, name, p.Index, func(m *records.Message) error {
					c := *m
					c.Key = append([]byte(nil), m.Key...)
					c.Value = append([]byte(nil), m.Value...)
					c.Headers = nil
					for _, h := range m.Headers {
						c.Headers = append(c.Headers, records.Header{Key: append([]byte(nil), h.Key...), Value: append([]byte(nil), h.Value...)})
					}
					got.Messages = append(got.Messages, c)
					return nil
				})
				if err != nil {
					pr.ErrorCode = 2 // CORRUPT_MESSAGE
				} else {
					key := fmt.Sprintf("%s/%d", name, p.Index)
					pr.BaseOffset = b.offsets[key]
					b.offsets[key] += int64(len(got.Messages))
					b.produced = append(b.produced, got)
				}
				rt.PartitionResponses = append(rt.PartitionResponses, *pr)
			}
			r.Responses = append(r.Responses, rt)
		}
		if req.Acks == 0 {
			return nil, nil
		}
		resp = r
	default:
		return nil, fmt.Errorf("kafkatest: api key %d is not served", h.RequestAPIKey)
	}
	return codec.EncodeResponseFrame(nil, &codec.ResponseHeader{CorrelationID: h.CorrelationID}, v, resp)
}

func (b *Broker) topicName(id codec.UUID) string {
	if n, ok := b.names[id]; ok {
		return n
	}
	return "id:" + id.String()
}

// Serve answers connections on ln until it is closed: frames are handled in order
// and answered in order, as a broker does.
func (b *Broker) Serve(ln net.Listener) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			var sp Splitter
			buf := make([]byte, 64<<10)
			for {
				n, err := c.Read(buf)
				for _, f := range sp.Push(buf[:n]) {
					out, herr := b.Handle(f)
					if herr != nil {
						return
					}
					if out != nil {
						if _, werr := c.Write(out); werr != nil {
							return
						}
					}
				}
				if err != nil {
					if err != io.EOF {
						return
					}
					return
				}
			}
		}()
	}
}

// SortedKeys returns the keys of m in order (for stable test output).
func SortedKeys(m map[int16]int) []int16 {
	out := make([]int16, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
