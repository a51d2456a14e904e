package zstd

import (
	"math/bits"
)

// bitReader reads a backward bitstream (RFC 8878 section 4.1): bits are read
// from the end of the stream towards its start, and the stream's last byte
// holds a 1 bit marking where the data begins. Past the start it reads zeros
// and counts them in pad, so overrun is detected without a branch per read.
type bitReader struct {
	in  []byte
	off int    // in[:off] is not loaded yet
	v   uint64 // the low n bits are loaded and unread
	n   uint
	pad uint // zero bits loaded from beyond the start of the stream
}

func (b *bitReader) init(in []byte) bool {
	if len(in) == 0 || in[len(in)-1] == 0 {
		return false
	}
	last := in[len(in)-1]
	b.in, b.off, b.v, b.n, b.pad = in, len(in)-1, uint64(last), uint(bits.Len8(last))-1, 0
	b.fill()
	return true
}

// fill loads bytes until at least 57 bits are unread.
func (b *bitReader) fill() {
	if b.n > 56 {
		return
	}
	if b.off >= 8 {
		k := (64 - b.n) >> 3
		w := le64(b.in[b.off-8:])
		b.v = b.v<<(k*8) | w>>(64-k*8)
		b.off -= int(k)
		b.n += k * 8
		return
	}
	for b.n <= 56 {
		if b.off > 0 {
			b.off--
			b.v = b.v<<8 | uint64(b.in[b.off])
		} else {
			b.v <<= 8
			b.pad += 8
		}
		b.n += 8
	}
}

// read returns the next k bits (k <= 56).
func (b *bitReader) read(k uint) uint64 {
	if b.n < k {
		b.fill()
	}
	b.n -= k
	return b.v >> (b.n & 63) & (1<<(k&63) - 1)
}

// take returns the next k bits; the caller has made sure (with fill) that
// at least k bits are loaded.
func (b *bitReader) take(k uint) uint64 {
	b.n -= k
	return b.v >> (b.n & 63) & (1<<(k&63) - 1)
}

// over reports whether more bits were read than the stream holds.
func (b *bitReader) over() bool { return b.off == 0 && b.n < b.pad }

// done reports whether the stream was read exactly to its start.
func (b *bitReader) done() bool { return b.off == 0 && b.n == b.pad }
