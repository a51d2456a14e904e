package records_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
)

func sampleMessages(withHeaders bool) []records.Message {
	var out []records.Message
	topics := []string{"orders", "payments"}
	ids := []codec.UUID{{1, 2, 3}, {9, 9, 9}}
	for i := 0; i < 12; i++ {
		m := records.Message{Topic: topics[i%2], TopicID: ids[i%2], Partition: int32(i % 3), Timestamp: 1_750_000_000_000 + int64(i),
			Key: []byte(fmt.Sprintf("k%d", i)), Value: bytes.Repeat([]byte{byte('a' + i)}, 100+i), Sequence: 40}
		if i == 4 {
			m.Key = nil
		}
		if i == 5 {
			m.Value = nil
		}
		if withHeaders && i%2 == 0 {
			m.Headers = []records.Header{{Key: []byte("h"), Value: []byte(fmt.Sprint(i))}, {Key: []byte("h"), Value: nil}}
		}
		out = append(out, m)
	}
	return out
}

func TestProduceRequestRoundTrip(t *testing.T) {
	for _, version := range []int16{0, 2, 3, 9, 12, 13} {
		for _, c := range []records.Compression{records.CompressionNone, records.CompressionGzip, records.CompressionSnappy, records.CompressionLZ4, records.CompressionZstd} {
			magic := records.ProduceMagic(version)
			if c == records.CompressionZstd && magic < 2 {
				continue
			}
			t.Run(fmt.Sprintf("v%d/%v", version, c), func(t *testing.T) {
				msgs := sampleMessages(magic == 2)
				req := codec.NewProduceRequest()
				req.Acks, req.TimeoutMs = -1, 30000
				var enc records.Encoder
				opts := records.ProduceOptions{Compression: c, PartitionLeaderEpoch: -1}
				if magic == 2 {
					opts.Producer = &records.ProducerState{ID: 77, Epoch: 3}
				}
				err := enc.AppendProduceMessages(req, version, msgs, opts)
				if !records.HaveCompressors && c != records.CompressionNone {
					// A build without compressors refuses, saying why.
					if !errors.Is(err, records.ErrUnsupported) || !strings.Contains(err.Error(), "built with kwire_nocompress") {
						t.Fatalf("kwire_nocompress build: %v", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				wire, err := req.Encode(nil, version)
				if err != nil {
					t.Fatal(err)
				}
				got := codec.NewProduceRequest()
				if err := got.Decode(wire, version); err != nil {
					t.Fatal(err)
				}
				var d records.Decoder
				seen := map[string]int{}
				for _, td := range got.TopicData {
					for _, pd := range td.PartitionData {
						next := int64(0)
						_, err := d.ForEachMessage(pd.Records, td.Name, pd.Index, func(m *records.Message) error {
							// Find the message this should be: the n-th sent to this partition.
							var want *records.Message
							n := int64(0)
							for i := range msgs {
								w := &msgs[i]
								same := w.Partition == pd.Index && ((version >= 13 && w.TopicID == td.TopicID) || (version < 13 && w.Topic == td.Name))
								if same {
									if n == next {
										want = w
										break
									}
									n++
								}
							}
							if want == nil {
								t.Fatalf("unexpected message %+v", m)
							}
							if m.Offset != next || !bytes.Equal(m.Key, want.Key) || (m.Key == nil) != (want.Key == nil) ||
								!bytes.Equal(m.Value, want.Value) || (m.Value == nil) != (want.Value == nil) || len(m.Headers) != len(want.Headers) ||
								m.Magic != magic || m.Compression != c {
								t.Fatalf("message %d of %s/%d: %+v, want %+v", next, td.Name, pd.Index, m, want)
							}
							if magic > 0 && m.Timestamp != want.Timestamp {
								t.Fatalf("timestamp %d, want %d", m.Timestamp, want.Timestamp)
							}
							if magic == 2 && (m.ProducerID != 77 || m.ProducerEpoch != 3 || m.Sequence != 40+int32(next)) {
								t.Fatalf("producer fields %d/%d/%d", m.ProducerID, m.ProducerEpoch, m.Sequence)
							}
							next++
							seen[td.Name]++
							return nil
						})
						if err != nil {
							t.Fatal(err)
						}
					}
				}
				total := 0
				for _, n := range seen {
					total += n
				}
				if total != len(msgs) {
					t.Fatalf("%d messages came back, sent %d", total, len(msgs))
				}
				if version >= 13 && (got.TopicData[0].Name != "" || got.TopicData[0].TopicID != (codec.UUID{1, 2, 3})) {
					t.Fatalf("v13 topic identity: %q %v", got.TopicData[0].Name, got.TopicData[0].TopicID)
				}
			})
		}
	}
	// Headers cannot be sent with magic 0 or 1.
	var enc records.Encoder
	err := enc.AppendProduceMessages(codec.NewProduceRequest(), 2, sampleMessages(true), records.ProduceOptions{})
	if err == nil {
		t.Fatal("headers accepted for magic 1")
	}
}

func TestFetchResponseMessages(t *testing.T) {
	txn := vectorNamed(t, "v2-transactional-none").Bytes
	abort := vectorNamed(t, "v2-control-abort").Bytes
	commit := vectorNamed(t, "v2-control-commit").Bytes
	mixed := vectorNamed(t, "mixed-magic-fetch").Bytes
	gz := vectorNamed(t, "v2-gzip").Bytes
	for _, version := range []int16{4, 12, 13, 16} {
		t.Run(fmt.Sprint("v", version), func(t *testing.T) {
			resp := codec.NewFetchResponse()
			a := codec.NewFetchResponseFetchableTopicResponse()
			a.Topic, a.TopicID = "a", codec.UUID{0xA}
			p0 := codec.NewFetchResponsePartitionData()
			p0.PartitionIndex = 0
			p0.Records = append(append(append([]byte{}, txn...), abort...), gz[:len(gz)/2]...)
			p0.AbortedTransactions = []codec.FetchResponseAbortedTransaction{{ProducerID: 9001, FirstOffset: 2000}}
			p1 := codec.NewFetchResponsePartitionData()
			p1.PartitionIndex = 1
			p1.Records = append(append([]byte{}, txn...), commit...) // committed: nothing aborted
			p2 := codec.NewFetchResponsePartitionData()
			p2.PartitionIndex, p2.ErrorCode = 2, 6
			a.Partitions = []codec.FetchResponsePartitionData{*p0, *p1, *p2}
			b := codec.NewFetchResponseFetchableTopicResponse()
			b.Topic, b.TopicID = "b", codec.UUID{0xB}
			p3 := codec.NewFetchResponsePartitionData()
			p3.PartitionIndex = 7
			p3.Records = mixed
			b.Partitions = []codec.FetchResponsePartitionData{*p3}
			resp.Responses = []codec.FetchResponseFetchableTopicResponse{*a, *b}
			wire, err := resp.Encode(nil, version)
			if err != nil {
				t.Fatal(err)
			}
			got := codec.NewFetchResponse()
			if err := got.Decode(wire, version); err != nil {
				t.Fatal(err)
			}
			var names map[codec.UUID]string
			if version >= 13 {
				names = map[codec.UUID]string{{0xA}: "a", {0xB}: "b"}
			}
			count := map[string]int{}
			var d records.Decoder
			err = d.ForEachFetchMessage(got, names, func(m *records.Message) error {
				key := fmt.Sprintf("%s/%d", m.Topic, m.Partition)
				if m.Control {
					key += "/control"
				}
				if m.Aborted {
					key += "/aborted"
				}
				count[key]++
				if version >= 13 && m.TopicID != (codec.UUID{m.Topic[0] - 'a' + 0xA}) {
					t.Fatalf("topic id %v for %s", m.TopicID, m.Topic)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int{"a/0/aborted": 8, "a/0/control": 1, "a/1": 8, "a/1/control": 1, "b/7": 32}
			if version < 4 { // no aborted transactions before v4
				want = map[string]int{"a/0": 8, "a/0/control": 1, "a/1": 8, "a/1/control": 1, "b/7": 32}
			}
			if fmt.Sprint(count) != fmt.Sprint(want) {
				t.Fatalf("messages %v, want %v", count, want)
			}
		})
	}
}
