package abi

import (
	"testing"

	"github.com/kwire/kwire/codec/codectest"
	"github.com/kwire/kwire/codec/records"
)

// BenchmarkDecodeResponseFrameRecords is kw_decode_response_frame_records on the
// bindings' bench frame, for each codec, CRC checked; the output buffer is reused as a
// host that frees and decodes again gets it back.
func BenchmarkDecodeResponseFrameRecords(b *testing.B) {
	for _, c := range []records.Compression{records.CompressionNone, records.CompressionGzip, records.CompressionSnappy, records.CompressionLZ4, records.CompressionZstd} {
		for _, flags := range []int32{0, FlagInputSpans, FlagInputSpans | FlagColumns} {
			name := c.String()
			if flags&FlagInputSpans != 0 {
				name += "/input-spans"
			}
			if flags&FlagColumns != 0 {
				name += "/columns"
			}
			b.Run(name, func(b *testing.B) {
				frame, err := codectest.FetchFrame(c, 0)
				if err != nil {
					b.Fatal(err)
				}
				var out []byte
				b.SetBytes(int64(len(frame)))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if out, err = DecodeResponseFrameRecords(out[:0], frame, 1, 11, flags, 0); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
