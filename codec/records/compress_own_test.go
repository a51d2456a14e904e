//go:build !kwire_nocompress

package records_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"runtime"
	"strconv"
	"testing"

	kzstd "github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/kwire/kwire/codec/records"
)

var refZstd, _ = kzstd.NewReader(nil, kzstd.WithDecoderConcurrency(1))

// libDecode decompresses with the reference libraries only: the standard
// library's gzip reader, pierrec/lz4's frame reader, klauspost/compress's zstd.
func libDecode(t *testing.T, c records.Compression, b []byte) []byte {
	t.Helper()
	var r io.Reader
	switch c {
	case records.CompressionGzip:
		g, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("gzip: %v", err)
		}
		r = g
	case records.CompressionLZ4:
		r = lz4.NewReader(bytes.NewReader(b))
	case records.CompressionZstd:
		out, err := refZstd.DecodeAll(b, nil)
		if err != nil {
			t.Fatalf("%v: the reference library rejects kwire's output: %v", c, err)
		}
		return out
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%v: the reference library rejects kwire's output: %v", c, err)
	}
	return out
}

// recordPayloads are uncompressed records sections: those of the Java
// vectors' magic 2 batches, re-encoded without compression, and bench-like
// batches of 100 records of 1 KiB values.
func recordPayloads(t *testing.T) (vectors, bench [][]byte) {
	return vectorPayloads(t), benchPayloads(t)
}

func vectorPayloads(t *testing.T) (vectors [][]byte) {
	var enc records.Encoder
	d := records.NewDecoder(records.Options{})
	for _, v := range javaVectors(t) {
		for pos := 0; pos < len(v.Bytes); {
			size, magic, err := records.PeekEntry(v.Bytes[pos:])
			if err != nil || size == 0 {
				t.Fatalf("%s: entry at %d: %v", v.Name, pos, err)
			}
			entry := v.Bytes[pos : pos+size]
			pos += size
			if magic != 2 {
				continue
			}
			b, _, err := records.ParseBatch(entry, false)
			if err != nil {
				t.Fatal(err)
			}
			recs, err := d.AppendRecords(nil, &b)
			if err != nil {
				t.Fatal(err)
			}
			b.Attributes &^= 7
			out, err := records.AppendBatchT(t, &enc, nil, &b, recs)
			if err != nil {
				t.Fatal(err)
			}
			if len(out) > 61 {
				vectors = append(vectors, out[61:])
			}
		}
	}
	return vectors
}

func benchPayloads(t testing.TB) (bench [][]byte) {
	var enc records.Encoder
	filler := "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789"
	for batch := 0; batch < 4; batch++ {
		rs := make([]records.Record, 100)
		for i := range rs {
			n := batch*100 + i
			v := `{"id":` + strconv.Itoa(n) + `,"payload":"` + filler[n%20:n%20+80] + `"}`
			for len(v) < 1024 {
				v += filler
			}
			rs[i] = records.Record{Key: []byte("key-" + strconv.Itoa(n)), Value: []byte(v[:1024]), Timestamp: 1700000000000 + int64(n),
				Headers: []records.Header{{Key: []byte("trace-id"), Value: []byte("t-" + strconv.Itoa(n))}}}
		}
		b := records.Batch{BaseOffset: int64(batch * 100), PartitionLeaderEpoch: -1}
		b.SetDeltas(rs)
		out, err := enc.AppendBatch(nil, &b, rs)
		if err != nil {
			t.Fatal(err)
		}
		bench = append(bench, out[61:])
	}
	return bench
}

// TestOwnEncoders: kwire's own gzip, LZ4 and zstd encoders (the WebAssembly
// builds' compressors, compiled natively too) write what the reference
// libraries decode back to the input, and stay within 10% of the libraries'
// sizes at their default levels, on the Java vectors' records and on 1 KiB
// record batches. (The sizes are compared in native builds only: the code is
// the same, and the libraries' encoders are slow to set up in WebAssembly.)
func TestOwnEncoders(t *testing.T) {
	sizes := runtime.GOARCH != "wasm"
	vectors, bench := recordPayloads(t)
	if len(vectors) < 10 {
		t.Fatalf("only %d vector payloads", len(vectors))
	}
	for _, c := range []records.Compression{records.CompressionGzip, records.CompressionLZ4, records.CompressionZstd} {
		for _, set := range []struct {
			name string
			in   [][]byte
		}{{"vectors", vectors}, {"1KiB batches", bench}} {
			var ours, ref, raw int
			for _, p := range set.in {
				for _, magic := range []int8{1, 2} {
					if c == records.CompressionZstd && magic < 2 {
						continue
					}
					out, err := records.EncodeOwnT(c, p, magic)
					if err != nil {
						t.Fatal(err)
					}
					if got := libDecode(t, c, out); !bytes.Equal(got, p) {
						t.Fatalf("%v: library decodes %d bytes that differ from the %d input bytes", c, len(got), len(p))
					}
					if magic == 2 && sizes {
						ours += len(out)
						ref += len(records.RefCompressT(t, c, p, magic))
						raw += len(p)
					}
				}
			}
			if !sizes {
				continue
			}
			t.Logf("%-6v %-13s %8d bytes: own %7d, library %7d (%+.1f%%)", c, set.name, raw, ours, ref, 100*(float64(ours)/float64(ref)-1))
			if float64(ours) > 1.10*float64(ref) {
				t.Errorf("%v on %s: %d bytes, the library %d: more than 10%% larger", c, set.name, ours, ref)
			}
		}
	}
}

// BenchmarkEncoders compares kwire's own encoders with the build's (in native
// builds the libraries', pooled as in use), default levels, on a batch of 100
// records of 1 KiB: go test -bench Encoders -run '^$' ./codec/records.
func BenchmarkEncoders(b *testing.B) {
	p := benchPayloads(b)[0]
	for _, c := range []records.Compression{records.CompressionGzip, records.CompressionLZ4, records.CompressionZstd} {
		b.Run(c.String()+"/own", func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			for i := 0; i < b.N; i++ {
				if _, err := records.EncodeOwnT(c, p, 2); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.String()+"/build", func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			for i := 0; i < b.N; i++ {
				if _, err := records.Compress(nil, c, p, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
