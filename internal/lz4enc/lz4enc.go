// Package lz4enc compresses LZ4 blocks (the block format only; the frame is
// the caller's). It is a greedy single-hash matcher, the "fast" LZ4 of the
// reference implementation: one table of 4-byte hashes, a skip that grows over
// incompressible input, matches extended backwards and forwards.
//
// It is written for the WebAssembly builds: plain Go, no unsafe, no assembly,
// and it imports only encoding/binary and internal/compkit.
package lz4enc

import (
	"encoding/binary"

	"github.com/kwire/kwire/internal/compkit"
)

const (
	minMatch     = 4
	hashLog      = 16
	mfLimit      = 12 // a match starts at least this many bytes before the block's end
	lastLiterals = 5  // the block's last bytes are always literals
	maxOffset    = 65535
	skipTrigger  = 6
	// MaxInput is the largest block AppendBlock takes.
	MaxInput = 0x7E000000
)

// MaxEncodedLen is the most bytes AppendBlock can append for n input bytes.
func MaxEncodedLen(n int) int { return n + n/255 + 16 }

// Encoder compresses LZ4 blocks. The zero value is ready to use; it keeps its
// hash table (256 KiB) between calls and is not safe for concurrent use.
type Encoder struct {
	table [1 << hashLog]int32
	// base is added to a position before it is stored in the table, and grows
	// by more than a block's length plus the largest offset with every call,
	// so that what earlier blocks left in the table never looks like a
	// position of the current one.
	base int32
}

func hash(x uint32) uint32 { return (x * 2654435761) >> (32 - hashLog) }

// AppendBlock appends src compressed as one independent LZ4 block to dst. A
// src longer than MaxInput is appended as literals only.
func (e *Encoder) AppendBlock(dst, src []byte) []byte {
	n := len(src)
	if n > MaxInput {
		return appendLiterals(dst, src)
	}
	if int64(e.base)+int64(n)+2*maxOffset+2 > 1<<31-1 {
		clear(e.table[:])
		e.base = 0
	}
	base := e.base
	e.base += int32(n) + maxOffset + 1
	if n < mfLimit+1 {
		return appendLiterals(dst, src)
	}
	anchor := 0
	limit := n - mfLimit    // last position a match may start at
	end := n - lastLiterals // no match extends past this
	p := 0
	e.table[hash(binary.LittleEndian.Uint32(src))] = base
	p++
	for p <= limit {
		// Find a match, skipping faster the longer none is found.
		var cand int
		attempts := 1 << skipTrigger
		for {
			x := binary.LittleEndian.Uint32(src[p:])
			h := hash(x)
			cand = int(e.table[h] - base)
			e.table[h] = int32(p) + base
			if cand >= 0 && cand < p && p-cand <= maxOffset && binary.LittleEndian.Uint32(src[cand:]) == x {
				break
			}
			p += attempts >> skipTrigger
			attempts++
			if p > limit {
				return appendLiterals(dst, src[anchor:])
			}
		}
		for p > anchor && cand > 0 && src[p-1] == src[cand-1] {
			p--
			cand--
		}
		ml := minMatch + compkit.MatchLen(src[p+minMatch:end], src[cand+minMatch:])
		dst = appendSequence(dst, src[anchor:p], p-cand, ml)
		p += ml
		anchor = p
		if p <= limit {
			// Remember a position inside the match, which finds more repeats.
			e.table[hash(binary.LittleEndian.Uint32(src[p-2:]))] = int32(p-2) + base
		}
	}
	return appendLiterals(dst, src[anchor:])
}

func appendLen(dst []byte, v int) []byte {
	for v >= 255 {
		dst = append(dst, 255)
		v -= 255
	}
	return append(dst, byte(v))
}

// appendSequence appends literals then a match of ml bytes at offset off.
func appendSequence(dst, lits []byte, off, ml int) []byte {
	ll, mc := len(lits), ml-minMatch
	tok := byte(min(ll, 15)<<4) | byte(min(mc, 15))
	dst = append(dst, tok)
	if ll >= 15 {
		dst = appendLen(dst, ll-15)
	}
	dst = append(dst, lits...)
	dst = append(dst, byte(off), byte(off>>8))
	if mc >= 15 {
		dst = appendLen(dst, mc-15)
	}
	return dst
}

// appendLiterals appends the block's last sequence: literals only.
func appendLiterals(dst, lits []byte) []byte {
	ll := len(lits)
	dst = append(dst, byte(min(ll, 15)<<4))
	if ll >= 15 {
		dst = appendLen(dst, ll-15)
	}
	return append(dst, lits...)
}
