package records

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

func TestCodecRoundTrip(t *testing.T) {
	inputs := [][]byte{{}, []byte("x"), bytes.Repeat([]byte("kafka "), 50000), value1K(3000)}
	for _, c := range allCodecs {
		for i, in := range inputs {
			for _, level := range []int{0, 1, 9} {
				comp, err := Compress(nil, c, in, level)
				if !haveCompressors && c != CompressionNone {
					checkNoCompressors(t, err)
					comp = refCompress(t, c, in, level, 2)
				} else if err != nil {
					t.Fatalf("%v level %d input %d: %v", c, level, i, err)
				}
				out, err := Decompress(nil, c, comp, 0)
				if err != nil {
					t.Fatalf("%v level %d input %d: %v", c, level, i, err)
				}
				if !bytes.Equal(out, in) {
					t.Fatalf("%v level %d input %d: round trip differs", c, level, i)
				}
			}
		}
	}
}

// value1K is deterministic, partly compressible data.
func value1K(n int) []byte {
	b := make([]byte, n)
	x := uint32(12345)
	for i := range b {
		if i%32 < 20 {
			b[i] = "the quick brown fox jumps over"[i%30]
		} else {
			x = x*1664525 + 1013904223
			b[i] = byte(x >> 24)
		}
	}
	return b
}

// Raw snappy (no framing) and xerial framing whose version fields are
// little-endian, as some brokers write them, both decode.
func TestSnappyVariants(t *testing.T) {
	in := bytes.Repeat([]byte("snappy variant "), 5000)
	raw := snappy.Encode(nil, in)
	if out, err := Decompress(nil, CompressionSnappy, raw, 0); err != nil || !bytes.Equal(out, in) {
		t.Fatalf("raw snappy: %v", err)
	}
	framed := refXerial(in)
	le := append([]byte{}, framed...)
	copy(le[8:16], []byte{1, 0, 0, 0, 1, 0, 0, 0})
	if out, err := Decompress(nil, CompressionSnappy, le, 0); err != nil || !bytes.Equal(out, in) {
		t.Fatalf("little-endian xerial header: %v", err)
	}
	// A chunk length running past the input is corrupt.
	bad := append([]byte{}, framed...)
	binary.BigEndian.PutUint32(bad[16:], 1<<30)
	if _, err := Decompress(nil, CompressionSnappy, bad, 0); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("want ErrCorrupt, got %v", err)
	}
}

// Kafka wrote magic 0 LZ4 frames with a header checksum over the magic bytes as
// well; its magic 0 reader ignores the checksum, magic 1 and 2 check it.
func TestLZ4LegacyHeaderChecksumRead(t *testing.T) {
	in := bytes.Repeat([]byte("lz4 legacy "), 1000)
	v0 := refLZ4Frame(t, in, true)
	v1 := refLZ4Frame(t, in, false)
	for _, legacy := range []bool{true, false} {
		for _, frame := range [][]byte{v0, v1} {
			out, err := unlz4(nil, frame, 1<<20, legacy)
			standard := &frame[0] == &v1[0]
			if legacy || standard {
				if err != nil || !bytes.Equal(out, in) {
					t.Fatalf("legacy=%v standard=%v: %v", legacy, standard, err)
				}
			} else if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("magic 1/2 reader took Kafka's magic 0 checksum: %v", err)
			}
		}
	}
	// A frame written by pierrec's writer (content checksum on, block checksums on) decodes.
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	w.Apply(lz4.BlockChecksumOption(true), lz4.ChecksumOption(true), lz4.BlockSizeOption(lz4.Block256Kb))
	w.Write(in)
	w.Close()
	if out, err := unlz4(nil, buf.Bytes(), 1<<20, false); err != nil || !bytes.Equal(out, in) {
		t.Fatalf("pierrec frame: %v", err)
	}
	flipped := append([]byte{}, buf.Bytes()...)
	flipped[len(flipped)-1] ^= 1
	if _, err := unlz4(nil, flipped, 1<<20, false); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("content checksum not checked: %v", err)
	}
}

// allocDuring reports the bytes allocated while f runs.
func allocDuring(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

type bomb struct {
	name  string
	c     Compression
	data  []byte
	limit int
}

func bombs(t *testing.T) []bomb {
	zeros := make([]byte, 8<<20)
	var out []bomb
	// gzip: deflate reaches ~1000:1; 1 KiB inflates to ~1 MiB.
	var gz bytes.Buffer
	gw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	gw.Write(zeros[:1<<20])
	gw.Close()
	out = append(out, bomb{"gzip-expands", CompressionGzip, gz.Bytes(), 256 << 10})
	// zstd with the content size in the frame header: the claim alone is refused.
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	out = append(out, bomb{"zstd-claims", CompressionZstd, enc.EncodeAll(zeros, nil), 1 << 20})
	// zstd streamed: no content size, it has to be decoded to be found out.
	var zs bytes.Buffer
	zw, _ := zstd.NewWriter(&zs, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(256<<10))
	zw.Write(zeros)
	zw.Close()
	out = append(out, bomb{"zstd-expands", CompressionZstd, zs.Bytes(), 1 << 20})
	// zstd whose window exceeds the limit: it needs no window buffer, and
	// fails when its output does.
	var zw8 bytes.Buffer
	zw2, _ := zstd.NewWriter(&zw8, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(8<<20))
	zw2.Write(zeros)
	zw2.Close()
	out = append(out, bomb{"zstd-window", CompressionZstd, zw8.Bytes(), 1 << 20})
	// zstd claiming 1 TiB against the default limit.
	hdr := []byte{0x28, 0xB5, 0x2F, 0xFD, 0xC0} // magic; FCS 8 bytes after a window descriptor (the first byte below)
	hdr = binary.LittleEndian.AppendUint64(hdr, 1<<40)
	hdr = append(hdr, make([]byte, 1000)...)
	out = append(out, bomb{"zstd-claims-1TiB", CompressionZstd, hdr, 0})
	// snappy raw block claiming 1 GiB with 1 KiB of input.
	sn := binary.AppendUvarint(nil, 1<<30)
	sn = append(sn, make([]byte, 1020)...)
	out = append(out, bomb{"snappy-claims-1GiB", CompressionSnappy, sn, 0})
	// snappy xerial: 1 KiB that expands ~20x, against a small limit.
	sx := refXerial(zeros[:20<<10])
	out = append(out, bomb{"snappy-expands", CompressionSnappy, sx, 8 << 10})
	// lz4: blocks of zeros expand ~250x.
	lz := refLZ4Frame(t, zeros[:256<<10], false)
	out = append(out, bomb{"lz4-expands", CompressionLZ4, lz, 64 << 10})
	// lz4 frame declaring a content size of 1 TiB.
	lc := binary.LittleEndian.AppendUint32(nil, lz4Magic)
	lc = append(lc, 0x68, 0x40) // content size present
	lc = binary.LittleEndian.AppendUint64(lc, 1<<40)
	lc = append(lc, byte(xxh32(lc[4:])>>8))
	lc = append(lc, lz[7:]...)
	out = append(out, bomb{"lz4-claims-1TiB", CompressionLZ4, lc, 0})
	for _, b := range out {
		if len(b.data) > 2048 {
			t.Fatalf("%s: bomb is %d bytes, want about 1 KiB", b.name, len(b.data))
		}
	}
	return out
}

// A small compressed input that claims or expands beyond the limit fails with
// ErrTooLarge, having allocated no more than about the limit.
func TestDecompressionBombs(t *testing.T) {
	for _, b := range bombs(t) {
		t.Run(b.name, func(t *testing.T) {
			limit := b.limit
			if limit == 0 {
				limit = DefaultMaxDecompressedSize
			}
			// Warm the codec pools (decoder state is pooled and reused) so the
			// measurement sees what the bomb itself costs.
			var err error
			cold := allocDuring(func() { _, err = Decompress(nil, b.c, b.data, b.limit) })
			alloc := allocDuring(func() { _, err = Decompress(nil, b.c, b.data, b.limit) })
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("want ErrTooLarge, got %v", err)
			}
			// Output buffers grow by doubling up to limit+1: at most ~2x the limit
			// in total, plus the codec's fixed state.
			bound := uint64(2*min(limit, 16<<20)) + 1<<20
			if alloc > bound {
				t.Fatalf("allocated %d bytes for a %d-byte bomb (limit %d, bound %d)", alloc, len(b.data), limit, bound)
			}
			t.Logf("%d-byte bomb: %v after allocating %d bytes (%d with cold pools; limit %d)", len(b.data), err, alloc, cold, limit)

			// Through a batch too: the error names the batch and the records field.
			batch := Batch{BaseOffset: 9, Attributes: int16(b.c), NumRecords: 1}
			src := batch.AppendHeader(nil)
			src = append(src, b.data...)
			be.PutUint32(src[offLength:], uint32(len(src)-LogOverhead))
			src[offMagic] = 2
			src = fixCRC(src)
			pb, _, err := ParseBatch(src, false)
			if err != nil {
				t.Fatal(err)
			}
			d := NewDecoder(Options{MaxDecompressedSize: b.limit})
			_, err = d.Records(&pb)
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrTooLarge) || e.BaseOffset != 9 || e.Field != "records" {
				t.Fatalf("batch error %v", err)
			}
		})
	}
}

// kafka-clients still writes magic 0 LZ4 frames with the old checksum, and
// magic 1 and 2 frames with the standard one.
func TestJavaLZ4HeaderChecksums(t *testing.T) {
	for _, tc := range []struct {
		vector string
		legacy bool
	}{{"v0-lz4", true}, {"v1-lz4", false}, {"v2-lz4", false}} {
		src := vectorBytesNamed(t, tc.vector)
		var frame []byte
		if tc.vector == "v2-lz4" {
			b, _, err := ParseBatch(src, false)
			if err != nil {
				t.Fatal(err)
			}
			frame = b.Records
		} else {
			m, _, err := ParseLegacyMessage(src, false)
			if err != nil {
				t.Fatal(err)
			}
			frame = m.Value
		}
		broken := byte(xxh32(frame[:6]) >> 8)
		standard := byte(xxh32(frame[4:6]) >> 8)
		if broken == standard {
			t.Fatalf("%s: both checksums are %#x; the test cannot tell them apart", tc.vector, broken)
		}
		want := standard
		if tc.legacy {
			want = broken
		}
		if frame[6] != want {
			t.Fatalf("%s: header checksum %#x, want %#x (legacy=%v)", tc.vector, frame[6], want, tc.legacy)
		}
	}
}
