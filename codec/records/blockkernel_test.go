package records

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/pierrec/lz4/v4"
)

// The block kernels (blockkernel_wasm.s) against their plain-Go twins. Every
// check decodes one block with the twin, with lz4Decode / snappyDecode (the
// kernel and its fallback), and with each kernel of the build: the assembly
// one in WebAssembly builds and its Go model (blockkernel_model_test.go) in
// all. A kernel must accept exactly the blocks the twin accepts, decode the
// same bytes, write nothing outside the memory it may write over, and match
// the model byte for byte, past the output too.

type lz4KernelFunc func(buf []byte, base, start int, src []byte) int

type snappyKernelFunc func(dst, src []byte, s int) bool

func lz4Kernels() map[string]lz4KernelFunc {
	k := map[string]lz4KernelFunc{"model": lz4KernelModel}
	if asmLZ4 != nil {
		k["asm"] = asmLZ4
	}
	return k
}

func snappyKernels() map[string]snappyKernelFunc {
	k := map[string]snappyKernelFunc{"model": snappyKernelModel}
	if asmSnappy != nil {
		k["asm"] = asmSnappy
	}
	return k
}

// guard bytes around the memory a kernel is given; fill is what that memory
// holds before decoding.
const (
	guardLen  = 24
	guardByte = 0xA5
	fillByte  = 0x5A
)

// guarded returns a copy of init with guard bytes on both sides, and the
// check that they are intact.
func guarded(init []byte, capacity int) ([]byte, func() bool) {
	mem := make([]byte, guardLen+capacity+guardLen)
	for i := range mem {
		mem[i] = guardByte
	}
	region := mem[guardLen : guardLen+capacity]
	for i := range region {
		region[i] = fillByte
	}
	copy(region, init)
	buf := mem[guardLen : guardLen+len(init) : guardLen+capacity]
	return buf, func() bool {
		for _, b := range mem[:guardLen] {
			if b != guardByte {
				return false
			}
		}
		for _, b := range mem[guardLen+capacity:] {
			if b != guardByte {
				return false
			}
		}
		return true
	}
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// checkLZ4 decodes src into a buffer holding init: len(init) is the room,
// init[base:start] the history matches may reach. It reports whether the twin
// accepted the block, and fails t on any disagreement.
func checkLZ4(t testing.TB, init []byte, base, start int, src []byte) bool {
	t.Helper()
	g := cloneBytes(init)
	gn, gerr := lz4DecodeGeneric(g, base, start, src)
	dd := cloneBytes(init)
	dn, derr := lz4Decode(dd, base, start, src)
	if dn != gn || errText(derr) != errText(gerr) || gerr == nil && !bytes.Equal(dd[start:start+dn], g[start:start+gn]) {
		t.Fatalf("lz4Decode %d %v, the twin %d %v (block %x)", dn, derr, gn, gerr, src)
	}
	if len(src) == 0 {
		return gerr == nil
	}
	var first []byte
	firstN := 0
	for name, k := range lz4Kernels() {
		buf, intact := guarded(init, len(init))
		kn := k(buf, base, start, src)
		switch {
		case kn >= 0 && gerr != nil:
			t.Fatalf("%s kernel accepts (%d bytes) what the twin refuses: %v (block %x)", name, kn, gerr, src)
		case kn >= 0 && (kn != gn || !bytes.Equal(buf[start:start+kn], g[start:start+gn])):
			t.Fatalf("%s kernel decodes %d bytes, the twin %d, or other bytes (block %x)", name, kn, gn, src)
		case kn < 0 && gerr == nil:
			t.Fatalf("%s kernel refuses what the twin decodes to %d bytes (block %x)", name, gn, src)
		case !intact():
			t.Fatalf("%s kernel wrote outside its buffer (block %x)", name, src)
		case !bytes.Equal(buf[:start], init[:start]):
			t.Fatalf("%s kernel wrote into the history (block %x)", name, src)
		}
		if first == nil {
			first, firstN = buf, kn
		} else if kn != firstN || !bytes.Equal(buf, first) {
			t.Fatalf("the kernel and its model differ (%d vs %d, or in bytes past the output) (block %x)", kn, firstN, src)
		}
	}
	return gerr == nil
}

// checkSnappy decodes the snappy block src into a buffer of its declared
// length with slack bytes of spare capacity; it reports whether the twin
// accepted the block, and fails t on any disagreement. Blocks whose header
// unsnappyBlock refuses are left out (false).
func checkSnappy(t testing.TB, src []byte, slack int) bool {
	t.Helper()
	n, hdr, err := snappyHeader(src)
	if err != nil || n > snappyMaxRatio*len(src)+32 {
		return false
	}
	g := make([]byte, n, n+slack)
	gerr := snappyDecodeGeneric(g, src, hdr)
	dd := make([]byte, n, n+slack)
	derr := snappyDecode(dd, src, hdr)
	if errText(derr) != errText(gerr) || gerr == nil && !bytes.Equal(dd, g) {
		t.Fatalf("snappyDecode %v, the twin %v (block %x)", derr, gerr, src)
	}
	var first []byte
	firstOK := false
	init := make([]byte, n)
	for i := range init {
		init[i] = fillByte
	}
	for name, k := range snappyKernels() {
		dst, intact := guarded(init, n+slack)
		ok := k(dst, src, hdr)
		switch {
		case ok && gerr != nil:
			t.Fatalf("%s kernel accepts what the twin refuses: %v (block %x)", name, gerr, src)
		case ok && !bytes.Equal(dst, g):
			t.Fatalf("%s kernel and the twin decode differently (block %x)", name, src)
		case !ok && gerr == nil:
			t.Fatalf("%s kernel refuses what the twin accepts (block %x)", name, src)
		case !intact():
			t.Fatalf("%s kernel wrote outside its buffer's capacity (block %x)", name, src)
		}
		if all := dst[:cap(dst)]; first == nil {
			first, firstOK = all, ok
		} else if ok != firstOK || !bytes.Equal(all, first) {
			t.Fatalf("the kernel and its model differ (%v vs %v, or in bytes past the output) (block %x)", ok, firstOK, src)
		}
	}
	return gerr == nil
}

// lz4Seq appends an LZ4 sequence: literals, then a match of n bytes off back
// (none when n == 0: the last sequence).
func lz4Seq(b, lits []byte, off, n int) []byte {
	ext := func(b []byte, v int) []byte {
		for ; v >= 255; v -= 255 {
			b = append(b, 255)
		}
		return append(b, byte(v))
	}
	tok := byte(min(len(lits), 15)) << 4
	if n > 0 {
		tok |= byte(min(n-4, 15))
	}
	b = append(b, tok)
	if len(lits) >= 15 {
		b = ext(b, len(lits)-15)
	}
	b = append(b, lits...)
	if n == 0 {
		return b
	}
	b = append(b, byte(off), byte(off>>8))
	if n-4 >= 15 {
		b = ext(b, n-4-15)
	}
	return b
}

// randomLZ4Block builds a well-formed block of sequences with literal runs of
// 0..maxLit bytes and matches of every kind: short and long, overlapping
// (offsets below the length, from 1), reaching into hist bytes of history. It
// returns the block and its decoded length.
func randomLZ4Block(r *rand.Rand, hist, seqs, maxLit, maxMatch int) ([]byte, int) {
	var b []byte
	d := 0
	lit := func(n int) []byte {
		l := make([]byte, n)
		for i := range l {
			l[i] = byte(r.IntN(4)) + 'a' // few symbols: repeats look like real data
		}
		return l
	}
	for i := 0; i < seqs; i++ {
		lits := lit(r.IntN(maxLit + 1))
		if hist+d+len(lits) == 0 {
			lits = lit(1)
		}
		d += len(lits)
		var off int
		switch r.IntN(4) {
		case 0:
			off = 1 + r.IntN(min(8, hist+d))
		case 1:
			off = 1 + r.IntN(min(32, hist+d))
		default:
			off = 1 + r.IntN(min(65535, hist+d))
		}
		n := 4 + r.IntN(maxMatch-3)
		if r.IntN(8) == 0 {
			n = 4 + r.IntN(16)
		}
		b = lz4Seq(b, lits, off, n)
		d += n
	}
	lits := lit(r.IntN(maxLit + 1))
	return lz4Seq(b, lits, 0, 0), d + len(lits)
}

// snappyLit and snappyCopy append snappy elements: a literal in the tag
// (lenBytes 0) or with 1..4 length bytes, a copy in the 1-, 2- or 4-byte
// offset form.
func snappyLit(b, lits []byte, lenBytes int) []byte {
	n := len(lits) - 1
	if lenBytes == 0 {
		b = append(b, byte(n)<<2)
	} else {
		b = append(b, byte(59+lenBytes)<<2)
		for i := 0; i < lenBytes; i++ {
			b = append(b, byte(n>>(8*i)))
		}
	}
	return append(b, lits...)
}

func snappyCopy(b []byte, form, off, n int) []byte {
	switch form {
	case 1:
		return append(b, byte(off>>8)<<5|byte(n-4)<<2|1, byte(off))
	case 2:
		return append(b, byte(n-1)<<2|2, byte(off), byte(off>>8))
	}
	return append(b, byte(n-1)<<2|3, byte(off), byte(off>>8), byte(off>>16), byte(off>>24))
}

// randomSnappyBlock builds a well-formed block of elements of every form.
func randomSnappyBlock(r *rand.Rand, elems, maxLit int) []byte {
	var body []byte
	d := 0
	for i := 0; i < elems || d == 0; i++ {
		if d == 0 || r.IntN(3) == 0 {
			l := make([]byte, 1+r.IntN(maxLit))
			for j := range l {
				l[j] = byte(r.IntN(4)) + 'a'
			}
			lb := 0
			if len(l) > 60 || r.IntN(4) == 0 {
				lb = 1 + r.IntN(4)
				if len(l) > 256 {
					lb = max(lb, 2)
				}
			}
			body = snappyLit(body, l, lb)
			d += len(l)
			continue
		}
		var off int
		switch r.IntN(3) {
		case 0:
			off = 1 + r.IntN(min(8, d))
		case 1:
			off = 1 + r.IntN(min(32, d))
		default:
			off = 1 + r.IntN(min(65535, d))
		}
		form := 2 + r.IntN(2)
		n := 1 + r.IntN(64)
		if off < 2048 && n >= 4 && n <= 11 && r.IntN(2) == 0 {
			form = 1
		}
		body = snappyCopy(body, form, off, n)
		d += n
	}
	return append(binary.AppendUvarint(nil, uint64(d)), body...)
}

// Blocks of every reference compressor, alone, after history they may not
// reach, one byte short of room, and cut into the dependent blocks of a frame.
func TestLZ4KernelReferenceBlocks(t *testing.T) {
	for name, in := range testInputs() {
		if len(in) == 0 {
			continue
		}
		for cname, block := range lz4Blocks(t, in) {
			slacks := []int{0, 7, 16}
			if len(in) > 70<<10 {
				slacks = slacks[:1]
			}
			for _, slack := range slacks {
				if !checkLZ4(t, make([]byte, len(in)+slack), 0, 0, block) {
					t.Fatalf("%s/%s: refused", name, cname)
				}
			}
			pre := append([]byte("pre"), make([]byte, len(in))...)
			if !checkLZ4(t, pre, 3, 3, block) || checkLZ4(t, pre[:len(pre)-1], 3, 3, block) {
				t.Fatalf("%s/%s: with history, or short of room", name, cname)
			}
			if len(in) < 70<<10 {
				continue
			}
			pieces, ok := splitLZ4Block(block, 64<<10)
			if !ok {
				continue
			}
			var out []byte
			for i, p := range pieces {
				init := append(cloneBytes(out), make([]byte, 64<<10)...)
				if !checkLZ4(t, init, 0, len(out), p) {
					t.Fatalf("%s/%s: dependent block %d refused", name, cname, i)
				}
				n, _ := lz4DecodeGeneric(init, 0, len(out), p)
				out = init[:len(out)+n]
			}
			if !bytes.Equal(out, in) {
				t.Fatalf("%s/%s: dependent blocks decode to other bytes", name, cname)
			}
		}
	}
}

// Hand-built blocks: a match of every offset 1..20 (and some longer) and
// every length 4..80 (and some longer) after enough literals, with the room
// ending right after the output or a few bytes later: the kernel's paths for
// overlapping copies, short copies and copies near the end of the room.
func TestLZ4KernelMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	lits := make([]byte, 1200)
	for i := range lits {
		lits[i] = byte(r.Uint32())
	}
	offs := []int{21, 24, 31, 32, 33, 63, 64, 65, 100, 1000}
	for o := 1; o <= 20; o++ {
		offs = append(offs, o)
	}
	lens := []int{100, 255, 256, 300, 1000, 5000, 70000}
	for n := 4; n <= 80; n++ {
		lens = append(lens, n)
	}
	checks := 0
	for _, off := range offs {
		for _, n := range lens {
			for _, tail := range []int{0, 17} {
				block := lz4Seq(nil, lits[:max(off, 8)], off, n)
				block = lz4Seq(block, lits[300:300+tail], 0, 0)
				out := max(off, 8) + n + tail
				for _, slack := range []int{0, 1, 7, 8, 9, 16} {
					if !checkLZ4(t, make([]byte, out+slack), 0, 0, block) {
						t.Fatalf("offset %d length %d tail %d slack %d: refused", off, n, tail, slack)
					}
					checks++
				}
				// The match reaching into history instead.
				hist := append(cloneBytes(lits[:off]), make([]byte, n+8)...)
				if checkLZ4(t, hist, 0, off, lz4Seq(nil, nil, off, n)) {
					t.Fatalf("offset %d length %d: a block ending in a match is accepted", off, n)
				}
				if !checkLZ4(t, hist, 0, off, append(lz4Seq(nil, nil, off, n), 0)) {
					t.Fatalf("offset %d length %d from history: refused", off, n)
				}
			}
		}
	}
	t.Logf("%d blocks", checks)
}

// Random well-formed blocks of many sequences.
func TestLZ4KernelRandomBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 3000; i++ {
		hist := 0
		if i%3 == 0 {
			hist = r.IntN(300)
		}
		block, n := randomLZ4Block(r, hist, 1+r.IntN(40), []int{4, 20, 300}[i%3], []int{20, 80, 600}[r.IntN(3)])
		init := make([]byte, hist+n+r.IntN(20))
		for j := 0; j < hist; j++ {
			init[j] = byte(r.Uint32())
		}
		if !checkLZ4(t, init, 0, hist, block) {
			t.Fatalf("random block %d refused", i)
		}
	}
}

// lz4MutationBlocks are the blocks cut and flipped below: small reference
// blocks and hand-built ones.
func lz4MutationBlocks(t *testing.T) [][]byte {
	var blocks [][]byte
	for _, name := range []string{"three", "random-100", "short-periods"} {
		for _, b := range lz4Blocks(t, testInputs()[name]) {
			blocks = append(blocks, b)
		}
	}
	blocks = append(blocks, lz4Blocks(t, value1K(3000))["fast"], lz4Blocks(t, testInputs()["words"][:2000])["hc9"])
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 12; i++ {
		b, _ := randomLZ4Block(r, 0, 8, 20, 80)
		blocks = append(blocks, b)
	}
	return blocks
}

// Every truncation and many byte flips of those blocks, with the room the
// whole block needs and with 300 bytes more.
func TestLZ4KernelMutations(t *testing.T) {
	accepted, refused := 0, 0
	count := func(ok bool) {
		if ok {
			accepted++
		} else {
			refused++
		}
	}
	for _, block := range lz4MutationBlocks(t) {
		n, err := lz4DecodeGeneric(make([]byte, 64<<10), 0, 0, block)
		if err != nil {
			t.Fatal(err)
		}
		for _, room := range []int{n, n + 300} {
			for cut := 0; cut <= len(block); cut++ {
				count(checkLZ4(t, make([]byte, room), 0, 0, block[:cut]))
			}
			b := cloneBytes(block)
			for i := range b {
				orig := b[i]
				for _, v := range []byte{orig ^ 0x01, orig ^ 0x10, orig ^ 0x80, 0, 0xFF} {
					b[i] = v
					count(checkLZ4(t, make([]byte, room), 0, 0, b))
				}
				b[i] = orig
			}
		}
	}
	if accepted < 1000 || refused < 1000 {
		t.Fatalf("%d mutated blocks accepted, %d refused: too few of one kind", accepted, refused)
	}
	t.Logf("%d mutated blocks accepted, %d refused", accepted, refused)
}

// Random bytes as blocks: almost all refused, for every reason.
func TestLZ4KernelGarbage(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 20000; i++ {
		b := make([]byte, 1+r.IntN(40))
		for j := range b {
			b[j] = byte(r.Uint32())
			if r.IntN(3) == 0 {
				b[j] &= 0x1F // short literal runs and small offsets
			}
		}
		hist := r.IntN(16)
		checkLZ4(t, make([]byte, hist+r.IntN(600)), 0, hist, b)
	}
}

// The reference encoder's blocks of every test input, with spare capacity
// from none to past 16 bytes.
func TestSnappyKernelReferenceBlocks(t *testing.T) {
	for name, in := range testInputs() {
		enc := snappy.Encode(nil, in)
		for _, slack := range []int{0, 1, 7, 8, 15, 16, 24} {
			if !checkSnappy(t, enc, slack) {
				t.Fatalf("%s: refused", name)
			}
		}
	}
}

// Hand-built blocks: a copy of every offset 1..20 (and some longer), every
// length 1..64, in each form, and literals of every length form.
func TestSnappyKernelCopies(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	lits := make([]byte, 70000)
	for i := range lits {
		lits[i] = byte(r.Uint32())
	}
	offs := []int{21, 24, 31, 32, 33, 63, 64, 65, 100, 1000, 2047, 2048, 5000}
	for o := 1; o <= 20; o++ {
		offs = append(offs, o)
	}
	for _, off := range offs {
		for n := 1; n <= 64; n++ {
			for form := 1; form <= 3; form++ {
				if form == 1 && (n < 4 || n > 11 || off >= 2048) {
					continue
				}
				for _, tail := range []int{0, 3, 20} {
					body := snappyLit(nil, lits[:max(off, 8)], 2)
					body = snappyCopy(body, form, off, n)
					if tail > 0 {
						body = snappyLit(body, lits[:tail], 0)
					}
					block := append(binary.AppendUvarint(nil, uint64(max(off, 8)+n+tail)), body...)
					for _, slack := range []int{0, 3, 8, 15, 16} {
						if !checkSnappy(t, block, slack) {
							t.Fatalf("offset %d length %d form %d: refused", off, n, form)
						}
					}
				}
			}
		}
	}
	// Literals of every length around the 16-byte move and the length forms.
	for _, n := range []int{1, 2, 15, 16, 17, 59, 60, 61, 62, 255, 256, 257, 65535, 65536, 65537} {
		for lb := 0; lb <= 4; lb++ {
			if lb == 0 && n > 60 || lb == 1 && n > 256 || lb == 2 && n > 65536 {
				continue
			}
			block := append(binary.AppendUvarint(nil, uint64(n+2)), snappyLit(nil, lits[:n], lb)...)
			block = snappyLit(block, lits[:2], 0)
			for _, slack := range []int{0, 15, 16} {
				if !checkSnappy(t, block, slack) {
					t.Fatalf("literal of %d with %d length bytes: refused", n, lb)
				}
			}
		}
	}
}

// Random well-formed blocks of many elements.
func TestSnappyKernelRandomBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for i := 0; i < 3000; i++ {
		block := randomSnappyBlock(r, 1+r.IntN(40), []int{4, 30, 300}[i%3])
		if !checkSnappy(t, block, r.IntN(20)) {
			t.Fatalf("random block %d refused", i)
		}
	}
}

// Every truncation and many byte flips of small blocks, reference-encoded
// and hand-built.
func TestSnappyKernelMutations(t *testing.T) {
	var blocks [][]byte
	for _, name := range []string{"three", "random-100", "short-periods"} {
		blocks = append(blocks, snappy.Encode(nil, testInputs()[name]))
	}
	blocks = append(blocks, snappy.Encode(nil, value1K(3000)), snappy.Encode(nil, testInputs()["words"][:2000]))
	r := rand.New(rand.NewPCG(15, 16))
	for i := 0; i < 12; i++ {
		blocks = append(blocks, randomSnappyBlock(r, 8, 20))
	}
	accepted, refused := 0, 0
	count := func(ok bool) {
		if ok {
			accepted++
		} else {
			refused++
		}
	}
	for _, block := range blocks {
		for _, slack := range []int{0, 16} {
			for cut := 0; cut <= len(block); cut++ {
				count(checkSnappy(t, block[:cut], slack))
			}
			b := cloneBytes(block)
			for i := range b {
				orig := b[i]
				for _, v := range []byte{orig ^ 0x01, orig ^ 0x04, orig ^ 0x80, 0, 0xFF} {
					b[i] = v
					count(checkSnappy(t, b, slack))
				}
				b[i] = orig
			}
		}
	}
	if accepted < 500 || refused < 1000 {
		t.Fatalf("%d mutated blocks accepted, %d refused: too few of one kind", accepted, refused)
	}
	t.Logf("%d mutated blocks accepted, %d refused", accepted, refused)
}

// Random bytes after a plausible header.
func TestSnappyKernelGarbage(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for i := 0; i < 20000; i++ {
		b := binary.AppendUvarint(nil, uint64(r.IntN(200)))
		for range 1 + r.IntN(40) {
			c := byte(r.Uint32())
			if r.IntN(3) == 0 {
				c &= 0x3F
			}
			b = append(b, c)
		}
		checkSnappy(t, b, r.IntN(20))
	}
}

// vectorPayloads returns the compressed payloads of the record vectors' batches
// and legacy wrappers, by codec.
func vectorPayloads(t *testing.T) map[Compression][][]byte {
	files, err := filepath.Glob("../../conformance/vectors/records/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no record vectors (%v)", err)
	}
	out := map[Compression][][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			var v struct{ Bytes string }
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Fatal(err)
			}
			src, err := base64.StdEncoding.DecodeString(v.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			for pos := 0; pos < len(src); {
				size, magic, err := PeekEntry(src[pos:])
				if err != nil || size == 0 {
					break
				}
				entry := src[pos : pos+size]
				pos += size
				if magic == 2 {
					if b, _, err := ParseBatch(entry, true); err == nil {
						out[b.Compression()] = append(out[b.Compression()], b.Records)
					}
				} else if m, _, err := ParseLegacyMessage(entry, true); err == nil {
					out[m.Compression()] = append(out[m.Compression()], m.Value)
				}
			}
		}
	}
	return out
}

// lz4FrameBlocks walks LZ4 frames (descriptor checksums unchecked, as for
// magic 0) and calls fn with each compressed block and whether the frame's
// blocks are independent, the frame's first block with first set.
func lz4FrameBlocks(t *testing.T, src []byte, fn func(block []byte, independent, first bool)) {
	pos := 0
	for pos+7 <= len(src) {
		if binary.LittleEndian.Uint32(src[pos:]) != lz4Magic {
			t.Fatalf("no LZ4 frame at byte %d", pos)
		}
		flg := src[pos+4]
		pos += 7
		if flg&0x08 != 0 {
			pos += 8
		}
		first := true
		for pos+4 <= len(src) {
			bs := binary.LittleEndian.Uint32(src[pos:])
			pos += 4
			if bs == 0 {
				break
			}
			n := int(bs & 0x7FFFFFFF)
			if bs&0x80000000 == 0 {
				fn(src[pos:pos+n], flg&0x20 != 0, first)
				first = false
			}
			pos += n
			if flg&0x10 != 0 {
				pos += 4
			}
		}
		if flg&0x04 != 0 {
			pos += 4
		}
	}
}

// Every LZ4 and snappy block of the record vectors (kafka-clients' batches and
// legacy wrappers) decodes the same with the kernels.
func TestBlockKernelsOnVectors(t *testing.T) {
	payloads := vectorPayloads(t)
	lz4n, snappyn := 0, 0
	for _, p := range payloads[CompressionLZ4] {
		var out []byte
		frameStart := 0
		lz4FrameBlocks(t, p, func(block []byte, independent, first bool) {
			if first {
				frameStart = len(out)
			}
			base := len(out)
			if !independent {
				base = frameStart
			}
			init := append(cloneBytes(out), make([]byte, 64<<10)...)
			if !checkLZ4(t, init, base, len(out), block) {
				t.Fatalf("a vector's LZ4 block is refused")
			}
			n, _ := lz4DecodeGeneric(init, base, len(out), block)
			out = init[:len(out)+n]
			lz4n++
		})
	}
	for _, p := range payloads[CompressionSnappy] {
		blocks := [][]byte{p}
		if isXerial(p) {
			blocks = nil
			for pos := xerialHeaderLen; pos+4 <= len(p); {
				n := int(be.Uint32(p[pos:]))
				blocks = append(blocks, p[pos+4:pos+4+n])
				pos += 4 + n
			}
		}
		for _, b := range blocks {
			for _, slack := range []int{0, 16} {
				if !checkSnappy(t, b, slack) {
					t.Fatalf("a vector's snappy block is refused")
				}
			}
			snappyn++
		}
	}
	if lz4n < 5 || snappyn < 5 {
		t.Fatalf("only %d LZ4 and %d snappy blocks in the vectors", lz4n, snappyn)
	}
	t.Logf("%d LZ4 blocks, %d snappy blocks", lz4n, snappyn)
}

// In builds with the kernels, the hooks see the blocks decoded through the
// frame and xerial readers (and so check every block the package's tests
// decode).
func TestBlockKernelHooks(t *testing.T) {
	if asmLZ4 == nil {
		t.Skip("no kernels in this build")
	}
	l, s := lz4HookChecks.Load(), snappyHookChecks.Load()
	in := value1K(100_000)
	var zb bytes.Buffer
	w := lz4.NewWriter(&zb)
	if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.ConcurrencyOption(1)); err != nil {
		t.Fatal(err)
	}
	w.Write(in)
	w.Close()
	if out, err := unlz4(nil, zb.Bytes(), DefaultMaxDecompressedSize, false); err != nil || !bytes.Equal(out, in) {
		t.Fatal(err)
	}
	if out, err := unsnappy(nil, refXerial(in), DefaultMaxDecompressedSize); err != nil || !bytes.Equal(out, in) {
		t.Fatal(err)
	}
	if lz4HookChecks.Load()-l < 2 || snappyHookChecks.Load()-s < 4 {
		t.Fatalf("the hooks saw %d LZ4 and %d snappy blocks", lz4HookChecks.Load()-l, snappyHookChecks.Load()-s)
	}
}

// FuzzLZ4Kernel: the kernels against the twin on any input as a block after
// dictLen bytes of history, in 1 KiB plus 32 bytes a block byte of room (at
// most 64 KiB) and, when the twin accepts it, in just the room it needs plus
// slack bytes; and on the reference compressor's block of the input.
func FuzzLZ4Kernel(f *testing.F) {
	for _, in := range testInputs() {
		if len(in) > 0 && len(in) <= 4<<10 {
			for _, b := range lz4Blocks(f, in) {
				f.Add(b, uint16(0), uint8(0))
			}
		}
	}
	r := rand.New(rand.NewPCG(19, 20))
	for i := 0; i < 8; i++ {
		b, _ := randomLZ4Block(r, 0, 6, 20, 80)
		f.Add(b, uint16(0), uint8(i))
	}
	f.Add([]byte("hist\x00\x04\x00\x10z"), uint16(4), uint8(3))
	f.Add([]byte{0x1F, 'a', 1, 0, 200, 0x10, 'b'}, uint16(0), uint8(9))
	f.Fuzz(func(t *testing.T, data []byte, dictLen uint16, slack uint8) {
		k := int(dictLen) % (len(data) + 1)
		dict, block := data[:k], data[k:]
		init := append(cloneBytes(dict), make([]byte, min(1<<10+32*len(block), 64<<10))...)
		if checkLZ4(t, init, 0, k, block) {
			n, _ := lz4DecodeGeneric(init, 0, k, block)
			checkLZ4(t, init[:k+n+int(slack%32)], 0, k, block)
		}
		if len(data) == 0 || len(data) > 64<<10 {
			return
		}
		var c lz4.Compressor
		comp := make([]byte, lz4.CompressBlockBound(len(data)))
		if cn, err := c.CompressBlock(data, comp); err == nil && cn > 0 {
			if !checkLZ4(t, make([]byte, len(data)+int(slack%32)), 0, 0, comp[:cn]) {
				t.Fatalf("a reference block is refused")
			}
		}
	})
}

// FuzzSnappyKernel: the kernels against the twin on any input as a block,
// with slack bytes of spare capacity, and on the reference encoder's block of
// the input.
func FuzzSnappyKernel(f *testing.F) {
	for _, in := range testInputs() {
		if len(in) <= 4<<10 {
			f.Add(snappy.Encode(nil, in), uint8(0))
		}
	}
	r := rand.New(rand.NewPCG(21, 22))
	for i := 0; i < 8; i++ {
		f.Add(randomSnappyBlock(r, 6, 20), uint8(i))
	}
	f.Add(snappyBlock(66, []byte{1 << 2, 'a', 'b'}, []byte{63<<2 | 2, 2, 0}), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, slack uint8) {
		checkSnappy(t, data, int(slack%32))
		if !checkSnappy(t, snappy.Encode(nil, data), int(slack%32)) {
			t.Fatalf("a reference block is refused")
		}
	})
}
