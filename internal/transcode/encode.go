package transcode

import (
	"math"
	"strings"

	"github.com/kwire/kwire/internal/jsonx"
	"github.com/kwire/kwire/internal/wire"
)

// JSON -> wire happens in two steps: parse reads the whole JSON text against the schema
// (every field of every version) into a flat tree of nodes, so that every JSON error is
// found before any encoding error, then encode walks the schema at the requested
// version and writes the wire bytes from the tree.

// Node kinds.
const (
	nNull uint8 = iota
	nBool
	nInt
	nFloat
	nStr   // a, b: span; in src when inSide == 0, else in side
	nBytes // a, b: span in side (decoded base64)
	nUUID  // a: offset of 16 bytes in side
	nObj   // a: first slot, b: slot count
	nArr   // a: first entry in lists, b: count
	nTags  // a: first entry in tags, b: count
)

type node struct {
	kind   uint8
	inSide bool
	a, b   int32
	i      int64 // bool (0/1), integer, or float64 bits
}

type tagSpan struct {
	tag      uint32
	off, len int32 // in side
}

// Extra slots after a struct's fields.
const (
	slotUnknown  = 0 // _unknownTaggedFields
	slotTrailing = 1 // _trailingBytes (roots of messages that keep trailing bytes)
	extraSlots   = 2
)

// tree is a parsed JSON document.
type tree struct {
	d     jsonx.Decoder
	src   []byte
	nodes []node
	slots []int32
	lists []int32
	stack []int32
	tags  []tagSpan
	side  []byte
	opts  *EncodeOptions
}

// EncodeOptions tune JSON -> wire transcoding.
type EncodeOptions struct {
	// Records, when set, is called for every records field whose JSON value is an
	// object (null and base64 strings keep their usual meaning): it receives the
	// object's text and returns the bytes to write as the field's value. An error
	// fails the encode as a JSON error at that field, with the error's text as detail.
	Records func(object []byte) ([]byte, error)
	// TopicNames accepts the topic names DecodeOptions.TopicName writes beside a
	// "topicId" and drops them: a struct's topic name field at a version that lacks it,
	// and TopicNameKey in a struct that has no name field. The wire form is what it
	// would be without them.
	TopicNames bool
}

func (t *tree) reset(src []byte) {
	t.d.Reset(src)
	t.src = src
	t.nodes, t.slots, t.lists, t.stack, t.tags, t.side = t.nodes[:0], t.slots[:0], t.lists[:0], t.stack[:0], t.tags[:0], t.side[:0]
}

func (t *tree) add(n node) int32 {
	t.nodes = append(t.nodes, n)
	return int32(len(t.nodes) - 1)
}

// matchField returns the position of the field named key (or one of its former
// names) in fields, or -1.
func matchField(fields []field, key []byte) int {
	k := unsafeString(key)
	for i := range fields {
		f := &fields[i]
		if f.name == k {
			return i
		}
	}
	for i := range fields {
		f := &fields[i]
		if f.aliases == "" {
			continue
		}
		for _, a := range strings.Split(f.aliases, ",") {
			if a == k {
				return i
			}
		}
	}
	return -1
}

// object parses one struct's JSON object against the schema: every field of every
// version may appear, each at most once.
func (t *tree) object(m *message, si uint16, root bool) int32 {
	d := &t.d
	s := &schemaStructs[si]
	fields := schemaFields[s.first : s.first+s.n]
	if !d.BeginObject() {
		return -1
	}
	base := int32(len(t.slots))
	nslots := int32(len(fields)) + extraSlots
	for i := int32(0); i < nslots; i++ {
		t.slots = append(t.slots, -1)
	}
	self := t.add(node{kind: nObj, a: base, b: nslots})
	hasFlex := m.flags&msgHasFlex != 0
	trailing := root && m.flags&msgTrailing != 0
	for first := true; d.More(&first, '}'); {
		key := d.KeyBytes()
		if d.Failed() {
			return self
		}
		keyAliasesSrc := aliases(key, t.src)
		var ks string
		if !keyAliasesSrc {
			ks = string(key) // the scratch buffer it sits in is reused by the value
		}
		slot := int32(matchField(fields, key))
		switch {
		case slot >= 0:
		case hasFlex && string(key) == "_unknownTaggedFields":
			slot = int32(len(fields)) + slotUnknown
		case trailing && string(key) == "_trailingBytes":
			slot = int32(len(fields)) + slotTrailing
		case t.opts != nil && t.opts.TopicNames && string(key) == TopicNameKey && resolvedNameKey(fields):
			d.StringBytes()
			if d.Failed() {
				d.Push(TopicNameKey)
				return self
			}
			continue
		default:
			if ks == "" {
				ks = string(key)
			}
			d.UnknownKey(ks)
			d.Push(ks)
			return self
		}
		if ks == "" {
			ks = unsafeString(key)
		}
		if t.slots[base+slot] >= 0 {
			d.Duplicate(ks)
			d.Push(string([]byte(ks)))
			return self
		}
		var n int32
		switch {
		case slot < int32(len(fields)):
			n = t.fieldValue(m, &fields[slot])
		case slot == int32(len(fields))+slotUnknown:
			n = t.unknownTags()
		default:
			n = t.bytesValue(false)
		}
		t.slots[base+slot] = n
		if d.Failed() {
			d.Push(string([]byte(ks)))
			return self
		}
	}
	return self
}

// aliases reports whether b is a view into src.
func aliases(b, src []byte) bool {
	if len(b) == 0 || len(src) == 0 {
		return true
	}
	p, s := uintptrOf(b), uintptrOf(src)
	return p >= s && p < s+uintptr(len(src))
}

func (t *tree) fieldValue(m *message, f *field) int32 {
	d := &t.d
	if f.isArray() {
		if f.nullableEver() && d.Null() {
			return t.add(node{kind: nNull})
		}
		if !d.BeginArray() {
			return -1
		}
		sbase := len(t.stack)
		for first := true; d.More(&first, ']'); {
			var el int32
			if f.typ == tStruct {
				el = t.object(m, f.sub, false)
			} else {
				el = t.scalarValue(f, false)
			}
			if d.Failed() {
				d.PushIndex(len(t.stack) - sbase)
				break
			}
			t.stack = append(t.stack, el)
		}
		lbase := int32(len(t.lists))
		t.lists = append(t.lists, t.stack[sbase:]...)
		n := int32(len(t.stack) - sbase)
		t.stack = t.stack[:sbase]
		return t.add(node{kind: nArr, a: lbase, b: n})
	}
	if f.typ == tStruct {
		if f.nullableEver() && d.Null() {
			return t.add(node{kind: nNull})
		}
		return t.object(m, f.sub, false)
	}
	return t.scalarValue(f, f.nullableEver())
}

// intRange is the range of each integer type (tBool through tInt64).
var intRange = [...][2]int64{
	tBool:   {0, 1},
	tInt8:   {-1 << 7, 1<<7 - 1},
	tInt16:  {-1 << 15, 1<<15 - 1},
	tUint16: {0, 1<<16 - 1},
	tInt32:  {-1 << 31, 1<<31 - 1},
	tUint32: {0, 1<<32 - 1},
	tInt64:  {-1 << 63, 1<<63 - 1},
}

func (t *tree) scalarValue(f *field, nullableEver bool) int32 {
	d := &t.d
	switch f.typ {
	case tBool:
		var i int64
		if d.Bool() {
			i = 1
		}
		return t.add(node{kind: nBool, i: i})
	case tInt8, tInt16, tUint16, tInt32, tUint32:
		r := intRange[f.typ]
		return t.add(node{kind: nInt, i: d.Int(r[0], r[1])})
	case tInt64:
		return t.add(node{kind: nInt, i: d.Int64()})
	case tFloat64:
		return t.add(node{kind: nFloat, i: int64(math.Float64bits(d.Float64()))})
	case tUuid:
		u := d.UUID()
		off := int32(len(t.side))
		t.side = append(t.side, u[:]...)
		return t.add(node{kind: nUUID, a: off})
	case tString:
		if nullableEver && d.Null() {
			return t.add(node{kind: nNull})
		}
		s := d.StringBytes()
		if aliases(s, t.src) {
			off := int32(0)
			if len(s) > 0 {
				off = int32(uintptrOf(s) - uintptrOf(t.src))
			}
			return t.add(node{kind: nStr, a: off, b: int32(len(s))})
		}
		off := int32(len(t.side))
		t.side = append(t.side, s...)
		return t.add(node{kind: nStr, inSide: true, a: off, b: int32(len(s))})
	case tRecords:
		if t.opts != nil && t.opts.Records != nil {
			if at := d.ValueStart(); at < len(t.src) && t.src[at] == '{' {
				return t.recordsObject(at)
			}
		}
		return t.bytesValue(nullableEver)
	case tBytes:
		return t.bytesValue(nullableEver)
	}
	return -1
}

// recordsObject hands a records field written as an object to EncodeOptions.Records.
func (t *tree) recordsObject(at int) int32 {
	d := &t.d
	d.Skip()
	if d.Failed() {
		return -1
	}
	b, err := t.opts.Records(t.src[at:d.Pos()])
	if err != nil {
		d.Rewind(at)
		d.Fail(jsonx.ErrType, err.Error())
		return -1
	}
	off := len(t.side)
	t.side = append(t.side, b...)
	return t.add(node{kind: nBytes, a: int32(off), b: int32(len(b))})
}

func (t *tree) bytesValue(nullable bool) int32 {
	off := len(t.side)
	out, null := t.d.BytesAppend(t.side, nullable)
	if null {
		return t.add(node{kind: nNull})
	}
	t.side = out
	return t.add(node{kind: nBytes, a: int32(off), b: int32(len(out) - off)})
}

// unknownTags parses the _unknownTaggedFields list with the typed codec's reader.
func (t *tree) unknownTags() int32 {
	base := int32(len(t.tags))
	t.d.TaggedFields(func(tag uint32, data []byte) {
		off := int32(len(t.side))
		t.side = append(t.side, data...)
		t.tags = append(t.tags, tagSpan{tag: tag, off: off, len: int32(len(data))})
	})
	if t.d.Failed() {
		return -1
	}
	return t.add(node{kind: nTags, a: base, b: int32(len(t.tags)) - base})
}

// ---------------------------------------------------------------------------------
// Encoding from the tree.

type encoder struct {
	t *tree
	w wire.Encoder
}

// slot returns the node of field i of object node obj, or -1 when absent (obj < 0
// means a struct holding its defaults).
func (e *encoder) slot(obj int32, i int) int32 {
	if obj < 0 {
		return -1
	}
	n := &e.t.nodes[obj]
	return e.t.slots[n.a+int32(i)]
}

func (e *encoder) str(n *node) []byte {
	if n.inSide {
		return e.t.side[n.a : n.a+n.b]
	}
	return e.t.src[n.a : n.a+n.b]
}

// isNil reports whether the field's value is a nil pointer or slice in the typed codec.
func (e *encoder) isNil(f *field, x int32) bool {
	if x < 0 {
		return f.defaultNil()
	}
	return e.t.nodes[x].kind == nNull
}

// length is the element count or byte length of a present array, string or bytes
// value (0 for absent or null).
func (e *encoder) length(f *field, x int32) int {
	if x < 0 {
		if f.typ == tString && !f.isArray() {
			return len(f.defStr)
		}
		return 0
	}
	n := &e.t.nodes[x]
	switch n.kind {
	case nArr, nStr, nBytes:
		return int(n.b)
	}
	return 0
}

// isDefault mirrors the typed codec's isDefault expression of a field.
func (e *encoder) isDefault(m *message, f *field, x int32) bool {
	if x < 0 {
		return true
	}
	n := &e.t.nodes[x]
	if f.isArray() {
		if f.nullableEver() {
			if f.defaultNil() {
				return n.kind == nNull
			}
			return n.kind != nNull && n.b == 0
		}
		return n.b == 0
	}
	switch f.typ {
	case tBool, tInt8, tInt16, tUint16, tInt32, tUint32, tInt64:
		return n.i == f.defInt
	case tFloat64:
		return math.Float64frombits(uint64(n.i)) == float64frombits(f.defInt)
	case tUuid:
		for _, c := range e.t.side[n.a : n.a+16] {
			if c != 0 {
				return false
			}
		}
		return true
	case tString:
		if f.nullableEver() {
			if f.defaultNil() {
				return n.kind == nNull
			}
			return n.kind != nNull && string(e.str(n)) == f.defStr
		}
		return string(e.str(n)) == f.defStr
	case tBytes:
		if f.nullableEver() {
			if f.defaultNil() {
				return n.kind == nNull
			}
			return n.kind != nNull && n.b == 0
		}
		return n.kind == nNull || n.b == 0
	case tRecords:
		return n.kind == nNull
	case tStruct:
		if f.nullableEver() {
			if f.defaultNil() {
				return n.kind == nNull
			}
			return n.kind != nNull && e.structIsDefault(m, f.sub, x)
		}
		return e.structIsDefault(m, f.sub, x)
	}
	return false
}

func (e *encoder) structIsDefault(m *message, si uint16, obj int32) bool {
	if obj < 0 {
		return true
	}
	s := &schemaStructs[si]
	fields := schemaFields[s.first : s.first+s.n]
	for i := range fields {
		if !e.isDefault(m, &fields[i], e.slot(obj, i)) {
			return false
		}
	}
	if m.flags&msgHasFlex != 0 {
		if u := e.slot(obj, len(fields)+slotUnknown); u >= 0 && e.t.nodes[u].b > 0 {
			return false
		}
	}
	return true
}

// resolvedNameKey reports whether a struct with these fields takes a resolved topic
// name under TopicNameKey: it has a topic id and no topic name field.
func resolvedNameKey(fields []field) bool {
	id := false
	for i := range fields {
		if isTopicNameField(&fields[i]) {
			return false
		}
		id = id || isTopicIDField(&fields[i])
	}
	return id
}

// resolvedName reports whether f, a field absent at v, is a topic name that
// EncodeOptions.TopicNames drops: the struct has its topic id at v.
func (e *encoder) resolvedName(fields []field, f *field, v int16) bool {
	if e.t.opts == nil || !e.t.opts.TopicNames || !isTopicNameField(f) {
		return false
	}
	for i := range fields {
		if isTopicIDField(&fields[i]) && fields[i].ver.has(v) {
			return true
		}
	}
	return false
}

func (e *encoder) nonDefault(f *field) bool {
	if f.flags&fIgnorable != 0 {
		return false // dropped at this version
	}
	e.w.Fail(wire.ErrNonDefault, "")
	e.w.Push(f.name)
	return true
}

// encodeStruct mirrors the generated encode of one struct; it returns false when it
// stopped on a failure (the typed code's early return).
func (e *encoder) encodeStruct(b []byte, m *message, si uint16, obj int32, v int16, root bool) []byte {
	s := &schemaStructs[si]
	fields := schemaFields[s.first : s.first+s.n]
	flex := m.flex.has(v)
	for i := range fields {
		f := &fields[i]
		x := e.slot(obj, i)
		if !f.tagged.empty() {
			if !f.tagged.has(v) && !e.isDefault(m, f, x) && e.nonDefault(f) {
				return b
			}
			continue
		}
		if !f.ver.has(v) {
			if !e.isDefault(m, f, x) && !e.resolvedName(fields, f, v) && e.nonDefault(f) {
				return b
			}
			continue
		}
		var stop bool
		if b, stop = e.writeField(b, m, f, x, v, f.compact.has(v)); stop {
			return b
		}
	}
	if m.flags&msgHasFlex != 0 {
		var unk []wire.TaggedField
		if u := e.slot(obj, len(fields)+slotUnknown); u >= 0 {
			n := &e.t.nodes[u]
			for _, ts := range e.t.tags[n.a : n.a+n.b] {
				unk = append(unk, wire.TaggedField{Tag: ts.tag, Data: e.t.side[ts.off : ts.off+ts.len]})
			}
		}
		if flex {
			tagged := s.tagged()
			nt := len(unk)
			for _, j := range tagged {
				f := &fields[j]
				if f.tagged.has(v) && !e.isDefault(m, f, e.slot(obj, int(j))) {
					nt++
				}
			}
			b = wire.AppendUvarint(b, uint32(nt))
			u, last := 0, int64(-1)
			for _, j := range tagged {
				f := &fields[j]
				if !f.tagged.has(v) {
					continue
				}
				b, u, last = wire.WriteUnknownTags(b, &e.w, unk, u, last, int64(f.tag))
				x := e.slot(obj, int(j))
				if !e.isDefault(m, f, x) {
					var start int
					b, start = wire.BeginTag(b, uint32(f.tag))
					var stop bool
					if b, stop = e.writeField(b, m, f, x, v, true); stop {
						return b
					}
					b = wire.EndTag(b, start)
				}
			}
			if u < len(unk) {
				b, _, _ = wire.WriteUnknownTags(b, &e.w, unk, u, last, -1)
			}
			if e.w.Err != nil {
				e.w.Push("_unknownTaggedFields")
				return b
			}
		} else if len(unk) > 0 {
			e.w.Fail(wire.ErrBadTags, "tagged fields are set but this version is not flexible")
			e.w.Push("_unknownTaggedFields")
			return b
		}
	}
	if root && m.flags&msgTrailing != 0 {
		if x := e.slot(obj, len(fields)+slotTrailing); x >= 0 && e.t.nodes[x].kind == nBytes {
			n := &e.t.nodes[x]
			b = append(b, e.t.side[n.a:n.a+n.b]...)
		}
	}
	return b
}

// writeField mirrors genWriteField; stop reports the typed code's early return.
func (e *encoder) writeField(b []byte, m *message, f *field, x int32, v int16, compact bool) ([]byte, bool) {
	nul := f.nul.has(v)
	if f.isArray() {
		isNil := e.isNil(f, x)
		if f.nullableEver() && isNil && !nul {
			e.w.Fail(wire.ErrNotNullable, "")
			e.w.Push(f.name)
			return b, true
		}
		n := e.length(f, x)
		b = wire.AppendArrayLen(b, n, isNil && nul, compact)
		if x < 0 || n == 0 {
			return b, false
		}
		nd := &e.t.nodes[x]
		els := e.t.lists[nd.a : nd.a+nd.b]
		for i, el := range els {
			if f.typ == tStruct {
				b = e.encodeStruct(b, m, f.sub, el, v, false)
				if e.w.Err != nil {
					e.w.PushIndex(i)
					e.w.Push(f.name)
					return b, true
				}
				continue
			}
			if f.typ == tString {
				if l := int(e.t.nodes[el].b); l > 32767 {
					e.w.Fail(wire.ErrTooLong, wire.TooLong(l))
					e.w.PushIndex(i)
					e.w.Push(f.name)
					return b, true
				}
			}
			b = e.writeScalar(b, f, el, compact, false)
		}
		return b, false
	}
	if f.typ == tStruct {
		if f.nullableEver() {
			if e.isNil(f, x) {
				if !nul {
					e.w.Fail(wire.ErrNotNullable, "")
					e.w.Push(f.name)
					return b, true
				}
				b = append(b, 0xff)
			} else {
				if nul {
					b = append(b, 1)
				}
				b = e.encodeStruct(b, m, f.sub, x, v, false)
			}
		} else {
			b = e.encodeStruct(b, m, f.sub, x, v, false)
		}
		if e.w.Err != nil {
			e.w.Push(f.name)
			return b, true
		}
		return b, false
	}
	if f.nullableEver() && (f.typ == tString || f.typ == tBytes || f.typ == tRecords) && e.isNil(f, x) && !nul {
		e.w.Fail(wire.ErrNotNullable, "")
		e.w.Push(f.name)
		return b, true
	}
	if f.typ == tString {
		if l := e.length(f, x); l > 32767 && !e.isNil(f, x) {
			e.w.Fail(wire.ErrTooLong, wire.TooLong(l))
			e.w.Push(f.name)
			return b, true
		}
	}
	return e.writeScalar(b, f, x, compact, f.nullableEver()), false
}

// appendInt appends i as a value of the integer type typ (tBool through tInt64).
func appendInt(b []byte, typ uint8, i int64) []byte {
	switch typ {
	case tBool:
		return wire.AppendBool(b, i != 0)
	case tInt8:
		return append(b, byte(i))
	case tInt16, tUint16:
		return wire.AppendUint16(b, uint16(i))
	case tInt32, tUint32:
		return wire.AppendUint32(b, uint32(i))
	}
	return wire.AppendInt64(b, i)
}

// writeScalar appends one scalar value (x < 0: the field's default).
func (e *encoder) writeScalar(b []byte, f *field, x int32, compact, nullableEver bool) []byte {
	var n *node
	if x >= 0 {
		n = &e.t.nodes[x]
	}
	switch f.typ {
	case tBool, tInt8, tInt16, tUint16, tInt32, tUint32, tInt64, tFloat64:
		i := f.defInt
		if n != nil {
			i = n.i
		}
		return appendInt(b, f.typ, i)
	case tUuid:
		if n == nil {
			return append(b, make([]byte, 16)...)
		}
		return append(b, e.t.side[n.a:n.a+16]...)
	case tString:
		if n == nil {
			if f.nullableEver() && f.defaultNil() {
				return wire.AppendLength(b, -1, compact, false)
			}
			b = wire.AppendLength(b, len(f.defStr), compact, false)
			return append(b, f.defStr...)
		}
		if n.kind == nNull {
			return wire.AppendLength(b, -1, compact, false)
		}
		s := e.str(n)
		b = wire.AppendLength(b, len(s), compact, false)
		return append(b, s...)
	case tBytes, tRecords:
		if e.isNil(f, x) {
			if nullableEver {
				return wire.AppendLength(b, -1, compact, true)
			}
			return wire.AppendLength(b, 0, compact, true)
		}
		if n == nil {
			return wire.AppendLength(b, 0, compact, true)
		}
		data := e.t.side[n.a : n.a+n.b]
		b = wire.AppendLength(b, len(data), compact, true)
		return append(b, data...)
	}
	return b
}

func float64frombits(i int64) float64 { return math.Float64frombits(uint64(i)) }
