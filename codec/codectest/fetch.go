package codectest

import (
	"strconv"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
)

// FetchFrame builds the Fetch v11 response frame that kwire's record benchmarks
// decode: 2 partitions x 5 batches x 100 records (key ~10 bytes, value ~100 bytes, one
// header "trace-id"), correlation id 42, compressed with c. valueSize > 0 makes every
// value that long instead.
func FetchFrame(c records.Compression, valueSize int) ([]byte, error) {
	return FetchFrameOf(c, valueSize, 2, 5, 100)
}

// FetchFrameOf is FetchFrame with partitions x batches x perBatch records.
func FetchFrameOf(c records.Compression, valueSize, partitions, batches, perBatch int) ([]byte, error) {
	filler := "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789"
	var enc records.Encoder
	offset := 0
	resp := codec.NewFetchResponse()
	topic := codec.FetchResponseFetchableTopicResponse{Topic: "bench"}
	for p := 0; p < partitions; p++ {
		var recs []byte
		for b := 0; b < batches; b++ {
			rs := make([]records.Record, perBatch)
			for i := range rs {
				n := offset + i
				v := `{"id":` + strconv.Itoa(n) + `,"payload":"` + filler[n%20:n%20+80] + `"}`
				if valueSize > 0 {
					for len(v) < valueSize {
						v += filler
					}
					v = v[:valueSize]
				}
				rs[i] = records.Record{Key: []byte("key-" + strconv.Itoa(n)), Value: []byte(v), Timestamp: 1700000000000 + int64(n),
					Headers: []records.Header{{Key: []byte("trace-id"), Value: []byte("t-" + strconv.Itoa(n))}}}
			}
			batch := records.Batch{BaseOffset: int64(offset), Attributes: int16(c), ProducerID: int64(1000 + p), BaseSequence: int32(offset), PartitionLeaderEpoch: -1}
			batch.SetDeltas(rs)
			var err error
			if recs, err = enc.AppendBatch(recs, &batch, rs); err != nil {
				return nil, err
			}
			offset += perBatch
		}
		var part codec.FetchResponsePartitionData
		part.SetDefaults()
		part.PartitionIndex, part.HighWatermark, part.LastStableOffset, part.LogStartOffset = int32(p), int64(offset), int64(offset), 0
		part.AbortedTransactions = []codec.FetchResponseAbortedTransaction{}
		part.Records = recs
		topic.Partitions = append(topic.Partitions, part)
	}
	resp.Responses = append(resp.Responses, topic)
	frame, err := codec.EncodeResponseFrame(nil, &codec.ResponseHeader{CorrelationID: 42}, 11, resp)
	return frame, err
}
