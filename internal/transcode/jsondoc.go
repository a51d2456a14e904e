package transcode

import (
	"encoding/binary"
	"errors"
	"github.com/kwire/kwire/internal/errtext"
	"math"
	"strconv"

	"github.com/kwire/kwire/internal/proto"
	"github.com/kwire/kwire/internal/wire"
)

// A Doc is one message's wire bytes indexed by the schema: the root struct, every field
// present at the version, every element of an array of structs and every tagged field
// (known or not) gets a Node that knows its byte span. Nothing is decoded or copied:
// values are read from the spans on demand.
//
// Edits (SetInt, SetString, Remove, AppendRaw) are recorded and applied when AppendTo
// writes the message again: bytes outside the edited values are copied as they were,
// and only the length prefixes and tagged-field sizes that enclose an edit are written
// anew. A proxy that rewrites one host name in a Metadata response or drops a partition
// from a Produce request therefore needs no per-message code and leaves everything it
// does not touch byte for byte intact, unknown tagged fields included.
//
// Parse accepts exactly what AppendJSON (and the typed codec's Decode) accepts, with the
// same errors. A Doc aliases the bytes it parsed; it is reusable and not safe for
// concurrent use.
type Doc struct {
	r     wire.Reader
	m     *message
	v     int16
	src   []byte
	nodes []docNode
	subs  [][]byte // replacement values and appended elements, by docNode.edit
	// vals holds the strings SetString writes, one after the other: a document's
	// renames cost no allocation once it has grown (kept across documents; a value
	// written before it grew stays where it was)
	vals []byte
}

// Node is a value of a Doc: an index into it. The root struct is 0; NoNode stands for a
// field absent at the version, a null struct or the end of a list.
type Node int32

// NoNode is the Node of nothing.
const NoNode Node = -1

// Node kinds.
const (
	dStruct     uint8 = iota
	dArray            // array of structs: elements are children; of scalars: a leaf
	dScalar           // any non-struct, non-array value (bool, integers, string, bytes, records, uuid)
	dUnknownTag       // a tagged field the schema does not define at the version
	dNull             // a null struct or array
)

type docNode struct {
	f       *field // nil for the root, the element's array field for an element
	kind    uint8
	elem    bool // an array element
	compact bool // compact encodings at this node
	removed bool
	dirty   bool  // this node or a descendant is edited
	start   int32 // span of the value in src
	end     int32
	hdr     int32 // tagged values: start of the tag header; -1 otherwise
	tag     uint32
	next    int32 // the node after this one's subtree
	parent  int32
	edit    int32 // scalars: index in subs of the replacement; arrays: first appended element in subs, or -1
	nadd    int32 // arrays: number of appended elements
}

// Parse indexes src, which must hold exactly the message `name` at version (request
// bodies may be followed by bytes, which AppendTo keeps). A Doc that fails to parse
// holds nothing.
func (d *Doc) Parse(src []byte, name string, version int16) error {
	m := lookup(name)
	if m == nil {
		d.reset(nil, nil, 0)
		return unknownMessage(name)
	}
	if !m.valid.has(version) {
		d.reset(nil, nil, 0)
		return versionError(m, version)
	}
	return d.parse(m, src, version)
}

// ParseAPI indexes the request or response (kind) body of an api key at version.
func (d *Doc) ParseAPI(src []byte, key int16, kind proto.Kind, version int16) error {
	m := apiMessage(key, kind)
	if m == nil {
		d.reset(nil, nil, 0)
		return errtext.Wrap("kwire: api key "+strconv.Itoa(int(key))+" ("+kindName(kind)+"): "+ErrUnknownMessage.Error(), ErrUnknownMessage)
	}
	if !m.valid.has(version) {
		d.reset(nil, nil, 0)
		return versionError(m, version)
	}
	return d.parse(m, src, version)
}

func kindName(k proto.Kind) string {
	if k == proto.KindRequest {
		return "request"
	}
	return "response"
}

func (d *Doc) reset(m *message, src []byte, v int16) {
	d.m, d.src, d.v = m, src, v
	d.nodes = d.nodes[:0]
	for i := range d.subs {
		d.subs[i] = nil
	}
	d.subs = d.subs[:0]
	d.vals = d.vals[:0]
	d.r.Reset(src)
}

func (d *Doc) parse(m *message, src []byte, v int16) (err error) {
	d.reset(m, src, v)
	defer func() {
		if p := recover(); p != nil {
			err = &proto.DecodeError{Message: m.name, Version: v, Offset: d.r.Off, Err: errors.New("internal decoder fault"), Detail: errtext.Panic(p)}
		}
		if err != nil {
			d.reset(nil, nil, 0)
		}
	}()
	root := d.add(docNode{kind: dStruct, parent: -1, hdr: -1, edit: -1})
	d.structNodes(m.root, root)
	r := &d.r
	if r.Err == nil && m.flags&msgTrailing == 0 {
		r.Trailing()
	}
	if r.Err != nil {
		return &proto.DecodeError{Message: m.name, Version: v, Path: r.Path(), Offset: r.ErrOff, Err: r.Err, Detail: r.Detail}
	}
	return nil
}

func (d *Doc) add(n docNode) int32 {
	d.nodes = append(d.nodes, n)
	return int32(len(d.nodes) - 1)
}

// close ends node i's subtree and span at the reader's position.
func (d *Doc) close(i int32) {
	d.nodes[i].end = int32(d.r.Off)
	d.nodes[i].next = int32(len(d.nodes))
}

// structNodes reads the fields of struct si into children of node self; it mirrors
// decoder.structJSON read for read.
func (d *Doc) structNodes(si uint16, self int32) {
	r := &d.r
	m, v := d.m, d.v
	s := &schemaStructs[si]
	fields := schemaFields[s.first : s.first+s.n]
	d.nodes[self].start = int32(r.Off)
	d.nodes[self].compact = m.flex.has(v)
	for i := range fields {
		f := &fields[i]
		if !f.ver.has(v) || !f.tagged.empty() {
			continue
		}
		d.value(f, self, -1, 0, f.compact.has(v))
		if r.Err != nil {
			r.Push(f.name)
			return
		}
	}
	if m.flags&msgHasFlex != 0 && m.flex.has(v) {
		n := r.TagCount()
		prev := int64(-1)
		tagged := s.tagged()
		for i := 0; i < n && r.Err == nil; i++ {
			hdr := r.Off
			tag, end := r.TagHeader(prev) // on failure NoTag, an unknown tag, and the loop ends
			prev = int64(tag)
			known := knownTag(fields, tagged, tag, v)
			if known < 0 {
				u := d.add(docNode{kind: dUnknownTag, parent: self, start: int32(r.Off), hdr: int32(hdr), tag: tag, edit: -1})
				r.Raw(end)
				d.close(u)
				continue
			}
			f := &fields[known]
			saved := r.Limit(end)
			d.value(f, self, int32(hdr), tag, true)
			r.Unlimit(saved, tag)
			if r.Err != nil {
				r.Push(f.name)
				return
			}
		}
		if r.Err != nil {
			r.Push("_tags")
			return
		}
	}
	d.close(self)
}

// value reads one field's value as a child of parent.
func (d *Doc) value(f *field, parent, hdr int32, tag uint32, compact bool) {
	self := d.add(docNode{f: f, parent: parent, start: int32(d.r.Off), hdr: hdr, tag: tag, compact: compact, edit: -1})
	d.fill(f, self, compact)
	d.close(self)
}

// fill reads the value of node self, a field f.
func (d *Doc) fill(f *field, self int32, compact bool) {
	r := &d.r
	nul := f.nul.has(d.v)
	if f.isArray() {
		n := r.ArrayLen(compact, nul, int(f.minElem))
		if n < 0 {
			d.nodes[self].kind = dNull
			return
		}
		d.nodes[self].kind = dArray
		if f.typ != tStruct {
			for i := 0; i < n; i++ {
				e := d.add(docNode{f: f, kind: dScalar, elem: true, parent: self, start: int32(r.Off), hdr: -1, compact: compact, edit: -1})
				d.scalar(f, compact, false, false)
				d.close(e)
				if r.Err != nil {
					r.PushIndex(i)
					return
				}
			}
			return
		}
		for i := 0; i < n; i++ {
			e := d.add(docNode{f: f, kind: dStruct, elem: true, parent: self, hdr: -1, edit: -1})
			d.structNodes(f.sub, e)
			if r.Err != nil {
				r.PushIndex(i)
				return
			}
		}
		return
	}
	if f.typ == tStruct {
		if f.nullableEver() && nul && !r.StructMarker() {
			d.nodes[self].kind = dNull
			return
		}
		d.nodes[self].kind = dStruct
		// structNodes starts the span after the presence byte; the field's span keeps it.
		start := d.nodes[self].start
		d.structNodes(f.sub, self)
		d.nodes[self].start = start
		return
	}
	d.nodes[self].kind = dScalar
	d.scalar(f, compact, nul, f.nullableEver())
}

// scalar skips one scalar, with the reads (and so the checks) decoder.scalar makes.
func (d *Doc) scalar(f *field, compact, nullable, nullableEver bool) {
	r := &d.r
	switch f.typ {
	case tBool, tInt8:
		r.Int8()
	case tInt16, tUint16:
		r.Int16()
	case tInt32, tUint32:
		r.Int32()
	case tInt64, tFloat64:
		r.Int64()
	case tUuid:
		r.UUID()
	case tString:
		if nullableEver && nullable {
			r.NullableStringView(compact)
			return
		}
		r.StringView(compact)
	case tBytes, tRecords:
		if nullableEver && nullable {
			r.NullableBytes(compact)
			return
		}
		r.Bytes(compact)
	}
}

// ---- navigation ----

// Message is the name of the parsed message, Version its version.
func (d *Doc) Message() string {
	if d.m == nil {
		return ""
	}
	return d.m.name
}

// Version is the version the Doc was parsed at.
func (d *Doc) Version() int16 { return d.v }

// Root is the message's root struct (NoNode when nothing is parsed).
func (d *Doc) Root() Node {
	if len(d.nodes) == 0 {
		return NoNode
	}
	return 0
}

func (d *Doc) node(n Node) *docNode {
	if n < 0 || int(n) >= len(d.nodes) {
		return nil
	}
	return &d.nodes[n]
}

// Field is the child of struct n named name (its JSON name), or NoNode when the field is
// not in the version, is a tagged field absent from the wire, or n is not a struct.
func (d *Doc) Field(n Node, name string) Node {
	p := d.node(n)
	if p == nil || p.kind != dStruct {
		return NoNode
	}
	for c := int32(n) + 1; c < p.next; c = d.nodes[c].next {
		if f := d.nodes[c].f; f != nil && d.nodes[c].kind != dUnknownTag && f.name == name {
			return Node(c)
		}
	}
	return NoNode
}

// First is the first element of array n (or the first field of struct n), or NoNode.
// Removed elements are skipped.
func (d *Doc) First(n Node) Node {
	p := d.node(n)
	if p == nil || int32(n)+1 >= p.next {
		return NoNode
	}
	c := Node(n + 1)
	if d.nodes[c].removed {
		return d.Next(c)
	}
	return c
}

// Next is the sibling after n (the next element of its array, or the next field of its
// struct), or NoNode. Removed elements are skipped.
func (d *Doc) Next(n Node) Node {
	c := d.node(n)
	if c == nil || c.parent < 0 {
		return NoNode
	}
	end := d.nodes[c.parent].next
	for i := c.next; i < end; i = d.nodes[i].next {
		if !d.nodes[i].removed {
			return Node(i)
		}
	}
	return NoNode
}

// Len is the element count of array n as parsed (-1 for null, 0 for a non-array).
func (d *Doc) Len(n Node) int {
	p := d.node(n)
	if p == nil {
		return 0
	}
	if p.kind == dNull && p.f != nil && p.f.isArray() {
		return -1
	}
	if p.kind != dArray {
		return 0
	}
	r := wire.Reader{Src: d.src[:p.end], Off: int(p.start)}
	return r.ArrayLen(p.compact, true, 1)
}

// Name is the JSON name of n's field ("" for the root and unknown tags).
func (d *Doc) Name(n Node) string {
	p := d.node(n)
	if p == nil || p.f == nil || p.kind == dUnknownTag {
		return ""
	}
	return p.f.name
}

// IsNull reports whether n is a null struct, array, string or byte string.
func (d *Doc) IsNull(n Node) bool {
	p := d.node(n)
	if p == nil {
		return false
	}
	if p.kind == dNull {
		return true
	}
	if p.kind != dScalar || (p.f.typ != tString && p.f.typ != tBytes && p.f.typ != tRecords) {
		return false
	}
	_, null := d.payload(p)
	return null
}

// Raw is n's bytes as parsed: for a tagged field its value without the tag header, for
// an unknown tag its data.
func (d *Doc) Raw(n Node) []byte {
	p := d.node(n)
	if p == nil {
		return nil
	}
	return d.src[p.start:p.end:p.end]
}

// Path is n's location, e.g. "topics[2].partitions[0].index".
func (d *Doc) Path(n Node) string {
	p := d.node(n)
	if p == nil || p.parent < 0 {
		return ""
	}
	if p.elem {
		i := 0
		for c := d.First(Node(p.parent)); c != NoNode && c != n; c = d.Next(c) {
			i++
		}
		return d.Path(Node(p.parent)) + "[" + strconv.Itoa(i) + "]"
	}
	name := d.Name(n)
	if p.kind == dUnknownTag {
		name = "_tag" + strconv.FormatUint(uint64(p.tag), 10)
	}
	if pp := d.Path(Node(p.parent)); pp != "" {
		return pp + "." + name
	}
	return name
}

// Int is the value of an integer or bool scalar n (0 for anything else).
func (d *Doc) Int(n Node) int64 {
	p := d.node(n)
	if p == nil || p.kind != dScalar {
		return 0
	}
	// The span was read whole by Parse, so it holds the value's bytes.
	b := d.src[p.start:p.end]
	switch p.f.typ {
	case tBool, tInt8:
		return int64(int8(b[0]))
	case tInt16:
		return int64(int16(binary.BigEndian.Uint16(b)))
	case tUint16:
		return int64(binary.BigEndian.Uint16(b))
	case tInt32:
		return int64(int32(binary.BigEndian.Uint32(b)))
	case tUint32:
		return int64(binary.BigEndian.Uint32(b))
	case tInt64:
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// payload is the content of a string, bytes or records scalar after its length
// prefix; null is (nil, true). Parse checked the prefix, so only its form is read.
func (d *Doc) payload(p *docNode) ([]byte, bool) {
	b := d.src[p.start:p.end:p.end]
	if p.compact {
		// uvarint(length+1); 0 is null, in any encoding Parse accepted ("\x80\x00" too).
		i, zero := 0, b[0]&0x7f == 0
		for b[i] >= 0x80 {
			i++
			zero = zero && b[i]&0x7f == 0
		}
		if zero {
			return nil, true
		}
		return b[i+1:], false
	}
	if p.f.typ == tString {
		if int16(binary.BigEndian.Uint16(b)) < 0 {
			return nil, true
		}
		return b[2:], false
	}
	if int32(binary.BigEndian.Uint32(b)) < 0 {
		return nil, true
	}
	return b[4:], false
}

// Str is the value of a string scalar n as a view of the parsed bytes; null is (nil,
// true).
func (d *Doc) Str(n Node) (s []byte, null bool) {
	p := d.node(n)
	if p == nil || p.kind != dScalar || p.f.typ != tString {
		return nil, false
	}
	return d.payload(p)
}

// Bytes is the value of a bytes or records scalar n as a view of the parsed bytes (nil
// for null).
func (d *Doc) Bytes(n Node) []byte {
	p := d.node(n)
	if p == nil || p.kind != dScalar || (p.f.typ != tBytes && p.f.typ != tRecords) {
		return nil
	}
	b, _ := d.payload(p)
	return b
}

// UUID is the value of a uuid scalar n.
func (d *Doc) UUID(n Node) (u [16]byte) {
	p := d.node(n)
	if p == nil || p.kind != dScalar || p.f.typ != tUuid {
		return u
	}
	copy(u[:], d.src[p.start:p.end])
	return u
}

// ---- edits ----

// ErrEdit is the cause of a refused edit.
var ErrEdit = errors.New("kwire: edit refused")

func (d *Doc) editErr(n Node, detail string) error {
	return errtext.Wrap(ErrEdit.Error()+": "+d.Message()+" v"+strconv.Itoa(int(d.v))+" "+d.Path(n)+": "+detail, ErrEdit)
}

// dirty marks n and its ancestors as holding an edit.
func (d *Doc) dirty(n int32) {
	for ; n >= 0 && !d.nodes[n].dirty; n = d.nodes[n].parent {
		d.nodes[n].dirty = true
	}
}

func (d *Doc) replace(n Node, val []byte) {
	p := &d.nodes[n]
	if p.edit < 0 {
		p.edit = int32(len(d.subs))
		d.subs = append(d.subs, nil)
	}
	d.subs[p.edit] = val
	d.dirty(int32(n))
}

// SetInt replaces the value of an integer or bool scalar n; a value out of the field's
// range is refused.
func (d *Doc) SetInt(n Node, v int64) error {
	p := d.node(n)
	if p == nil || p.kind != dScalar {
		return d.editErr(n, "not a scalar")
	}
	typ := p.f.typ
	if typ > tInt64 {
		return d.editErr(n, "not an integer")
	}
	if r := intRange[typ]; v < r[0] || v > r[1] {
		return d.editErr(n, strconv.FormatInt(v, 10)+" is out of range")
	}
	d.replace(n, appendInt(nil, typ, v))
	return nil
}

// SetString replaces the value of a string scalar n.
func (d *Doc) SetString(n Node, s string) error {
	p := d.node(n)
	if p == nil || p.kind != dScalar || p.f.typ != tString {
		return d.editErr(n, "not a string")
	}
	if len(s) > math.MaxInt16 {
		return d.editErr(n, wire.TooLong(len(s)))
	}
	at := len(d.vals)
	d.vals = wire.AppendString(d.vals, s, p.compact)
	d.replace(n, d.vals[at:len(d.vals):len(d.vals)])
	return nil
}

// SetBytes replaces the value of a bytes scalar n with v (not null).
func (d *Doc) SetBytes(n Node, v []byte) error {
	p := d.node(n)
	if p == nil || p.kind != dScalar || p.f.typ != tBytes {
		return d.editErr(n, "not a bytes field")
	}
	d.replace(n, append(wire.AppendLength(make([]byte, 0, 5+len(v)), len(v), p.compact, true), v...))
	return nil
}

// SetStruct replaces the whole value of struct field n (present or null; not an
// array element) with val, its wire bytes at the Doc's version: a nullable struct's
// presence byte first, so a lone 0xff makes it null. What n held is then out of the
// message: edits below it are void, and FilterEntities and ReplaceInMessages do not
// visit it.
func (d *Doc) SetStruct(n Node, val []byte) error {
	p := d.node(n)
	if p == nil || p.elem || p.f == nil || p.f.typ != tStruct || p.f.isArray() || (p.kind != dStruct && p.kind != dNull) {
		return d.editErr(n, "not a struct field")
	}
	d.replace(n, val)
	return nil
}

// Remove drops element n from its array.
func (d *Doc) Remove(n Node) error {
	p := d.node(n)
	if p == nil || !p.elem {
		return d.editErr(n, "not an array element")
	}
	if !p.removed {
		p.removed = true
		d.dirty(p.parent)
	}
	return nil
}

// AppendRaw adds one element, given as its wire bytes at the Doc's version (for example
// Raw of an element of another Doc of the same message and version), at the end of array
// n. The bytes are not checked here; AppendTo writes them as they are.
func (d *Doc) AppendRaw(n Node, elem []byte) error {
	p := d.node(n)
	if p == nil || p.kind != dArray {
		return d.editErr(n, "not an array")
	}
	if p.nadd == 0 {
		p.edit = int32(len(d.subs))
	} else if int(p.edit+p.nadd) != len(d.subs) {
		// Keep each array's appended elements together: move them to the end.
		moved := append([][]byte(nil), d.subs[p.edit:p.edit+p.nadd]...)
		p.edit = int32(len(d.subs))
		d.subs = append(d.subs, moved...)
	}
	d.subs = append(d.subs, elem)
	p.nadd++
	d.dirty(int32(n))
	return nil
}

// AppendTo appends the message with every edit applied to dst.
func (d *Doc) AppendTo(dst []byte) ([]byte, error) {
	if len(d.nodes) == 0 {
		return dst, errors.New("kwire: AppendTo of an empty Doc")
	}
	dst = d.emit(dst, 0)
	return append(dst, d.src[d.nodes[0].end:]...), nil
}

// emit appends node i with its edits.
func (d *Doc) emit(b []byte, i int32) []byte {
	p := &d.nodes[i]
	if !p.dirty {
		return append(b, d.src[p.start:p.end]...)
	}
	if p.kind == dScalar || p.edit >= 0 && p.kind != dArray { // a scalar, or a struct SetStruct replaced
		return append(b, d.subs[p.edit]...)
	}
	if p.kind == dArray {
		n, all := 0, 0
		for c := i + 1; c < p.next; c = d.nodes[c].next {
			all++
			if !d.nodes[c].removed {
				n++
			}
		}
		if n == all && p.nadd == 0 && all > 0 {
			// The count is unchanged (only elements' contents are): its prefix is
			// copied as it was written, as every byte outside the edits is.
			b = append(b, d.src[p.start:d.nodes[i+1].start]...)
		} else {
			b = wire.AppendArrayLen(b, n+int(p.nadd), false, p.compact)
		}
		for c := i + 1; c < p.next; c = d.nodes[c].next {
			if !d.nodes[c].removed {
				b = d.emit(b, c)
			}
		}
		for k := p.edit; k < p.edit+p.nadd; k++ {
			b = append(b, d.subs[k]...)
		}
		return b
	}
	// A struct: copy what lies between its children (presence byte, tag count, tag
	// headers of unedited values) and emit the children; an edited tagged value gets a
	// new size.
	pos := p.start
	for c := i + 1; c < p.next; c = d.nodes[c].next {
		cn := &d.nodes[c]
		if !cn.dirty {
			continue
		}
		if cn.hdr < 0 {
			b = append(b, d.src[pos:cn.start]...)
			b = d.emit(b, c)
			pos = cn.end
			continue
		}
		b = append(b, d.src[pos:cn.hdr]...)
		val := d.emit(nil, c) // edits are rare: a fresh buffer keeps nested tags simple
		b = wire.AppendUvarint(b, cn.tag)
		b = wire.AppendUvarint(b, uint32(len(val)))
		b = append(b, val...)
		pos = cn.end
	}
	return append(b, d.src[pos:p.end]...)
}
