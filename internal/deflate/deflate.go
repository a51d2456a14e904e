// Package deflate compresses to deflate (RFC 1951) and gzip (RFC 1952), one
// level: a hash-chain matcher with one step of lazy matching, and blocks
// written with dynamic Huffman codes, the fixed codes or stored, whichever is
// smallest.
//
// It is written for the WebAssembly builds: plain Go, no unsafe, no assembly,
// and it imports only encoding/binary, hash/crc32, math/bits and
// internal/compkit (the standard library's compress/flate writer links fmt,
// and with it reflect).
package deflate

import (
	"encoding/binary"
	"math/bits"

	"github.com/kwire/kwire/internal/compkit"
	"github.com/kwire/kwire/internal/crc32c"
)

const (
	windowSize = 1 << 15
	windowMask = windowSize - 1
	hashLog    = 15
	minMatch   = 4 // deflate allows 3; 4-byte hashes find matches faster
	maxMatch   = 258
	maxChain   = 32  // candidates tried per position
	niceMatch  = 128 // a match this long ends the search
	lazyMax    = 32  // a match this long is taken without looking one byte on
	blockTok   = 1 << 14
	endBlock   = 256
)

// Encoder compresses deflate streams. The zero value is ready to use; it keeps
// its tables (about 260 KiB) between calls and is not safe for concurrent use.
type Encoder struct {
	head [1 << hashLog]int32
	prev [windowSize]int32
	// base is added to positions stored in head and prev; it grows past every
	// input, so entries of earlier calls are never taken for this one's.
	base int32

	tok  []uint32 // literal byte, or 1<<31 | (length-3)<<16 | distance
	lit  huffman
	dist huffman
	cl   huffman
	w    bitWriter
}

// AppendGzip appends src as one gzip member (no name, no time, OS unknown).
func (e *Encoder) AppendGzip(dst, src []byte) []byte {
	dst = append(dst, 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255)
	dst = e.AppendDeflate(dst, src)
	dst = binary.LittleEndian.AppendUint32(dst, crc32c.ChecksumIEEE(src))
	return binary.LittleEndian.AppendUint32(dst, uint32(len(src)))
}

func hash4(x uint32) uint32 { return (x * 2654435761) >> (32 - hashLog) }

// AppendDeflate appends src as a raw deflate stream.
func (e *Encoder) AppendDeflate(dst, src []byte) []byte {
	n := len(src)
	if int64(e.base)+int64(n) >= 1<<30 {
		clear(e.head[:])
		clear(e.prev[:])
		e.base = 0
	}
	e.w = bitWriter{out: dst}
	e.tok = e.tok[:0]
	start := 0 // input offset of the current block
	ins := 0   // positions below ins are in the hash chains
	insert := func(to int) {
		for ; ins < to && ins+minMatch <= n; ins++ {
			h := hash4(binary.LittleEndian.Uint32(src[ins:]))
			e.prev[ins&windowMask] = e.head[h]
			e.head[h] = int32(ins) + e.base
		}
		ins = max(ins, to)
	}
	for p := 0; p < n; {
		insert(p + 1)
		l, d := e.find(src, p)
		if l >= minMatch && l < lazyMax && p+1+minMatch <= n {
			insert(p + 2)
			if l2, d2 := e.find(src, p+1); l2 > l {
				e.tok = append(e.tok, uint32(src[p]))
				p++
				l, d = l2, d2
			}
		}
		if l >= minMatch {
			e.tok = append(e.tok, 1<<31|uint32(l-3)<<16|uint32(d))
			if l > lazyMax {
				// A long match's inner positions are left out of the chains
				// (but its last few): they cost time and rarely pay.
				ins = max(ins, p+l-3)
			}
			insert(p + l)
			p += l
		} else {
			e.tok = append(e.tok, uint32(src[p]))
			p++
		}
		if len(e.tok) >= blockTok && p < n {
			e.writeBlock(src[start:p], false)
			start = p
		}
	}
	e.writeBlock(src[start:], true)
	e.base += int32(n) + windowSize
	out := e.w.flush()
	e.w = bitWriter{}
	return out
}

// find returns the longest match (at least minMatch long, else length 0) for
// the position p, the last one put in the hash chains.
func (e *Encoder) find(src []byte, p int) (int, int) {
	limit := min(len(src)-p, maxMatch)
	if limit < minMatch {
		return 0, 0
	}
	best, dist := 0, 0
	cand := int(e.prev[p&windowMask] - e.base)
	for chain := 0; chain < maxChain && cand >= 0 && cand < p && p-cand <= windowSize; chain++ {
		if src[cand+best] == src[p+best] || best == 0 {
			l := compkit.MatchLen(src[p:p+limit], src[cand:])
			if l > best {
				best, dist = l, p-cand
				if l >= niceMatch || l == limit {
					break
				}
			}
		}
		next := int(e.prev[cand&windowMask] - e.base)
		if next >= cand {
			break
		}
		cand = next
	}
	if best < minMatch {
		return 0, 0
	}
	return best, dist
}

// lengthCode returns the length symbol (257-285), its extra bits and their
// count for a match length minus 3.
func lengthCode(lc uint32) (uint32, uint32, uint) {
	switch {
	case lc < 8:
		return 257 + lc, 0, 0
	case lc == 255:
		return 285, 0, 0
	}
	nb := uint(bits.Len32(lc) - 1)
	return 257 + 4*uint32(nb-1) + (lc>>(nb-2))&3, lc & (1<<(nb-2) - 1), nb - 2
}

// distCode returns the distance symbol (0-29), its extra bits and their count.
func distCode(d uint32) (uint32, uint32, uint) {
	v := d - 1
	if v < 4 {
		return v, 0, 0
	}
	nb := uint(bits.Len32(v) - 1)
	return 2*uint32(nb) + (v>>(nb-1))&1, v & (1<<(nb-1) - 1), nb - 1
}

// Order in which code length code lengths are written.
var clOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// writeBlock writes the tokens in e.tok (which encode raw) as one block, with
// dynamic codes, the fixed codes or stored, whichever is shortest.
func (e *Encoder) writeBlock(raw []byte, final bool) {
	var lf [286]uint32
	var df [30]uint32
	extra := 0 // extra bits of lengths and distances
	for _, t := range e.tok {
		if t < 1<<31 {
			lf[t]++
			continue
		}
		lc, _, ln := lengthCode(t >> 16 & 0xFF)
		dc, _, dn := distCode(t & 0xFFFF)
		lf[lc]++
		df[dc]++
		extra += int(ln + dn)
	}
	lf[endBlock] = 1
	// Fixed codes.
	fixed := 3 + extra
	for s, c := range lf {
		fixed += int(c) * int(fixedLitLen(s))
	}
	for _, c := range df {
		fixed += int(c) * 5
	}
	// Dynamic codes: at least two codes of each, so that both are complete.
	useTwo(lf[:], 0)
	useTwo(df[:], 0)
	e.lit.build(lf[:], 15)
	e.dist.build(df[:], 15)
	nl, nd := 286, 30
	for nl > 257 && e.lit.bits[nl-1] == 0 {
		nl--
	}
	for nd > 1 && e.dist.bits[nd-1] == 0 {
		nd--
	}
	var lens [286 + 30]uint8
	copy(lens[:], e.lit.bits[:nl])
	copy(lens[nl:], e.dist.bits[:nd])
	rle := appendRLE(e.cl.scratch[:0], lens[:nl+nd])
	e.cl.scratch = rle
	var cf [19]uint32
	for _, r := range rle {
		cf[r&0x1F]++
	}
	useTwo(cf[:], 0)
	e.cl.build(cf[:], 7)
	ncl := 19
	for ncl > 4 && e.cl.bits[clOrder[ncl-1]] == 0 {
		ncl--
	}
	dyn := 3 + 5 + 5 + 4 + 3*ncl + extra
	for _, r := range rle {
		dyn += int(e.cl.bits[r&0x1F]) + int(rleExtra[r&0x1F])
	}
	for s, c := range lf[:nl] {
		dyn += int(c) * int(e.lit.bits[s])
	}
	for s, c := range df[:nd] {
		dyn += int(c) * int(e.dist.bits[s])
	}
	stored := 8 + 8*(5*max(1, (len(raw)+65534)/65535)+len(raw))
	w := &e.w
	fin := uint64(0)
	if final {
		fin = 1
	}
	switch {
	case stored < fixed && stored < dyn:
		e.writeStored(raw, final)
	case fixed <= dyn:
		w.add(fin|1<<1, 3)
		for i := range e.lit.bits {
			e.lit.bits[i] = uint8(fixedLitLen(i))
		}
		for i := range e.dist.bits[:30] {
			e.dist.bits[i] = 5
		}
		e.lit.assign(288)
		e.dist.assign(30)
		e.writeTokens()
	default:
		w.add(fin|2<<1, 3)
		w.add(uint64(nl-257), 5)
		w.add(uint64(nd-1), 5)
		w.add(uint64(ncl-4), 4)
		for _, s := range clOrder[:ncl] {
			w.add(uint64(e.cl.bits[s]), 3)
		}
		for _, r := range rle {
			s := r & 0x1F
			w.add(uint64(e.cl.code[s]), uint(e.cl.bits[s]))
			if nb := rleExtra[s]; nb != 0 {
				w.add(uint64(r>>5), uint(nb))
			}
		}
		e.writeTokens()
	}
	e.tok = e.tok[:0]
}

func (e *Encoder) writeStored(raw []byte, final bool) {
	w := &e.w
	for {
		chunk := raw[:min(len(raw), 65535)]
		raw = raw[len(chunk):]
		fin := uint64(0)
		if final && len(raw) == 0 {
			fin = 1
		}
		w.add(fin, 3)
		w.align()
		w.add(uint64(len(chunk))|uint64(^uint16(len(chunk)))<<16, 32)
		w.flushBytes()
		w.out = append(w.out, chunk...)
		if len(raw) == 0 {
			return
		}
	}
}

func fixedLitLen(s int) uint {
	switch {
	case s < 144:
		return 8
	case s < 256:
		return 9
	case s < 280:
		return 7
	}
	return 8
}

// writeTokens writes e.tok and the end of the block with the codes in e.lit
// and e.dist.
func (e *Encoder) writeTokens() {
	w := &e.w
	for _, t := range e.tok {
		if t < 1<<31 {
			w.add(uint64(e.lit.code[t]), uint(e.lit.bits[t]))
			continue
		}
		lc, lx, ln := lengthCode(t >> 16 & 0xFF)
		dc, dx, dn := distCode(t & 0xFFFF)
		w.add(uint64(e.lit.code[lc]), uint(e.lit.bits[lc]))
		w.add(uint64(lx), ln)
		w.add(uint64(e.dist.code[dc]), uint(e.dist.bits[dc]))
		w.add(uint64(dx), dn)
	}
	w.add(uint64(e.lit.code[endBlock]), uint(e.lit.bits[endBlock]))
}

// useTwo makes sure at least two symbols of f are counted (a code of one
// symbol would be incomplete), adding counts to the first unused ones from lo.
func useTwo(f []uint32, lo int) {
	used := 0
	for _, c := range f {
		if c != 0 {
			used++
		}
	}
	for s := lo; used < 2 && s < len(f); s++ {
		if f[s] == 0 {
			f[s] = 1
			used++
		}
	}
}

// Extra bits of the code length symbols 16, 17 and 18.
var rleExtra = [19]uint8{16: 2, 17: 3, 18: 7}

// appendRLE appends lens run-length coded with the code length alphabet:
// each entry is a symbol (low 5 bits) and its extra bits' value (above).
func appendRLE(dst []uint16, lens []uint8) []uint16 {
	for i := 0; i < len(lens); {
		l := lens[i]
		run := 1
		for i+run < len(lens) && lens[i+run] == l {
			run++
		}
		i += run
		if l == 0 {
			for run >= 11 {
				k := min(run, 138)
				dst = append(dst, 18|uint16(k-11)<<5)
				run -= k
			}
			if run >= 3 {
				dst = append(dst, 17|uint16(run-3)<<5)
				run = 0
			}
		} else {
			dst = append(dst, uint16(l))
			run--
			for run >= 3 {
				k := min(run, 6)
				dst = append(dst, 16|uint16(k-3)<<5)
				run -= k
			}
		}
		for ; run > 0; run-- {
			dst = append(dst, uint16(l))
		}
	}
	return dst
}

// bitWriter writes bits from the lowest, as deflate packs them.
type bitWriter struct {
	out []byte
	acc uint64
	n   uint
}

// add writes the low nb bits of v (nb <= 32).
func (w *bitWriter) add(v uint64, nb uint) {
	w.acc |= (v & (1<<nb - 1)) << w.n
	w.n += nb
	if w.n >= 32 {
		w.out = binary.LittleEndian.AppendUint32(w.out, uint32(w.acc))
		w.acc >>= 32
		w.n -= 32
	}
}

// align pads with zero bits to a byte boundary.
func (w *bitWriter) align() { w.n = (w.n + 7) &^ 7 }

// flushBytes writes the whole bytes held (the writer is byte-aligned).
func (w *bitWriter) flushBytes() {
	for w.n >= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.n -= 8
	}
}

func (w *bitWriter) flush() []byte {
	w.align()
	w.flushBytes()
	return w.out
}

// huffman is a length-limited canonical Huffman code, its codes bit-reversed
// for writing.
type huffman struct {
	code    [288]uint16 // (the fixed literal/length code has 288 symbols)
	bits    [288]uint8
	b       compkit.HuffmanBuilder
	scratch []uint16
}

// build makes the code for the counts f (at least two non-zero), no code
// longer than limit bits.
func (h *huffman) build(f []uint32, limit uint32) {
	h.b.Lengths(f, limit, h.bits[:])
	h.assign(len(f))
}

// assign gives the first n symbols their canonical codes from their lengths
// in h.bits: by length, then symbol.
func (h *huffman) assign(n int) {
	var count, next [17]uint32
	for _, b := range h.bits[:n] {
		count[b]++
	}
	count[0] = 0
	for l := 1; l <= 16; l++ {
		next[l] = (next[l-1] + count[l-1]) << 1
	}
	for s, b := range h.bits[:n] {
		if b != 0 {
			h.code[s] = uint16(bits.Reverse32(next[b]) >> (32 - uint32(b)))
			next[b]++
		}
	}
}
