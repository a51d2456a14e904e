// Package compkit holds what kwire's own compressors (internal/deflate,
// internal/lz4enc, internal/zstd and the snappy encoder of codec/records) have
// in common: the match-length loop of their matchers and the builder of
// length-limited Huffman codes.
//
// Like its users it is plain Go for the WebAssembly builds: no unsafe, no
// assembly, and it imports only encoding/binary and math/bits.
package compkit

import (
	"encoding/binary"
	"math/bits"
)

// MatchLen returns how many leading bytes a and b share.
func MatchLen(a, b []byte) int {
	n := 0
	for len(a) >= 8 && len(b) >= 8 {
		if x := binary.LittleEndian.Uint64(a) ^ binary.LittleEndian.Uint64(b); x != 0 {
			return n + bits.TrailingZeros64(x)>>3
		}
		a, b, n = a[8:], b[8:], n+8
	}
	for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
		n++
	}
	return n
}

// MaxSymbols is the largest alphabet a HuffmanBuilder takes: deflate's 286
// literal/length symbols.
const MaxSymbols = 286

// HuffmanBuilder builds length-limited Huffman codes. It is only scratch
// space, kept so that building allocates nothing; its zero value is ready.
type HuffmanBuilder struct {
	node   [2 * MaxSymbols]uint32
	parent [2 * MaxSymbols]uint16
	order  [MaxSymbols]uint16
}

// Lengths sets lengths[s] to the code length of symbol s for the counts
// count (at most MaxSymbols of them), none longer than limit bits, and every
// other entry of lengths to 0. When the code comes out deeper than limit,
// the counts are flattened (halved, a used symbol kept at 1 or more) and the
// code built again. It returns the deepest length; 0, with lengths left as it
// was, when count uses fewer than two symbols.
func (h *HuffmanBuilder) Lengths(count []uint32, limit uint32, lengths []uint8) uint32 {
	var buf [MaxSymbols]uint32 // the counts, flattened while the code is too deep
	cnt := buf[:len(count)]
	copy(cnt, count)
	for {
		// Leaves by count, smallest first (insertion sort).
		n := 0
		for s := range cnt {
			if cnt[s] == 0 {
				continue
			}
			i := n
			for i > 0 && cnt[h.order[i-1]] > cnt[s] {
				h.order[i] = h.order[i-1]
				i--
			}
			h.order[i] = uint16(s)
			n++
		}
		if n < 2 {
			return 0
		}
		for i := 0; i < n; i++ {
			h.node[i] = cnt[h.order[i]]
		}
		// Two queues: leaves in order, inner nodes as they are made.
		li, ii := 0, n
		pick := func(k int) int {
			if li < n && (ii >= k || h.node[li] <= h.node[ii]) {
				li++
				return li - 1
			}
			ii++
			return ii - 1
		}
		for k := n; k < 2*n-1; k++ {
			a := pick(k)
			b := pick(k)
			h.node[k] = h.node[a] + h.node[b]
			h.parent[a], h.parent[b] = uint16(k), uint16(k)
		}
		// Depths, from the root down (node[] now holds depths).
		root := 2*n - 2
		h.node[root] = 0
		deepest := uint32(0)
		for k := root - 1; k >= 0; k-- {
			h.node[k] = h.node[h.parent[k]] + 1
			if k < n {
				deepest = max(deepest, h.node[k])
			}
		}
		if deepest <= limit {
			clear(lengths)
			for i := 0; i < n; i++ {
				lengths[h.order[i]] = uint8(h.node[i])
			}
			return deepest
		}
		// Too deep: flatten the counts and build again.
		for s := range cnt {
			if cnt[s] != 0 {
				cnt[s] = cnt[s]>>1 | 1
			}
		}
	}
}
