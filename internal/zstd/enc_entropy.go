package zstd

import (
	"math/bits"

	"github.com/kwire/kwire/internal/compkit"
)

// The encoder's entropy coders: the forward bit writer, FSE tables (counts
// normalized, described and encoded) and Huffman codes for literals.

// bitWriter writes a bitstream that the backward bitReader reads: bits go in
// from the lowest, and close adds the 1 bit that marks where they end.
type bitWriter struct {
	out []byte
	acc uint64
	n   uint
}

// add writes the low nb bits of v (nb <= 32).
func (w *bitWriter) add(v uint64, nb uint) {
	w.acc |= (v & (1<<nb - 1)) << w.n
	w.n += nb
	if w.n >= 32 {
		w.out = append(w.out, byte(w.acc), byte(w.acc>>8), byte(w.acc>>16), byte(w.acc>>24))
		w.acc >>= 32
		w.n -= 32
	}
}

func (w *bitWriter) close() []byte {
	w.add(1, 1)
	for w.n > 0 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.n -= min(w.n, 8)
	}
	out := w.out
	*w = bitWriter{out: out[len(out):]}
	return out
}

// fseEnc is an FSE encoding table.
type fseEnc struct {
	log   uint
	state [1 << 9]uint16
	tt    [maxNormSymbols]struct{ deltaNb, deltaFind int32 }
}

// build fills c from normalized counts (which sum to 1<<log, -1 counting 1).
// The spread of symbols over states is the decoder's (buildFSE).
func (c *fseEnc) build(norm []int16, log uint) {
	size := 1 << log
	var sym [1 << 9]uint8
	var cumul [maxNormSymbols + 1]int
	high := size - 1
	for s, n := range norm {
		if n == -1 {
			cumul[s+1] = cumul[s] + 1
			sym[high] = uint8(s)
			high--
		} else {
			cumul[s+1] = cumul[s] + int(n)
		}
	}
	mask, step, pos := size-1, size>>1+size>>3+3, 0
	for s, n := range norm {
		for i := 0; i < int(n); i++ {
			sym[pos] = uint8(s)
			pos = (pos + step) & mask
			for pos > high {
				pos = (pos + step) & mask
			}
		}
	}
	for u := 0; u < size; u++ {
		s := sym[u]
		c.state[cumul[s]] = uint16(size + u)
		cumul[s]++
	}
	c.log = log
	total := 0
	for s, n := range norm {
		t := &c.tt[s]
		switch n {
		case 0:
			t.deltaNb, t.deltaFind = int32((log+1)<<16)-int32(size), 0
		case -1, 1:
			t.deltaNb, t.deltaFind = int32(log<<16)-int32(size), int32(total-1)
			total++
		default:
			maxOut := log - uint(bits.Len(uint(n-1))-1)
			t.deltaNb, t.deltaFind = int32(maxOut<<16)-int32(int(n)<<maxOut), int32(total-int(n))
			total += int(n)
		}
	}
}

// first returns the state that starts encoding with symbol s (no bits out).
func (c *fseEnc) first(s uint8) uint32 {
	t := c.tt[s]
	nb := (uint32(t.deltaNb) + 1<<15) >> 16
	v := nb<<16 - uint32(t.deltaNb)
	return uint32(c.state[int32(v>>nb)+t.deltaFind])
}

// encode moves state on by symbol s, writing the state's low bits.
func (c *fseEnc) encode(w *bitWriter, state *uint32, s uint8) {
	t := c.tt[s]
	nb := (*state + uint32(t.deltaNb)) >> 16
	w.add(uint64(*state), uint(nb))
	*state = uint32(c.state[int32(*state>>nb)+t.deltaFind])
}

// fseLog picks an accuracy log for n symbols to code whose largest value is
// maxSym, at most maxLog (as the reference encoder does).
func fseLog(n, maxSym int, maxLog uint) uint {
	log := int(maxLog)
	if src := bits.Len(uint(n-1)) - 1 - 2; src < log {
		log = src
	}
	log = max(log, min(bits.Len(uint(n)), bits.Len(uint(maxSym))+1), 5)
	return uint(min(log, int(maxLog)))
}

// normalize scales counts (of total symbols) to sum to 1<<log, every used
// symbol at least 1, into norm.
func normalize(norm []int16, count []uint32, total int, log uint) {
	size := 1 << log
	sum, big := 0, 0
	for s, c := range count {
		if c == 0 {
			norm[s] = 0
			continue
		}
		n := int((uint64(c)<<log + uint64(total)/2) / uint64(total))
		n = max(n, 1)
		norm[s] = int16(n)
		sum += n
		if n > int(norm[big]) || count[big] == 0 {
			big = s
		}
	}
	// Give or take the rounding's difference, from the largest counts.
	for sum > size {
		b := big
		for s := range norm[:len(count)] {
			if norm[s] > norm[b] {
				b = s
			}
		}
		norm[b]--
		sum--
	}
	norm[big] += int16(size - sum)
}

// appendNCount appends the FSE table description of norm (its last symbol
// non-zero).
func appendNCount(dst []byte, norm []int16, log uint) []byte {
	var w bitWriter
	w.out = dst
	w.add(uint64(log-5), 4)
	remaining := 1<<log + 1
	threshold := 1 << log
	nb := log + 1
	prev0 := false
	for s := 0; s < len(norm) && remaining > 1; {
		if prev0 {
			start := s
			for s < len(norm) && norm[s] == 0 {
				s++
			}
			for s >= start+24 {
				start += 24
				w.add(0xFFFF, 16)
			}
			for s >= start+3 {
				start += 3
				w.add(3, 2)
			}
			w.add(uint64(s-start), 2)
		}
		c := int(norm[s])
		s++
		max := 2*threshold - 1 - remaining
		if c < 0 {
			remaining += c
		} else {
			remaining -= c
		}
		c++
		if c >= threshold {
			c += max
		}
		// Below max the top bit is 0 and is left out.
		if c < max {
			w.add(uint64(c), nb-1)
		} else {
			w.add(uint64(c), nb)
		}
		prev0 = c == 1
		for remaining < threshold {
			nb--
			threshold >>= 1
		}
	}
	for w.n > 0 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.n -= min(w.n, 8)
	}
	return w.out
}

// usedSymbols returns the largest symbol with a non-zero count and how many
// symbols have one.
func usedSymbols(count []uint32) (top, used int) {
	for s, c := range count {
		if c != 0 {
			top = s
			used++
		}
	}
	return top, used
}

// fseCost is the size in bits of coding count with norm (accuracy log), or -1
// when norm lacks a symbol count has.
func fseCost(count []uint32, norm []int16, log uint) int {
	bitsTotal := 0
	for s, c := range count {
		if c == 0 {
			continue
		}
		if s >= len(norm) || norm[s] == 0 {
			return -1
		}
		n := max(int(norm[s]), 1)
		// log2(size/n) in 1/256 bits.
		bitsTotal += int(c) * (int(log)<<8 - log2x256(n))
	}
	return bitsTotal >> 8
}

// log2x256 is about 256*log2(n) for n >= 1.
func log2x256(n int) int {
	l := bits.Len(uint(n)) - 1
	// Linear between powers of two, a close enough estimate for choosing.
	frac := (n<<8)>>l - 256
	return l<<8 + frac
}

// ---- Huffman ----

// huffEnc is a Huffman code for literals.
type huffEnc struct {
	code    [256]uint16
	bits    [256]uint8
	maxBits uint
	b       compkit.HuffmanBuilder // scratch
}

// build makes a code of at most maxHuffBits for the symbols of count (at
// least two of them used; maxSym is the largest). It reports false when it
// cannot.
func (h *huffEnc) build(count *[256]uint32, maxSym int) bool {
	deepest := h.b.Lengths(count[:maxSym+1], maxHuffBits, h.bits[:])
	if deepest == 0 {
		return false
	}
	h.maxBits = uint(deepest)
	// Canonical codes, as the decoder assigns them: by weight, then symbol.
	var start [maxHuffBits + 2]uint32
	for s := 0; s <= maxSym; s++ {
		if b := h.bits[s]; b != 0 {
			w := h.maxBits + 1 - uint(b)
			start[w+1] += 1 << (w - 1)
		}
	}
	for w := 1; w <= maxHuffBits+1; w++ {
		start[w] += start[w-1]
	}
	for s := 0; s <= maxSym; s++ {
		if b := h.bits[s]; b != 0 {
			w := h.maxBits + 1 - uint(b)
			h.code[s] = uint16(start[w] >> (w - 1))
			start[w] += 1 << (w - 1)
		}
	}
	return true
}

// appendTree appends the Huffman tree description (weights of symbols
// 0..maxSym-1) and reports false when it cannot be written.
func (h *huffEnc) appendTree(dst []byte, maxSym int, fse *fseEnc) ([]byte, bool) {
	var weights [256]uint8
	nw := maxSym
	for s := 0; s < nw; s++ {
		if b := h.bits[s]; b != 0 {
			weights[s] = uint8(h.maxBits + 1 - uint(b))
		}
	}
	// FSE-compressed weights, when they are shorter or the only way.
	start := len(dst)
	if nw >= 2 {
		var count [maxHuffBits + 1]uint32
		top := 0
		for _, w := range weights[:nw] {
			count[w]++
			top = max(top, int(w))
		}
		log := fseLog(nw, top, maxWeightLog)
		var norm [maxHuffBits + 1]int16
		normalize(norm[:top+1], count[:top+1], nw, log)
		fse.build(norm[:top+1], log)
		out := appendNCount(append(dst, 0), norm[:top+1], log)
		var w bitWriter
		w.out = out
		// Two interleaved states, the first weight read from state 1.
		var s1, s2 uint32
		i := nw
		if nw&1 == 1 {
			s1 = fse.first(weights[i-1])
			s2 = fse.first(weights[i-2])
			fse.encode(&w, &s1, weights[i-3])
			i -= 3
		} else {
			s2 = fse.first(weights[i-1])
			s1 = fse.first(weights[i-2])
			i -= 2
		}
		for ; i > 0; i -= 2 {
			fse.encode(&w, &s2, weights[i-1])
			fse.encode(&w, &s1, weights[i-2])
		}
		w.add(uint64(s2), log)
		w.add(uint64(s1), log)
		out = w.close()
		n := len(out) - start - 1
		if n < 128 && (nw > 128 || n < (nw+1)/2) {
			out[start] = byte(n)
			return out, true
		}
		dst = out[:start]
	}
	if nw > 128 {
		return dst, false
	}
	dst = append(dst, byte(127+nw))
	for i := 0; i < nw; i += 2 {
		dst = append(dst, weights[i]<<4|weights[i+1])
	}
	return dst, true
}

// appendStream appends lits coded as one Huffman stream.
func (h *huffEnc) appendStream(dst, lits []byte) []byte {
	var w bitWriter
	w.out = dst
	for i := len(lits) - 1; i >= 0; i-- {
		s := lits[i]
		w.add(uint64(h.code[s]), uint(h.bits[s]))
	}
	return w.close()
}
