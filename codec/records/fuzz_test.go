package records

import (
	"bytes"
	"errors"
	"testing"
)

// fuzzLimit keeps each fuzz iteration small; bombs must fail with ErrTooLarge.
const fuzzLimit = 1 << 20

// seedRecords are a few records with every shape of key, value and header.
func seedRecords() []Record {
	return []Record{
		{Timestamp: 1000, Key: []byte("k1"), Value: []byte("value one"), Headers: []Header{{Key: []byte("h"), Value: []byte("1")}, {Key: []byte("h"), Value: nil}}},
		{Timestamp: 1001, Key: nil, Value: []byte{}},
		{Timestamp: 999, Key: []byte{}, Value: nil, Headers: []Header{{Key: []byte{}, Value: []byte{}}}},
		{Timestamp: 1005, Key: bytes.Repeat([]byte("ab"), 100), Value: bytes.Repeat([]byte("xyz"), 300)},
	}
}

func seedBatch(t testing.TB, c Compression) []byte {
	recs := seedRecords()
	b := Batch{BaseOffset: 42, PartitionLeaderEpoch: 3, Attributes: int16(c), ProducerID: 7, ProducerEpoch: 1, BaseSequence: 5}
	b.SetDeltas(recs)
	var e Encoder
	out, err := testAppendBatch(t, &e, nil, &b, recs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkDecodeRoundTrip decodes src as a batch; when that succeeds, re-encoding
// the records under the same header must decode to the same records.
func checkDecodeRoundTrip(t *testing.T, src []byte, skipCRC bool) {
	d := NewDecoder(Options{MaxDecompressedSize: fuzzLimit, SkipCRC: skipCRC})
	b, _, err := ParseBatch(src, skipCRC)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("error is not *Error: %T %v", err, err)
		}
		return
	}
	recs, err := d.AppendRecords(nil, &b)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("error is not *Error: %T %v", err, err)
		}
		return
	}
	if len(recs) != int(b.NumRecords) {
		t.Fatalf("%d records, header says %d", len(recs), b.NumRecords)
	}
	// Copy out of the decoder's buffer before re-encoding and decoding again.
	recs = cloneRecords(recs)
	b2 := b
	var enc Encoder
	out, err := testAppendBatch(t, &enc, nil, &b2, recs)
	if err != nil {
		t.Fatalf("re-encode: %v", err)
	}
	b3, n, err := ParseBatch(out, false)
	if err != nil || n != len(out) {
		t.Fatalf("re-parse: %v (n=%d len=%d)", err, n, len(out))
	}
	d2 := NewDecoder(Options{MaxDecompressedSize: 4 * fuzzLimit})
	recs2, err := d2.AppendRecords(nil, &b3)
	if err != nil {
		t.Fatalf("re-decode: %v", err)
	}
	if msg := diffRecords(recs, recs2); msg != "" {
		t.Fatalf("round trip: %s", msg)
	}
}

func fuzzCodec(f *testing.F, c Compression) {
	for _, s := range [][]byte{seedBatch(f, c), seedBatch(f, CompressionNone)} {
		b, _, err := ParseBatch(s, false)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b.Records, uint16(b.NumRecords))
	}
	f.Fuzz(func(t *testing.T, payload []byte, n uint16) {
		if c == CompressionLZ4 {
			fixLZ4HeaderChecksum(payload)
		}
		b := Batch{BaseOffset: 1, Attributes: int16(c), NumRecords: int32(n), BaseTimestamp: 10, MaxTimestamp: 10, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
		src := b.AppendHeader(nil)
		src = append(src, payload...)
		be.PutUint32(src[offLength:], uint32(len(src)-LogOverhead))
		src[offMagic] = 2
		be.PutUint32(src[offCRC:], CRC32C(src[offAttributes:]))
		checkDecodeRoundTrip(t, src, false)
	})
}

func FuzzBatchNone(f *testing.F) {
	f.Add(seedBatch(f, CompressionNone))
	f.Add(append(seedBatch(f, CompressionNone), seedBatch(f, CompressionNone)[:30]...))
	f.Fuzz(func(t *testing.T, src []byte) {
		checkDecodeRoundTrip(t, src, true)
		checkDecodeRoundTrip(t, src, false)
		d := NewDecoder(Options{MaxDecompressedSize: fuzzLimit, SkipCRC: true})
		_, err := d.ForEachMessage(src, "t", 0, func(m *Message) error { return nil })
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("error is not *Error: %T %v", err, err)
		}
	})
}

func FuzzBatchGzip(f *testing.F)   { fuzzCodec(f, CompressionGzip) }
func FuzzBatchSnappy(f *testing.F) { fuzzCodec(f, CompressionSnappy) }
func FuzzBatchLZ4(f *testing.F)    { fuzzCodec(f, CompressionLZ4) }
func FuzzBatchZstd(f *testing.F)   { fuzzCodec(f, CompressionZstd) }

// FuzzLegacy feeds message sets of magic 0 and 1 (plain and compressed
// wrappers) to the message walk.
func FuzzLegacy(f *testing.F) {
	var e Encoder
	for _, magic := range []int8{0, 1} {
		for _, c := range []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4} {
			src, err := testAppendLegacySet(f, &e, nil, LegacySet{Magic: magic, Compression: c, BaseOffset: 10}, []LegacyMessage{
				{Timestamp: 5, Key: []byte("a"), Value: []byte("b")}, {Timestamp: 6, Value: bytes.Repeat([]byte("q"), 50)},
			})
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, skip := range []bool{true, false} {
			d := NewDecoder(Options{MaxDecompressedSize: fuzzLimit, SkipCRC: skip})
			_, err := d.ForEachMessage(src, "t", 0, func(m *Message) error { return nil })
			var e *Error
			if err != nil && !errors.As(err, &e) {
				t.Fatalf("error is not *Error: %T %v", err, err)
			}
		}
	})
}

// fixLZ4HeaderChecksum makes the frame descriptor checksum right, so that
// mutations reach the blocks instead of stopping at the checksum.
func fixLZ4HeaderChecksum(p []byte) {
	if len(p) < 7 || be.Uint32(p) != 0x04224D18 { // lz4Magic, little-endian on the wire
		return
	}
	descLen := 2
	if p[4]&0x08 != 0 {
		descLen += 8
	}
	if len(p) > 4+descLen {
		p[4+descLen] = byte(xxh32(p[4:4+descLen]) >> 8)
	}
}
