package records

import (
	"encoding/binary"
	"errors"
)

// The snappy block format: the decoded length as a uvarint (at most 5 bytes,
// at most 2^32-1), then elements, each starting with a tag byte whose low two
// bits give its kind:
//
//	00 literal: the upper six bits are length-1 when below 60; 60..63 say that
//	   the length-1 follows in 1..4 little-endian bytes; the literal bytes follow.
//	01 copy: length 4 + bits 2..4 (4..11), offset = bits 5..7 << 8 | next byte.
//	10 copy: length 1 + bits 2..7 (1..64), offset = next 2 bytes, little-endian.
//	11 copy: length 1 + bits 2..7 (1..64), offset = next 4 bytes, little-endian.
//
// A copy repeats length bytes starting offset bytes back in the output (they
// may overlap what the copy itself writes). The decoder below is strict: a zero
// offset, an offset before the start of the output, an element running past
// the declared length or the input, and output shorter than declared are all
// corrupt.

// errSnappy is the cause of every snappy block error; the detail says where.
var errSnappy = errors.New("snappy")

// snappyHeader reads a block's declared decoded length and the size of its
// uvarint.
func snappyHeader(src []byte) (n, hdr int, err error) {
	v, k := binary.Uvarint(src)
	if k <= 0 || k > 5 || v > 0xFFFFFFFF {
		return 0, 0, detail(errSnappy, "bad length header")
	}
	if uint64(int(v)) != v || int(v) < 0 {
		return 0, 0, detail(errSnappy, "length %d does not fit an int", v)
	}
	return int(v), k, nil
}

// snappyDecodeGeneric decodes the elements of a block, which start at src[s] after
// the length header, into dst, which must be exactly as long as the declared
// decoded length; up to 15 bytes of dst's spare capacity may be written over.
// It fails unless the elements fill dst exactly. Byte offsets in its errors
// count from the start of the block.
//
// It is the plain-Go decoder, the reference for every build: snappyDecode
// (blockkernel_*.go) is this function, or in WebAssembly builds a kernel that
// falls back to it for the exact error whenever a block is not well-formed.
func snappyDecodeGeneric(dst, src []byte, s int) error {
	d := 0
	// Short literals and copies are moved 16 bytes at a time where dst's
	// capacity has room: bytes written past a literal or copy are overwritten
	// by the next one or lie past the output.
	room := dst[:cap(dst)]
	for s < len(src) {
		at := s
		tag := src[s]
		var length, offset int
		switch tag & 3 {
		case 0:
			l := int(tag >> 2)
			s++
			if l >= 60 {
				k := l - 59 // 1..4 length bytes
				if len(src)-s < k {
					return detail(errSnappy, "literal length truncated at byte %d", at)
				}
				var u uint32
				for i := k - 1; i >= 0; i-- {
					u = u<<8 | uint32(src[s+i])
				}
				s += k
				if uint64(u)+1 > uint64(len(dst)-d) {
					return detail(errSnappy, "literal of %d bytes at byte %d runs past the declared length", uint64(u)+1, at)
				}
				l = int(u)
			}
			length = l + 1
			if length > len(dst)-d {
				return detail(errSnappy, "literal of %d bytes at byte %d runs past the declared length", length, at)
			}
			if length > len(src)-s {
				return detail(errSnappy, "literal of %d bytes at byte %d runs past the input", length, at)
			}
			if length <= 16 && len(src)-s >= 16 && len(room)-d >= 16 {
				le.PutUint64(room[d:], le.Uint64(src[s:]))
				le.PutUint64(room[d+8:], le.Uint64(src[s+8:]))
			} else {
				copy(dst[d:], src[s:s+length])
			}
			d += length
			s += length
			continue
		case 1:
			if len(src)-s < 2 {
				return detail(errSnappy, "copy truncated at byte %d", at)
			}
			length = 4 + int(tag>>2)&7
			offset = int(tag>>5)<<8 | int(src[s+1])
			s += 2
		case 2:
			if len(src)-s < 3 {
				return detail(errSnappy, "copy truncated at byte %d", at)
			}
			length = 1 + int(tag>>2)
			offset = int(binary.LittleEndian.Uint16(src[s+1:]))
			s += 3
		case 3:
			if len(src)-s < 5 {
				return detail(errSnappy, "copy truncated at byte %d", at)
			}
			length = 1 + int(tag>>2)
			u := binary.LittleEndian.Uint32(src[s+1:])
			if uint64(u) > uint64(d) {
				return detail(errSnappy, "copy at byte %d reaches %d bytes back, %d written", at, u, d)
			}
			offset = int(u)
			s += 5
		}
		if offset == 0 || offset > d {
			return detail(errSnappy, "copy at byte %d reaches %d bytes back, %d written", at, offset, d)
		}
		if length > len(dst)-d {
			return detail(errSnappy, "copy of %d bytes at byte %d runs past the declared length", length, at)
		}
		if length <= 64 && offset >= 8 && len(room)-d >= length+8 {
			// Short matches: 8-byte moves, each reading only bytes already
			// written (offset >= 8).
			for i := 0; i < length; i += 8 {
				le.PutUint64(room[d+i:], le.Uint64(room[d+i-offset:]))
			}
		} else {
			copyMatch(dst, d, offset, length)
		}
		d += length
	}
	if d != len(dst) {
		return detail(errSnappy, "decoded %d bytes, the header says %d", d, len(dst))
	}
	return nil
}

// copyMatch writes length bytes at dst[d:] repeating those offset bytes back;
// the source may overlap the destination (offset < length repeats a pattern).
// The caller has checked 0 < offset <= d and d+length <= len(dst).
func copyMatch(dst []byte, d, offset, length int) {
	if offset >= length {
		copy(dst[d:d+length], dst[d-offset:])
		return
	}
	// Overlapping: copy the pattern, doubling the copied run each time.
	end := d + length
	for d < end {
		n := copy(dst[d:end], dst[d-offset:d])
		d += n
		offset += n
	}
}
