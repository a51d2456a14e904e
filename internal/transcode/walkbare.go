package transcode

import (
	"encoding/binary"
	"strconv"
)

// bareWalks lets Next take walkBare for plans that select nothing; tests turn it off
// to hold walkBare to the general loop.
var bareWalks = true

// srcWindow is the source's bytes from body offset at, as At last returned them during
// one call of walkBare (or of one read of the general loop, which starts it empty):
// valid until the next At, which replaces them.
type srcWindow struct {
	b  []byte
	at int
}

// walkBare is Next for a plan that selects nothing (a Fetch response walked to its
// root tags while it streams through a proxy): the general loop's steps in one
// function, reading the source once per window rather than once per field, and
// stepping over a run of fixed-size array elements at once. Compiled to
// WebAssembly, where each call and each interface call costs more than the work of
// a field, this matters. It stops and moves exactly as the general loop does
// (TestBareWalkMatchesGeneral, FuzzBareWalk); where a field is malformed it hands
// the walk to the general loop, which fails on it with its own message.
func (w *Walker) walkBare(src WalkSource) WalkStatus {
	var win srcWindow
	for len(w.stack) > 0 {
		idx := len(w.stack) - 1
		top := &w.stack[idx]
		switch top.kind {
		case wStruct:
			if top.i == len(top.fields) {
				if !w.flex {
					w.stack = w.stack[:idx]
					continue
				}
				if top.root && w.stopAtRootTags {
					w.atRootTags = true
					return WalkRootTags
				}
				var n uint64
				var k int
				if o := w.pos - win.at; w.pos < w.end && o >= 0 && o < len(win.b) && win.b[o] < 0x80 {
					n, k = uint64(win.b[o]), 1
				} else {
					var st WalkStatus
					if n, k, st = w.uvarintIn(src, &win); k == 0 {
						return st
					}
				}
				if int(n) > (w.end-w.pos-k)/2 {
					return w.walkGeneral(src)
				}
				w.pos += k
				w.stack[idx] = wframe{kind: wTags, i: int(n)}
				continue
			}
			f := &top.fields[top.i]
			if !f.ver.has(w.v) || !f.tagged.empty() {
				top.i++
				continue
			}
			array := f.flags&fArray != 0
			if sz := int(fixedSize[f.typ&15]); sz != 0 && !array {
				if sz > w.end-w.pos {
					return w.skip(sz)
				}
				w.pos += sz
				top.i++
				continue
			}
			if f.typ == tStruct && !array {
				if f.nullableEver() && f.nul.has(w.v) {
					c, st := w.needIn(src, &win, 1)
					if c == nil {
						return st
					}
					w.pos++
					if int8(c[0]) < 0 {
						top.i++
						continue
					}
				}
				top.i++
				w.pushStruct(f.sub, false)
				continue
			}
			// An array's count, or the length of a string, bytes or records.
			var n, k int
			if f.compact.has(w.v) {
				if o := w.pos - win.at; w.pos < w.end && o >= 0 && o < len(win.b) && win.b[o] < 0x80 {
					n, k = int(win.b[o])-1, 1
				} else {
					v, kk, st := w.uvarintIn(src, &win)
					if kk == 0 {
						return st
					}
					n, k = int(v)-1, kk
				}
			} else {
				k = 2
				if array || f.typ != tString {
					k = 4
				}
				c, st := w.needIn(src, &win, k)
				if c == nil {
					return st
				}
				if k == 4 {
					n = int(int32(binary.BigEndian.Uint32(c)))
				} else {
					n = int(int16(binary.BigEndian.Uint16(c)))
				}
				n = max(n, -1)
			}
			nul := f.nul.has(w.v)
			if array {
				if n < 0 && !nul {
					return w.walkGeneral(src)
				}
				if n > 0 && int64(n)*int64(max(f.minElem, 1)) > int64(w.end-w.pos-k) {
					return w.walkGeneral(src)
				}
				w.pos += k
				top.i++
				if n > 0 {
					w.stack = append(w.stack, wframe{kind: wArray, f: f, i: n})
				}
				continue
			}
			if n < 0 && !(nul && f.nullableEver()) {
				return w.walkGeneral(src)
			}
			if n > w.end-w.pos-k {
				return w.walkGeneral(src)
			}
			w.pos += k + max(n, 0)
			top.i++
		case wArray:
			if top.i == 0 {
				w.stack = w.stack[:idx]
				continue
			}
			f := top.f
			if f.typ == tStruct {
				top.i--
				w.pushStruct(f.sub, false)
				continue
			}
			if sz := int(fixedSize[f.typ&15]); sz != 0 {
				// Fixed-size elements: as many at once as the body holds.
				k := min(top.i, (w.end-w.pos)/sz)
				w.pos += sz * k
				if top.i -= k; top.i > 0 {
					return w.skip(sz) // fails: the body ends inside the next element
				}
				continue
			}
			st, _ := w.scalar(src, f, f.compact.has(w.v), false)
			win.b = nil // scalar read the source: the window may have moved
			if st != WalkField {
				return st
			}
			top.i--
		case wTags:
			if top.i == 0 {
				w.stack = w.stack[:idx]
				continue
			}
			_, k1, st := w.uvarintIn(src, &win)
			if k1 == 0 {
				return st
			}
			w.pos += k1
			size, k2, st := w.uvarintIn(src, &win)
			if k2 == 0 {
				w.pos -= k1 // the tag is read again when the size arrives
				return st
			}
			w.pos += k2
			if int(size) > w.end-w.pos {
				return w.skip(int(size))
			}
			w.pos += int(size)
			top.i--
		}
	}
	if w.pos != w.end && w.plan.m.flags&msgTrailing == 0 {
		return w.walkGeneral(src)
	}
	w.done = true
	return WalkDone
}

// uvarintIn reads an unsigned varint (at most 5 bytes) at the walk position without
// moving it, through the window win: the source is asked only when win does not hold
// its bytes. k is its length, 0 when the bytes have not arrived.
func (w *Walker) uvarintIn(src WalkSource, win *srcWindow) (v uint64, k int, st WalkStatus) {
	n := min(5, w.end-w.pos)
	if n <= 0 {
		return 0, 0, w.fail("needs a varint; the body has ended")
	}
	o := w.pos - win.at
	if o < 0 || o+n > len(win.b) {
		win.b, win.at, o = src.At(w.pos, n), w.pos, 0
	}
	b := win.b[min(o, len(win.b)):]
	if len(b) < n {
		// A shorter varint may already be complete.
		for i := 0; i < len(b); i++ {
			if b[i] < 0x80 {
				v, k := binary.Uvarint(b[:i+1])
				return v, k, WalkField
			}
		}
		return 0, 0, WalkMore
	}
	v, k = binary.Uvarint(b[:n])
	if k <= 0 || v > 0xffffffff {
		return 0, 0, w.fail("malformed varint")
	}
	return v, k, WalkField
}

// needIn returns n bytes at the walk position through the window win, or nil (with
// st) when they have not arrived or lie past the body's end.
func (w *Walker) needIn(src WalkSource, win *srcWindow, n int) ([]byte, WalkStatus) {
	if w.pos+n > w.end {
		return nil, w.fail("needs " + strconv.Itoa(n) + " bytes; the body ends at " + strconv.Itoa(w.end))
	}
	o := w.pos - win.at
	if o < 0 || o+n > len(win.b) {
		win.b, win.at, o = src.At(w.pos, n), w.pos, 0
	}
	if len(win.b)-o < n {
		return nil, WalkMore
	}
	return win.b[o:], WalkField
}
