package zstd

import "math/bits"

const (
	maxHuffBits  = 11
	maxWeightLog = 6
)

// readHuffman reads a Huffman tree description from the start of src, builds
// d.huff from it and returns its size.
func (d *Decoder) readHuffman(src []byte, at int) (int, error) {
	if len(src) == 0 {
		return 0, corrupt(at, "truncated Huffman tree description")
	}
	hb := int(src[0])
	var nw, used int
	if hb >= 128 {
		nw = hb - 127
		used = 1 + (nw+1)/2
		if len(src) < used {
			return 0, corrupt(at, "truncated Huffman weights")
		}
		for i := 0; i < nw; i++ {
			b := src[1+i/2]
			if i&1 == 0 {
				b >>= 4
			}
			d.weights[i] = b & 15
		}
	} else {
		used = 1 + hb
		if len(src) < used {
			return 0, corrupt(at, "truncated Huffman weights")
		}
		var err string
		nw, err = d.fseWeights(src[1:used])
		if err != "" {
			return 0, corrupt(at+1, err)
		}
	}
	// Weights of all but the last symbol are given; the last one makes the
	// sum of 2^(weight-1) a power of two.
	var total uint32
	for _, w := range d.weights[:nw] {
		if w > maxHuffBits {
			return 0, corrupt(at, "Huffman weight too large")
		}
		if w > 0 {
			total += 1 << (w - 1)
		}
	}
	if total == 0 {
		return 0, corrupt(at, "Huffman weights are all zero")
	}
	maxBits := bits.Len32(total)
	if maxBits > maxHuffBits {
		return 0, corrupt(at, "Huffman codes longer than 11 bits")
	}
	rest := uint32(1)<<maxBits - total
	if rest&(rest-1) != 0 {
		return 0, corrupt(at, "Huffman weights do not complete a prefix code")
	}
	d.weights[nw] = uint8(bits.Len32(rest))
	nw++
	// Codes go by weight, then by symbol: the longest codes (weight 1) take the
	// lowest table positions.
	var start [maxHuffBits + 2]int
	for _, w := range d.weights[:nw] {
		if w > 0 {
			start[w+1] += 1 << (w - 1)
		}
	}
	for w := 1; w <= maxHuffBits+1; w++ {
		start[w] += start[w-1]
	}
	table := d.huff[:1<<maxBits]
	for s, w := range d.weights[:nw] {
		if w == 0 {
			continue
		}
		e := uint16(s)<<8 | uint16(maxBits+1-int(w))
		p := start[w]
		n := 1 << (w - 1)
		for i := p; i < p+n; i++ {
			table[i] = e
		}
		start[w] = p + n
	}
	d.huffBits = uint8(maxBits)
	return used, nil
}

// fseWeights decodes FSE-compressed Huffman weights into d.weights and returns
// how many there are.
func (d *Decoder) fseWeights(src []byte) (int, string) {
	nsym, log, used, err := readNCount(src, d.norm[:], maxHuffBits+1, maxWeightLog)
	if err != "" {
		return 0, err
	}
	t := d.wtab[:1<<log]
	if err := buildFSE(t, d.norm[:nsym], log, -1); err != "" {
		return 0, err
	}
	var br bitReader
	if !br.init(src[used:]) {
		return 0, "bad Huffman weights bitstream end"
	}
	mask := uint64(len(t) - 1)
	// Two states take turns; when the bits run out after one's symbol, the
	// other's state gives the last weight.
	var st [2]uint64
	st[0] = br.read(log) & mask
	st[1] = br.read(log) & mask
	for n := 0; ; n++ {
		k := n & 1
		e := t[st[k]]
		st[k] = (uint64(e.next) + br.read(uint(e.nb))) & mask
		if n >= 254 {
			return 0, "too many Huffman weights"
		}
		d.weights[n] = uint8(e.base)
		if br.over() {
			d.weights[n+1] = uint8(t[st[k^1]].base)
			return n + 2, ""
		}
	}
}

// huffStreamGeneric decodes len(out) literals from one Huffman-coded stream,
// which must be used up exactly. It is the plain-Go twin of the WebAssembly
// kernel (kernel_wasm.go); d.huffStream picks one of them.
func (d *Decoder) huffStreamGeneric(out, src []byte) bool {
	var br bitReader
	if !br.init(src) {
		return false
	}
	mb := uint(d.huffBits)
	table := d.huff[:1<<maxHuffBits]
	i := 0
	for ; i+4 <= len(out); i += 4 {
		br.fill()
		for j := 0; j < 4; j++ {
			e := table[br.v>>((br.n-mb)&63)&(1<<(mb&63)-1)]
			out[i+j] = byte(e >> 8)
			br.n -= uint(e & 0xFF)
		}
	}
	for ; i < len(out); i++ {
		br.fill()
		e := table[br.v>>((br.n-mb)&63)&(1<<(mb&63)-1)]
		out[i] = byte(e >> 8)
		br.n -= uint(e & 0xFF)
	}
	return br.done()
}
