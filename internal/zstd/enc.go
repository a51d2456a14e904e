package zstd

import (
	"encoding/binary"
	"math/bits"

	"github.com/kwire/kwire/internal/compkit"
)

// The encoder: one fast level. A double-hash matcher (8-byte and 5-byte
// hashes of earlier positions, and the last offset tried first) finds the
// sequences of each 128 KiB block; literals are Huffman-coded when that pays,
// and each of the three sequence codes takes whichever costs less of the
// predefined table, a table of its own, or a single repeated symbol. A block
// that does not shrink is stored raw, one of a single byte value as RLE.

const (
	encLongLog   = 17
	encShortLog  = 15
	encSkipLog   = 7
	encWindowLog = 23 // window of frames over 8 MiB
	encMinLits   = 32 // fewer literals are stored raw
)

// Encoder compresses zstd frames. The zero value is ready to use; it keeps its
// tables (about 700 KiB) between calls and is not safe for concurrent use.
type Encoder struct {
	long  [1 << encLongLog]int32
	short [1 << encShortLog]int32
	// base is added to positions stored in the tables; it grows past every
	// input, so entries of earlier calls are never taken for this one's.
	base int32

	lits []byte
	seqs []encSeq
	tmp  []byte
	huff huffEnc
	fse  [3]fseEnc
	pre  [3]fseEnc // the predefined tables, built once
	wfse fseEnc
	done bool
}

// encSeq is a sequence: literal length, match length and the offset value as
// coded (1 for the last offset, else the offset plus 3).
type encSeq struct{ ll, ml, ofv uint32 }

func hashLong(x uint64) uint32 { return uint32((x * 0xCF1BBCDCB7A56463) >> (64 - encLongLog)) }
func hashShort(x uint64) uint32 {
	return uint32(((x << 24) * 0x889523B8F2A9B5F7) >> (64 - encShortLog))
}

// EncodeAll appends src compressed as one zstd frame (no checksum, content
// size stated) to dst.
func (e *Encoder) EncodeAll(dst, src []byte) []byte {
	if !e.done {
		for k := range e.pre {
			e.pre[k].build(kindDefault[k], kindDefaultLog[k])
		}
		e.done = true
	}
	n := len(src)
	dst = binary.LittleEndian.AppendUint32(dst, frameMagic)
	window := n
	switch {
	case n < 256:
		dst = append(dst, 0x20, byte(n))
	case n < 65536+256:
		dst = append(dst, 0x20|1<<6)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(n-256))
	case n <= 1<<encWindowLog:
		dst = append(dst, 0x20|2<<6)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	default:
		window = 1 << encWindowLog
		dst = append(dst, 3<<6, (encWindowLog-10)<<3)
		dst = binary.LittleEndian.AppendUint64(dst, uint64(n))
	}
	if n == 0 {
		return append(dst, 1, 0, 0) // one empty raw block, the last
	}
	if int64(e.base)+int64(n) >= 1<<30 {
		clear(e.long[:])
		clear(e.short[:])
		e.base = 0
	}
	reps := [3]int{1, 4, 8}
	for bs := 0; bs < n; bs += maxBlockSize {
		be := min(bs+maxBlockSize, n)
		dst = e.block(dst, src, bs, be, window, be == n, &reps)
	}
	e.base += int32(n) + 1
	return dst
}

func appendBlockHeader(dst []byte, last bool, typ, size int) []byte {
	h := uint32(typ<<1 | size<<3)
	if last {
		h |= 1
	}
	return append(dst, byte(h), byte(h>>8), byte(h>>16))
}

// block appends the block src[bs:be].
func (e *Encoder) block(dst, src []byte, bs, be, window int, last bool, reps *[3]int) []byte {
	in := src[bs:be]
	if allSame(in) {
		return append(appendBlockHeader(dst, last, 1, len(in)), in[0])
	}
	saved := *reps
	e.findSequences(src, bs, be, window, reps)
	at := len(dst)
	dst = appendBlockHeader(dst, last, 2, 0)
	dst = e.appendLiterals(dst, e.lits)
	dst = e.appendSequences(dst)
	if size := len(dst) - at - 3; size < len(in) {
		appendBlockHeader(dst[:at], last, 2, size)
		return dst
	}
	// Stored raw: the decoder's offset history does not see this block's
	// sequences.
	*reps = saved
	return append(appendBlockHeader(dst[:at], last, 0, len(in)), in...)
}

func allSame(b []byte) bool {
	for _, c := range b {
		if c != b[0] {
			return false
		}
	}
	return true
}

// findSequences fills e.lits and e.seqs for the block src[bs:be]; matches may
// reach back window bytes into earlier blocks.
func (e *Encoder) findSequences(src []byte, bs, be, window int, reps *[3]int) {
	e.lits, e.seqs = e.lits[:0], e.seqs[:0]
	base := e.base
	anchor, p := bs, bs
	limit := be - 8
	emit := func(p, m, ml int, ofv uint32) {
		e.lits = append(e.lits, src[anchor:p]...)
		e.seqs = append(e.seqs, encSeq{ll: uint32(p - anchor), ml: uint32(ml), ofv: ofv})
	}
	for p < limit {
		lo := max(0, p+1-window)
		// The last offset, one byte on.
		if r := p + 1 - reps[0]; r >= lo && binary.LittleEndian.Uint32(src[r:]) == binary.LittleEndian.Uint32(src[p+1:]) {
			ml := 4 + compkit.MatchLen(src[p+5:be], src[r+4:])
			x := binary.LittleEndian.Uint64(src[p:])
			e.long[hashLong(x)] = int32(p) + base
			e.short[hashShort(x)] = int32(p) + base
			emit(p+1, r, ml, 1)
			p += 1 + ml
			anchor = p
			e.insert(src, p, limit, base)
			continue
		}
		lo = max(0, p-window)
		x := binary.LittleEndian.Uint64(src[p:])
		hl, hs := hashLong(x), hashShort(x)
		cl, cs := int(e.long[hl]-base), int(e.short[hs]-base)
		e.long[hl], e.short[hs] = int32(p)+base, int32(p)+base
		var m int
		switch {
		case cl >= lo && cl < p && binary.LittleEndian.Uint64(src[cl:]) == x:
			m = cl
		case cs >= lo && cs < p && binary.LittleEndian.Uint32(src[cs:]) == uint32(x):
			m = cs
			// A long match one byte on is worth more.
			if p+1 < limit {
				x1 := binary.LittleEndian.Uint64(src[p+1:])
				h1 := hashLong(x1)
				c1 := int(e.long[h1] - base)
				e.long[h1] = int32(p+1) + base
				if c1 >= lo && c1 < p+1 && binary.LittleEndian.Uint64(src[c1:]) == x1 {
					p, m = p+1, c1
				}
			}
		default:
			p += 1 + (p-anchor)>>encSkipLog
			continue
		}
		for p > anchor && m > lo && src[p-1] == src[m-1] {
			p--
			m--
		}
		ml := compkit.MatchLen(src[p:be], src[m:])
		off := p - m
		ofv := uint32(off + 3)
		if off == reps[0] && p > anchor {
			ofv = 1
		} else {
			reps[0], reps[1], reps[2] = off, reps[0], reps[1]
		}
		emit(p, m, ml, ofv)
		p += ml
		anchor = p
		e.insert(src, p, limit, base)
	}
	e.lits = append(e.lits, src[anchor:be]...)
}

// insert remembers the position two bytes before a match's end.
func (e *Encoder) insert(src []byte, p, limit int, base int32) {
	if q := p - 2; q < limit {
		x := binary.LittleEndian.Uint64(src[q:])
		e.long[hashLong(x)] = int32(q) + base
		e.short[hashShort(x)] = int32(q) + base
	}
}

func appendLitHeader(dst []byte, typ, n int) []byte {
	switch {
	case n < 32:
		return append(dst, byte(typ|n<<3))
	case n < 4096:
		return append(dst, byte(typ|1<<2|n<<4), byte(n>>4))
	}
	return append(dst, byte(typ|3<<2|n<<4), byte(n>>4), byte(n>>12))
}

// appendLiterals appends the literals section: raw, RLE or Huffman-coded.
func (e *Encoder) appendLiterals(dst, lits []byte) []byte {
	n := len(lits)
	if n < encMinLits {
		return append(appendLitHeader(dst, 0, n), lits...)
	}
	var count [256]uint32
	for _, c := range lits {
		count[c]++
	}
	maxSym, used := usedSymbols(count[:])
	if used == 1 {
		return append(appendLitHeader(dst, 1, n), lits[0])
	}
	if !e.huff.build(&count, maxSym) {
		return append(appendLitHeader(dst, 0, n), lits...)
	}
	t, ok := e.huff.appendTree(e.tmp[:0], maxSym, &e.wfse)
	if !ok {
		e.tmp = t
		return append(appendLitHeader(dst, 0, n), lits...)
	}
	single := n <= 1023
	if single {
		t = e.huff.appendStream(t, lits)
	} else {
		j := len(t)
		t = append(t, 0, 0, 0, 0, 0, 0)
		seg := (n + 3) / 4
		for i := 0; i < 4; i++ {
			s := len(t)
			t = e.huff.appendStream(t, lits[min(i*seg, n):min((i+1)*seg, n)])
			if i < 3 {
				binary.LittleEndian.PutUint16(t[j+2*i:], uint16(len(t)-s))
			}
		}
	}
	e.tmp = t
	c := len(t)
	if c+8 >= n || (single && c > 1023) {
		return append(appendLitHeader(dst, 0, n), lits...)
	}
	switch {
	case single:
		h := uint32(2 | n<<4 | c<<14)
		dst = append(dst, byte(h), byte(h>>8), byte(h>>16))
	case n < 1024 && c < 1024:
		h := uint32(2 | 1<<2 | n<<4 | c<<14)
		dst = append(dst, byte(h), byte(h>>8), byte(h>>16))
	case n < 16384 && c < 16384:
		h := uint32(2 | 2<<2 | n<<4 | c<<18)
		dst = binary.LittleEndian.AppendUint32(dst, h)
	default:
		h := uint64(2 | 3<<2 | n<<4 | c<<22)
		dst = append(dst, byte(h), byte(h>>8), byte(h>>16), byte(h>>24), byte(h>>32))
	}
	return append(dst, t...)
}

// Codes of literal lengths below 64 and of match lengths (minus 3) below 128.
var llCodes, mlCodes = func() (ll [64]uint8, ml [128]uint8) {
	c := 0
	for v := range ll {
		for c+1 < len(llBase) && llBase[c+1] <= uint32(v) {
			c++
		}
		ll[v] = uint8(c)
	}
	c = 0
	for v := range ml {
		for c+1 < len(mlBase) && mlBase[c+1] <= uint32(v+3) {
			c++
		}
		ml[v] = uint8(c)
	}
	return
}()

func llCode(ll uint32) uint8 {
	if ll < 64 {
		return llCodes[ll]
	}
	return uint8(bits.Len32(ll) - 1 + 19)
}

func mlCode(ml uint32) uint8 {
	if v := ml - 3; v < 128 {
		return mlCodes[v]
	}
	return uint8(bits.Len32(ml-3) - 1 + 36)
}

// appendSequences appends the sequences section of e.seqs.
func (e *Encoder) appendSequences(dst []byte) []byte {
	nb := len(e.seqs)
	switch {
	case nb < 128:
		dst = append(dst, byte(nb))
	case nb < 0x7F00:
		dst = append(dst, byte(nb>>8+0x80), byte(nb))
	default:
		dst = append(dst, 0xFF, byte(nb-0x7F00), byte((nb-0x7F00)>>8))
	}
	if nb == 0 {
		return dst
	}
	// Codes, kept in the sequences' spare bytes: e.tmp holds them, 3 per sequence.
	codes := e.tmp[:0]
	var count [3][maxNormSymbols]uint32
	for _, s := range e.seqs {
		l, o, m := llCode(s.ll), uint8(bits.Len32(s.ofv)-1), mlCode(s.ml)
		codes = append(codes, l, o, m)
		count[kindLL][l]++
		count[kindOF][o]++
		count[kindML][m]++
	}
	e.tmp = codes
	modeAt := len(dst)
	dst = append(dst, 0)
	var tabs [3]*fseEnc
	var rle [3]bool
	var modes byte
	for k := 0; k < 3; k++ {
		cnt := count[k][:kindMaxSym[k]+1]
		top, used := usedSymbols(cnt)
		if used == 1 {
			rle[k] = true
			modes |= 1 << (6 - 2*k)
			dst = append(dst, byte(top))
			continue
		}
		log := fseLog(nb, top, kindMaxLog[k])
		var norm [maxNormSymbols]int16
		normalize(norm[:top+1], cnt[:top+1], nb, log)
		desc := appendNCount(e.lits[len(e.lits):], norm[:top+1], log)
		own := fseCost(cnt[:top+1], norm[:top+1], log) + 8*len(desc)
		if pre := fseCost(cnt[:top+1], kindDefault[k], kindDefaultLog[k]); pre >= 0 && pre <= own {
			tabs[k] = &e.pre[k]
			continue
		}
		e.fse[k].build(norm[:top+1], log)
		tabs[k] = &e.fse[k]
		modes |= 2 << (6 - 2*k)
		dst = append(dst, desc...)
	}
	dst[modeAt] = modes
	var w bitWriter
	w.out = dst
	var st [3]uint32
	last := nb - 1
	for k := 0; k < 3; k++ {
		if !rle[k] {
			st[k] = tabs[k].first(codes[3*last+k])
		}
	}
	for i := last; i >= 0; i-- {
		if i < last {
			for _, k := range [3]int{kindOF, kindML, kindLL} {
				if !rle[k] {
					tabs[k].encode(&w, &st[k], codes[3*i+k])
				}
			}
		}
		s := e.seqs[i]
		l, o, m := codes[3*i], codes[3*i+1], codes[3*i+2]
		w.add(uint64(s.ll-llBase[l]), uint(llExtra[l]))
		w.add(uint64(s.ml-mlBase[m]), uint(mlExtra[m]))
		w.add(uint64(s.ofv)-1<<o, uint(o))
	}
	for _, k := range [3]int{kindML, kindOF, kindLL} {
		if !rle[k] {
			w.add(uint64(st[k]), tabs[k].log)
		}
	}
	return w.close()
}
