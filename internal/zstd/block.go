package zstd

// Literal length and match length codes: the value a code stands for is its
// base plus that many extra bits read from the sequence bitstream.
var llBase = [36]uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	16, 18, 20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096,
	8192, 16384, 32768, 65536}
var llExtra = [36]uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
var mlBase = [53]uint32{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
	19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34,
	35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027, 2051,
	4099, 8195, 16387, 32771, 65539}
var mlExtra = [53]uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// Predefined distributions (RFC 8878 section 3.1.1.3.2.2).
var llDefault = [36]int16{4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1}
var mlDefault = [53]int16{1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1}
var ofDefault = [29]int16{1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1}

const (
	kindLL = iota
	kindOF
	kindML
)

// Per kind (in section order LL, OF, ML): largest symbol, largest accuracy
// log of a compressed table, the predefined distribution and its log.
var kindMaxSym = [3]int{35, 31, 52}
var kindMaxLog = [3]uint{9, 8, 9}
var kindDefault = [3][]int16{llDefault[:], ofDefault[:], mlDefault[:]}
var kindDefaultLog = [3]uint{6, 5, 6}
var kindName = [3]string{"literal lengths", "offsets", "match lengths"}

// block decodes one compressed block (blk, which starts at input offset at).
func (d *Decoder) block(dst, blk []byte, at int) ([]byte, error) {
	lits, n, err := d.literals(blk, at)
	if err != nil {
		return dst, err
	}
	s := blk[n:]
	at += n
	if len(s) == 0 {
		return dst, corrupt(at, "missing sequences section")
	}
	nseq := int(s[0])
	p := 1
	switch {
	case nseq >= 255:
		if len(s) < 3 {
			return dst, corrupt(at, "truncated sequences header")
		}
		nseq = int(s[1]) + int(s[2])<<8 + 0x7F00
		p = 3
	case nseq >= 128:
		if len(s) < 2 {
			return dst, corrupt(at, "truncated sequences header")
		}
		nseq = (nseq-128)<<8 + int(s[1])
		p = 2
	}
	if nseq == 0 {
		if p != len(s) {
			return dst, corrupt(at+p, "data after an empty sequences section")
		}
		if dst, err = d.grow(dst, len(lits), at); err != nil {
			return dst, err
		}
		return append(dst, lits...), nil
	}
	if p >= len(s) {
		return dst, corrupt(at+p, "truncated sequences header")
	}
	modes := s[p]
	if modes&3 != 0 {
		return dst, corrupt(at+p, "reserved bits set in sequence compression modes")
	}
	p++
	for k := 0; k < 3; k++ {
		mode := (modes >> (6 - 2*k)) & 3
		used, err := d.seqTable(k, mode, s[p:], at+p)
		if err != nil {
			return dst, err
		}
		p += used
	}
	return d.sequences(dst, lits, s[p:], nseq, at+p)
}

// seqTable sets up the decoding table of one kind as mode says, and returns
// how many bytes of src the table description took.
func (d *Decoder) seqTable(k int, mode uint8, src []byte, at int) (int, error) {
	t := &d.seq[k]
	switch mode {
	case 0: // predefined
		def := kindDefault[k]
		copy(d.norm[:], def)
		if err := buildFSE(t.e[:1<<kindDefaultLog[k]], d.norm[:len(def)], kindDefaultLog[k], k); err != "" {
			return 0, corrupt(at, err)
		}
		t.log, t.ok = uint8(kindDefaultLog[k]), true
		return 0, nil
	case 1: // RLE
		if len(src) == 0 {
			return 0, corrupt(at, "truncated RLE table for "+kindName[k])
		}
		sym := int(src[0])
		if sym > kindMaxSym[k] {
			return 0, corrupt(at, "RLE symbol out of range for "+kindName[k])
		}
		t.e[0] = symbolEntry(k, sym)
		t.log, t.ok = 0, true
		return 1, nil
	case 2: // FSE compressed
		nsym, log, used, err := readNCount(src, d.norm[:], kindMaxSym[k], kindMaxLog[k])
		if err == "" {
			err = buildFSE(t.e[:1<<log], d.norm[:nsym], log, k)
		}
		if err != "" {
			return 0, corrupt(at, err+" ("+kindName[k]+")")
		}
		t.log, t.ok = uint8(log), true
		return used, nil
	}
	// repeat
	if !t.ok {
		return 0, corrupt(at, "repeat mode without a previous table for "+kindName[k])
	}
	return 0, nil
}

// symbolEntry is a table entry for symbol sym of kind k, without state bits.
func symbolEntry(k, sym int) fseEntry {
	switch k {
	case kindLL:
		return fseEntry{base: llBase[sym], extra: llExtra[sym]}
	case kindML:
		return fseEntry{base: mlBase[sym], extra: mlExtra[sym]}
	case kindOF:
		return fseEntry{base: 1 << sym, extra: uint8(sym)}
	}
	return fseEntry{base: uint32(sym)}
}

// sequencesGeneric decodes and executes nseq sequences from the bitstream
// src. It is the plain-Go twin of the WebAssembly kernel (kernel_wasm.go);
// d.sequences picks one of them.
func (d *Decoder) sequencesGeneric(dst, lits, src []byte, nseq, at int) ([]byte, error) {
	var br bitReader
	if !br.init(src) {
		return dst, corrupt(at, "bad sequences bitstream end")
	}
	// States stay below their table's 1<<log entries by construction; the
	// masks only let the compiler drop bounds checks.
	const m = uint64(len(fseTable{}.e) - 1)
	llt, oft, mlt := &d.seq[kindLL].e, &d.seq[kindOF].e, &d.seq[kindML].e
	lls := br.read(uint(d.seq[kindLL].log))
	ofs := br.read(uint(d.seq[kindOF].log))
	mls := br.read(uint(d.seq[kindML].log))
	r0, r1, r2 := d.reps[0], d.reps[1], d.reps[2]
	blockStart := len(dst)
	frameStart, end, window := d.frameStart, d.end, d.window
	bv, bn := br.v, br.n
	var err error
	for i := nseq - 1; i >= 0; i-- {
		le, oe, me := llt[lls&m], oft[ofs&m], mlt[mls&m]
		// A refill leaves at least 57 bits: enough for the offset's (at most
		// 31) and the match length's (16) extra bits, then for the literal
		// length's (16) and the three state updates (9+9+8). The container
		// lives in locals here so that it can stay in registers.
		if bn < 47 {
			br.v, br.n = bv, bn
			br.fill()
			bv, bn = br.v, br.n
		}
		bn -= uint(oe.extra)
		ofv := int(oe.base) + int(bv>>(bn&63)&(1<<(oe.extra&63)-1))
		bn -= uint(me.extra)
		ml := int(me.base) + int(bv>>(bn&63)&(1<<(me.extra&63)-1))
		if bn < 42 {
			br.v, br.n = bv, bn
			br.fill()
			bv, bn = br.v, br.n
		}
		bn -= uint(le.extra)
		ll := int(le.base) + int(bv>>(bn&63)&(1<<(le.extra&63)-1))
		if i != 0 {
			bn -= uint(le.nb)
			lls = uint64(le.next) + bv>>(bn&63)&(1<<(le.nb&63)-1)
			bn -= uint(me.nb)
			mls = uint64(me.next) + bv>>(bn&63)&(1<<(me.nb&63)-1)
			bn -= uint(oe.nb)
			ofs = uint64(oe.next) + bv>>(bn&63)&(1<<(oe.nb&63)-1)
		}
		var off int
		if ofv > 3 {
			off = ofv - 3
			r0, r1, r2 = off, r0, r1
		} else {
			idx := ofv - 1
			if ll == 0 {
				idx++
			}
			switch idx {
			case 0:
				off = r0
			case 1:
				off = r1
				r0, r1 = off, r0
			case 2:
				off = r2
				r0, r1, r2 = off, r0, r1
			default:
				off = r0 - 1
				r0, r1, r2 = off, r0, r1
			}
		}
		if ll > len(lits) {
			return dst, corrupt(at, "sequence uses more literals than the block has")
		}
		l := len(dst)
		n := ll + ml
		if n > cap(dst)-l || n > end-l {
			if dst, err = d.grow(dst, n, at); err != nil {
				return dst, err
			}
		}
		if l+n-blockStart > maxBlockSize {
			return dst, corrupt(at, "block decodes to more than 128 KiB")
		}
		// Short copies move 16 bytes at once where the room is there: bytes
		// past the copy's end are overwritten by the next copy or lie beyond
		// the output, in dst's spare capacity below the frame's end.
		full := dst[:cap(dst)]
		if end < len(full) {
			full = full[:end]
		}
		dst = dst[:l+n]
		if ll > 0 {
			if ll <= 16 && len(full)-l >= 16 && len(lits) >= 16 {
				copy16(full[l:], lits)
			} else {
				copy(dst[l:], lits[:ll])
			}
			lits = lits[ll:]
			l += ll
		}
		if off <= 0 || off > l-frameStart || uint64(off) > window {
			return dst, newError(ErrCorrupt, at, "match offset # out of range", uint64(off), 0)
		}
		if ml <= 16 && off >= 8 && len(full)-l >= 16 {
			copy16(full[l:], full[l-off:])
		} else if off >= ml {
			copy(dst[l:l+ml], dst[l-off:])
		} else {
			for j := 0; j < ml; {
				j += copy(dst[l+j:l+ml], dst[l-off:l+j])
			}
		}
	}
	br.v, br.n = bv, bn
	if !br.done() {
		return dst, corrupt(at, "sequences bitstream not consumed exactly")
	}
	d.reps = [3]int{r0, r1, r2}
	if len(lits) > 0 {
		if dst, err = d.grow(dst, len(lits), at); err != nil {
			return dst, err
		}
		if len(dst)+len(lits)-blockStart > maxBlockSize {
			return dst, corrupt(at, "block decodes to more than 128 KiB")
		}
		dst = append(dst, lits...)
	}
	return dst, nil
}

// literals decodes the literals section at the start of blk and returns the
// literals and the section's size.
func (d *Decoder) literals(blk []byte, at int) ([]byte, int, error) {
	if len(blk) == 0 {
		return nil, 0, corrupt(at, "empty compressed block")
	}
	b0 := blk[0]
	typ := b0 & 3
	if typ < 2 {
		var regen, hl int
		switch (b0 >> 2) & 3 {
		case 0, 2:
			regen, hl = int(b0>>3), 1
		case 1:
			if len(blk) < 2 {
				return nil, 0, corrupt(at, "truncated literals header")
			}
			regen, hl = int(b0>>4)|int(blk[1])<<4, 2
		case 3:
			if len(blk) < 3 {
				return nil, 0, corrupt(at, "truncated literals header")
			}
			regen, hl = int(b0>>4)|int(blk[1])<<4|int(blk[2])<<12, 3
		}
		if regen > maxBlockSize {
			return nil, 0, corrupt(at, "literals larger than 128 KiB")
		}
		if typ == 0 {
			if len(blk)-hl < regen {
				return nil, 0, corrupt(at, "truncated raw literals")
			}
			return blk[hl : hl+regen], hl + regen, nil
		}
		if len(blk) <= hl {
			return nil, 0, corrupt(at, "truncated RLE literals")
		}
		lit := d.litBuf(regen)
		fill(lit, blk[hl])
		return lit, hl + 1, nil
	}
	var hl, width, streams int
	switch (b0 >> 2) & 3 {
	case 0:
		hl, width, streams = 3, 10, 1
	case 1:
		hl, width, streams = 3, 10, 4
	case 2:
		hl, width, streams = 4, 14, 4
	case 3:
		hl, width, streams = 5, 18, 4
	}
	if len(blk) < hl {
		return nil, 0, corrupt(at, "truncated literals header")
	}
	h := readLE(blk, hl)
	mask := uint64(1)<<width - 1
	regen := int((h >> 4) & mask)
	csize := int((h >> (4 + width)) & mask)
	if regen > maxBlockSize {
		return nil, 0, corrupt(at, "literals larger than 128 KiB")
	}
	if len(blk)-hl < csize {
		return nil, 0, corrupt(at, "truncated compressed literals")
	}
	data := blk[hl : hl+csize]
	if typ == 2 {
		n, err := d.readHuffman(data, at+hl)
		if err != nil {
			return nil, 0, err
		}
		data = data[n:]
	} else if d.huffBits == 0 {
		return nil, 0, corrupt(at, "treeless literals without a previous Huffman table")
	}
	lit := d.litBuf(regen)
	if streams == 1 {
		if !d.huffStream(lit, data) {
			return nil, 0, corrupt(at+hl, "bad Huffman literal stream")
		}
		return lit, hl + csize, nil
	}
	if len(data) < 6 {
		return nil, 0, corrupt(at+hl, "truncated literal jump table")
	}
	seg := (regen + 3) / 4
	if 3*seg > regen {
		return nil, 0, corrupt(at, "too few literals for four streams")
	}
	p := 6
	for i := 0; i < 4; i++ {
		n := len(data) - p
		if i < 3 {
			n = int(le16(data[2*i:]))
		}
		if n > len(data)-p {
			return nil, 0, corrupt(at+hl, "literal stream sizes exceed the literals section")
		}
		out := lit[i*seg:]
		if i < 3 {
			out = out[:seg]
		}
		if !d.huffStream(out, data[p:p+n]) {
			return nil, 0, corrupt(at+hl+p, "bad Huffman literal stream")
		}
		p += n
	}
	return lit, hl + csize, nil
}

func (d *Decoder) litBuf(n int) []byte {
	if cap(d.lit) < n {
		c := 2 * cap(d.lit)
		if c < n {
			c = n
		}
		if c > maxBlockSize {
			c = maxBlockSize
		}
		d.lit = make([]byte, c)
	}
	return d.lit[:n]
}

// copy16 copies src[:16] to dst[:16] eight bytes at a time, so that with
// overlapping slices (src before dst, at least 8 bytes apart) it repeats the
// pattern as an LZ77 match copy must.
func copy16(dst, src []byte) {
	put64(dst[:8], le64(src[:8]))
	put64(dst[8:16], le64(src[8:16]))
}

func put64(b []byte, v uint64) {
	_ = b[7]
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	b[4], b[5], b[6], b[7] = byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
}
