package records

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Reference compressors (the libraries kwire's decoders are checked against),
// and encoders that fall back on them in a build without compressors
// (kwire_nocompress), so that decoding is tested the same in both builds.

// refCompress compresses src with c the way Kafka carries it (gzip; snappy in
// xerial framing; an LZ4 frame, with Kafka's magic 0 header checksum when
// magic is 0; zstd), using the reference libraries only.
func refCompress(t testing.TB, c Compression, src []byte, level int, magic int8) []byte {
	t.Helper()
	switch c {
	case CompressionNone:
		return append([]byte{}, src...)
	case CompressionGzip:
		if level == 0 {
			level = gzip.DefaultCompression
		}
		var b bytes.Buffer
		w, err := gzip.NewWriterLevel(&b, level)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(src)
		w.Close()
		return b.Bytes()
	case CompressionSnappy:
		return refXerial(src)
	case CompressionLZ4:
		return refLZ4Frame(t, src, magic == 0)
	case CompressionZstd:
		if level == 0 {
			level = 3
		}
		e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)))
		if err != nil {
			t.Fatal(err)
		}
		return e.EncodeAll(src, nil)
	}
	t.Fatalf("refCompress: codec %v", c)
	return nil
}

// refXerial is src in xerial framing, its 32 KiB chunks compressed by the
// reference snappy encoder.
func refXerial(src []byte) []byte {
	dst := append([]byte{}, xerialMagic...)
	dst = append(dst, 0, 0, 0, 1, 0, 0, 0, 1)
	for len(src) > 0 {
		chunk := src[:min(len(src), xerialChunk)]
		src = src[len(chunk):]
		enc := snappy.Encode(nil, chunk)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(enc)))
		dst = append(dst, enc...)
	}
	return dst
}

// refLZ4Frame is src as one LZ4 frame of independent 64 KiB blocks compressed
// by the reference block compressor, with the magic 0 header checksum when
// legacy is set.
func refLZ4Frame(t testing.TB, src []byte, legacy bool) []byte {
	dst := binary.LittleEndian.AppendUint32(nil, lz4Magic)
	dst = append(dst, 0x60, 0x40)
	if legacy {
		dst = append(dst, byte(xxh32(dst[:6])>>8))
	} else {
		dst = append(dst, byte(xxh32(dst[4:6])>>8))
	}
	var c lz4.Compressor
	buf := make([]byte, lz4.CompressBlockBound(64<<10))
	for len(src) > 0 {
		block := src[:min(len(src), 64<<10)]
		src = src[len(block):]
		n, err := c.CompressBlock(block, buf)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 || n >= len(block) {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(block))|0x80000000)
			dst = append(dst, block...)
			continue
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
		dst = append(dst, buf[:n]...)
	}
	return binary.LittleEndian.AppendUint32(dst, 0)
}

// checkNoCompressors fails t unless err is the error of a build without
// compressors.
func checkNoCompressors(t testing.TB, err error) {
	t.Helper()
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "built with kwire_nocompress") {
		t.Fatalf("a kwire_nocompress build encoded with compression, or failed otherwise: %v", err)
	}
}

// testAppendBatch is e.AppendBatch. In a build without compressors, where
// that must fail for a compressed batch (checked here), the batch is written
// uncompressed and its records compressed with the reference libraries.
func testAppendBatch(t testing.TB, e *Encoder, dst []byte, b *Batch, recs []Record) ([]byte, error) {
	t.Helper()
	c := b.Compression()
	if haveCompressors || c == CompressionNone || c > CompressionZstd {
		return e.AppendBatch(dst, b, recs)
	}
	if _, err := e.AppendBatch(nil, b, recs); err == nil {
		t.Fatalf("a kwire_nocompress build encoded a %v batch", c)
	} else {
		checkNoCompressors(t, err)
	}
	plain := *b
	plain.Attributes &^= 7
	raw, err := e.AppendBatch(nil, &plain, recs)
	if err != nil {
		return dst, err
	}
	out := append([]byte{}, raw[:BatchHeaderSize]...)
	be.PutUint16(out[offAttributes:], uint16(b.Attributes))
	out = append(out, refCompress(t, c, raw[BatchHeaderSize:], e.Level, 2)...)
	be.PutUint32(out[offLength:], uint32(len(out)-LogOverhead))
	be.PutUint32(out[offCRC:], CRC32C(out[offAttributes:]))
	pb, _, err := ParseBatch(out, false)
	if err != nil {
		t.Fatalf("reference batch: %v", err)
	}
	*b = pb
	start := len(dst)
	dst = append(dst, out...)
	b.Records = dst[start+BatchHeaderSize : len(dst) : len(dst)]
	return dst, nil
}

// testAppendLegacySet is e.AppendLegacySet, falling back on the reference
// compressors as testAppendBatch does.
func testAppendLegacySet(t testing.TB, e *Encoder, dst []byte, s LegacySet, msgs []LegacyMessage) ([]byte, error) {
	t.Helper()
	if haveCompressors || s.Compression == CompressionNone || s.Compression > CompressionLZ4 || len(msgs) == 0 {
		return e.AppendLegacySet(dst, s, msgs)
	}
	if _, err := e.AppendLegacySet(nil, s, msgs); err == nil {
		t.Fatalf("a kwire_nocompress build encoded a %v message set", s.Compression)
	} else if !errors.Is(err, ErrUnsupported) {
		return dst, err // refused for another reason (magic, codec): as the real encoder would
	} else {
		checkNoCompressors(t, err)
	}
	var attr int8
	if s.Magic == 1 && s.TimestampType == LogAppendTime {
		attr = legacyAttrLogAppendTime
	}
	var inner []byte
	maxTS := int64(-1)
	for i := range msgs {
		m := LegacyMessage{Offset: s.BaseOffset + int64(i), Magic: s.Magic, Attributes: attr, Timestamp: -1, Key: msgs[i].Key, Value: msgs[i].Value}
		if s.Magic == 1 {
			m.Offset = int64(i)
			m.Timestamp = msgs[i].Timestamp
			if s.TimestampType == LogAppendTime {
				m.Timestamp = s.LogAppendTime
			}
		}
		maxTS = max(maxTS, m.Timestamp)
		var err error
		if inner, err = AppendLegacyMessage(inner, &m); err != nil {
			return dst, err
		}
	}
	w := LegacyMessage{Offset: s.BaseOffset + int64(len(msgs)) - 1, Magic: s.Magic, Attributes: attr | int8(s.Compression), Timestamp: -1}
	if s.Magic == 1 {
		w.Timestamp = maxTS
		if s.TimestampType == LogAppendTime {
			w.Timestamp = s.LogAppendTime
		}
	}
	w.Value = refCompress(t, s.Compression, inner, e.Level, s.Magic)
	return AppendLegacyMessage(dst, &w)
}
