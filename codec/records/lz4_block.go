package records

import (
	"encoding/binary"
	"errors"
)

var le = binary.LittleEndian

// The LZ4 block format: a sequence of sequences, each a token byte (high
// nibble: literal count, low nibble: match length - 4), more literal-count
// bytes when the nibble is 15 (each adds its value; 255 means another follows),
// the literals, then - except in the last sequence, which ends the block after
// its literals - a 2-byte little-endian match offset (1..65535) and more
// match-length bytes when the low nibble is 15. A match repeats bytes from
// offset back in the output (it may overlap what it writes) and, for a block
// of a frame with dependent blocks, from the frame's earlier output.

var (
	errLZ4 = errors.New("bad block")
	// errLZ4Short: the block decodes to more than the room it was given.
	errLZ4Short = errors.New("lz4: block decodes past the room for it")
)

// lz4DecodeGeneric decodes one LZ4 block into buf[start:len(buf)] and returns
// how many bytes it wrote. Matches may reach back to buf[base] (base <= start): base ==
// start for an independent block, the start of the frame's output (or the start
// of a dictionary) for a dependent one. It fails with errLZ4Short when the
// output does not fit in buf, and with an error wrapping errLZ4 when the block
// is malformed: truncated, an offset of 0 or before base, a block that ends
// in a match or in a token announcing one, or no token at all.
//
// It is the plain-Go decoder, the reference for every build: lz4Decode
// (blockkernel_*.go) is this function, or in WebAssembly builds a kernel that
// falls back to it for the exact error whenever a block is not well-formed.
// Bytes of buf[start:] past the decoded output may be written over.
func lz4DecodeGeneric(buf []byte, base, start int, src []byte) (int, error) {
	if len(src) == 0 {
		return 0, detail(errLZ4, "empty block")
	}
	d, s := start, 0
	for {
		at := s
		tok := src[s]
		s++
		// Literals.
		n := int(tok >> 4)
		if n == 15 {
			var err error
			if n, s, err = lz4Length(src, s, n, at); err != nil {
				return 0, err
			}
		}
		if n > len(src)-s {
			return 0, detail(errLZ4, "%d literals at byte %d run past the block", n, at)
		}
		if n > len(buf)-d {
			return 0, errLZ4Short
		}
		if n <= 16 && len(src)-s >= 16 && len(buf)-d >= 16 {
			// Short literals: one fixed 16-byte move (what lies past n is
			// overwritten next or is not part of the output).
			le.PutUint64(buf[d:], le.Uint64(src[s:]))
			le.PutUint64(buf[d+8:], le.Uint64(src[s+8:]))
		} else {
			copy(buf[d:], src[s:s+n])
		}
		d += n
		s += n
		if s == len(src) {
			// The last sequence: literals only, so no match length either.
			if tok&15 != 0 {
				return 0, detail(errLZ4, "the last sequence at byte %d has a match length but no match", at)
			}
			return d - start, nil
		}
		// Match.
		if len(src)-s < 2 {
			return 0, detail(errLZ4, "match offset truncated at byte %d", s)
		}
		offset := int(src[s]) | int(src[s+1])<<8
		s += 2
		if offset == 0 || offset > d-base {
			return 0, detail(errLZ4, "match at byte %d reaches %d bytes back, %d available", at, offset, d-base)
		}
		n = int(tok&15) + 4
		if n == 19 {
			var err error
			if n, s, err = lz4Length(src, s, n, at); err != nil {
				return 0, err
			}
		}
		if n > len(buf)-d {
			return 0, errLZ4Short
		}
		if n <= 64 && offset >= 8 && len(buf)-d >= n+8 {
			// Short matches: 8-byte moves, each reading only bytes already
			// written (offset >= 8).
			for i := 0; i < n; i += 8 {
				le.PutUint64(buf[d+i:], le.Uint64(buf[d+i-offset:]))
			}
		} else {
			copyMatch(buf, d, offset, n)
		}
		d += n
		if s == len(src) {
			// A block must end with literals; one ending in a match was cut.
			return 0, detail(errLZ4, "block ends inside the sequence at byte %d", at)
		}
	}
}

// lz4Length adds the extra length bytes at src[s:] to n. A length beyond any
// block's reach is corrupt.
func lz4Length(src []byte, s, n, at int) (int, int, error) {
	for {
		if s >= len(src) {
			return 0, 0, detail(errLZ4, "length truncated in the sequence at byte %d", at)
		}
		b := src[s]
		s++
		n += int(b)
		if b != 255 {
			return n, s, nil
		}
		if n > 1<<30 {
			return 0, 0, detail(errLZ4, "length over 1 GiB in the sequence at byte %d", at)
		}
	}
}
