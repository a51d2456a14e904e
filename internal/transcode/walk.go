package transcode

import (
	"encoding/binary"
	"errors"
	"strconv"
	"unsafe"

	"github.com/kwire/kwire/internal/proto"
)

// A Walker follows one message body's wire form as its bytes arrive, without holding
// them: it reads length prefixes, array counts and the few fields its plan selects,
// and steps over everything else by length. A proxy uses it to find what it needs in
// a frame (a Produce request's topics, where a Fetch response's tagged fields begin)
// while the frame streams through, and to know where each records field lies
// without reading it.
//
// The walker checks the structure (lengths, counts, the tag section's shape, that the
// body ends where the root struct does), not the contents Doc and Decode check (UTF-8,
// tag order, field values). Whatever Doc parses, the walker walks to the same offsets.
type Walker struct {
	plan  *WalkPlan
	v     int16
	flex  bool
	end   int // body length
	pos   int // body offset of the next byte to read
	stack []wframe
	ev    WalkEvent
	err   error
	done  bool
	// stopAtRootTags: Next returns WalkRootTags when the root struct's tag section
	// starts, and the walk ends there.
	stopAtRootTags bool
	atRootTags     bool
}

// wframe is one level of the walk: a struct being read field by field, an array
// being read element by element, or a struct's tag section.
type wframe struct {
	kind   uint8
	fields []field
	s      *structDesc
	i      int    // struct: next field; array: elements left; tags: fields left
	f      *field // array: the element field
	root   bool
}

const (
	wStruct = iota
	wArray
	wTags
)

// WalkPlan names the fields of one message a Walker reports. Plans are built once
// and shared; a plan is read-only.
type WalkPlan struct {
	m *message
	// sel holds, for each field of schemaFields, one more than the index of the path
	// that selects it (0: not selected): the walk asks of every field it passes.
	sel []uint16
	// none: the plan selects nothing (a walk to the root tags or the end): Next takes
	// walkBare, which steps over the fields without asking.
	none bool
}

// NewWalkPlan makes the plan for the message with api key key and kind (request or
// response) that reports the fields at paths: dotted JSON names from the root
// ("acks", "topicData.name", "topicData.partitionData.records"). A path naming no
// field of the message in any version is an error. The index of a path in paths is
// the Sel of its events.
func NewWalkPlan(key int16, kind proto.Kind, paths ...string) (*WalkPlan, error) {
	m := apiMessage(key, kind)
	if m == nil {
		return nil, errors.New("transcode: no " + kindName(kind) + " message for api key " + strconv.Itoa(int(key)))
	}
	return newWalkPlan(m, paths)
}

func newWalkPlan(m *message, paths []string) (*WalkPlan, error) {
	if len(paths) >= 1<<16-1 {
		return nil, errors.New("transcode: too many paths for one walk plan")
	}
	p := &WalkPlan{m: m, sel: make([]uint16, len(schemaFields))}
	for i, path := range paths {
		if !p.selectPath(m.root, path, i) {
			return nil, errors.New("transcode: " + m.name + " has no field " + strconv.Quote(path))
		}
	}
	p.none = len(paths) == 0
	return p, nil
}

// selectPath marks every field (of any version) at path under struct si.
func (p *WalkPlan) selectPath(si uint16, path string, id int) bool {
	head, rest := path, ""
	for i := 0; i < len(path); i++ {
		if path[i] == '.' {
			head, rest = path[:i], path[i+1:]
			break
		}
	}
	s := &schemaStructs[si]
	found := false
	for i := range schemaFields[s.first : s.first+s.n] {
		f := &schemaFields[int(s.first)+i]
		if f.name != head {
			continue
		}
		if rest == "" {
			p.sel[int(s.first)+i] = uint16(id + 1)
			found = true
		} else if f.typ == tStruct && p.selectPath(f.sub, rest, id) {
			found = true
		}
	}
	return found
}

// selected returns the index of the path that selects f, a field of schemaFields.
func (p *WalkPlan) selected(f *field) (int, bool) {
	i := (uintptr(unsafe.Pointer(f)) - uintptr(unsafe.Pointer(&schemaFields[0]))) / unsafe.Sizeof(schemaFields[0])
	if i >= uintptr(len(p.sel)) || p.sel[i] == 0 {
		return 0, false
	}
	return int(p.sel[i]) - 1, true
}

// Message is the name of the plan's message.
func (p *WalkPlan) Message() string { return p.m.name }

// WalkStatus is what Walker.Next stopped on.
type WalkStatus uint8

// Walk statuses.
const (
	// WalkMore: the walk needs bytes that have not arrived; call Next again with more.
	WalkMore WalkStatus = iota
	// WalkField: Event describes a selected field.
	WalkField
	// WalkRootTags: the root struct's tag section starts at Pos (StopAtRootTags).
	WalkRootTags
	// WalkDone: the body ended where its root struct does.
	WalkDone
	// WalkError: the body is malformed; Err says how.
	WalkError
)

// WalkEvent is one selected field.
type WalkEvent struct {
	// Sel is the index of the field's path in the plan.
	Sel int
	// Off is the body offset of the value's bytes, after any length prefix; Len is their
	// number (-1 for null). For integers and bools, Int is the value.
	Off, Len int
	Int      int64
	// Bytes is a string value (valid until the next call to Next).
	Bytes []byte
	// Array marks the event of an array field itself: Int is its count (-1 null), and
	// its elements follow, scalars as events of their own. Struct marks a struct value
	// (Len -1 when null); its fields follow.
	Array, Struct bool
}

// WalkSource gives the walker the body's bytes: At returns the bytes that have arrived
// from body offset off on, at least n of them when that many have (more is welcome),
// fewer or none otherwise.
type WalkSource interface {
	At(off, n int) []byte
}

// Reset starts a walk of a body of bodyLen bytes of the plan's message at version v.
// With stopAtRootTags, the walk ends at the root struct's tag section (flexible
// versions) instead of walking it.
func (w *Walker) Reset(p *WalkPlan, v int16, bodyLen int, stopAtRootTags bool) error {
	w.plan, w.v, w.end, w.pos, w.err, w.done = p, v, bodyLen, 0, nil, false
	w.stopAtRootTags, w.atRootTags = stopAtRootTags, false
	w.stack = w.stack[:0]
	if !p.m.valid.has(v) {
		w.err = errors.New(p.m.name + " has no version " + strconv.Itoa(int(v)))
		return w.err
	}
	w.flex = p.m.flags&msgHasFlex != 0 && p.m.flex.has(v)
	w.pushStruct(p.m.root, true)
	return nil
}

// fixedSize is the wire size of each fixed-size scalar type, 0 for the others.
var fixedSize = [16]uint8{tBool: 1, tInt8: 1, tInt16: 2, tUint16: 2, tInt32: 4, tUint32: 4, tInt64: 8, tFloat64: 8, tUuid: 16}

// Pos is the body offset the walk has reached.
func (w *Walker) Pos() int { return w.pos }

// Err is the error of a walk that stopped with WalkError.
func (w *Walker) Err() error { return w.err }

// Event is the field of the last WalkField.
func (w *Walker) Event() *WalkEvent { return &w.ev }

func (w *Walker) pushStruct(si uint16, root bool) {
	s := &schemaStructs[si]
	w.stack = append(w.stack, wframe{kind: wStruct, s: s, fields: schemaFields[s.first : s.first+s.n], root: root})
}

func (w *Walker) fail(msg string) WalkStatus {
	w.err = errors.New(w.plan.m.name + " v" + strconv.Itoa(int(w.v)) + " at body offset " + strconv.Itoa(w.pos) + ": " + msg)
	return WalkError
}

// need returns n bytes at the walk position, or nil (with st) when they have not
// arrived or lie past the body's end.
func (w *Walker) need(src WalkSource, n int) ([]byte, WalkStatus) {
	var win srcWindow
	return w.needIn(src, &win, n)
}

// uvarint reads an unsigned varint (at most 5 bytes) at the walk position without
// moving it; k is its length, 0 when the bytes have not arrived.
func (w *Walker) uvarint(src WalkSource) (v uint64, k int, st WalkStatus) {
	var win srcWindow
	return w.uvarintIn(src, &win)
}

// length reads a length or count prefix at the walk position: compact (uvarint of
// n+1, 0 null) or int16/int32 (negative null). It returns the value (-1 null) and the
// prefix length; k == 0 means more bytes are needed (or st is WalkError).
func (w *Walker) length(src WalkSource, compact bool, wide bool) (n, k int, st WalkStatus) {
	if compact {
		v, k, st := w.uvarint(src)
		if k == 0 {
			return 0, 0, st
		}
		return int(v) - 1, k, WalkField
	}
	size := 2
	if wide {
		size = 4
	}
	b, st := w.need(src, size)
	if b == nil {
		return 0, 0, st
	}
	if wide {
		n = int(int32(binary.BigEndian.Uint32(b)))
	} else {
		n = int(int16(binary.BigEndian.Uint16(b)))
	}
	if n < 0 {
		n = -1
	}
	return n, size, WalkField
}

// skip steps over n bytes, which need not have arrived.
func (w *Walker) skip(n int) WalkStatus {
	if n < 0 || n > w.end-w.pos {
		return w.fail(strconv.Itoa(n) + " bytes exceed the " + strconv.Itoa(w.end-w.pos) + " that remain of the body")
	}
	w.pos += n
	return WalkField
}

// Next walks on until a selected field, the root tags (when asked for), the end of
// the body, bytes that have not arrived, or an error.
func (w *Walker) Next(src WalkSource) WalkStatus {
	if w.err != nil {
		return WalkError
	}
	if w.done {
		return WalkDone
	}
	if w.atRootTags {
		return WalkRootTags
	}
	if w.plan.none && bareWalks {
		return w.walkBare(src)
	}
	return w.walkGeneral(src)
}

// walkGeneral is Next's loop: any plan, one field at a time.
func (w *Walker) walkGeneral(src WalkSource) WalkStatus {
	for len(w.stack) > 0 {
		idx := len(w.stack) - 1
		top := &w.stack[idx]
		var st WalkStatus
		var emitted bool
		step := 1 // a struct counts its fields up, an array its elements down
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
				n, k, st := w.uvarint(src)
				if k == 0 {
					return st
				}
				if int(n) > (w.end-w.pos-k)/2 {
					return w.fail("tagged field count " + strconv.FormatUint(n, 10) + " exceeds what the remaining bytes can hold")
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
			if sz := int(fixedSize[f.typ&15]); sz != 0 && f.flags&fArray == 0 {
				// A fixed-size scalar nobody asked for: stepped over here, without the
				// calls of value and scalar (most of a Fetch response's fields).
				if _, sel := w.plan.selected(f); !sel {
					if st := w.skip(sz); st != WalkField {
						return st
					}
					top.i++
					continue
				}
			}
			st, emitted = w.value(src, f, f.compact.has(w.v))
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
			st, emitted = w.scalar(src, f, f.compact.has(w.v), false)
			step = -1
		case wTags:
			if top.i == 0 {
				w.stack = w.stack[:idx]
				continue
			}
			_, k1, st := w.uvarint(src)
			if k1 == 0 {
				return st
			}
			w.pos += k1
			size, k2, st := w.uvarint(src)
			if k2 == 0 {
				w.pos -= k1 // the tag is read again when the size arrives
				return st
			}
			w.pos += k2
			if st := w.skip(int(size)); st != WalkField {
				return st
			}
			top.i--
			continue
		}
		if st != WalkField {
			return st
		}
		w.stack[idx].i += step // value may have pushed a frame: this one resumes after it
		if emitted {
			return WalkField
		}
	}
	if w.pos != w.end && w.plan.m.flags&msgTrailing == 0 {
		return w.fail(strconv.Itoa(w.end-w.pos) + " bytes follow the message")
	}
	w.done = true
	return WalkDone
}

// emit reports a selected field; it returns whether f is selected.
func (w *Walker) emit(f *field, off, n int, v int64, b []byte) bool {
	id, ok := w.plan.selected(f)
	if !ok {
		return false
	}
	w.ev = WalkEvent{Sel: id, Off: off, Len: n, Int: v, Bytes: b}
	return true
}

// value reads (or steps over) one field of a struct. On WalkMore and WalkError the
// walk position has not moved.
func (w *Walker) value(src WalkSource, f *field, compact bool) (WalkStatus, bool) {
	nul := f.nul.has(w.v)
	if f.isArray() {
		n, k, st := w.length(src, compact, true)
		if k == 0 {
			return st, false
		}
		if n < 0 && !nul {
			return w.fail("null for the non-nullable array " + f.name), false
		}
		if n > 0 && int64(n)*int64(max(f.minElem, 1)) > int64(w.end-w.pos-k) {
			return w.fail("array " + f.name + " of " + strconv.Itoa(n) + " elements cannot fit in the " + strconv.Itoa(w.end-w.pos-k) + " bytes that remain"), false
		}
		w.pos += k
		emitted := w.emit(f, w.pos, min(n, 0), int64(n), nil)
		w.ev.Array = emitted
		if n > 0 {
			w.stack = append(w.stack, wframe{kind: wArray, f: f, i: n})
		}
		return WalkField, emitted
	}
	if f.typ == tStruct {
		if f.nullableEver() && nul {
			b, st := w.need(src, 1)
			if b == nil {
				return st, false
			}
			w.pos++
			if int8(b[0]) < 0 {
				emitted := w.emit(f, w.pos, -1, -1, nil)
				w.ev.Struct = emitted
				return WalkField, emitted
			}
		}
		emitted := w.emit(f, w.pos, 0, 0, nil)
		w.ev.Struct = emitted
		w.pushStruct(f.sub, false)
		return WalkField, emitted
	}
	return w.scalar(src, f, compact, nul)
}

// scalar reads (or steps over) one scalar value; selected strings are read, other
// strings, bytes and records are stepped over by length.
func (w *Walker) scalar(src WalkSource, f *field, compact, nullable bool) (WalkStatus, bool) {
	size := 0
	switch f.typ {
	case tBool, tInt8:
		size = 1
	case tInt16, tUint16:
		size = 2
	case tInt32, tUint32:
		size = 4
	case tInt64, tFloat64:
		size = 8
	case tUuid:
		size = 16
	}
	if size > 0 {
		id, selected := w.plan.selected(f)
		if !selected {
			return w.skip(size), false
		}
		b, st := w.need(src, size)
		if b == nil {
			return st, false
		}
		var v int64
		switch size {
		case 1:
			v = int64(int8(b[0]))
		case 2:
			v = int64(int16(binary.BigEndian.Uint16(b)))
		case 4:
			v = int64(int32(binary.BigEndian.Uint32(b)))
		case 8:
			v = int64(binary.BigEndian.Uint64(b))
		}
		if f.typ == tUint16 {
			v = int64(binary.BigEndian.Uint16(b))
		} else if f.typ == tUint32 {
			v = int64(binary.BigEndian.Uint32(b))
		}
		w.ev = WalkEvent{Sel: id, Off: w.pos, Len: size, Int: v, Bytes: b[:size]}
		w.pos += size
		return WalkField, true
	}
	n, k, st := w.length(src, compact, f.typ != tString)
	if k == 0 {
		return st, false
	}
	if n < 0 && !(nullable && f.nullableEver()) {
		return w.fail("null for the non-nullable field " + f.name), false
	}
	if n > w.end-w.pos-k {
		return w.fail(f.name + ": length " + strconv.Itoa(n) + " exceeds the " + strconv.Itoa(w.end-w.pos-k) + " bytes that remain"), false
	}
	id, selected := w.plan.selected(f)
	if selected && f.typ == tString && n > 0 {
		b := src.At(w.pos+k, n)
		if len(b) < n {
			return WalkMore, false
		}
		w.pos += k
		w.ev = WalkEvent{Sel: id, Off: w.pos, Len: n, Bytes: b[:n]}
		w.pos += n
		return WalkField, true
	}
	w.pos += k
	off := w.pos
	w.pos += max(n, 0)
	if !selected {
		return WalkField, false
	}
	w.ev = WalkEvent{Sel: id, Off: off, Len: n}
	return WalkField, true
}
