package zstd

import (
	"math/bits"
)

const maxNormSymbols = 64 // the largest alphabet (match lengths) has 53 symbols

// fseEntry is one state of an FSE decoding table. For sequence tables base and
// extra already give the symbol's value (base plus extra bits); for Huffman
// weights base is the weight itself. next+(nb bits) is the following state.
type fseEntry struct {
	base  uint32
	next  uint16
	extra uint8
	nb    uint8
}

// fseTable is a sequence decoding table of 1<<log states; ok tells whether it
// may be repeated by the next block.
type fseTable struct {
	e   [1 << 9]fseEntry
	log uint8
	ok  bool
}

// readNCount reads an FSE table description (normalized counts) from the
// start of src into norm. It returns the number of symbols, the accuracy log
// and the bytes used; a non-empty string says what is wrong.
func readNCount(src []byte, norm []int16, maxSym int, maxLog uint) (nsym int, log uint, used int, err string) {
	peek := func(bitPos int) uint32 {
		i := bitPos >> 3
		var v uint32
		if i+4 <= len(src) {
			v = le32(src[i:])
		} else {
			for j := 3; j >= 0; j-- {
				v <<= 8
				if i+j < len(src) {
					v |= uint32(src[i+j])
				}
			}
		}
		return v >> (bitPos & 7)
	}
	if len(src) == 0 {
		return 0, 0, 0, "truncated FSE table description"
	}
	log = uint(src[0]&15) + 5
	if log > maxLog {
		return 0, 0, 0, "FSE accuracy log too large"
	}
	pos := 4
	remaining := 1<<log + 1
	threshold := 1 << log
	nb := int(log) + 1
	for remaining > 1 {
		if nsym > maxSym {
			return 0, 0, 0, "too many symbols in FSE table description"
		}
		v := int(peek(pos))
		max := 2*threshold - 1 - remaining
		var c int
		if v&(threshold-1) < max {
			c = v & (threshold - 1)
			pos += nb - 1
		} else {
			c = v & (2*threshold - 1)
			if c >= threshold {
				c -= max
			}
			pos += nb
		}
		c--
		if c < 0 {
			remaining--
		} else {
			remaining -= c
		}
		norm[nsym] = int16(c)
		nsym++
		if c == 0 {
			for {
				r := int(peek(pos) & 3)
				pos += 2
				if nsym+r > maxSym+1 {
					return 0, 0, 0, "too many symbols in FSE table description"
				}
				for i := 0; i < r; i++ {
					norm[nsym] = 0
					nsym++
				}
				if r != 3 {
					break
				}
			}
		}
		if remaining < 1 {
			return 0, 0, 0, "FSE counts exceed the table size"
		}
		for remaining < threshold {
			nb--
			threshold >>= 1
		}
	}
	used = (pos + 7) >> 3
	if used > len(src) {
		return 0, 0, 0, "truncated FSE table description"
	}
	return nsym, log, used, ""
}

// buildFSE fills t (1<<log entries) from the normalized counts norm; kind
// selects how symbols map to entry values (kindLL, kindOF, kindML, or any
// other value for plain symbols).
func buildFSE(t []fseEntry, norm []int16, log uint, kind int) string {
	var next [maxNormSymbols]uint16
	size := len(t)
	high := size - 1
	for s, c := range norm {
		if c == -1 {
			if high < 0 {
				return "FSE counts exceed the table size"
			}
			t[high].base = uint32(s)
			high--
			next[s] = 1
		} else {
			next[s] = uint16(c)
		}
	}
	mask := size - 1
	step := size>>1 + size>>3 + 3
	pos := 0
	for s, c := range norm {
		for i := 0; i < int(c); i++ {
			t[pos].base = uint32(s)
			pos = (pos + step) & mask
			for pos > high {
				pos = (pos + step) & mask
			}
		}
	}
	if pos != 0 {
		return "FSE counts do not fill the table"
	}
	for u := range t {
		s := int(t[u].base)
		x := next[s]
		next[s]++
		nb := log - uint(bits.Len16(x)-1)
		e := symbolEntry(kind, s)
		e.nb = uint8(nb)
		e.next = uint16(int(x)<<nb - size)
		t[u] = e
	}
	return ""
}
