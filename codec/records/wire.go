package records

import (
	"encoding/binary"
	"math/bits"

	"github.com/kwire/kwire/internal/crc32c"
)

// CRC32C is the checksum of a magic 2 batch (Castagnoli polynomial). In the
// WebAssembly build it runs a hand-written kernel (internal/crc32c).
func CRC32C(b []byte) uint32 { return crc32c.Checksum(b) }

// CRC32 is the checksum of a legacy (magic 0 and 1) message (IEEE polynomial),
// by the same kernel in the WebAssembly build.
func CRC32(b []byte) uint32 { return crc32c.ChecksumIEEE(b) }

var be = binary.BigEndian

// appendVarint appends v as a zigzag varint: the bytes of appendVarlong, as
// zigzag coding gives an int32 the same number as the int64 of equal value.
func appendVarint(b []byte, v int32) []byte { return appendVarlong(b, int64(v)) }

// appendVarlong appends v as a zigzag varlong.
func appendVarlong(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// sizeVarint is the size of appendVarint's bytes.
func sizeVarint(v int32) int { return sizeVarlong(int64(v)) }

func sizeVarlong(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	return (bits.Len64(u|1) + 6) / 7
}

// xxh32 is the 32-bit xxHash (seed 0), used by the LZ4 frame format.
func xxh32(b []byte) uint32 {
	const (
		p1 uint32 = 2654435761
		p2 uint32 = 2246822519
		p3 uint32 = 3266489917
		p4 uint32 = 668265263
		p5 uint32 = 374761393
	)
	n := len(b)
	var h uint32
	if n >= 16 {
		q1, q2 := p1, p2 // variables: the sums below wrap
		v1 := q1 + q2
		v2 := q2
		v3 := uint32(0)
		v4 := -q1
		for len(b) >= 16 {
			v1 = bits.RotateLeft32(v1+binary.LittleEndian.Uint32(b[0:])*p2, 13) * p1
			v2 = bits.RotateLeft32(v2+binary.LittleEndian.Uint32(b[4:])*p2, 13) * p1
			v3 = bits.RotateLeft32(v3+binary.LittleEndian.Uint32(b[8:])*p2, 13) * p1
			v4 = bits.RotateLeft32(v4+binary.LittleEndian.Uint32(b[12:])*p2, 13) * p1
			b = b[16:]
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = p5
	}
	h += uint32(n)
	for len(b) >= 4 {
		h += binary.LittleEndian.Uint32(b) * p3
		h = bits.RotateLeft32(h, 17) * p4
		b = b[4:]
	}
	for _, c := range b {
		h += uint32(c) * p5
		h = bits.RotateLeft32(h, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}
