// Package codectest makes random kwire messages for tests, fuzz seeds and conformance
// tools. Fill sets every field that exists at a version to a random value that version
// can carry: nullable fields are sometimes null, tagged fields sometimes keep their
// default, arrays are empty or short, strings mix ASCII and non-ASCII text, and flexible
// structs sometimes carry unknown tagged fields.
package codectest

import (
	"fmt"
	"math"
	"math/rand"
	"sort"

	"github.com/kwire/kwire/codec"
)

// Fill replaces m with random content valid at version. It panics only when m is not a
// generated message type, which is a programming error.
func Fill(m codec.Message, r *rand.Rand, version int16) {
	if !fillByType(m, r, version) {
		panic(fmt.Sprintf("codectest: %T is not a generated message", m))
	}
}

// maxDepth bounds nesting so that random messages stay small.
const maxDepth = 3

func arrayLen(r *rand.Rand, depth int) int {
	if depth >= maxDepth {
		return 0
	}
	switch r.Intn(6) {
	case 0:
		return 0
	case 1:
		return 1 + r.Intn(6)
	}
	return 1 + r.Intn(2)
}

// randInt returns a value of the given bit width, often an edge value.
func randInt(r *rand.Rand, bits uint) int64 {
	lo, hi := int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
	if bits == 64 {
		lo, hi = math.MinInt64, math.MaxInt64
	}
	switch r.Intn(8) {
	case 0:
		return lo
	case 1:
		return hi
	case 2:
		return -1
	case 3:
		return 0
	}
	v := int64(r.Uint64())
	return v >> (64 - bits)
}

func randFloat(r *rand.Rand) float64 {
	switch r.Intn(6) {
	case 0:
		return 0
	case 1:
		return math.Inf(1)
	case 2:
		return -math.MaxFloat64
	case 3:
		return math.SmallestNonzeroFloat64
	}
	return r.NormFloat64() * 1e6
}

var words = []string{"", "a", "topic-1", "__consumer_offsets", "héllo wörld", "日本語", "emoji 😀", "quote\" back\\slash", "tab\tnew\nline", "\u0000nul"}

func randString(r *rand.Rand) string {
	if r.Intn(3) == 0 {
		return words[r.Intn(len(words))]
	}
	n := r.Intn(24)
	b := make([]rune, n)
	for i := range b {
		switch r.Intn(10) {
		case 0:
			b[i] = rune(0x80 + r.Intn(0x700))
		case 1:
			b[i] = rune(0x4e00 + r.Intn(0x1000))
		default:
			b[i] = rune('!' + r.Intn(94))
		}
	}
	return string(b)
}

func randBytes(r *rand.Rand) []byte {
	b := make([]byte, r.Intn(40))
	r.Read(b)
	return b
}

func randRecords(r *rand.Rand) []byte {
	b := make([]byte, 1+r.Intn(100))
	r.Read(b)
	return b
}

func randUUID(r *rand.Rand) (u codec.UUID) {
	if r.Intn(5) == 0 {
		return u
	}
	r.Read(u[:])
	return u
}

// unknownTags returns one to three ascending tags that none of the known ones use.
func unknownTags(r *rand.Rand, known []uint32) []codec.TaggedField {
	used := map[uint32]bool{}
	for _, k := range known {
		used[k] = true
	}
	n := 1 + r.Intn(3)
	var out []codec.TaggedField
	for len(out) < n {
		var tag uint32
		if r.Intn(2) == 0 {
			tag = uint32(r.Intn(20))
		} else {
			tag = uint32(100 + r.Intn(100000))
		}
		if used[tag] {
			continue
		}
		used[tag] = true
		out = append(out, codec.TaggedField{Tag: tag, Data: randBytes(r)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tag < out[j].Tag })
	return out
}
