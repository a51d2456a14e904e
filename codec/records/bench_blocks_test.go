package records

import (
	"bytes"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/pierrec/lz4/v4"
)

// Decoding benchmarks, kwire's decoders beside the reference ones on the same
// compressed bytes: run them together (go test -bench Decode -run '^$') and
// compare. Inputs: partly compressible values (value1K) and word text.

func benchData() map[string][]byte {
	in := testInputs()
	return map[string][]byte{"value1K": value1K(64 << 10), "words": in["words"][:64<<10]}
}

func BenchmarkSnappyDecode(b *testing.B) {
	for name, in := range benchData() {
		enc := snappy.Encode(nil, in)
		out := make([]byte, 0, len(in))
		b.Run(name+"/kwire", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				var err error
				if out, err = unsnappyBlock(out[:0], enc, DefaultMaxDecompressedSize); err != nil || len(out) != len(in) {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/reference", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				r, err := snappy.Decode(out[:cap(out)], enc)
				if err != nil || len(r) != len(in) {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkLZ4Decode(b *testing.B) {
	for name, in := range benchData() {
		var c lz4.Compressor
		enc := make([]byte, lz4.CompressBlockBound(len(in)))
		n, err := c.CompressBlock(in, enc)
		if err != nil || n == 0 {
			b.Fatal(err)
		}
		enc = enc[:n]
		out := make([]byte, len(in))
		b.Run(name+"/kwire", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if k, err := lz4Decode(out, 0, 0, enc); err != nil || k != len(in) {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/reference", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if k, err := lz4.UncompressBlock(enc, out); err != nil || k != len(in) {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGzipDecode: the standard library's reader (kwire's path, pooled)
// beside the reference library's reader, reused, both read the same way.
func BenchmarkGzipDecode(b *testing.B) {
	for name, in := range benchData() {
		var zb bytes.Buffer
		w := kgzip.NewWriter(&zb)
		w.Write(in)
		w.Close()
		enc := zb.Bytes()
		out := make([]byte, 0, len(in))
		b.Run(name+"/kwire-stdlib", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				var err error
				if out, err = gunzip(out[:0], enc, DefaultMaxDecompressedSize); err != nil || len(out) != len(in) {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/reference", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			var r kgzip.Reader
			var br bytes.Reader
			for b.Loop() {
				br.Reset(enc)
				if err := r.Reset(&br); err != nil {
					b.Fatal(err)
				}
				var err error
				if out, err = readAllLimit(out[:0], &r, DefaultMaxDecompressedSize, 4*len(enc)); err != nil || len(out) != len(in) {
					b.Fatal(err)
				}
			}
		})
	}
}
