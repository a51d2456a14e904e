// Command samples writes the sample frames every example decodes: a Produce request
// frame and a Fetch response frame whose partitions hold gzip, snappy, lz4 and zstd
// batches. The output is deterministic; run it from the repository root:
//
//	go run ./examples/go/samples
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
)

const baseTime = 1700000000000 // 2023-11-14T22:13:20Z

func batch(enc *records.Encoder, c records.Compression, base int64, n int, topic string, part int) []byte {
	var recs []records.Record
	for i := 0; i < n; i++ {
		recs = append(recs, records.Record{
			Timestamp: baseTime + int64(i*10),
			Key:       []byte(fmt.Sprintf("key-%d", i)),
			Value:     []byte(fmt.Sprintf("%s/%d message %d", topic, part, i)),
			Headers:   []records.Header{{Key: []byte("trace-id"), Value: []byte(fmt.Sprintf("t%d%d", part, i))}},
		})
	}
	b := records.Batch{BaseOffset: base, Magic: 2, Attributes: int16(c), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: 3}
	b.SetDeltas(recs)
	out, err := enc.AppendBatch(nil, &b, recs)
	if err != nil {
		panic(err)
	}
	return out
}

func main() {
	enc := &records.Encoder{}

	// A Produce v9 request: one topic, one partition, an uncompressed batch of two records.
	req := codec.NewProduceRequest()
	req.Acks = -1
	req.TimeoutMs = 30000
	req.TopicData = []codec.ProduceRequestTopicProduceData{{
		Name:          "orders",
		PartitionData: []codec.ProduceRequestPartitionProduceData{{Index: 0, Records: batch(enc, records.CompressionNone, 0, 2, "orders", 0)}},
	}}
	reqFrame, err := codec.EncodeRequestFrame(nil, codec.NewRequestHeaderFor(req, 9, 7, "kwire-example"), req)
	if err != nil {
		panic(err)
	}

	// A Fetch v12 response: topic "events", partitions 0-3, one compressed batch each.
	resp := codec.NewFetchResponse()
	topic := codec.FetchResponseFetchableTopicResponse{Topic: "events"}
	for p, c := range []records.Compression{records.CompressionGzip, records.CompressionSnappy, records.CompressionLZ4, records.CompressionZstd} {
		pd := *codec.NewFetchResponsePartitionData()
		pd.PartitionIndex = int32(p)
		pd.HighWatermark = 100
		pd.LastStableOffset = 100
		pd.LogStartOffset = 0
		pd.Records = batch(enc, c, int64(10*p), 3, "events", p)
		topic.Partitions = append(topic.Partitions, pd)
	}
	resp.Responses = []codec.FetchResponseFetchableTopicResponse{topic}
	h := codec.NewResponseHeader()
	h.CorrelationID = 8
	respFrame, err := codec.EncodeResponseFrame(nil, h, 12, resp)
	if err != nil {
		panic(err)
	}

	dir := filepath.Join("examples", "data")
	for name, b := range map[string][]byte{"produce-request.bin": reqFrame, "fetch-response.bin": respFrame} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			panic(err)
		}
		fmt.Printf("wrote %s (%d bytes)\n", filepath.Join(dir, name), len(b))
	}
}
