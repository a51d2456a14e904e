package zstd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand"
	"runtime"
	"strings"
	"testing"

	kzstd "github.com/klauspost/compress/zstd"
)

// ---- hand-built frames ----

// frameHeader is a frame's magic number and header: fhd is the descriptor
// byte, wd the window descriptor (used when the single-segment bit is clear),
// fcs the content size field's value (its width comes from fhd).
func frameHeader(fhd, wd byte, did uint32, fcs uint64) []byte {
	b := binary.LittleEndian.AppendUint32(nil, frameMagic)
	b = append(b, fhd)
	if fhd&0x20 == 0 {
		b = append(b, wd)
	}
	switch fhd & 3 {
	case 1:
		b = append(b, byte(did))
	case 2:
		b = binary.LittleEndian.AppendUint16(b, uint16(did))
	case 3:
		b = binary.LittleEndian.AppendUint32(b, did)
	}
	switch fhd >> 6 {
	case 0:
		if fhd&0x20 != 0 {
			b = append(b, byte(fcs))
		}
	case 1:
		b = binary.LittleEndian.AppendUint16(b, uint16(fcs-256))
	case 2:
		b = binary.LittleEndian.AppendUint32(b, uint32(fcs))
	case 3:
		b = binary.LittleEndian.AppendUint64(b, fcs)
	}
	return b
}

// block appends a block header (type 0 raw, 1 RLE, 2 compressed) and content;
// a negative size stands for len(content).
func block(b []byte, last bool, typ int, size int, content []byte) []byte {
	if size < 0 {
		size = len(content)
	}
	h := uint32(size)<<3 | uint32(typ)<<1
	if last {
		h |= 1
	}
	b = append(b, byte(h), byte(h>>8), byte(h>>16))
	return append(b, content...)
}

// rleSeqBlock is the content of a compressed block without literals whose
// nseq sequences all use RLE tables with the given codes; bitstream carries
// their extra bits.
func rleSeqBlock(nseq int, llCode, ofCode, mlCode byte, bitstream []byte) []byte {
	b := []byte{0} // raw literals, size 0
	switch {
	case nseq < 128:
		b = append(b, byte(nseq))
	case nseq < 0x7F00:
		b = append(b, byte(nseq>>8)+128, byte(nseq))
	default:
		b = append(b, 255, byte(nseq-0x7F00), byte((nseq-0x7F00)>>8))
	}
	b = append(b, 0x54, llCode, ofCode, mlCode)
	return append(b, bitstream...)
}

func kdecode(t testing.TB, src []byte) ([]byte, error) {
	t.Helper()
	dec, err := kzstd.NewReader(nil, kzstd.WithDecoderConcurrency(1), kzstd.WithDecoderMaxMemory(1<<30))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	return dec.DecodeAll(src, nil)
}

// TestHandBuilt decodes frames built byte by byte for cases the encoders
// rarely produce, comparing with klauspost/compress's decoder where it
// accepts them.
func TestHandBuilt(t *testing.T) {
	raw8 := []byte("abcdefgh")
	cases := []struct {
		name  string
		frame []byte
		want  string // substring of the error; "" for success
	}{
		{"RLE literals, no sequences", block(frameHeader(0x20, 0, 0, 20), true, 2, 3, []byte{20<<3 | 1, 'z', 0}), ""},
		{"RLE literals, 2-byte header", block(frameHeader(0x20, 0, 0, 200), true, 2, 4, []byte{200<<4&0xF0 | 1<<2 | 1, 200 >> 4, 'q', 0}), ""},
		{"raw literals, 3-byte header", block(frameHeader(0x00, 0x40, 0, 0), true, 2, 4+5000, append([]byte{5000<<4&0xF0 | 3<<2, byte(5000 >> 4 & 0xFF), byte(5000 >> 12)}, append(bytes.Repeat([]byte{7}, 5000), 0)...)), ""},
		{"32512 sequences (3-byte count)", block(block(frameHeader(0x00, 0x40, 0, 0), false, 0, 8, raw8), true, 2, -1, rleSeqBlock(0x7F00, 0, 0, 0, []byte{1})), ""},
		{"300 sequences (2-byte count)", block(block(frameHeader(0x00, 0x40, 0, 0), false, 0, 8, raw8), true, 2, -1, rleSeqBlock(300, 0, 0, 0, []byte{1})), ""},
		{"repeat offset rep0-1", block(block(frameHeader(0x00, 0x40, 0, 0), false, 0, 8, raw8), true, 2, -1, rleSeqBlock(2, 0, 1, 0, []byte{0b101})), ""},
		{"match before frame start", block(frameHeader(0x00, 0x40, 0, 0), true, 2, -1, rleSeqBlock(1, 0, 0, 0, []byte{1})), "out of range"},
		{"match before this frame, after an earlier one", append(block(frameHeader(0x20, 0, 0, 8), true, 0, 8, raw8), block(frameHeader(0x00, 0x40, 0, 0), true, 2, -1, rleSeqBlock(1, 0, 0, 0, []byte{1}))...), "out of range"},
		{"offset beyond a 1 KiB window", block(block(frameHeader(0x00, 0x00, 0, 0), false, 1, 4000, []byte{'r'}), true, 2, -1, rleSeqBlock(1, 0, 11, 0, []byte{0, 8})), "out of range"},
		{"same offset in an 8 KiB window", block(block(frameHeader(0x00, 0x18, 0, 0), false, 1, 4000, []byte{'r'}), true, 2, -1, rleSeqBlock(1, 0, 11, 0, []byte{0, 8})), ""},
		{"bitstream whose last byte is only the marker", block(block(frameHeader(0x00, 0x18, 0, 0), false, 1, 5000, []byte{'m'}), true, 2, -1, rleSeqBlock(64, 0, 11, 0, append(make([]byte, 88), 1))), ""},
		{"repeat mode without a table", block(block(frameHeader(0x00, 0x40, 0, 0), false, 0, 8, raw8), true, 2, 5, []byte{0, 1, 0xFC, 1, 1}), "repeat mode"},
		{"treeless literals first", block(frameHeader(0x00, 0x40, 0, 0), true, 2, 5, []byte{3, 0x10, 0, 0, 0}), "treeless"},
		{"reserved block type", block(frameHeader(0x00, 0x40, 0, 0), true, 3, 0, nil), "reserved block type"},
		{"reserved frame header bit", block(frameHeader(0x08, 0x40, 0, 0), true, 0, 0, nil), "reserved bit"},
		{"reserved sequence mode bits", block(block(frameHeader(0x00, 0x40, 0, 0), false, 0, 8, raw8), true, 2, 7, []byte{0, 1, 0x55, 0, 0, 0, 1}), "reserved bits"},
		{"dictionary id 1234", block(frameHeader(0x02, 0x40, 1234, 0), true, 0, 0, nil), "dictionary 1234 not supported"},
		{"dictionary id field zero", block(frameHeader(0x03, 0x40, 0, 0), true, 0, 1, []byte{'k'}), ""},
		{"block over 128 KiB", block(frameHeader(0x00, 0x40, 0, 0), true, 1, 128<<10+1, []byte{0}), "exceeds 128 KiB"},
		{"content size too small", block(frameHeader(0x20, 0, 0, 7), true, 0, 8, raw8), "content size"},
		{"content size too large", block(frameHeader(0x20, 0, 0, 9), true, 0, 8, raw8), "content size"},
		{"bad magic", []byte{1, 2, 3, 4, 5, 6, 7, 8}, "bad magic"},
		{"empty input", nil, "empty input"},
		{"only a skippable frame", []byte{0x5A, 0x2A, 0x4D, 0x18, 2, 0, 0, 0, 9, 9}, ""},
		{"skippable frame too short", []byte{0x5A, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 9, 9}, "skippable"},
		{"trailing garbage", append(block(frameHeader(0x20, 0, 0, 8), true, 0, 8, raw8), 0), "truncated frame magic"},
		{"two-byte content size field", block(frameHeader(0x40, 0x40, 0, 300), true, 1, 300, []byte{'c'}), ""},
		{"eight-byte content size field", block(frameHeader(0xC0, 0x40, 0, 300), true, 1, 300, []byte{'c'}), ""},
	}
	var d Decoder
	for _, c := range cases {
		// Bytes already in dst are no history for the frame's matches.
		if c.want != "" {
			if _, err := d.DecodeAll(bytes.Repeat([]byte("0123456789"), 500), c.frame, 1<<20); !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s after a 5000-byte dst: got %v, want ErrCorrupt", c.name, err)
			}
		}
		got, err := d.DecodeAll(nil, c.frame, 1<<20)
		if c.want != "" {
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: got error %v, want ErrCorrupt with %q", c.name, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		want, kerr := kdecode(t, c.frame)
		if kerr != nil {
			t.Logf("%s: klauspost/compress rejects it (%v); ours gave %d bytes", c.name, kerr, len(got))
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: output differs from klauspost/compress's (%d vs %d bytes)", c.name, len(got), len(want))
		}
	}
}

// goodFrames are a few encoder-made frames for the error tests.
func goodFrames(t testing.TB) []input {
	data := records(21, 20, 300)
	var out []input
	for _, e := range []encoding{
		{"default", false, []kzstd.EOption{kzstd.WithEncoderLevel(kzstd.SpeedDefault)}},
		{"fastest/stream", true, []kzstd.EOption{kzstd.WithEncoderLevel(kzstd.SpeedFastest)}},
		{"best/nocrc", false, []kzstd.EOption{kzstd.WithEncoderLevel(kzstd.SpeedBestCompression), kzstd.WithEncoderCRC(false)}},
	} {
		out = append(out, input{e.name, encode(t, e, data)})
	}
	out = append(out, input{"text/better", encode(t, encoding{"better", false, []kzstd.EOption{kzstd.WithEncoderLevel(kzstd.SpeedBetterCompression)}}, text(22, 3000))})
	return out
}

// TestTruncated cuts frames at every byte: each prefix is ErrCorrupt.
func TestTruncated(t *testing.T) {
	var d Decoder
	for _, f := range goodFrames(t) {
		for n := 0; n < len(f.data); n++ {
			_, err := d.DecodeAll(nil, f.data[:n], 1<<20)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s cut to %d of %d bytes: got %v, want ErrCorrupt", f.name, n, len(f.data), err)
			}
		}
	}
}

// TestByteFlips changes bytes of frames: the decoder fails with one of its
// errors or (for a harmless change) still produces the original content.
func TestByteFlips(t *testing.T) {
	var d Decoder
	r := rand.New(rand.NewSource(23))
	for _, f := range goodFrames(t) {
		want, err := d.DecodeAll(nil, f.data, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		crc := f.data[4]&4 != 0
		for i := range f.data {
			for _, x := range []byte{1, 0x80, byte(1 + r.Intn(255))} {
				m := bytes.Clone(f.data)
				m[i] ^= x
				got, err := d.DecodeAll(nil, m, 1<<20)
				if kgot, kerr := kdecode(t, m); kerr == nil && err == nil && !bytes.Equal(got, kgot) {
					t.Fatalf("%s byte %d ^ %#x: both decoders accept the frame but disagree", f.name, i, x)
				}
				if err != nil {
					if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTooLarge) {
						t.Fatalf("%s byte %d ^ %#x: error %v wraps neither ErrCorrupt nor ErrTooLarge", f.name, i, x, err)
					}
					continue
				}
				if crc && !bytes.Equal(got, want) {
					t.Fatalf("%s byte %d ^ %#x: checksummed frame decoded to different content without an error", f.name, i, x)
				}
			}
		}
	}
}

func TestChecksumMismatch(t *testing.T) {
	f := goodFrames(t)[0].data
	m := bytes.Clone(f)
	m[len(m)-1] ^= 1
	var d Decoder
	if _, err := d.DecodeAll(nil, m, 1<<20); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("got %v, want a checksum ErrCorrupt", err)
	}
}

func TestDictionaryFromEncoder(t *testing.T) {
	enc, err := kzstd.NewWriter(nil, kzstd.WithEncoderDictRaw(77, bytes.Repeat([]byte("dictionary content "), 10)), kzstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	comp := enc.EncodeAll([]byte("some dictionary content here"), nil)
	enc.Close()
	var d Decoder
	if _, err := d.DecodeAll(nil, comp, 1<<20); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "dictionary 77 not supported") {
		t.Fatalf("got %v, want ErrCorrupt naming dictionary 77", err)
	}
}

// TestLimit: output of exactly limit bytes decodes; one byte less fails with
// ErrTooLarge, with and without a content size in the header, and across
// frames.
func TestLimit(t *testing.T) {
	data := text(31, 200000)
	withSize := encode(t, encoding{"default", false, nil}, data)
	noSize := encode(t, encoding{"stream", true, nil}, data)
	cases := []struct {
		name string
		src  []byte
		n    int
	}{
		{"content size", withSize, len(data)},
		{"no content size", noSize, len(data)},
		{"two frames", append(bytes.Clone(withSize), noSize...), 2 * len(data)},
		{"RLE block", block(frameHeader(0x00, 0x40, 0, 0), true, 1, 1000, []byte{1}), 1000},
	}
	var d Decoder
	for _, c := range cases {
		for _, prefix := range [][]byte{nil, []byte("kept")} {
			got, err := d.DecodeAll(bytes.Clone(prefix), c.src, c.n)
			if err != nil || len(got) != len(prefix)+c.n {
				t.Errorf("%s at its limit: %d bytes, %v", c.name, len(got), err)
			}
			// dst's capacity past len(dst)+limit is left alone.
			buf := append(bytes.Clone(prefix), bytes.Repeat([]byte{0xA5}, c.n+64)...)
			if _, err := d.DecodeAll(buf[:len(prefix)], c.src, c.n); err != nil {
				t.Errorf("%s into a buffer with room: %v", c.name, err)
			}
			if !bytes.Equal(buf[len(prefix)+c.n:], bytes.Repeat([]byte{0xA5}, 64)) {
				t.Errorf("%s: bytes past the limit in dst's capacity were written", c.name)
			}
			got, err = d.DecodeAll(bytes.Clone(prefix), c.src, c.n-1)
			if !errors.Is(err, ErrTooLarge) {
				t.Errorf("%s at limit-1: got %v, want ErrTooLarge", c.name, err)
			}
			if !bytes.Equal(got, prefix) {
				t.Errorf("%s at limit-1: returned %q, want the dst passed in", c.name, got)
			}
		}
	}
}

// TestHugeContentSize: a header claiming more than the limit fails at once,
// and one claiming less than the limit but far more than the input could
// hold does not get its size allocated up front.
func TestHugeContentSize(t *testing.T) {
	var d Decoder
	huge := block(frameHeader(0xC0, 0x40, 0, 1<<40), true, 0, 1, []byte{1})
	bytesAllocated := func(f func()) uint64 {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		f()
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	var err error
	n := bytesAllocated(func() { _, err = d.DecodeAll(nil, huge, 1<<30) })
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
	if n > 1<<20 {
		t.Fatalf("allocated %d bytes for a frame over the limit", n)
	}
	// 1 GiB claimed, limit 2 GiB, 13 bytes of input.
	big := block(frameHeader(0xC0, 0x40, 0, 1<<30), true, 0, 1, []byte{1})
	n = bytesAllocated(func() { _, err = d.DecodeAll(nil, big, 2<<30) })
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v, want ErrCorrupt (content size mismatch)", err)
	}
	if n > 1<<20 {
		t.Fatalf("allocated %d bytes for a 13-byte input", n)
	}
	// The largest limit there is: no overflow, still no allocation.
	n = bytesAllocated(func() { _, err = d.DecodeAll([]byte("x"), big, int(^uint(0)>>1)) })
	if !errors.Is(err, ErrCorrupt) || n > 1<<20 {
		t.Fatalf("largest limit: %v, %d bytes allocated", err, n)
	}
	if a := testing.AllocsPerRun(10, func() { d.DecodeAll(nil, huge, 1<<30) }); a > 2 {
		t.Fatalf("%v allocations per failing call", a)
	}
}

// TestNoAllocsSteadyState: a Decoder reused with a large enough dst does not
// allocate.
func TestNoAllocsSteadyState(t *testing.T) {
	data := records(41, 50, 1000)
	comp := encode(t, encoding{"default", false, nil}, data)
	var d Decoder
	buf := make([]byte, 0, len(data))
	if _, err := d.DecodeAll(buf, comp, len(data)); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(20, func() { d.DecodeAll(buf[:0], comp, len(data)) }); a != 0 {
		t.Fatalf("%v allocations per call", a)
	}
}

func TestXXH64(t *testing.T) {
	// Published XXH64 values for seed 0.
	cases := []struct {
		in   string
		want uint64
	}{
		{"", 0xEF46DB3751D8E999},
		{"a", 0xD24EC4F1A98C6E5B},
		{"abc", 0x44BC2CF5AD770999},
	}
	for _, c := range cases {
		if got := xxh64([]byte(c.in)); got != c.want {
			t.Errorf("xxh64(%q) = %#x, want %#x", c.in, got, c.want)
		}
	}
}

// TestManyFramesGrowth: many small frames with content sizes make dst grow by
// doubling, not by one reallocation (and copy of everything so far) per frame.
func TestManyFramesGrowth(t *testing.T) {
	one := block(frameHeader(0x20, 0, 0, 100), true, 0, 100, text(91, 100)) // content size 100
	src := bytes.Repeat(one, 2000)
	var d Decoder
	if got, err := d.DecodeAll(nil, src, 200000); err != nil || len(got) != 200000 {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
	a := testing.AllocsPerRun(5, func() { d.DecodeAll(nil, src, 200000) })
	if a > 30 {
		t.Fatalf("%v allocations for 2000 frames", a)
	}
}
