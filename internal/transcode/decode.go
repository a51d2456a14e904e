package transcode

import (
	"strconv"
	"unsafe"

	"github.com/kwire/kwire/internal/jsonx"
	"github.com/kwire/kwire/internal/wire"
)

// RecordsFunc, when set in DecodeOptions, is called for every records field that is not
// null instead of writing its bytes as base64. It appends the field's JSON value to dst
// and returns it; a non-nil error fails the decode (the error is returned as it is).
// path is the field's location, e.g. "responses[0].partitions[2].records".
type RecordsFunc func(dst []byte, records []byte, path func() string) ([]byte, error)

// DecodeOptions tune wire -> JSON transcoding.
type DecodeOptions struct {
	// Records replaces the base64 form of records fields; nil keeps base64.
	Records RecordsFunc
	// TopicName, when set, names the topics of structs that identify a topic by its id
	// alone at the version being read (Produce v13, Fetch v13+, OffsetCommit v10,
	// ShareFetch, ...: a "topicId" and no topic name field at that version). Right after
	// such a struct's "topicId" the decoder writes the name TopicName returns for the
	// id, when ok, under the key of the struct's name field at the versions that have
	// one ("name" in Produce, "topic" in Fetch) or TopicNameKey where it has none. These
	// names are not wire fields: encoding drops them (see EncodeOptions.TopicNames).
	TopicName func(id [16]byte) (name string, ok bool)
}

// TopicNameKey is the key of a topic name DecodeOptions.TopicName adds to a struct
// that has no topic name field at any version (ShareFetch's topics, for one).
const TopicNameKey = "topicName"

// isTopicNameField reports whether f is one of the fields that name a topic beside a
// "topicId" in the descriptors (entity type topicName): a string called name, topic or
// topicName.
func isTopicNameField(f *field) bool {
	return f.typ == tString && !f.isArray() && (f.name == "name" || f.name == "topic" || f.name == TopicNameKey)
}

// isTopicIDField reports whether f is a topic id (a uuid called topicId).
func isTopicIDField(f *field) bool { return f.typ == tUuid && !f.isArray() && f.name == "topicId" }

// topicNameKey is the key under which a struct's resolved topic name goes at version
// v, or "" when the struct has a topic name field at v (the name is on the wire).
func topicNameKey(fields []field, v int16) string {
	key := ""
	for i := range fields {
		f := &fields[i]
		if !isTopicNameField(f) {
			continue
		}
		if f.ver.has(v) {
			return ""
		}
		if key == "" {
			key = f.name
		}
	}
	if key == "" {
		key = TopicNameKey
	}
	return key
}

// unknownTag is one tagged field the schema does not define, as read.
type unknownTag struct {
	tag  uint32
	data []byte
}

// hole is the place of one tagged field's value in a struct's JSON output.
type hole struct {
	pos   int // offset in out where the value goes
	field uint16
	start int // span of the decoded value in out, or -1 when the field was absent
	end   int
}

type decoder struct {
	r      wire.Reader
	out    []byte
	opts   *DecodeOptions
	unk    []unknownTag // stack of unknown tags of the structs being decoded
	holes  []hole       // stack of tagged-field holes of the structs being decoded
	tmp    []byte
	offs   []int
	segs   []pathSeg // current location, for the records callback
	recErr error
	// recField is the records field being handed to the callback; pathOfRecords
	// (recordsFieldPath) renders its path on demand.
	recField      *field
	pathOfRecords func() string
}

type pathSeg struct {
	name  string
	index int // -1 for a field segment
}

// recordsFieldPath is the path of the records field being handed to the callback.
func (d *decoder) recordsFieldPath() string {
	d.segs = append(d.segs, pathSeg{name: d.recField.name, index: -1})
	p := d.recordsPath()
	d.segs = d.segs[:len(d.segs)-1]
	return p
}

// recordsPath renders the current location for a records callback.
func (d *decoder) recordsPath() string {
	var b []byte
	for i, s := range d.segs {
		if s.index >= 0 {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(s.index), 10)
			b = append(b, ']')
			continue
		}
		if i > 0 {
			b = append(b, '.')
		}
		b = append(b, s.name...)
	}
	return string(b)
}

func (d *decoder) key(first bool, name string) {
	d.out = jsonx.Key(d.out, first, name)
}

// structJSON reads one struct at version v and writes its JSON object. It mirrors the
// typed codec's generated decode: the same reads in the same order, the same failure
// checks and path segments.
func (d *decoder) structJSON(m *message, si uint16, v int16) {
	r := &d.r
	s := &schemaStructs[si]
	fields := schemaFields[s.first : s.first+s.n]
	flex := m.flex.has(v)
	d.out = append(d.out, '{')
	first := true
	holeBase := len(d.holes)
	for i := range fields {
		f := &fields[i]
		if !f.ver.has(v) {
			continue
		}
		d.key(first, f.name)
		first = false
		if !f.tagged.empty() {
			d.holes = append(d.holes, hole{pos: len(d.out), field: uint16(i), start: -1})
			continue
		}
		d.value(m, f, v, f.compact.has(v))
		if r.Err != nil {
			r.Push(f.name)
			d.holes = d.holes[:holeBase]
			return
		}
		if d.opts.TopicName != nil && isTopicIDField(f) {
			d.topicName(fields, v)
		}
	}
	unkBase := len(d.unk)
	regEnd := len(d.out)
	if m.flags&msgHasFlex != 0 && flex {
		n := r.TagCount()
		prev := int64(-1)
		tagged := s.tagged()
		for i := 0; i < n && r.Err == nil; i++ {
			tag, end := r.TagHeader(prev) // on failure NoTag, an unknown tag, and the loop ends
			prev = int64(tag)
			known := knownTag(fields, tagged, tag, v)
			if known < 0 {
				d.unk = append(d.unk, unknownTag{tag: tag, data: r.Raw(end)})
				continue
			}
			f := &fields[known]
			saved := r.Limit(end)
			start := len(d.out)
			d.value(m, f, v, true)
			r.Unlimit(saved, tag)
			if r.Err != nil {
				r.Push(f.name)
				d.holes, d.unk = d.holes[:holeBase], d.unk[:unkBase]
				return
			}
			for h := holeBase; h < len(d.holes); h++ {
				if d.holes[h].field == uint16(known) {
					d.holes[h].start, d.holes[h].end = start, len(d.out)
				}
			}
		}
		if r.Err != nil {
			r.Push("_tags")
			d.holes, d.unk = d.holes[:holeBase], d.unk[:unkBase]
			return
		}
	}
	if len(d.holes) > holeBase {
		d.fillHoles(m, fields, v, d.holes[holeBase:], regEnd)
		d.holes = d.holes[:holeBase]
	}
	if len(d.unk) > unkBase {
		d.key(first, "_unknownTaggedFields")
		d.out = appendUnknownJSON(d.out, d.unk[unkBase:])
		d.unk = d.unk[:unkBase]
	}
	d.out = append(d.out, '}')
}

// topicName writes the resolved name of the topic id just read, when the struct has no
// name of its own at v and DecodeOptions.TopicName knows the id.
func (d *decoder) topicName(fields []field, v int16) {
	key := topicNameKey(fields, v)
	if key == "" {
		return
	}
	var id [16]byte
	copy(id[:], d.r.Src[d.r.Off-16:d.r.Off])
	name, ok := d.opts.TopicName(id)
	if !ok {
		return
	}
	d.key(false, key)
	d.out = jsonx.AppendString(d.out, name)
}

// fillHoles moves the decoded values of tagged fields, which the tag section appended
// after regEnd, into their places among the struct's other fields, and writes the
// defaults of absent ones.
func (d *decoder) fillHoles(m *message, fields []field, v int16, hs []hole, regEnd int) {
	tmp := d.tmp[:0]
	offs := d.offs[:0]
	for _, h := range hs {
		offs = append(offs, len(tmp))
		if h.start >= 0 {
			tmp = append(tmp, d.out[h.start:h.end]...)
		} else {
			tmp = appendDefaultJSON(tmp, m, &fields[h.field], v)
		}
	}
	offs = append(offs, len(tmp))
	d.out = append(d.out[:regEnd], tmp...)
	// Shift the text after each hole right by the size of the values up to it, from the
	// last hole back, and drop each value into its place.
	end := regEnd
	for k := len(hs) - 1; k >= 0; k-- {
		p := hs[k].pos
		copy(d.out[p+offs[k+1]:end+offs[k+1]], d.out[p:end])
		copy(d.out[p+offs[k]:p+offs[k+1]], tmp[offs[k]:offs[k+1]])
		end = p
	}
	d.tmp, d.offs = tmp[:0], offs[:0]
}

// value reads one field's value and writes its JSON.
func (d *decoder) value(m *message, f *field, v int16, compact bool) {
	r := &d.r
	nul := f.nul.has(v)
	if f.isArray() {
		n := r.ArrayLen(compact, nul, int(f.minElem))
		if n < 0 {
			if r.Err == nil {
				d.out = append(d.out, "null"...)
			}
			return
		}
		d.out = append(d.out, '[')
		for i := 0; i < n; i++ {
			if i > 0 {
				d.out = append(d.out, ',')
			}
			if f.typ == tStruct {
				if d.opts.Records != nil {
					d.segs = append(d.segs, pathSeg{name: f.name, index: -1}, pathSeg{index: i})
				}
				d.structJSON(m, f.sub, v)
				if d.opts.Records != nil {
					d.segs = d.segs[:len(d.segs)-2]
				}
			} else {
				d.scalar(f, compact, false, false)
			}
			if r.Err != nil {
				r.PushIndex(i)
				break
			}
		}
		d.out = append(d.out, ']')
		return
	}
	if f.typ == tStruct {
		if f.nullableEver() && nul && !r.StructMarker() {
			d.out = append(d.out, "null"...)
			return
		}
		if d.opts.Records != nil {
			d.segs = append(d.segs, pathSeg{name: f.name, index: -1})
		}
		d.structJSON(m, f.sub, v)
		if d.opts.Records != nil {
			d.segs = d.segs[:len(d.segs)-1]
		}
		return
	}
	if f.typ == tRecords && d.opts.Records != nil {
		d.records(f, compact, nul)
		return
	}
	d.scalar(f, compact, nul, f.nullableEver())
}

// records hands a records field to the caller's RecordsFunc.
func (d *decoder) records(f *field, compact, nul bool) {
	r := &d.r
	var b []byte
	if f.nullableEver() && nul {
		b = r.NullableBytes(compact)
	} else {
		b = r.Bytes(compact)
	}
	if r.Err != nil {
		return
	}
	if b == nil {
		d.out = append(d.out, "null"...)
		return
	}
	d.recField = f
	out, err := d.opts.Records(d.out, b, d.pathOfRecords)
	d.recField = nil
	if err != nil {
		d.recErr = err
		r.Fail(errRecordsHook, r.Off, "")
		return
	}
	d.out = out
}

// scalar reads one scalar and writes its JSON. nullable is whether the version allows
// null, nullableEver whether the typed field can hold it (pointer or nil slice).
func (d *decoder) scalar(f *field, compact, nullable, nullableEver bool) {
	r := &d.r
	switch f.typ {
	case tBool:
		d.out = jsonx.AppendBool(d.out, r.Bool())
	case tInt8:
		d.out = jsonx.AppendInt(d.out, int64(r.Int8()))
	case tInt16:
		d.out = jsonx.AppendInt(d.out, int64(r.Int16()))
	case tUint16:
		d.out = jsonx.AppendInt(d.out, int64(r.Uint16()))
	case tInt32:
		d.out = jsonx.AppendInt(d.out, int64(r.Int32()))
	case tUint32:
		d.out = jsonx.AppendInt(d.out, int64(r.Uint32()))
	case tInt64:
		d.out = jsonx.AppendInt64(d.out, r.Int64())
	case tFloat64:
		d.out = jsonx.AppendFloat64(d.out, r.Float64())
	case tUuid:
		d.out = jsonx.AppendUUID(d.out, r.UUID())
	case tString:
		if nullableEver && nullable {
			s, null := r.NullableStringView(compact)
			if null {
				d.out = append(d.out, "null"...)
				return
			}
			d.out = jsonx.AppendString(d.out, unsafeString(s))
			return
		}
		d.out = jsonx.AppendString(d.out, unsafeString(r.StringView(compact)))
	case tBytes, tRecords:
		var b []byte
		if nullableEver && nullable {
			b = r.NullableBytes(compact)
		} else {
			b = r.Bytes(compact)
		}
		d.out = jsonx.AppendBytes(d.out, b, nullableEver)
	}
}

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func appendUnknownJSON(b []byte, u []unknownTag) []byte {
	b = append(b, '[')
	for i, t := range u {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"tag":`...)
		b = strconv.AppendUint(b, uint64(t.tag), 10)
		b = append(b, `,"data":`...)
		b = jsonx.AppendBytes(b, t.data, false)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendDefaultJSON writes the JSON of a field holding its descriptor default.
func appendDefaultJSON(b []byte, m *message, f *field, v int16) []byte {
	if f.isArray() {
		if f.nullableEver() && f.defaultNil() {
			return append(b, "null"...)
		}
		return append(b, "[]"...)
	}
	switch f.typ {
	case tStruct:
		if f.nullableEver() && f.defaultNil() {
			return append(b, "null"...)
		}
		return appendDefaultStruct(b, m, f.sub, v)
	case tBool:
		return jsonx.AppendBool(b, f.defInt != 0)
	case tInt8, tInt16, tUint16, tInt32, tUint32:
		return jsonx.AppendInt(b, f.defInt)
	case tInt64:
		return jsonx.AppendInt64(b, f.defInt)
	case tFloat64:
		return jsonx.AppendFloat64(b, float64frombits(f.defInt))
	case tUuid:
		return jsonx.AppendUUID(b, [16]byte{})
	case tString:
		if f.nullableEver() && f.defaultNil() {
			return append(b, "null"...)
		}
		return jsonx.AppendString(b, f.defStr)
	case tBytes:
		if f.nullableEver() && f.defaultNil() {
			return append(b, "null"...)
		}
		return append(b, `""`...)
	case tRecords:
		return jsonx.AppendBytes(b, nil, f.nullableEver())
	}
	return b
}

func appendDefaultStruct(b []byte, m *message, si uint16, v int16) []byte {
	s := &schemaStructs[si]
	b = append(b, '{')
	first := true
	for i := range schemaFields[s.first : s.first+s.n] {
		f := &schemaFields[int(s.first)+i]
		if !f.ver.has(v) {
			continue
		}
		b = jsonx.Key(b, first, f.name)
		first = false
		b = appendDefaultJSON(b, m, f, v)
	}
	return append(b, '}')
}
