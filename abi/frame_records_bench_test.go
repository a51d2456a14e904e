package abi

import (
	"strconv"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
)

// benchFetchFrame builds the Fetch v11 response the bindings' benches decode: 2
// partitions x 5 batches x 100 records (key ~10 bytes, value ~100 bytes, one header),
// compressed with c. valueSize > 0 makes every value that long instead.
func benchFetchFrame(tb testing.TB, c records.Compression, valueSize int) []byte {
	tb.Helper()
	filler := "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789"
	var enc records.Encoder
	offset := 0
	resp := codec.NewFetchResponse()
	topic := codec.FetchResponseFetchableTopicResponse{Topic: "bench"}
	for p := 0; p < 2; p++ {
		var recs []byte
		for b := 0; b < 5; b++ {
			rs := make([]records.Record, 100)
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
				tb.Fatal(err)
			}
			offset += 100
		}
		var part codec.FetchResponsePartitionData
		part.SetDefaults()
		part.PartitionIndex, part.HighWatermark, part.LastStableOffset, part.LogStartOffset = int32(p), int64(offset), int64(offset), 0
		part.AbortedTransactions = []codec.FetchResponseAbortedTransaction{}
		part.Records = recs
		topic.Partitions = append(topic.Partitions, part)
	}
	resp.Responses = append(resp.Responses, topic)
	frame, err := codec.EncodeResponseFrame(nil, &codec.ResponseHeader{CorrelationId: 42}, 11, resp)
	if err != nil {
		tb.Fatal(err)
	}
	return frame
}

// BenchmarkDecodeResponseFrameRecords is kw_decode_response_frame_records on the
// bindings' bench frame, for each codec, CRC checked; the output buffer is reused as a
// host that frees and decodes again gets it back.
func BenchmarkDecodeResponseFrameRecords(b *testing.B) {
	for _, c := range []records.Compression{records.CompressionNone, records.CompressionGzip, records.CompressionSnappy, records.CompressionLZ4, records.CompressionZstd} {
		for _, flags := range []int32{0, FlagInputSpans} {
			name := c.String()
			if flags&FlagInputSpans != 0 {
				name += "/input-spans"
			}
			b.Run(name, func(b *testing.B) {
				frame := benchFetchFrame(b, c, 0)
				var out []byte
				b.SetBytes(int64(len(frame)))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					var err error
					if out, err = DecodeResponseFrameRecords(out[:0], frame, 1, 11, flags, 0); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
