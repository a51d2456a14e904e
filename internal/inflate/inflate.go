// Package inflate decodes deflate streams (RFC 1951) and gzip members (RFC 1952):
// kwire's own decoder for the WebAssembly builds, where the standard library's
// reader would bring fmt, os and time with it. It decodes from one slice into
// another, with an output limit, and accepts what zlib (Java's Inflater, which
// Kafka's gzip reader uses) accepts: complete Huffman codes, or a single code of
// one bit.
//
// A compressed block's symbols are decoded by a fast loop while input and room
// are plentiful: a code up to 10 bits long is one lookup in a table whose
// entries give the literal, or the length's or distance's base and extra bits;
// the bit buffer is refilled 8 bytes at a time. The rest (longer codes, the end
// of a block, the last bytes of the input, anything invalid) is decoded one
// symbol at a time with every check, which gives the errors. In WebAssembly
// builds the fast loop is a kernel (fast_wasm.s), held to its plain-Go twin
// fastCodesGeneric by TestFastKernelFuzz; kwire_purego turns it off. Gzip
// trailers are checked with internal/crc32c's IEEE tables (its kernel in
// WebAssembly), and the output is reserved from the trailer's stated size.
package inflate

import (
	"encoding/binary"
	"errors"
	"slices"
	"strconv"

	"github.com/kwire/kwire/internal/crc32c"
)

// ErrTooLarge is returned when the output would pass the limit.
var ErrTooLarge = errors.New("inflate: output exceeds the limit")

// Error is a malformed stream: what is wrong and at which input byte.
type Error struct {
	Offset int
	Msg    string
}

func (e *Error) Error() string {
	return "inflate: " + e.Msg + " at input byte " + strconv.Itoa(e.Offset)
}

const (
	maxBits   = 15
	fastBits  = 10 // codes up to this long are decoded by one table lookup
	fastMask  = 1<<fastBits - 1
	maxLitLen = 288
	maxDist   = 32
	maxMatch  = 258
	maxInt    = int(^uint(0) >> 1)
)

// A table entry holds what a code means, resolved for the decode loop, so that
// one 32-bit load tells a literal from a length and gives the length's or
// distance's base and extra bits:
//
//	bits 0-3   the code's length; 0 in a fast table: a longer code (or no code)
//	bits 4-7   how many extra bits follow the code (lengths and distances)
//	bits 8-9   its kind: kindBase, kindLiteral, kindEnd or kindInvalid
//	bits 16-31 the literal byte (or code-length symbol), or the length's or distance's base
const (
	kindBase    = 0 // a length or a distance: base + extra bits
	kindLiteral = 1
	kindEnd     = 2 // end of block
	kindInvalid = 3 // literal/length symbols 286 and 287, distance symbols 30 and 31
)

// What a table's symbols mean.
const (
	tableLit   = iota // literal/length symbols
	tableDist         // distance symbols
	tablePlain        // code-length symbols: the symbol itself, as a literal
)

func entryKind(e uint32) uint32  { return e >> 8 & 3 }
func entryExtra(e uint32) uint32 { return e >> 4 & 15 }

// meaning is the entry of symbol sym of a table of kind table, with no length.
func meaning(table, sym int) uint32 {
	switch {
	case table == tablePlain || table == tableLit && sym < 256:
		return uint32(sym)<<16 | kindLiteral<<8
	case table == tableLit && sym == 256:
		return kindEnd << 8
	case table == tableLit && sym-257 < len(lenBase):
		return uint32(lenBase[sym-257])<<16 | uint32(lenExtra[sym-257])<<4
	case table == tableDist && sym < len(dstBase):
		return uint32(dstBase[sym])<<16 | uint32(dstExtra[sym])<<4
	}
	return kindInvalid << 8
}

// huffman is a canonical code: counts per length and symbols in code order, and
// the entries of the codes up to fastBits long.
type huffman struct {
	table  int // tableLit, tableDist or tablePlain
	count  [maxBits + 1]uint16
	symbol [maxLitLen]uint16
	fast   [1 << fastBits]uint32 // by the next fastBits input bits (first bit lowest)
}

// build makes h from code lengths; it reports false for a code zlib refuses:
// over-subscribed, or incomplete with more than a single one-bit code (an empty
// code is accepted when allowEmpty; the fixed distance code, incomplete by
// definition, is built with incomplete).
func (h *huffman) build(table int, lengths []uint8, allowEmpty, incomplete bool) bool {
	h.table = table
	h.count = [maxBits + 1]uint16{}
	for _, l := range lengths {
		h.count[l]++
	}
	h.count[0] = 0
	left := 1
	maxLen := 0
	for l := 1; l <= maxBits; l++ {
		left <<= 1
		left -= int(h.count[l])
		if left < 0 {
			return false
		}
		if h.count[l] > 0 {
			maxLen = l
		}
	}
	if maxLen == 0 {
		h.fast = [1 << fastBits]uint32{}
		return allowEmpty
	}
	if left > 0 && maxLen != 1 && !incomplete {
		return false
	}
	var offs [maxBits + 2]uint16
	for l := 1; l <= maxBits; l++ {
		offs[l+1] = offs[l] + h.count[l]
	}
	for sym, l := range lengths {
		if l != 0 {
			h.symbol[offs[l]] = uint16(sym)
			offs[l]++
		}
	}
	h.fast = [1 << fastBits]uint32{}
	code, idx := 0, 0
	for l := 1; l <= fastBits; l++ {
		for k := 0; k < int(h.count[l]); k++ {
			rev := 0
			for b := 0; b < l; b++ {
				rev |= (code >> b & 1) << (l - 1 - b)
			}
			entry := meaning(table, int(h.symbol[idx])) | uint32(l)
			for r := rev; r < 1<<fastBits; r += 1 << l {
				h.fast[r] = entry
			}
			code++
			idx++
		}
		code <<= 1
	}
	return true
}

// decoder is the state of one decode.
type decoder struct {
	src   []byte
	pos   int
	bits  uint64 // no bits above the nbits that are in use
	nbits uint
	out   []byte
	start int // where the current stream's output starts in out
	limit int // largest len(out)
	lens  [maxLitLen + maxDist]uint8
	lit   huffman
	dist  huffman
	clen  huffman
}

func (d *decoder) fail(msg string) error { return &Error{Offset: d.pos, Msg: msg} }

// need fills the bit buffer to n bits; false at the end of the input.
func (d *decoder) need(n uint) bool {
	for d.nbits < n {
		if d.pos >= len(d.src) {
			return false
		}
		d.bits |= uint64(d.src[d.pos]) << d.nbits
		d.pos++
		d.nbits += 8
	}
	return true
}

func (d *decoder) getBits(n uint) (uint32, error) {
	if !d.need(n) {
		return 0, d.fail("unexpected end of the stream")
	}
	v := uint32(d.bits & (1<<n - 1))
	d.bits >>= n
	d.nbits -= n
	return v, nil
}

// entry decodes one code of h and returns its entry.
func (d *decoder) entry(h *huffman) (uint32, error) {
	if d.need(fastBits) || d.nbits > 0 {
		if e := h.fast[d.bits&fastMask]; e&15 != 0 && uint(e&15) <= d.nbits {
			d.bits >>= e & 15
			d.nbits -= uint(e & 15)
			return e, nil
		}
	}
	// Longer codes, or the last bits of the input: bit by bit.
	code, first, index := 0, 0, 0
	for l := 1; l <= maxBits; l++ {
		b, err := d.getBits(1)
		if err != nil {
			return 0, err
		}
		code |= int(b)
		count := int(h.count[l])
		if code-first < count {
			return meaning(h.table, int(h.symbol[index+code-first])), nil
		}
		index += count
		first = (first + count) << 1
		code <<= 1
	}
	return 0, d.fail("invalid Huffman code")
}

var (
	lenBase   = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra  = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	dstBase   = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	dstExtra  = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	clenOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

// fixedLit and fixedDist are the codes of fixed-Huffman blocks.
var fixedLit, fixedDist = func() (*huffman, *huffman) {
	var l [maxLitLen]uint8
	for i := range l {
		switch {
		case i < 144:
			l[i] = 8
		case i < 256:
			l[i] = 9
		case i < 280:
			l[i] = 7
		default:
			l[i] = 8
		}
	}
	var dl [maxDist]uint8
	for i := range dl {
		dl[i] = 5
	}
	lit, dist := new(huffman), new(huffman)
	lit.build(tableLit, l[:], false, false)
	dist.build(tableDist, dl[:], false, false)
	return lit, dist
}()

// stream decodes one deflate stream at d.pos.
func (d *decoder) stream() error {
	d.bits, d.nbits = 0, 0
	d.start = len(d.out)
	for {
		hdr, err := d.getBits(3)
		if err != nil {
			return err
		}
		switch hdr >> 1 {
		case 0:
			err = d.stored()
		case 1:
			err = d.codes(fixedLit, fixedDist)
		case 2:
			if err = d.dynamic(); err == nil {
				err = d.codes(&d.lit, &d.dist)
			}
		default:
			err = d.fail("invalid block type 3")
		}
		if err != nil {
			return err
		}
		if hdr&1 != 0 {
			// Give back the whole bytes read ahead: the stream ends here.
			d.pos -= int(d.nbits / 8)
			d.bits, d.nbits = 0, 0
			return nil
		}
	}
}

func (d *decoder) stored() error {
	d.pos -= int(d.nbits / 8)
	d.bits, d.nbits = 0, 0
	if len(d.src)-d.pos < 4 {
		return d.fail("unexpected end of the stream")
	}
	n := int(d.src[d.pos]) | int(d.src[d.pos+1])<<8
	nn := int(d.src[d.pos+2]) | int(d.src[d.pos+3])<<8
	if n != ^nn&0xffff {
		return d.fail("stored block length does not match its complement")
	}
	d.pos += 4
	if len(d.src)-d.pos < n {
		return d.fail("unexpected end of the stream")
	}
	if len(d.out)+n > d.limit {
		return ErrTooLarge
	}
	d.out = append(d.out, d.src[d.pos:d.pos+n]...)
	d.pos += n
	return nil
}

func (d *decoder) dynamic() error {
	v, err := d.getBits(14)
	if err != nil {
		return err
	}
	nlen, ndist, ncode := int(v&31)+257, int(v>>5&31)+1, int(v>>10)+4
	if nlen > 286 || ndist > 30 {
		return d.fail("too many length or distance codes")
	}
	var cl [19]uint8
	for i := 0; i < ncode; i++ {
		b, err := d.getBits(3)
		if err != nil {
			return err
		}
		cl[clenOrder[i]] = uint8(b)
	}
	if !d.clen.build(tablePlain, cl[:], false, false) {
		return d.fail("invalid code lengths code")
	}
	lens := d.lens[:nlen+ndist]
	for i := 0; i < len(lens); {
		e, err := d.entry(&d.clen)
		if err != nil {
			return err
		}
		s := e >> 16
		if s < 16 {
			lens[i] = uint8(s)
			i++
			continue
		}
		var val uint8
		var rep uint32
		switch s {
		case 16:
			if i == 0 {
				return d.fail("repeated length with no previous length")
			}
			val = lens[i-1]
			rep, err = d.getBits(2)
			rep += 3
		case 17:
			rep, err = d.getBits(3)
			rep += 3
		default:
			rep, err = d.getBits(7)
			rep += 11
		}
		if err != nil {
			return err
		}
		if i+int(rep) > len(lens) {
			return d.fail("code lengths overflow")
		}
		for ; rep > 0; rep-- {
			lens[i] = val
			i++
		}
	}
	if lens[256] == 0 {
		return d.fail("no end-of-block code")
	}
	if !d.lit.build(tableLit, lens[:nlen], false, false) {
		return d.fail("invalid literal/length code")
	}
	if !d.dist.build(tableDist, lens[nlen:], true, false) {
		return d.fail("invalid distance code")
	}
	return nil
}

// codes decodes a compressed block's symbols up to its end. Where at least
// fastInput input bytes and maxMatch+fastSlack bytes of room are left, whole
// symbols go through fastCodes (one table lookup per code, the bit buffer
// refilled 8 bytes at a time); the rest, and whatever fastCodes leaves (a code
// longer than fastBits, the end of the block, anything invalid), is decoded
// here, one symbol at a time, with its checks and errors.
func (d *decoder) codes(lit, dist *huffman) error {
	for {
		if len(d.src)-d.pos >= fastInput && min(cap(d.out), d.limit)-len(d.out) >= maxMatch+fastSlack {
			st := fastState{bits: d.bits, nbits: uint64(d.nbits), pos: d.pos, o: len(d.out)}
			fastCodes(d.out[:min(cap(d.out), d.limit)], d.src, &st, &lit.fast, &dist.fast, d.start)
			d.bits, d.nbits, d.pos, d.out = st.bits, uint(st.nbits), st.pos, d.out[:st.o]
		}
		e, err := d.entry(lit)
		if err != nil {
			return err
		}
		switch entryKind(e) {
		case kindLiteral:
			if len(d.out) >= d.limit {
				return ErrTooLarge
			}
			d.out = append(d.out, byte(e>>16))
			continue
		case kindEnd:
			return nil
		case kindInvalid:
			return d.fail("invalid length symbol")
		}
		x, err := d.getBits(uint(entryExtra(e)))
		if err != nil {
			return err
		}
		n := int(e>>16) + int(x)
		de, err := d.entry(dist)
		if err != nil {
			return err
		}
		if entryKind(de) != kindBase {
			return d.fail("invalid distance symbol")
		}
		x, err = d.getBits(uint(entryExtra(de)))
		if err != nil {
			return err
		}
		back := int(de>>16) + int(x)
		if back > len(d.out)-d.start {
			return d.fail("distance " + strconv.Itoa(back) + " reaches before the start of the output")
		}
		if len(d.out)+n > d.limit {
			return ErrTooLarge
		}
		from := len(d.out) - back
		if back >= n {
			d.out = append(d.out, d.out[from:from+n]...)
			continue
		}
		for i := 0; i < n; i++ {
			d.out = append(d.out, d.out[from+i])
		}
	}
}

// fastInput is the input fastCodes needs left to start a symbol (one 8-byte
// load); fastSlack is the room it needs past the longest match, where its
// kernel may write scratch bytes.
const (
	fastInput = 8
	fastSlack = 16
)

// fastState is the bit reader and output position that fastCodes takes and
// gives back.
type fastState struct {
	bits  uint64
	nbits uint64
	pos   int // the next input byte
	o     int // the next output byte
}

// fastCodesGeneric decodes whole symbols of a compressed block into out[st.o:]
// with the fast tables lit and dist while at least fastInput bytes are left at
// st.pos and maxMatch+fastSlack bytes of room in out. It stops before a code
// that is not in a fast table, the end of the block, an invalid symbol, or a
// distance reaching before start: those are for the caller, whose checks give
// the errors. A refill leaves at least 56 bits; a length and distance take at
// most 10+5+10+13 bits in this loop, all looked at before any is consumed, and
// literals are taken up to 4 a refill (56 bits, 10 a code at most; at most 4
// bytes past the room check). On
// return the whole bytes read ahead are given back: the state holds fewer than
// 8 bits, none above them.
func fastCodesGeneric(out, src []byte, st *fastState, lit, dist *[1 << fastBits]uint32, start int) {
	bits, nbits, pos, o := st.bits, st.nbits, st.pos, st.o
	for pos <= len(src)-fastInput && o <= len(out)-maxMatch-fastSlack {
		bits |= binary.LittleEndian.Uint64(src[pos:]) << nbits
		pos += int(63-nbits) >> 3
		nbits |= 56
		e := lit[bits&fastMask]
		if entryKind(e) == kindLiteral { // an empty entry is kindBase, with length 0
			// Literals follow one another while a code's worth of bits is left.
			for {
				bits >>= e & 15
				nbits -= uint64(e & 15)
				out[o] = byte(e >> 16)
				o++
				if nbits < fastBits {
					break
				}
				if e = lit[bits&fastMask]; entryKind(e) != kindLiteral {
					break
				}
			}
			continue
		}
		if e&15 == 0 || entryKind(e) != kindBase {
			break
		}
		t, tn := bits>>(e&15), nbits-uint64(e&15)
		x := entryExtra(e)
		n := int(e>>16) + int(t&(1<<x-1))
		t, tn = t>>x, tn-uint64(x)
		de := dist[t&fastMask]
		if de&15 == 0 || entryKind(de) != kindBase {
			break
		}
		t, tn = t>>(de&15), tn-uint64(de&15)
		x = entryExtra(de)
		back := int(de>>16) + int(t&(1<<x-1))
		t, tn = t>>x, tn-uint64(x)
		if back > o-start {
			break
		}
		bits, nbits = t, tn
		end := o + n
		if back >= n {
			copy(out[o:end], out[o-back:])
			o = end
			continue
		}
		for from := o - back; o < end; {
			o += copy(out[o:end], out[from:o])
		}
	}
	pos -= int(nbits >> 3)
	nbits &= 7
	st.bits, st.nbits, st.pos, st.o = bits&(1<<nbits-1), nbits, pos, o
}

// Inflate appends the decoded raw deflate stream at the start of src to dst, and
// returns it with the number of input bytes the stream used. The output may not
// grow dst by more than limit bytes.
func Inflate(dst, src []byte, limit int) ([]byte, int, error) {
	d := &decoder{src: src, out: dst, limit: len(dst) + min(limit, maxInt-len(dst))}
	err := d.stream()
	return d.out, d.pos, err
}

// Gunzip appends the decoded gzip members of src (one or more, concatenated, as
// Kafka's reader takes them) to dst, checking each member's header, CRC-32 and
// length. The output may not grow dst by more than limit bytes. Bytes after a
// member that do not start another are an error, and so is input with no member.
func Gunzip(dst, src []byte, limit int) ([]byte, error) {
	d := &decoder{src: src, out: dst, limit: len(dst) + min(limit, maxInt-len(dst))}
	d.reserve()
	for members := 0; d.pos < len(src) || members == 0; members++ {
		if err := d.header(); err != nil {
			return d.out, err
		}
		if err := d.stream(); err != nil {
			return d.out, err
		}
		if len(src)-d.pos < 8 {
			return d.out, d.fail("gzip member without its trailer")
		}
		t := src[d.pos:]
		sum := uint32(t[0]) | uint32(t[1])<<8 | uint32(t[2])<<16 | uint32(t[3])<<24
		size := uint32(t[4]) | uint32(t[5])<<8 | uint32(t[6])<<16 | uint32(t[7])<<24
		body := d.out[d.start:]
		if crc32c.ChecksumIEEE(body) != sum {
			return d.out, d.fail("gzip checksum mismatch")
		}
		if uint32(len(body)) != size {
			return d.out, d.fail("gzip length mismatch")
		}
		d.pos += 8
	}
	return d.out, nil
}

// reserve makes room in d.out for the output the last member's trailer states
// (with the room the fast loop wants past it), so that the output is not
// copied as it grows: up to the limit, and to no more than 32 times the input
// plus 64 KiB, as a trailer may state any size.
func (d *decoder) reserve() {
	if len(d.src) < 18 {
		return
	}
	t := d.src[len(d.src)-4:]
	stated := int(uint32(t[0]) | uint32(t[1])<<8 | uint32(t[2])<<16 | uint32(t[3])<<24)
	n := min(stated+maxMatch+fastSlack, d.limit-len(d.out), 32*len(d.src)+64<<10)
	if cap(d.out)-len(d.out) < n {
		d.out = slices.Grow(d.out, n)
	}
}

// header reads a gzip member header at d.pos.
func (d *decoder) header() error {
	src, p := d.src, d.pos
	if len(src)-p < 10 {
		return d.fail("truncated gzip header")
	}
	if src[p] != 0x1f || src[p+1] != 0x8b {
		return d.fail("not a gzip member")
	}
	if src[p+2] != 8 {
		return d.fail("gzip compression method " + strconv.Itoa(int(src[p+2])) + " is not deflate")
	}
	flags := src[p+3] // reserved bits are ignored, as Java's and Go's readers ignore them
	q := p + 10
	if flags&4 != 0 { // FEXTRA
		if len(src)-q < 2 {
			return d.fail("truncated gzip header")
		}
		q += 2 + (int(src[q]) | int(src[q+1])<<8)
	}
	for _, f := range []byte{8, 16} { // FNAME, FCOMMENT: zero-terminated
		if flags&f == 0 {
			continue
		}
		for q < len(src) && src[q] != 0 {
			q++
		}
		q++
	}
	if flags&2 != 0 { // FHCRC
		if q+2 > len(src) {
			return d.fail("truncated gzip header")
		}
		if uint16(crc32c.ChecksumIEEE(src[p:q])) != uint16(src[q])|uint16(src[q+1])<<8 {
			return d.fail("gzip header checksum mismatch")
		}
		q += 2
	}
	if q > len(src) {
		return d.fail("truncated gzip header")
	}
	d.pos = q
	return nil
}
