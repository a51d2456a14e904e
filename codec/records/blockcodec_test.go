package records

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/pierrec/lz4/v4"
)

// testInputs are the inputs the block codecs are checked on: empty and tiny,
// random (incompressible), repetitive, text-like, runs with short periods
// (overlapping copies), and sizes around the 64 KiB block boundaries.
func testInputs() map[string][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	in := map[string][]byte{
		"empty":       {},
		"one":         {'x'},
		"three":       []byte("abc"),
		"random-100":  random(100),
		"random-64K":  random(64 << 10),
		"random-200K": random(200<<10 + 17),
		"zeros-1M":    make([]byte, 1<<20),
		"text-300K":   bytes.Repeat([]byte("kafka record batch compression "), 10000),
		"value1K":     value1K(100_000),
		"64K-1":       value1K(64<<10 - 1),
		"64K+1":       value1K(64<<10 + 1),
	}
	// Runs of short periods: copies that overlap their own output.
	var runs []byte
	for p := 1; p <= 9; p++ {
		pat := random(p)
		for range 300 / p {
			runs = append(runs, pat...)
		}
		runs = append(runs, random(7)...)
	}
	in["short-periods"] = runs
	// Random words from a small vocabulary: many short matches at many offsets.
	words := strings.Fields("the quick brown fox jumps over a lazy dog while kafka brokers replicate partitions")
	var sb []byte
	for range 40000 {
		sb = append(sb, words[r.IntN(len(words))]...)
		sb = append(sb, ' ')
	}
	in["words"] = sb
	// A mix: repeats far apart (offsets near 64 KiB) and random filler.
	far := random(4000)
	mix := append(append(append([]byte{}, far...), random(58000)...), far...)
	in["far-repeat"] = append(mix, random(3000)...)
	return in
}

// The reference snappy encoder's blocks decode the same with kwire's decoder.
func TestSnappyDecodesReference(t *testing.T) {
	for name, in := range testInputs() {
		enc := snappy.Encode(nil, in)
		out, err := unsnappyBlock(nil, enc, DefaultMaxDecompressedSize)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(out, in) {
			t.Fatalf("%s: decoded bytes differ", name)
		}
		// And appended after earlier output, as xerial chunks are.
		out, err = unsnappyBlock([]byte("prefix"), enc, DefaultMaxDecompressedSize)
		if err != nil || !bytes.Equal(out[6:], in) || string(out[:6]) != "prefix" {
			t.Fatalf("%s: appended decode: %v", name, err)
		}
	}
}

// snappyBlock builds a raw block from a declared length and elements.
func snappyBlock(n uint64, elems ...[]byte) []byte {
	b := binary.AppendUvarint(nil, n)
	for _, e := range elems {
		b = append(b, e...)
	}
	return b
}

// Malformed snappy blocks are refused with ErrCorrupt (or ErrTooLarge past the
// limit), each for its own reason.
func TestSnappyDecoderStrict(t *testing.T) {
	lit := func(s string) []byte { return append([]byte{byte(len(s)-1) << 2}, s...) }
	copy1 := func(off, n int) []byte { return []byte{byte(off>>8)<<5 | byte(n-4)<<2 | 1, byte(off)} }
	copy2 := func(off, n int) []byte { return []byte{byte(n-1)<<2 | 2, byte(off), byte(off >> 8)} }
	copy4 := func(off, n int) []byte {
		return []byte{byte(n-1)<<2 | 3, byte(off), byte(off >> 8), byte(off >> 16), byte(off >> 24)}
	}
	tests := []struct {
		name  string
		block []byte
		limit int
		want  error
		msg   string
	}{
		{"ok", snappyBlock(12, lit("abcd"), copy1(4, 8)), 0, nil, ""},
		{"ok-copy2-overlap", snappyBlock(66, lit("ab"), copy2(2, 64)), 0, nil, ""},
		{"ok-copy4", snappyBlock(9, lit("abc"), copy4(3, 6)), 0, nil, ""},
		{"ok-empty", snappyBlock(0), 0, nil, ""},
		{"no-header", nil, 0, ErrCorrupt, "bad length header"},
		{"header-6-bytes", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 0, ErrCorrupt, "bad length header"},
		{"header-over-32-bits", binary.AppendUvarint(nil, 1<<32), 0, ErrCorrupt, "bad length header"},
		{"copy-offset-zero", snappyBlock(8, lit("abcd"), copy1(0, 4)), 0, ErrCorrupt, "reaches 0 bytes back"},
		{"copy-before-start", snappyBlock(9, lit("abcd"), copy2(5, 5)), 0, ErrCorrupt, "reaches 5 bytes back, 4 written"},
		{"copy4-before-start", snappyBlock(9, lit("abcd"), copy4(1<<20, 5)), 0, ErrCorrupt, "written"},
		{"copy-first", snappyBlock(4, copy1(1, 4)), 0, ErrCorrupt, "reaches 1 bytes back, 0 written"},
		{"copy-past-length", snappyBlock(8, lit("abcd"), copy1(4, 5)), 0, ErrCorrupt, "runs past the declared length"},
		{"literal-past-length", snappyBlock(3, lit("abcd")), 0, ErrCorrupt, "runs past the declared length"},
		{"literal-past-input", snappyBlock(4, lit("abcd")[:4]), 0, ErrCorrupt, "runs past the input"},
		{"long-literal-length-truncated", snappyBlock(100, []byte{61 << 2, 99}), 0, ErrCorrupt, "literal length truncated"},
		{"copy-truncated", snappyBlock(8, lit("abcd"), copy2(4, 4)[:2]), 0, ErrCorrupt, "copy truncated"},
		{"short-output", snappyBlock(9, lit("abcd"), copy1(4, 4)), 0, ErrCorrupt, "decoded 8 bytes, the header says 9"},
		{"trailing-garbage", append(snappyBlock(4, lit("abcd")), 0), 0, ErrCorrupt, "runs past the declared length"},
		{"trailing-copy", append(snappyBlock(4, lit("abcd")), copy1(4, 4)...), 0, ErrCorrupt, "runs past the declared length"},
		{"over-limit", snappyBlock(12, lit("abcd"), copy1(4, 8)), 11, ErrTooLarge, "more than 11 bytes"},
		{"claims-too-much", snappyBlock(10_000, lit("abcd")), 0, ErrCorrupt, "claims 10000 decoded bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			limit := tc.limit
			if limit == 0 {
				limit = DefaultMaxDecompressedSize
			}
			out, err := unsnappyBlock(nil, tc.block, limit)
			if tc.want == nil {
				ref, rerr := snappy.Decode(nil, tc.block)
				if err != nil || rerr != nil || !bytes.Equal(out, ref) {
					t.Fatalf("kwire %q %v, reference %q %v", out, err, ref, rerr)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v, want %v with %q", err, tc.want, tc.msg)
			}
			if tc.want == ErrCorrupt {
				// The reference strict decoder refuses these too.
				if _, rerr := snappy.DecodeStrict(nil, tc.block); rerr == nil && tc.name != "claims-too-much" {
					t.Fatalf("the reference accepts what kwire refuses")
				}
			}
		})
	}
}

// A block claiming more than the limit is refused before anything is allocated
// for it.
func TestSnappyClaimRefusedBeforeAllocating(t *testing.T) {
	block := snappyBlock(1<<31, make([]byte, 1000))
	var err error
	alloc := allocDuring(func() { _, err = unsnappyBlock(nil, block, 100<<20) })
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("want ErrTooLarge, got %v", err)
	}
	if alloc > 64<<10 {
		t.Fatalf("allocated %d bytes refusing the claim", alloc)
	}
}

// lz4Blocks compresses in as single blocks with every reference block
// compressor: fast, C-compatible fast, and high compression at levels 1-9.
func lz4Blocks(t testing.TB, in []byte) map[string][]byte {
	out := map[string][]byte{}
	buf := make([]byte, lz4.CompressBlockBound(len(in)))
	add := func(name string, n int, err error) {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n > 0 {
			out[name] = append([]byte{}, buf[:n]...)
		}
	}
	var fast lz4.Compressor
	n, err := fast.CompressBlock(in, buf)
	add("fast", n, err)
	var cc lz4.CompressorCCompat
	n, err = cc.CompressBlock(in, buf)
	add("ccompat", n, err)
	for i, level := range []lz4.CompressionLevel{lz4.Level1, lz4.Level2, lz4.Level3, lz4.Level4, lz4.Level5, lz4.Level6, lz4.Level7, lz4.Level8, lz4.Level9} {
		hc := lz4.CompressorHC{Level: level}
		n, err = hc.CompressBlock(in, buf)
		add("hc"+string(rune('1'+i)), n, err)
	}
	return out
}

// Blocks from every reference compressor decode the same with kwire's decoder,
// alone and after earlier output they may not reach into.
func TestLZ4DecodesReferenceBlocks(t *testing.T) {
	for name, in := range testInputs() {
		if len(in) == 0 {
			continue
		}
		blocks := lz4Blocks(t, in)
		if len(in) > 1000 && len(blocks) == 0 {
			t.Fatalf("%s: no compressor produced a block", name)
		}
		for cname, block := range blocks {
			buf := make([]byte, 3+len(in))
			copy(buf, "pre")
			n, err := lz4Decode(buf, 3, 3, block)
			if err != nil || n != len(in) || !bytes.Equal(buf[3:], in) {
				t.Fatalf("%s/%s: %d bytes, %v", name, cname, n, err)
			}
			// One byte less room: the decoder says the block does not fit.
			if _, err := lz4Decode(buf[:len(buf)-1], 3, 3, block); !errors.Is(err, errLZ4Short) {
				t.Fatalf("%s/%s: short room: %v", name, cname, err)
			}
		}
	}
}

// splitLZ4Block cuts one block into blocks of at most max decoded bytes at
// sequence boundaries, ending each but the last with an empty literal
// sequence: the blocks of a frame with dependent blocks, whose matches reach
// into the blocks before. It reports false when a single sequence decodes to
// more than max bytes (long literal runs of random data, long runs of zeros).
func splitLZ4Block(block []byte, max int) ([][]byte, bool) {
	var out [][]byte
	start, s, pieceOut := 0, 0, 0
	for s < len(block) {
		seqStart := s
		tok := block[s]
		s++
		ext := func(n int) int {
			for {
				b := block[s]
				s++
				n += int(b)
				if b != 255 {
					return n
				}
			}
		}
		lits := int(tok >> 4)
		if lits == 15 {
			lits = ext(lits)
		}
		s += lits
		seqOut := lits
		if s < len(block) {
			s += 2
			m := int(tok&15) + 4
			if m == 19 {
				m = ext(m)
			}
			seqOut += m
		}
		if pieceOut+seqOut > max {
			if seqStart == start {
				return nil, false
			}
			out = append(out, append(append([]byte{}, block[start:seqStart]...), 0))
			start, pieceOut = seqStart, 0
		}
		pieceOut += seqOut
	}
	return append(out, block[start:]), true
}

// lz4FrameFromBlocks writes an LZ4 frame (64 KiB block size, dependent or
// independent blocks) around compressed blocks.
func lz4FrameFromBlocks(blocks [][]byte, independent bool) []byte {
	flg := byte(0x40)
	if independent {
		flg |= 0x20
	}
	f := binary.LittleEndian.AppendUint32(nil, lz4Magic)
	f = append(f, flg, 0x40)
	f = append(f, byte(xxh32(f[4:6])>>8))
	for _, b := range blocks {
		f = binary.LittleEndian.AppendUint32(f, uint32(len(b)))
		f = append(f, b...)
	}
	return binary.LittleEndian.AppendUint32(f, 0)
}

// Frames from the reference writer at every level, and frames of dependent
// blocks (matches reaching into earlier blocks), decode with kwire's reader.
func TestLZ4DecodesReferenceFrames(t *testing.T) {
	totalSplit, totalDeps := 0, 0
	levels := []lz4.CompressionLevel{lz4.Fast, lz4.CCompatFast, lz4.Level1, lz4.Level2, lz4.Level3, lz4.Level4, lz4.Level5, lz4.Level6, lz4.Level7, lz4.Level8, lz4.Level9}
	for name, in := range testInputs() {
		for _, level := range levels {
			for _, bs := range []lz4.BlockSize{lz4.Block64Kb, lz4.Block256Kb} {
				var buf bytes.Buffer
				w := lz4.NewWriter(&buf)
				if err := w.Apply(lz4.CompressionLevelOption(level), lz4.BlockSizeOption(bs), lz4.ConcurrencyOption(1)); err != nil {
					t.Fatal(err)
				}
				w.Write(in)
				w.Close()
				out, err := unlz4(nil, buf.Bytes(), DefaultMaxDecompressedSize, false)
				if err != nil || !bytes.Equal(out, in) {
					t.Fatalf("%s level %v block %v: %v", name, level, bs, err)
				}
			}
		}
		if len(in) < 70<<10 {
			continue
		}
		// Dependent blocks: one reference block of the whole input, cut in
		// pieces of at most 64 KiB output.
		deps, split := 0, 0
		for cname, block := range lz4Blocks(t, in) {
			pieces, ok := splitLZ4Block(block, 64<<10)
			if !ok {
				continue
			}
			split++
			frame := lz4FrameFromBlocks(pieces, false)
			out, err := unlz4(nil, frame, DefaultMaxDecompressedSize, false)
			if err != nil || !bytes.Equal(out, in) {
				t.Fatalf("%s/%s dependent blocks: %v", name, cname, err)
			}
			// The same blocks claimed independent: a match into an earlier
			// block is refused, unless no piece reaches back.
			if _, err := unlz4(nil, lz4FrameFromBlocks(pieces, true), DefaultMaxDecompressedSize, false); err != nil {
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "bytes back") {
					t.Fatalf("%s/%s as independent: %v", name, cname, err)
				}
				deps++
			}
			// The reference decoder agrees on the dependent frame.
			r := lz4.NewReader(bytes.NewReader(frame))
			var got bytes.Buffer
			if _, err := got.ReadFrom(r); err != nil || !bytes.Equal(got.Bytes(), in) {
				t.Fatalf("%s/%s: the reference reader on dependent blocks: %v", name, cname, err)
			}
		}
		totalSplit += split
		totalDeps += deps
	}
	// Words, value1K, far-repeat and the boundary sizes split; the others are
	// single sequences longer than a block.
	if totalSplit < 20 || totalDeps < 20 {
		t.Fatalf("%d reference blocks split into dependent blocks, %d with matches into earlier blocks", totalSplit, totalDeps)
	}
	t.Logf("%d dependent-block frames, %d of them with matches into earlier blocks", totalSplit, totalDeps)
}

// Malformed LZ4 blocks are refused, each for its own reason.
func TestLZ4DecoderStrict(t *testing.T) {
	tests := []struct {
		name    string
		block   []byte
		room    int
		history int // bytes before the output a match may reach into
		want    error
		msg     string
	}{
		{"ok", []byte{0x44, 'a', 'b', 'c', 'd', 4, 0, 0x10, 'e'}, 64, 0, nil, ""},
		{"ok-overlap", []byte{0x1F, 'a', 1, 0, 10, 0x10, 'b'}, 64, 0, nil, ""},
		{"ok-history", []byte{0x00, 3, 0, 0x10, 'z'}, 64, 3, nil, ""},
		{"ok-final-empty-literals", []byte{0x44, 'a', 'b', 'c', 'd', 4, 0, 0x00}, 64, 0, nil, ""},
		{"empty", nil, 64, 0, errLZ4, "empty block"},
		{"offset-zero", []byte{0x40, 'a', 'b', 'c', 'd', 0, 0, 0x10, 'e'}, 64, 0, errLZ4, "reaches 0 bytes back"},
		{"offset-before-start", []byte{0x40, 'a', 'b', 'c', 'd', 5, 0, 0x10, 'e'}, 64, 0, errLZ4, "reaches 5 bytes back, 4 available"},
		{"offset-before-history", []byte{0x00, 4, 0, 0x10, 'z'}, 64, 3, errLZ4, "reaches 4 bytes back, 3 available"},
		{"literals-past-input", []byte{0x50, 'a', 'b', 'c', 'd'}, 64, 0, errLZ4, "run past the block"},
		{"literal-length-truncated", []byte{0xF0, 255}, 64, 0, errLZ4, "length truncated"},
		{"match-length-truncated", []byte{0x4F, 'a', 'b', 'c', 'd', 4, 0}, 64, 0, errLZ4, "length truncated"},
		{"offset-truncated", []byte{0x40, 'a', 'b', 'c', 'd', 4}, 64, 0, errLZ4, "offset truncated"},
		{"ends-in-match", []byte{0x40, 'a', 'b', 'c', 'd', 4, 0}, 64, 0, errLZ4, "block ends inside"},
		{"literals-past-room", []byte{0x40, 'a', 'b', 'c', 'd'}, 3, 0, errLZ4Short, ""},
		{"match-past-room", []byte{0x4F, 'a', 'b', 'c', 'd', 4, 0, 200, 0x10, 'e'}, 64, 0, errLZ4Short, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hist := bytes.Repeat([]byte{'h'}, tc.history)
			buf := append(append([]byte{}, hist...), make([]byte, tc.room)...)
			n, err := lz4Decode(buf, 0, tc.history, tc.block)
			var rn int
			var rerr error
			if tc.history > 0 {
				rn, rerr = lz4.UncompressBlockWithDict(tc.block, make([]byte, tc.room), hist)
			} else {
				rn, rerr = lz4.UncompressBlock(tc.block, make([]byte, tc.room))
			}
			if tc.want == nil {
				if err != nil || rerr != nil || n != rn {
					t.Fatalf("kwire %d %v, reference %d %v", n, err, rn, rerr)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v, want %v with %q", err, tc.want, tc.msg)
			}
			// kwire is stricter than the reference on two points: an empty
			// block and a block ending in a match (the format ends every
			// block with literals).
			if rerr == nil && tc.name != "empty" && tc.name != "ends-in-match" {
				t.Fatalf("the reference accepts what kwire refuses")
			}
		})
	}
}
