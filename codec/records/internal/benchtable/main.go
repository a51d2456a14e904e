// Command benchtable measures record batches side by side in one run and prints
// the table `make bench` shows: decoding an uncompressed batch against a plain
// copy of its bytes, each codec through kwire against the codec library alone,
// and CRC32C throughput.
//
//	go run ./codec/records/internal/benchtable
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"
	"text/tabwriter"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/kwire/kwire/codec/records"
)

// value is deterministic data that compresses somewhat, like JSON or logs.
func value(n int, seed uint32) []byte {
	words := []string{"order", "id", "amount", "customer", "status", "shipped", "eur", "created", "\"", ":", ",", "{", "}"}
	b := make([]byte, 0, n)
	x := seed*2654435761 + 1
	for len(b) < n {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		if x%4 == 0 {
			b = append(b, byte('0'+x%10), byte('0'+x/10%10))
		} else {
			b = append(b, words[x%uint32(len(words))]...)
		}
	}
	return b[:n]
}

func batchRecords() []records.Record {
	recs := make([]records.Record, 1000)
	for i := range recs {
		recs[i] = records.Record{Timestamp: 1_750_000_000_000 + int64(i), Key: []byte(fmt.Sprintf("key-%04d", i)), Value: value(1024, uint32(i)),
			Headers: []records.Header{{Key: []byte("trace"), Value: []byte("0123456789abcdef")}}}
	}
	return recs
}

type row struct {
	name          string
	kwire, base   testing.BenchmarkResult
	bytes         int64 // per op, for MB/s
	baseName      string
	ratio, target string
}

// pair measures a and b in alternation, rounds times each, and keeps each
// one's fastest run: both see the same machine load, and a burst of load on
// one run does not decide the ratio.
func pair(a, b func(*testing.B)) (testing.BenchmarkResult, testing.BenchmarkResult) {
	var ra, rb testing.BenchmarkResult
	for i := 0; i < rounds; i++ {
		x := testing.Benchmark(a)
		y := testing.Benchmark(b)
		if i == 0 || x.NsPerOp() < ra.NsPerOp() {
			ra = x
		}
		if i == 0 || y.NsPerOp() < rb.NsPerOp() {
			rb = y
		}
	}
	return ra, rb
}

const rounds = 5

func mbps(r testing.BenchmarkResult, n int64) float64 {
	if r.T <= 0 {
		return 0
	}
	return float64(n) * float64(r.N) / r.T.Seconds() / 1e6
}

func main() {
	testing.Init()
	flag.Set("test.benchtime", "200ms")
	flag.Parse()
	recs := batchRecords()
	var enc records.Encoder
	b := records.Batch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	b.SetDeltas(recs)
	batch, err := enc.AppendBatch(nil, &b, recs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	section := batch[records.BatchHeaderSize:] // the uncompressed records section
	var rows []row
	var sizes []string

	// 1. Decode (CRC check + every record) vs copying the same bytes.
	var d records.Decoder
	dst := make([]byte, len(batch))
	decode, cp := pair(func(tb *testing.B) {
		tb.ReportAllocs()
		tb.SetBytes(int64(len(batch)))
		var r records.Record
		for i := 0; i < tb.N; i++ {
			pb, _, err := records.ParseBatch(batch, false)
			if err != nil {
				tb.Fatal(err)
			}
			it, err := d.Records(&pb)
			if err != nil {
				tb.Fatal(err)
			}
			n := 0
			for it.Next(&r) {
				n += len(r.Value)
			}
			if it.Err() != nil || n != 1000*1024 {
				tb.Fatal(it.Err())
			}
		}
	}, func(tb *testing.B) {
		tb.SetBytes(int64(len(batch)))
		for i := 0; i < tb.N; i++ {
			copy(dst, batch)
		}
	})
	rows = append(rows, row{name: "decode 1000 x 1 KiB, uncompressed", kwire: decode, base: cp, bytes: int64(len(batch)), baseName: "copy of the bytes",
		ratio: fmt.Sprintf("%.2fx copy", mbps(decode, int64(len(batch)))/mbps(cp, int64(len(batch)))), target: ">= 0.25x copy, 0 allocs/record"})

	// 2. Each codec: kwire's Compress/Decompress vs the library on its own.
	// decompressPair times kwire's Decompress of comp against lib, which decompresses
	// the library's own form into out; both must give back the whole section.
	decompressPair := func(c records.Compression, comp []byte, lib func(out []byte) []byte) (testing.BenchmarkResult, testing.BenchmarkResult) {
		out := make([]byte, 0, 2*len(section))
		return pair(func(tb *testing.B) {
			tb.ReportAllocs()
			for i := 0; i < tb.N; i++ {
				var err error
				if out, err = records.Decompress(out[:0], c, comp, 0); err != nil || len(out) != len(section) {
					tb.Fatal(err)
				}
			}
		}, func(tb *testing.B) {
			tb.ReportAllocs()
			for i := 0; i < tb.N; i++ {
				if out = lib(out); len(out) != len(section) {
					tb.Fatal("short")
				}
			}
		})
	}
	// timeRow is the row of a codec case, compared by time per op.
	timeRow := func(name, baseName string, k, base testing.BenchmarkResult) row {
		return row{name: name, kwire: k, base: base, bytes: int64(len(section)), baseName: baseName,
			ratio: fmt.Sprintf("%.2fx time", float64(k.NsPerOp())/float64(base.NsPerOp())), target: "<= 1.1x time"}
	}
	type lib struct {
		c          records.Compression
		name       string
		compress   func(dst, src []byte) []byte
		decompress func(dst, src []byte) []byte
	}
	gzw, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
	var gzr gzip.Reader
	zenc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(3)), zstd.WithLowerEncoderMem(true))
	zdec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
	lzw := lz4.NewWriter(nil)
	lzw.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(false))
	lzr := lz4.NewReader(nil)
	var br bytes.Reader
	readAll := func(dst []byte, r io.Reader) []byte {
		dst = dst[:0]
		for {
			if len(dst) == cap(dst) {
				dst = append(dst, 0)[:len(dst)]
			}
			n, err := r.Read(dst[len(dst):cap(dst)])
			dst = dst[:len(dst)+n]
			if err == io.EOF {
				return dst
			}
			if err != nil {
				panic(err)
			}
		}
	}
	// A streaming library compresses through its writer and decompresses through its
	// reader, each reset onto the buffers of the call.
	streamWriter := func(w interface {
		io.WriteCloser
		Reset(io.Writer)
	}) func(dst, src []byte) []byte {
		return func(dst, src []byte) []byte {
			b := bytes.NewBuffer(dst[:0])
			w.Reset(b)
			w.Write(src)
			w.Close()
			return b.Bytes()
		}
	}
	streamReader := func(r io.Reader, reset func(io.Reader)) func(dst, src []byte) []byte {
		return func(dst, src []byte) []byte {
			br.Reset(src)
			reset(&br)
			return readAll(dst, r)
		}
	}
	libs := []lib{
		{records.CompressionGzip, "klauspost/compress gzip",
			streamWriter(gzw), streamReader(&gzr, func(r io.Reader) { gzr.Reset(r) })},
		// Kafka's snappy is snappy-java's xerial framing: 32 KiB chunks, each a
		// raw block after a 4-byte length. The library alone does the same chunks.
		{records.CompressionSnappy, "klauspost/compress snappy, same 32 KiB chunks",
			func(dst, src []byte) []byte {
				dst = append(dst[:0], 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1)
				for len(src) > 0 {
					n := min(len(src), 32<<10)
					at := len(dst)
					enc := snappy.Encode(dst[at+4:cap(dst)], src[:n])
					dst = dst[:at+4+len(enc)]
					binary.BigEndian.PutUint32(dst[at:], uint32(len(enc)))
					src = src[n:]
				}
				return dst
			},
			func(dst, src []byte) []byte {
				dst = dst[:0]
				for pos := 16; pos < len(src); {
					n := int(binary.BigEndian.Uint32(src[pos:]))
					block := src[pos+4 : pos+4+n]
					pos += 4 + n
					m, err := snappy.DecodedLen(block)
					if err != nil {
						panic(err)
					}
					if _, err := snappy.DecodeStrict(dst[len(dst):len(dst)+m], block); err != nil {
						panic(err)
					}
					dst = dst[:len(dst)+m]
				}
				return dst
			}},
		{records.CompressionLZ4, "pierrec/lz4 Writer/Reader",
			streamWriter(lzw), streamReader(lzr, lzr.Reset)},
		{records.CompressionZstd, "klauspost/compress zstd",
			func(dst, src []byte) []byte { return zenc.EncodeAll(src, dst[:0]) },
			func(dst, src []byte) []byte {
				out, err := zdec.DecodeAll(src, dst[:0])
				if err != nil {
					panic(err)
				}
				return out
			}},
	}
	for _, l := range libs {
		kcomp, _ := records.Compress(nil, l.c, section, 0)
		lcomp := l.compress(make([]byte, 0, 2*len(section)), section)
		kc, lc := pair(func(tb *testing.B) {
			tb.ReportAllocs()
			buf := make([]byte, 0, 2*len(section))
			for i := 0; i < tb.N; i++ {
				buf, _ = records.Compress(buf[:0], l.c, section, 0)
			}
		}, func(tb *testing.B) {
			tb.ReportAllocs()
			buf := make([]byte, 0, 2*len(section))
			for i := 0; i < tb.N; i++ {
				buf = l.compress(buf, section)
			}
		})
		kd, ld := decompressPair(l.c, kcomp, func(out []byte) []byte { return l.decompress(out, lcomp) })
		rows = append(rows, timeRow(l.c.String()+" compress", l.name, kc, lc), timeRow(l.c.String()+" decompress", l.name, kd, ld))
		sizes = append(sizes, fmt.Sprintf("%s: kwire %d bytes, library %d bytes", l.c, len(kcomp), len(lcomp)))
	}

	// zstd as zstd-jni writes it (streamed, no content size): kwire's streaming
	// path against the library's own streaming decoder on the same frame.
	{
		var zs bytes.Buffer
		zw, _ := zstd.NewWriter(&zs, zstd.WithEncoderConcurrency(1))
		zw.Write(section)
		zw.Close()
		streamed := zs.Bytes()
		sdec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		kd, ld := decompressPair(records.CompressionZstd, streamed, func(out []byte) []byte {
			br.Reset(streamed)
			if err := sdec.Reset(&br); err != nil {
				panic(err)
			}
			return readAll(out, sdec)
		})
		rows = append(rows, timeRow("zstd decompress, streamed frame", "klauspost/compress zstd stream", kd, ld))
	}

	// 3. CRC32C.
	mib := value(1<<20, 99)
	crc := testing.Benchmark(func(tb *testing.B) {
		tb.SetBytes(int64(len(mib)))
		for i := 0; i < tb.N; i++ {
			records.CRC32C(mib)
		}
	})

	fmt.Printf("record batches: %s/%s, %s, %d records x 1 KiB (%d bytes uncompressed); best of %d alternating runs each\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.Version(), len(recs), len(section), rounds)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight|tabwriter.Debug)
	fmt.Fprintln(w, "case\tkwire MB/s\tallocs/op\tbaseline\tbaseline MB/s\tallocs/op\tratio\ttarget\t")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%.0f\t%d\t%s\t%.0f\t%d\t%s\t%s\t\n", r.name, mbps(r.kwire, r.bytes), r.kwire.AllocsPerOp(), r.baseName, mbps(r.base, r.bytes), r.base.AllocsPerOp(), r.ratio, r.target)
	}
	fmt.Fprintf(w, "crc32c, 1 MiB\t%.0f\t%d\t\t\t\t\t\t\n", mbps(crc, int64(len(mib))), crc.AllocsPerOp())
	w.Flush()
	fmt.Println("\ncompressed sizes of the records section:")
	for _, s := range sizes {
		fmt.Println("  " + s)
	}
	for _, r := range rows {
		if r.kwire.AllocsPerOp() != 0 {
			fmt.Printf("note: %s allocates %d times per batch\n", r.name, r.kwire.AllocsPerOp())
		}
	}
}
