package records

// The kernels of blockkernel_wasm.s written again in Go, step for step: the
// same checks in the same order, the same moves (8-byte moves, memory.copy as
// copy, memory.fill as a loop), so the same bytes written, past the output
// too. Native builds have no kernel; the model is what their tests and fuzz
// targets check against the plain-Go decoders, and the WebAssembly tests check
// the kernels against the model byte for byte over the whole buffer.

// lz4KernelModel is lz4DecodeKernel (len(src) > 0).
func lz4KernelModel(buf []byte, base, start int, src []byte) int {
	dend := len(buf) // LZ4 may write over all of buf
	d, s := start, 0
	for {
		tok := src[s]
		s++
		n := int(tok >> 4)
		if n == 15 {
			var ok bool
			if n, s, ok = modelLZ4Length(src, s, n); !ok {
				return -1
			}
		}
		if n > len(src)-s || n > dend-d {
			return -1
		}
		modelLiteral(buf, d, src, s, n)
		d += n
		s += n
		if s == len(src) {
			if tok&15 != 0 {
				return -1
			}
			return d - start
		}
		if len(src)-s < 2 {
			return -1
		}
		off := int(src[s]) | int(src[s+1])<<8
		s += 2
		if off == 0 || off > d-base {
			return -1
		}
		n = int(tok&15) + 4
		if n == 19 {
			var ok bool
			if n, s, ok = modelLZ4Length(src, s, n); !ok {
				return -1
			}
		}
		if n > dend-d || s == len(src) {
			return -1
		}
		modelMatch(buf, d, off, n)
		d += n
	}
}

// modelLZ4Length is LZ4LEN: it gives up on a truncated length and on one
// over 1 GiB (which no block of kwire's room reaches).
func modelLZ4Length(src []byte, s, n int) (int, int, bool) {
	for {
		if s >= len(src) {
			return 0, 0, false
		}
		b := src[s]
		n += int(b)
		s++
		if n > 1<<30 {
			return 0, 0, false
		}
		if b != 255 {
			return n, s, true
		}
	}
}

// snappyKernelModel is snappyDecodeKernel.
func snappyKernelModel(dst, src []byte, s int) bool {
	room := dst[:cap(dst)]
	dend := len(dst)
	d := 0
	for {
		if s >= len(src) {
			return d == dend
		}
		tag := src[s]
		var n, off int
		switch tag & 3 {
		case 0:
			n = int(tag >> 2)
			s++
			if n >= 60 {
				k := n - 59
				if len(src)-s < k {
					return false
				}
				n = 0
				for i := k - 1; i >= 0; i-- {
					n = n<<8 | int(src[s+i])
				}
				s += k
			}
			n++
			if n > dend-d || n > len(src)-s {
				return false
			}
			modelLiteral(room, d, src, s, n)
			d += n
			s += n
			continue
		case 1:
			if len(src)-s < 2 {
				return false
			}
			n = 4 + int(tag>>2)&7
			off = int(tag>>5)<<8 | int(src[s+1])
			s += 2
		case 2:
			n = 1 + int(tag>>2)
			if len(src)-s < 3 {
				return false
			}
			off = int(le.Uint16(src[s+1:]))
			s += 3
		case 3:
			n = 1 + int(tag>>2)
			if len(src)-s < 5 {
				return false
			}
			off = int(le.Uint32(src[s+1:]))
			s += 5
		}
		if off == 0 || off > d || n > dend-d {
			return false
		}
		modelMatch(room, d, off, n)
		d += n
	}
}

// modelLiteral is LITCOPY; dst is the memory that may be written.
func modelLiteral(dst []byte, d int, src []byte, s, n int) {
	if n <= 16 && len(src)-s >= 16 && len(dst)-d >= 16 {
		le.PutUint64(dst[d:], le.Uint64(src[s:]))
		le.PutUint64(dst[d+8:], le.Uint64(src[s+8:]))
		return
	}
	copy(dst[d:d+n], src[s:s+n])
}

// modelMatch is MATCHCOPY; b is the memory that may be written.
func modelMatch(b []byte, d, off, n int) {
	from, end := d-off, d+n
	slack := len(b) - end
	switch {
	case off >= 8 && n <= 16 && len(b)-d >= 16:
		le.PutUint64(b[d:], le.Uint64(b[from:]))
		le.PutUint64(b[d+8:], le.Uint64(b[from+8:]))
	case off >= n:
		if n <= 64 && slack >= 8 {
			modelCopy8(b, d, from, end)
		} else {
			copy(b[d:end], b[from:from+n])
		}
	case off >= 8:
		if slack >= 8 {
			modelCopy8(b, d, from, end)
		} else {
			modelDoubling(b, d, from, end)
		}
	case off == 1:
		for i := d; i < end; i++ {
			b[i] = b[from]
		}
	case slack >= 8:
		// PATTERN
		for p := d; p < d+8; p++ {
			b[p] = b[p-off]
		}
		period := off
		for period < 8 {
			period += off
		}
		if d+8 < end {
			modelCopy8(b, d+8, d+8-period, end)
		}
	default:
		modelDoubling(b, d, from, end)
	}
}

// modelCopy8 is COPY8: 8-byte moves from q to p until end is passed.
func modelCopy8(b []byte, p, q, end int) {
	for {
		le.PutUint64(b[p:], le.Uint64(b[q:]))
		p += 8
		q += 8
		if p >= end {
			return
		}
	}
}

// modelDoubling is DOUBLING.
func modelDoubling(b []byte, d, from, end int) {
	p, win := d, d-from
	for {
		k := min(end-p, win)
		copy(b[p:p+k], b[from:from+k])
		p += k
		win += k
		if p >= end {
			return
		}
	}
}
