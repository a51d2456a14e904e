// Package zstd decodes Zstandard frames (RFC 8878) and encodes them at one
// fast level (Encoder); no dictionaries. It runs on one goroutine and imports only small
// standard packages, so that it stays small when compiled to WebAssembly.
//
// The output buffer is the decoding history: a frame is decoded straight into
// the caller's slice, and match offsets refer back into it. Memory use is
// therefore bounded by the caller's output limit plus a few fixed tables.
package zstd

import (
	"errors"
)

// ErrCorrupt is wrapped by every error DecodeAll returns for input that is not
// valid zstd.
var ErrCorrupt = errors.New("zstd: corrupt input")

// ErrTooLarge is wrapped by the error DecodeAll returns when the output would
// exceed the caller's limit.
var ErrTooLarge = errors.New("zstd: output exceeds the limit")

const (
	frameMagic     = 0xFD2FB528
	skippableMagic = 0x184D2A50 // low four bits vary
	maxBlockSize   = 128 << 10
)

// Decoder decodes zstd frames. The zero value is ready to use; a Decoder keeps
// its tables between calls to avoid allocating, and is not safe for concurrent
// use.
type Decoder struct {
	// Per-frame state.
	frameStart int    // len(dst) when the current frame started
	end        int    // output length the frame may not pass
	maxLen     int    // output length the whole call may not pass (capacity cap)
	endCorrupt bool   // passing end means a wrong content size (not the limit)
	window     uint64 // the frame's window size
	reps       [3]int // repeat offsets

	huffBits uint8 // max code length of the current Huffman table; 0: none
	seq      [3]fseTable

	lit     []byte // decoded literals of the current block
	huff    [1 << maxHuffBits]uint16
	weights [256]uint8
	wtab    [1 << maxWeightLog]fseEntry
	norm    [maxNormSymbols]int16
}

// decodeError is the error type DecodeAll returns: a kind (ErrCorrupt or
// ErrTooLarge), what went wrong, and the input offset where it was noticed.
// Each '#' in msg stands for the next of args; the text is put together only
// when Error is called.
type decodeError struct {
	kind error
	msg  string
	off  int
	args [2]uint64
}

func (e *decodeError) Error() string {
	b := append([]byte(e.kind.Error()), ": "...)
	k := 0
	for i := 0; i < len(e.msg); i++ {
		if e.msg[i] == '#' && k < len(e.args) {
			b = append(b, itoa(e.args[k])...)
			k++
		} else {
			b = append(b, e.msg[i])
		}
	}
	b = append(b, " at input byte "...)
	return string(append(b, itoa(uint64(e.off))...))
}

func (e *decodeError) Unwrap() error { return e.kind }

// newError is kept out of line: its many call sites stay one call each.
//
//go:noinline
func newError(kind error, off int, msg string, a, b uint64) error {
	return &decodeError{kind, msg, off, [2]uint64{a, b}}
}

//go:noinline
func corrupt(off int, msg string) error { return &decodeError{kind: ErrCorrupt, msg: msg, off: off} }

func itoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return string(b[i:])
}

// DecodeAll appends the decompressed content of every frame in src (zstd frames
// and skippable frames, one after another) to dst and returns it. The output
// appended never exceeds limit bytes: past it DecodeAll fails with an error
// wrapping ErrTooLarge, and a frame whose header states a larger content size
// than the remaining limit fails before anything is allocated for it. Input that
// is not valid zstd (including an empty src and frames that need a dictionary)
// fails with an error wrapping ErrCorrupt. On error the returned slice is dst as
// it was passed in. Like append, DecodeAll writes into dst's spare capacity; it
// may also leave scratch bytes there past the end of the output (never past
// len(dst)+limit).
func (d *Decoder) DecodeAll(dst, src []byte, limit int) ([]byte, error) {
	orig := dst
	if len(src) == 0 {
		return orig, corrupt(0, "empty input")
	}
	if limit < 0 {
		limit = 0
	}
	if maxInt := int(^uint(0) >> 1); limit > maxInt-len(dst) {
		limit = maxInt - len(dst)
	}
	maxLen := len(dst) + limit
	pos := 0
	var err error
	for pos < len(src) {
		if len(src)-pos < 4 {
			return orig, corrupt(pos, "truncated frame magic")
		}
		m := le32(src[pos:])
		if m&^0xF == skippableMagic {
			if len(src)-pos < 8 {
				return orig, corrupt(pos, "truncated skippable frame header")
			}
			n := uint64(le32(src[pos+4:]))
			if n > uint64(len(src)-pos-8) {
				return orig, corrupt(pos, "truncated skippable frame")
			}
			pos += 8 + int(n)
			continue
		}
		if m != frameMagic {
			return orig, corrupt(pos, "not a zstd frame (bad magic number)")
		}
		dst, pos, err = d.frame(dst, src, pos, maxLen)
		if err != nil {
			return orig, err
		}
	}
	return dst, nil
}

// frame decodes the frame at src[pos:] (its magic number already checked).
func (d *Decoder) frame(dst, src []byte, pos, maxLen int) ([]byte, int, error) {
	start := pos
	p := pos + 4
	if p >= len(src) {
		return dst, p, corrupt(p, "truncated frame header")
	}
	fhd := src[p]
	p++
	if fhd&0x08 != 0 {
		return dst, p, corrupt(p-1, "reserved bit set in frame header")
	}
	single := fhd&0x20 != 0
	if !single {
		if p >= len(src) {
			return dst, p, corrupt(p, "truncated frame header")
		}
		wd := src[p]
		p++
		base := uint64(1) << (10 + wd>>3)
		d.window = base + base/8*uint64(wd&7)
	}
	didSize := [4]int{0, 1, 2, 4}[fhd&3]
	fcsSize := [4]int{0, 2, 4, 8}[fhd>>6]
	if single && fcsSize == 0 {
		fcsSize = 1
	}
	if len(src)-p < didSize+fcsSize {
		return dst, p, corrupt(p, "truncated frame header")
	}
	did := readLE(src[p:], didSize)
	if did != 0 {
		return dst, p, newError(ErrCorrupt, p, "dictionary # not supported", did, 0)
	}
	p += didSize
	fcs := readLE(src[p:], fcsSize)
	if fcsSize == 2 {
		fcs += 256
	}
	p += fcsSize
	if single {
		d.window = fcs
	}

	// Reset the frame state.
	d.frameStart = len(dst)
	d.end, d.endCorrupt, d.maxLen = maxLen, false, maxLen
	if fcsSize > 0 {
		if fcs > uint64(maxLen-len(dst)) {
			return dst, p, newError(ErrTooLarge, start, "frame content size # exceeds the # bytes left under the limit", fcs, uint64(maxLen-len(dst)))
		}
		d.end, d.endCorrupt = len(dst)+int(fcs), true
		// Reserve the stated size, but no more than a generous multiple of
		// the input left: a small input claiming a large size does not get
		// to allocate it before its blocks show it to be true.
		want := int(fcs)
		if most := 32*(len(src)-p) + 64<<10; want > most {
			want = most
		}
		if cap(dst)-len(dst) < want {
			// By doubling (up to the frame's end), so that many small
			// frames do not reallocate once each.
			dst, _ = d.grow(dst, want, start) // want <= d.end-len(dst): no error
		}
	}
	d.reps = [3]int{1, 4, 8}
	d.huffBits = 0
	for i := range d.seq {
		d.seq[i].ok = false
	}

	var err error
	for {
		if len(src)-p < 3 {
			return dst, p, corrupt(p, "truncated block header")
		}
		bh := uint32(src[p]) | uint32(src[p+1])<<8 | uint32(src[p+2])<<16
		at := p
		p += 3
		size := int(bh >> 3)
		if size > maxBlockSize {
			return dst, p, newError(ErrCorrupt, at, "block size # exceeds 128 KiB", uint64(size), 0)
		}
		switch (bh >> 1) & 3 {
		case 0: // raw
			if len(src)-p < size {
				return dst, p, corrupt(at, "truncated raw block")
			}
			if dst, err = d.grow(dst, size, at); err != nil {
				return dst, p, err
			}
			dst = append(dst, src[p:p+size]...)
			p += size
		case 1: // RLE
			if p >= len(src) {
				return dst, p, corrupt(at, "truncated RLE block")
			}
			if dst, err = d.grow(dst, size, at); err != nil {
				return dst, p, err
			}
			l := len(dst)
			dst = dst[:l+size]
			fill(dst[l:], src[p])
			p++
		case 2: // compressed
			if len(src)-p < size {
				return dst, p, corrupt(at, "truncated compressed block")
			}
			if dst, err = d.block(dst, src[p:p+size], p); err != nil {
				return dst, p, err
			}
			p += size
		default:
			return dst, p, corrupt(at, "reserved block type")
		}
		if bh&1 != 0 {
			break
		}
	}
	if fcsSize > 0 && len(dst) != d.end {
		return dst, p, newError(ErrCorrupt, p, "frame content size # but # bytes decoded", fcs, uint64(len(dst)-d.frameStart))
	}
	if fhd&4 != 0 {
		if len(src)-p < 4 {
			return dst, p, corrupt(p, "truncated content checksum")
		}
		want := le32(src[p:])
		if got := uint32(xxh64(dst[d.frameStart:])); got != want {
			return dst, p, corrupt(p, "content checksum mismatch")
		}
		p += 4
	}
	return dst, p, nil
}

func readLE(b []byte, n int) uint64 {
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func fill(b []byte, c byte) {
	if len(b) == 0 {
		return
	}
	b[0] = c
	for i := 1; i < len(b); i *= 2 {
		copy(b[i:], b[:i])
	}
}

// grow makes room for n more bytes of output in dst, failing when that would
// pass the frame's end (its content size, or the caller's limit). Capacity
// doubles, up to the caller's limit.
func (d *Decoder) grow(dst []byte, n, at int) ([]byte, error) {
	if n > d.end-len(dst) {
		if d.endCorrupt {
			return dst, corrupt(at, "frame content exceeds its stated content size")
		}
		return dst, newError(ErrTooLarge, at, "decoded output passes the limit", 0, 0)
	}
	if cap(dst)-len(dst) >= n {
		return dst, nil
	}
	c := 2 * cap(dst)
	if c < len(dst)+n {
		c = len(dst) + n
	}
	if c < 4096 {
		c = 4096
	}
	if c > d.maxLen {
		c = d.maxLen
	}
	nd := make([]byte, len(dst), c)
	copy(nd, dst)
	return nd, nil
}

// Little-endian loads, written out so that the package needs no
// encoding/binary (which links in reflect and strconv).
func le16(b []byte) uint16 { _ = b[1]; return uint16(b[0]) | uint16(b[1])<<8 }

func le32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func le64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}
