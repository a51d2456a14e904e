package zstd

import (
	"math/bits"
)

// XXH64 constants (from the xxHash specification).
const (
	xxP1 uint64 = 11400714785074694791
	xxP2 uint64 = 14029467366897019727
	xxP3 uint64 = 1609587929392839161
	xxP4 uint64 = 9650029242287828579
	xxP5 uint64 = 2870177450012600261
)

func xxRound(acc, lane uint64) uint64 {
	return bits.RotateLeft64(acc+lane*xxP2, 31) * xxP1
}

// xxh64 is XXH64 of b with seed 0.
func xxh64(b []byte) uint64 {
	n := uint64(len(b))
	var h uint64
	if len(b) >= 32 {
		p1, p2 := xxP1, xxP2 // variables: the sums below wrap around
		v1, v2, v3, v4 := p1+p2, p2, uint64(0), -p1
		for len(b) >= 32 {
			v1 = xxRound(v1, le64(b))
			v2 = xxRound(v2, le64(b[8:]))
			v3 = xxRound(v3, le64(b[16:]))
			v4 = xxRound(v4, le64(b[24:]))
			b = b[32:]
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		for _, v := range [4]uint64{v1, v2, v3, v4} {
			h ^= xxRound(0, v)
			h = h*xxP1 + xxP4
		}
	} else {
		h = xxP5
	}
	h += n
	for ; len(b) >= 8; b = b[8:] {
		h ^= xxRound(0, le64(b))
		h = bits.RotateLeft64(h, 27)*xxP1 + xxP4
	}
	if len(b) >= 4 {
		h ^= uint64(le32(b)) * xxP1
		h = bits.RotateLeft64(h, 23)*xxP2 + xxP3
		b = b[4:]
	}
	for _, c := range b {
		h ^= uint64(c) * xxP5
		h = bits.RotateLeft64(h, 11) * xxP1
	}
	h ^= h >> 33
	h *= xxP2
	h ^= h >> 29
	h *= xxP3
	h ^= h >> 32
	return h
}
