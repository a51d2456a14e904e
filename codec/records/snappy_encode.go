//go:build !kwire_nocompress

package records

import (
	"encoding/binary"

	"github.com/kwire/kwire/internal/compkit"
)

// kwire's snappy block encoder: input is cut into 64 KiB blocks (as snappy
// does, so every copy fits the 2-byte-offset form) and each block is matched
// greedily against tables of 8- and 4-byte hashes of earlier positions in the
// block.
// It writes valid snappy; its bytes are not meant to equal any other encoder's.

const (
	snappyBlockMax  = 64 << 10
	snappyTableBits = 14
	// snappyTailLen: a block shorter than this many bytes plus 8 is all one
	// literal; in longer ones, matches start at least 8 bytes before the end.
	snappyTailLen = 4
)

// snappyMaxEncodedLen bounds the encoded size of n bytes (the header, and the
// worst case of all-literal blocks, with room to spare).
func snappyMaxEncodedLen(n int) int { return 32 + n + n/6 }

// snappyEncoder holds the hash tables; it is pooled.
type snappyEncoder struct {
	short [1 << snappyTableBits]uint16 // positions by a hash of 4 bytes
	long  [1 << snappyTableBits]uint16 // positions by a hash of 8 bytes
}

var snappyEncoders = codecPool{New: func() any { return new(snappyEncoder) }}

// snappyEncode appends src as one snappy block (length header and elements).
func snappyEncode(dst, src []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(src)))
	if len(src) == 0 {
		return dst
	}
	e := snappyEncoders.Get().(*snappyEncoder)
	defer snappyEncoders.Put(e)
	for len(src) > 0 {
		block := src
		if len(block) > snappyBlockMax {
			block = block[:snappyBlockMax]
		}
		src = src[len(block):]
		dst = e.encodeBlock(dst, block)
	}
	return dst
}

func snappyHash4(u uint64) uint32 {
	return (uint32(u) * 0x1E35A7BD) >> (32 - snappyTableBits)
}

func snappyHash8(u uint64) uint32 {
	return uint32((u * 0xCF1BBCDCB7A56463) >> (64 - snappyTableBits))
}

// encodeBlock appends the elements for one block of at most 64 KiB. At each
// position it looks up the last position with the same 8 bytes (by hash),
// then the last with the same 4; it takes the first that really matches,
// extends it both ways and emits the literals before it and the copy.
func (e *snappyEncoder) encodeBlock(dst, src []byte) []byte {
	if len(src) < snappyTailLen+8 {
		return appendSnappyLiteral(dst, src)
	}
	clear(e.short[:])
	clear(e.long[:])
	lit := 0              // start of the pending literal run
	limit := len(src) - 8 // positions hashed: 8 bytes must follow
	misses := 32          // after every 32 misses in a row, the scan step grows by 1
	for s := 1; s < limit; {
		u := binary.LittleEndian.Uint64(src[s:])
		hl, hs := snappyHash8(u), snappyHash4(u)
		candL, candS := int(e.long[hl]), int(e.short[hs])
		e.long[hl], e.short[hs] = uint16(s), uint16(s)
		cand := -1
		if candL < s && binary.LittleEndian.Uint64(src[candL:]) == u {
			cand = candL
		} else if candS < s && binary.LittleEndian.Uint32(src[candS:]) == uint32(u) {
			cand = candS
		}
		if cand < 0 {
			s += misses >> 5
			misses++
			continue
		}
		misses = 32
		// Extend the match backwards over the pending literals, then forwards.
		for cand > 0 && s > lit && src[cand-1] == src[s-1] {
			cand--
			s--
		}
		n := 4 + compkit.MatchLen(src[cand+4:], src[s+4:])
		dst = appendSnappyLiteral(dst, src[lit:s])
		dst = appendSnappyCopy(dst, s-cand, n)
		s += n
		lit = s
		// Remember the last positions inside the match too, so a repeat of
		// what follows it is found.
		for p := max(s-3, s-n); p < s && p < limit; p++ {
			v := binary.LittleEndian.Uint64(src[p:])
			e.long[snappyHash8(v)], e.short[snappyHash4(v)] = uint16(p), uint16(p)
		}
	}
	return appendSnappyLiteral(dst, src[lit:])
}

// appendSnappyLiteral appends lit as one literal element (none if empty).
func appendSnappyLiteral(dst, lit []byte) []byte {
	n := len(lit) - 1
	switch {
	case n < 0:
		return dst
	case n < 60:
		dst = append(dst, byte(n)<<2)
	case n < 1<<8:
		dst = append(dst, 60<<2, byte(n))
	case n < 1<<16:
		dst = append(dst, 61<<2, byte(n), byte(n>>8))
	case n < 1<<24:
		dst = append(dst, 62<<2, byte(n), byte(n>>8), byte(n>>16))
	default:
		dst = append(dst, 63<<2, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	}
	return append(dst, lit...)
}

// appendSnappyCopy appends copy elements repeating n >= 4 bytes from offset
// (1..65535) back. A copy element carries at most 64 bytes; longer ones are
// split so that no piece is shorter than 4.
func appendSnappyCopy(dst []byte, offset, n int) []byte {
	for n >= 68 {
		dst = append(dst, 63<<2|2, byte(offset), byte(offset>>8))
		n -= 64
	}
	if n > 64 {
		dst = append(dst, 59<<2|2, byte(offset), byte(offset>>8))
		n -= 60
	}
	if n <= 11 && offset < 2048 {
		return append(dst, byte(offset>>8)<<5|byte(n-4)<<2|1, byte(offset))
	}
	return append(dst, byte(n-1)<<2|2, byte(offset), byte(offset>>8))
}

// appendSnappy appends src compressed with snappy: as one raw block when raw,
// else in xerial framing.
func appendSnappy(dst, src []byte, raw bool) []byte {
	if raw {
		return appendSnappyBlock(dst, src, false)
	}
	return appendXerial(dst, src)
}

// appendXerial appends src compressed with snappy in xerial framing.
func appendXerial(dst, src []byte) []byte {
	dst = append(dst, xerialMagic...)
	dst = append(dst, 0, 0, 0, 1, 0, 0, 0, 1)
	for len(src) > 0 {
		chunk := src
		if len(chunk) > xerialChunk {
			chunk = chunk[:xerialChunk]
		}
		src = src[len(chunk):]
		dst = appendSnappyBlock(dst, chunk, true)
	}
	return dst
}

// appendSnappyBlock appends one raw snappy block, with a 4-byte big-endian length
// before it when framed.
func appendSnappyBlock(dst, src []byte, framed bool) []byte {
	hdr := 0
	if framed {
		hdr = 4
	}
	need := hdr + snappyMaxEncodedLen(len(src))
	if cap(dst)-len(dst) < need {
		nd := make([]byte, len(dst), 2*cap(dst)+need)
		copy(nd, dst)
		dst = nd
	}
	start := len(dst)
	dst = snappyEncode(dst[:start+hdr], src)
	if framed {
		be.PutUint32(dst[start:], uint32(len(dst)-start-hdr))
	}
	return dst
}
