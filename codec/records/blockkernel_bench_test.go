package records

import (
	"strconv"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/pierrec/lz4/v4"
)

// Block decoding, lz4Decode / snappyDecode (the kernel in WebAssembly builds,
// the plain-Go decoder elsewhere and with kwire_purego) beside the plain-Go
// twin, on the same blocks in the same run:
//
//	GOOS=wasip1 GOARCH=wasm go test -exec ... -run '^$' -bench 'Kernel' ./codec/records
//
// Inputs: the block benchmarks' data (value1K, words: one 64 KiB block each)
// and the records section of a 1000-record batch with values of about 100 B
// (rec100, ~135 KB) and 1 KiB (rec1K, ~1.1 MB), in 64 KiB LZ4 blocks as
// Kafka's LZ4 frames have them and 32 KiB snappy blocks as xerial framing
// has them.

// benchValue is deterministic JSON-like text of n bytes that compresses
// about as well as typical event payloads.
func benchValue(n int, seed uint32) []byte {
	words := []string{`"order"`, `"id"`, `"amount"`, `"customer"`, `"status"`, `"shipped"`, `"eur"`, `"created"`, `:`, `,`, `{`, `}`, ` `}
	b := make([]byte, 0, n+16)
	x := seed*2654435761 + 1
	for len(b) < n {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		if x%3 == 0 {
			b = strconv.AppendUint(b, uint64(x%100000), 10)
		} else {
			b = append(b, words[x%uint32(len(words))]...)
		}
	}
	return b[:n]
}

// benchRecordsSection is the records section of an uncompressed batch of 1000
// records with keys, a header and values of valueLen bytes.
func benchRecordsSection(b *testing.B, valueLen int) []byte {
	recs := make([]Record, 1000)
	for i := range recs {
		recs[i] = Record{
			Timestamp: 1_750_000_000_000 + int64(i),
			Key:       []byte("key-" + strconv.Itoa(10000+i)),
			Value:     benchValue(valueLen, uint32(i)),
			Headers:   []Header{{Key: []byte("trace"), Value: []byte("0123456789abcdef")}},
		}
	}
	var e Encoder
	batch := Batch{}
	out, err := e.AppendBatch(nil, &batch, recs)
	if err != nil {
		b.Fatal(err)
	}
	return out[BatchHeaderSize:]
}

// benchKernelInputs: name -> data, cut in blocks of at most blockLen bytes
// (the 64 KiB block benchmark inputs stay one block).
func benchKernelInputs(b *testing.B, blockLen int) map[string][][]byte {
	cut := func(in []byte) [][]byte {
		var out [][]byte
		for len(in) > blockLen {
			out = append(out, in[:blockLen])
			in = in[blockLen:]
		}
		return append(out, in)
	}
	m := map[string][][]byte{}
	for name, in := range benchData() {
		m[name] = [][]byte{in}
	}
	m["rec100"] = cut(benchRecordsSection(b, 100))
	m["rec1K"] = cut(benchRecordsSection(b, 1024))
	return m
}

func BenchmarkLZ4Kernel(b *testing.B) {
	for _, name := range []string{"value1K", "words", "rec100", "rec1K"} {
		plain := benchKernelInputs(b, 64<<10)[name]
		var blocks [][]byte
		total := 0
		for _, p := range plain {
			var c lz4.Compressor
			enc := make([]byte, lz4.CompressBlockBound(len(p)))
			n, err := c.CompressBlock(p, enc)
			if err != nil || n == 0 {
				b.Fatal(err)
			}
			blocks = append(blocks, enc[:n])
			total += len(p)
		}
		out := make([]byte, 64<<10)
		for _, v := range []struct {
			name string
			fn   func(buf []byte, base, start int, src []byte) (int, error)
		}{{"kernel", lz4Decode}, {"twin", lz4DecodeGeneric}} {
			b.Run(name+"/"+v.name, func(b *testing.B) {
				b.SetBytes(int64(total))
				for b.Loop() {
					for i, blk := range blocks {
						if k, err := v.fn(out, 0, 0, blk); err != nil || k != len(plain[i]) {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

func BenchmarkSnappyKernel(b *testing.B) {
	for _, name := range []string{"value1K", "words", "rec100", "rec1K"} {
		plain := benchKernelInputs(b, xerialChunk)[name]
		var blocks [][]byte
		total := 0
		for _, p := range plain {
			blocks = append(blocks, snappy.Encode(nil, p))
			total += len(p)
		}
		out := make([]byte, 64<<10+16)
		for _, v := range []struct {
			name string
			fn   func(dst, src []byte, s int) error
		}{{"kernel", snappyDecode}, {"twin", snappyDecodeGeneric}} {
			b.Run(name+"/"+v.name, func(b *testing.B) {
				b.SetBytes(int64(total))
				for b.Loop() {
					for _, blk := range blocks {
						n, hdr, err := snappyHeader(blk)
						if err != nil {
							b.Fatal(err)
						}
						if err := v.fn(out[:n], blk, hdr); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

// BenchmarkBlockKernelBatch: a whole 1000-record batch read through the
// Decoder (decompression and record parsing), the Fetch-sized unit: compare a
// default WebAssembly build with a kwire_purego one.
func BenchmarkBlockKernelBatch(b *testing.B) {
	for _, size := range []int{100, 1024} {
		recs := make([]Record, 1000)
		for i := range recs {
			recs[i] = Record{Timestamp: 1_750_000_000_000 + int64(i), Key: []byte("key-" + strconv.Itoa(10000+i)),
				Value: benchValue(size, uint32(i)), Headers: []Header{{Key: []byte("trace"), Value: []byte("0123456789abcdef")}}}
		}
		for _, c := range []Compression{CompressionLZ4, CompressionSnappy} {
			var e Encoder
			batch := Batch{Attributes: int16(c)}
			raw, err := testAppendBatch(b, &e, nil, &batch, recs)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(c.String()+"/rec"+strconv.Itoa(size), func(b *testing.B) {
				d := NewDecoder(Options{})
				var out []Record
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					pb, _, err := ParseBatch(raw, false)
					if err != nil {
						b.Fatal(err)
					}
					if out, err = d.AppendRecords(out[:0], &pb); err != nil || len(out) != len(recs) {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
