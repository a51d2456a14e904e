package records

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
)

var allCodecs = []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd}

func TestBatchRoundTrip(t *testing.T) {
	for _, c := range allCodecs {
		t.Run(c.String(), func(t *testing.T) {
			src := seedBatch(t, c)
			b, n, err := ParseBatch(src, false)
			if err != nil {
				t.Fatal(err)
			}
			if n != len(src) {
				t.Fatalf("size %d, want %d", n, len(src))
			}
			if b.Compression() != c || b.BaseOffset != 42 || b.PartitionLeaderEpoch != 3 || b.ProducerID != 7 ||
				b.ProducerEpoch != 1 || b.BaseSequence != 5 || b.NumRecords != 4 || b.LastOffsetDelta != 3 ||
				b.BaseTimestamp != 1000 || b.MaxTimestamp != 1005 {
				t.Fatalf("header %+v", b)
			}
			var d Decoder
			recs, err := d.AppendRecords(nil, &b)
			if err != nil {
				t.Fatal(err)
			}
			want := seedRecords()
			b2 := Batch{}
			b2.SetDeltas(want)
			if msg := diffRecords(want, recs); msg != "" {
				t.Fatal(msg)
			}
			for i, r := range recs {
				if r.Offset != 42+int64(i) || r.Timestamp != want[i].Timestamp {
					t.Fatalf("record %d: offset %d timestamp %d", i, r.Offset, r.Timestamp)
				}
			}
			// null and empty stay distinct
			if recs[1].Key != nil || recs[1].Value == nil || recs[2].Key == nil || recs[2].Value != nil {
				t.Fatalf("null/empty not kept: %#v %#v", recs[1], recs[2])
			}
			if recs[0].Headers[1].Value != nil || recs[0].Headers[0].Value == nil {
				t.Fatal("header null value not kept")
			}
		})
	}
}

func TestUncompressedReencodeIsExact(t *testing.T) {
	src := seedBatch(t, CompressionNone)
	b, _, _ := ParseBatch(src, false)
	var d Decoder
	recs, err := d.AppendRecords(nil, &b)
	if err != nil {
		t.Fatal(err)
	}
	var e Encoder
	out, err := testAppendBatch(t, &e, nil, &b, recs)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, src) {
		t.Fatalf("re-encoded batch differs")
	}
}

func TestAttributes(t *testing.T) {
	b := Batch{Attributes: int16(CompressionZstd) | AttrLogAppendTime | AttrTransactional | AttrControl | AttrHasDeleteHorizon, BaseTimestamp: 77}
	if b.Compression() != CompressionZstd || b.TimestampType() != LogAppendTime || !b.IsTransactional() || !b.IsControl() || b.DeleteHorizonMs() != 77 {
		t.Fatalf("attributes misread: %+v", b)
	}
	b.Attributes = 0
	if b.Compression() != CompressionNone || b.TimestampType() != CreateTime || b.IsTransactional() || b.IsControl() || b.DeleteHorizonMs() != -1 {
		t.Fatalf("zero attributes misread")
	}
}

func TestLogAppendTimeTimestamps(t *testing.T) {
	recs := seedRecords()
	b := Batch{Attributes: AttrLogAppendTime}
	b.SetDeltas(recs)
	b.MaxTimestamp = 123456
	var e Encoder
	src, err := testAppendBatch(t, &e, nil, &b, recs)
	if err != nil {
		t.Fatal(err)
	}
	pb, _, err := ParseBatch(src, false)
	if err != nil {
		t.Fatal(err)
	}
	var d Decoder
	got, err := d.AppendRecords(nil, &pb)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.Timestamp != 123456 {
			t.Fatalf("timestamp %d, want the batch's max timestamp", r.Timestamp)
		}
	}
}

func TestCRC(t *testing.T) {
	src := seedBatch(t, CompressionNone)
	src[len(src)-1] ^= 1
	_, _, err := ParseBatch(src, false)
	if !errors.Is(err, ErrCRC) {
		t.Fatalf("want ErrCRC, got %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.BaseOffset != 42 || e.Field != "crc" || e.Offset != offCRC {
		t.Fatalf("error context: %#v", e)
	}
	if _, _, err := ParseBatch(src, true); err != nil {
		t.Fatalf("SkipCRC: %v", err)
	}
	// legacy
	var enc Encoder
	l, err := testAppendLegacySet(t, &enc, nil, LegacySet{Magic: 1, BaseOffset: 3}, []LegacyMessage{{Timestamp: 1, Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	l[len(l)-1] ^= 1
	if _, _, err := ParseLegacyMessage(l, false); !errors.Is(err, ErrCRC) {
		t.Fatalf("legacy: want ErrCRC, got %v", err)
	}
	if _, _, err := ParseLegacyMessage(l, true); err != nil {
		t.Fatalf("legacy SkipCRC: %v", err)
	}
}

func TestMalformedRecordNamesField(t *testing.T) {
	recs := []Record{{Key: []byte("k"), Value: []byte("v")}, {Key: []byte("key2"), Value: []byte("value2"), Headers: []Header{{Key: []byte("hk"), Value: []byte("hv")}}}}
	b := Batch{BaseOffset: 500}
	b.SetDeltas(recs)
	var e Encoder
	src, _ := testAppendBatch(t, &e, nil, &b, recs)
	// Record 1 starts after record 0 (length byte + 7 body bytes + key/value).
	r0 := 1 + int(src[BatchHeaderSize]>>1)
	// Corrupt record 1's header key length into a negative (null) length.
	at := BatchHeaderSize + r0
	hk := bytes.Index(src[at:], []byte("hk"))
	src[at+hk-1] = 1 // zigzag -1
	src = fixCRC(src)
	pb, _, err := ParseBatch(src, false)
	if err != nil {
		t.Fatal(err)
	}
	var d Decoder
	_, err = d.AppendRecords(nil, &pb)
	var re *Error
	if !errors.As(err, &re) {
		t.Fatalf("want *Error, got %v", err)
	}
	if re.BaseOffset != 500 || re.Record != 1 || re.Field != "headers[0].key" || re.Offset != at+hk-1 || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("error context %+v (%v), want record 1 headers[0].key at %d", re, re, at+hk-1)
	}
	if s := re.Error(); !bytes.Contains([]byte(s), []byte("batch at offset 500, record 1, field headers[0].key")) {
		t.Fatalf("message %q", s)
	}
}

func fixCRC(src []byte) []byte {
	be.PutUint32(src[offCRC:], CRC32C(src[offAttributes:]))
	return src
}

func TestRecordCountCheckedBeforeAllocating(t *testing.T) {
	src := seedBatch(t, CompressionNone)
	be.PutUint32(src[offNumRecords:], 1<<30)
	src = fixCRC(src)
	_, _, err := ParseBatch(src, false)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("want ErrCorrupt, got %v", err)
	}
	// Compressed: the count is checked against the decompressed bytes.
	src = seedBatch(t, CompressionZstd)
	be.PutUint32(src[offNumRecords:], 1<<30)
	src = fixCRC(src)
	b, _, err := ParseBatch(src, false)
	if err != nil {
		t.Fatal(err)
	}
	var d Decoder
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := d.AppendRecords(nil, &b); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("want ErrCorrupt, got %v", err)
		}
	})
	if allocs > 10 {
		t.Fatalf("%v allocations", allocs)
	}
}

func TestTrailingBytesAfterRecords(t *testing.T) {
	src := seedBatch(t, CompressionNone)
	be.PutUint32(src[offNumRecords:], 3)
	src = fixCRC(src)
	b, _, err := ParseBatch(src, false)
	if err != nil {
		t.Fatal(err)
	}
	var d Decoder
	if _, err := d.AppendRecords(nil, &b); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("want ErrCorrupt for bytes after the last record, got %v", err)
	}
}

func TestTruncatedTrailingBatchSkipped(t *testing.T) {
	a := seedBatch(t, CompressionNone)
	bb := seedBatch(t, CompressionLZ4)
	for cut := 1; cut < len(bb); cut += 7 {
		src := append(append([]byte{}, a...), bb[:cut]...)
		var d Decoder
		n := 0
		skipped, err := d.ForEachMessage(src, "t", 1, func(m *Message) error { n++; return nil })
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if n != 4 || skipped != cut {
			t.Fatalf("cut %d: %d messages, skipped %d", cut, n, skipped)
		}
	}
	// A length below any entry's minimum is corruption, not truncation.
	src := append(append([]byte{}, a...), make([]byte, 12)...)
	var d Decoder
	if _, err := d.ForEachMessage(src, "t", 1, func(m *Message) error { return nil }); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("want ErrCorrupt, got %v", err)
	} else if e := err.(*Error); e.Offset != len(a)+offLength {
		t.Fatalf("offset %d, want %d", e.Offset, len(a)+offLength)
	}
}

func TestUncompressedDecodeIsZeroCopyAndAllocationFree(t *testing.T) {
	recs := make([]Record, 1000)
	for i := range recs {
		recs[i] = Record{Timestamp: int64(i), Key: []byte(fmt.Sprint("key", i)), Value: bytes.Repeat([]byte{byte(i)}, 1024),
			Headers: []Header{{Key: []byte("a"), Value: []byte("b")}, {Key: []byte("c"), Value: nil}}}
	}
	b := Batch{}
	b.SetDeltas(recs)
	var e Encoder
	src, err := testAppendBatch(t, &e, nil, &b, recs)
	if err != nil {
		t.Fatal(err)
	}
	var d Decoder
	var r Record
	count := 0
	allocs := testing.AllocsPerRun(20, func() {
		pb, _, err := ParseBatch(src, false)
		if err != nil {
			t.Fatal(err)
		}
		it, err := d.Records(&pb)
		if err != nil {
			t.Fatal(err)
		}
		count = 0
		for it.Next(&r) {
			count++
		}
		if it.Err() != nil {
			t.Fatal(it.Err())
		}
	})
	if count != 1000 {
		t.Fatalf("%d records", count)
	}
	if allocs != 0 {
		t.Fatalf("%v allocations per batch, want 0", allocs)
	}
	// The value aliases the input.
	pb, _, _ := ParseBatch(src, false)
	it, _ := d.Records(&pb)
	it.Next(&r)
	if &r.Value[0] != &src[bytes.Index(src, recs[0].Value)] {
		t.Fatal("value does not alias the input")
	}
	// ForEachMessage is allocation-free too.
	fn := func(m *Message) error { count++; return nil }
	allocs = testing.AllocsPerRun(20, func() {
		count = 0
		if _, err := d.ForEachMessage(src, "topic", 0, fn); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 || count != 1000 {
		t.Fatalf("ForEachMessage: %v allocations, %d messages", allocs, count)
	}
}

func TestCompressedSteadyStateAllocations(t *testing.T) {
	recs := make([]Record, 200)
	for i := range recs {
		recs[i] = Record{Timestamp: int64(i), Value: bytes.Repeat([]byte{byte(i)}, 512)}
	}
	for _, c := range allCodecs[1:] {
		b := Batch{Attributes: int16(c)}
		b.SetDeltas(recs)
		var e Encoder
		src, err := testAppendBatch(t, &e, nil, &b, recs)
		if err != nil {
			t.Fatal(err)
		}
		var d Decoder
		var r Record
		run := func() {
			pb, _, err := ParseBatch(src, false)
			if err != nil {
				t.Fatal(err)
			}
			it, err := d.Records(&pb)
			if err != nil {
				t.Fatal(err)
			}
			for it.Next(&r) {
			}
			if it.Err() != nil {
				t.Fatal(it.Err())
			}
		}
		run()
		allocs := testing.AllocsPerRun(20, run)
		// Pools may hand back a fresh codec after a GC; a handful at most.
		// gzip is the standard library's inflater, which allocates the small
		// link tables of each dynamic Huffman block's long codes (at most 256
		// bytes each) anew: for it the bytes per batch are bounded instead.
		if c == CompressionGzip {
			perBatch := allocDuring(func() {
				for range 20 {
					run()
				}
			}) / 20
			if allocs > 64 || perBatch > 16<<10 {
				t.Errorf("%v: %v allocations, %d bytes per batch in steady state", c, allocs, perBatch)
			}
		} else if allocs > 4 {
			t.Errorf("%v: %v allocations per batch in steady state", c, allocs)
		}
		if !haveCompressors {
			// Encoding is tested where there are compressors.
			t.Logf("%v: %v allocations per decoded batch", c, allocs)
			continue
		}
		dst := make([]byte, 0, 2*len(src))
		encAllocs := testing.AllocsPerRun(20, func() {
			b2 := b
			var err error
			if dst, err = e.AppendBatch(dst[:0], &b2, recs); err != nil {
				t.Fatal(err)
			}
		})
		if encAllocs > 4 {
			t.Errorf("%v: %v allocations per encoded batch in steady state", c, encAllocs)
		}
		t.Logf("%v: %v allocations per decoded batch, %v per encoded batch", c, allocs, encAllocs)
	}
}

// TestNoGoroutinesOnCodecPaths: decoding starts no goroutine and leaves none behind. It
// looks at what every goroutine runs rather than counting them, so goroutines that other
// tests start or end meanwhile do not matter.
func TestNoGoroutinesOnCodecPaths(t *testing.T) {
	for _, c := range allCodecs {
		src := seedBatch(t, c)
		b, _, err := ParseBatch(src, false)
		if err != nil {
			t.Fatal(err)
		}
		var d Decoder
		if _, err := d.AppendRecords(nil, &b); err != nil {
			t.Fatal(err)
		}
	}
	// A streamed zstd frame (no content size, as zstd-jni writes) takes the
	// streaming path of the decoder.
	v := vectorBytesNamed(t, "v2-zstd")
	b, _, err := ParseBatch(v, false)
	if err != nil {
		t.Fatal(err)
	}
	var d Decoder
	if _, err := d.AppendRecords(nil, &b); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	// The first block is this goroutine; any other that runs compression or records
	// code was started by a codec path.
	blocks := strings.Split(string(buf), "\n\n")
	for _, g := range blocks[1:] {
		for _, pkg := range []string{"github.com/klauspost/compress", "github.com/pierrec/lz4", "github.com/kwire/kwire/codec/records."} {
			if strings.Contains(g, pkg) {
				t.Fatalf("a goroutine runs %s:\n%s", pkg, g)
			}
		}
	}
}

func TestDecoderBufferReuse(t *testing.T) {
	// Records of a compressed batch alias the decoder's buffer, which the next
	// compressed batch reuses.
	var d Decoder
	src := seedBatch(t, CompressionGzip)
	b, _, _ := ParseBatch(src, false)
	if _, err := d.AppendRecords(nil, &b); err != nil {
		t.Fatal(err)
	}
	c1 := cap(d.buf)
	if _, err := d.AppendRecords(nil, &b); err != nil {
		t.Fatal(err)
	}
	if cap(d.buf) != c1 || c1 == 0 {
		t.Fatalf("buffer not reused: %d then %d", c1, cap(d.buf))
	}
}

// vectorBytesNamed returns the bytes of a Java-built vector.
func vectorBytesNamed(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("../../conformance/vectors/records/kafka-clients-4.4.0.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var v struct {
			Name  string `json:"name"`
			Bytes []byte `json:"bytes"`
		}
		if len(line) == 0 {
			continue
		}
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatal(err)
		}
		if v.Name == name {
			return v.Bytes
		}
	}
	t.Fatalf("no vector %s", name)
	return nil
}

func TestCompressedRecordErrorContext(t *testing.T) {
	var raw []byte
	raw, _ = AppendRecord(raw, &Record{Key: []byte("a"), Value: []byte("b")})
	second := len(raw)
	raw, _ = AppendRecord(raw, &Record{OffsetDelta: 1, Key: []byte("c"), Value: []byte("d")})
	raw[second+5] = 0x7f // record 1's key length (after length, attributes, two deltas): 0x7f = -64, then value runs wrong
	raw[second+4] = 0x08 // key length 4: longer than the record
	comp := refCompress(t, CompressionGzip, raw, 0, 2)
	b := Batch{BaseOffset: 77, Attributes: int16(CompressionGzip), NumRecords: 2, LastOffsetDelta: 1}
	src := b.AppendHeader(nil)
	src = append(src, comp...)
	be.PutUint32(src[offLength:], uint32(len(src)-LogOverhead))
	src[offMagic] = 2
	src = fixCRC(src)
	pb, _, err := ParseBatch(src, false)
	if err != nil {
		t.Fatal(err)
	}
	var d Decoder
	_, err = d.AppendRecords(nil, &pb)
	var e *Error
	if !errors.As(err, &e) || e.BaseOffset != 77 || e.Record != 1 || !e.Decompressed || e.Field == "" {
		t.Fatalf("error %#v (%v)", e, err)
	}
	t.Log(err)
}

func TestBadControlRecordKey(t *testing.T) {
	recs := []Record{{Key: []byte{0, 0}, Value: AppendEndTxnMarker(nil, 1)}}
	b := Batch{BaseOffset: 5, Attributes: AttrControl | AttrTransactional}
	b.SetDeltas(recs)
	var e Encoder
	src, _ := testAppendBatch(t, &e, nil, &b, recs)
	src = append(seedBatch(t, CompressionNone), src...)
	var d Decoder
	_, err := d.ForEachMessage(src, "t", 0, func(*Message) error { return nil })
	var re *Error
	if !errors.As(err, &re) || re.BaseOffset != 5 || re.Record != 0 || re.Field != "key" || re.Offset != len(src)-int(b.Length)-LogOverhead+BatchHeaderSize {
		t.Fatalf("error %+v (%v)", re, err)
	}
}
