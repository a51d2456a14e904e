package transcode

// The schema tables (schema_gen.go) are written by internal/gen from the same
// merged descriptors as the typed codec. These are their types.

// vr is an inclusive version range; lo > hi means no version.
type vr struct{ lo, hi int16 }

func (r vr) has(v int16) bool { return v >= r.lo && v <= r.hi }
func (r vr) empty() bool      { return r.lo > r.hi }

// Message kinds, as proto.Kind.
const (
	kindRequest uint8 = iota
	kindResponse
	kindHeader
	kindData
)

// Message flags.
const (
	msgHasFlex  uint8 = 1 << iota // some version is flexible: structs carry unknown tags
	msgTrailing                   // bytes after the body are accepted and kept
)

type message struct {
	name   string
	apiKey int16
	kind   uint8
	valid  vr
	flex   vr
	root   uint16
	flags  uint8
}

type structDesc struct {
	name        string // Go type name in the typed codec, for messages
	first       uint16 // first field in schemaFields
	n           uint16
	taggedFirst uint16 // first entry in schemaTagged
	taggedN     uint8
}

// Field types.
const (
	tBool uint8 = iota
	tInt8
	tInt16
	tUint16
	tInt32
	tUint32
	tInt64
	tFloat64
	tString
	tBytes
	tRecords
	tUuid
	tStruct
)

// Field flags.
const (
	fArray        uint8 = 1 << iota
	fNullableEver       // nullable in some version: the typed field is a pointer or may be nil
	fIgnorable
	fDefaultNil // the typed codec's default is nil (pointer, slice), not an empty value
)

type field struct {
	name    string // JSON name
	typ     uint8
	flags   uint8
	ver     vr
	nul     vr
	tagged  vr
	tag     int32
	compact vr // versions that use compact (flexible) encodings for this field
	sub     uint16
	minElem int32 // smallest wire size of one array element
	defInt  int64 // default of bool (0/1), integers, and float64 (as IEEE bits)
	defStr  string
	aliases string // former JSON names, comma-separated
	entity  uint8  // the descriptor's entityType (e*), eNone for none
}

// Entity types of fields (the descriptors' entityType).
const (
	eNone uint8 = iota
	eTopicName
	eGroupID
	eTransactionalID
	eProducerID
	eBrokerID
)

func (f *field) isArray() bool      { return f.flags&fArray != 0 }
func (f *field) nullableEver() bool { return f.flags&fNullableEver != 0 }
func (f *field) defaultNil() bool   { return f.flags&fDefaultNil != 0 }

// tagged is the positions in the struct's fields of its tagged fields.
func (s *structDesc) tagged() []uint8 {
	return schemaTagged[s.taggedFirst : s.taggedFirst+uint16(s.taggedN)]
}

// knownTag is the position in fields of the tagged field with tag at version v, or -1
// when the struct defines no such tag at v.
func knownTag(fields []field, tagged []uint8, tag uint32, v int16) int {
	for _, j := range tagged {
		f := &fields[j]
		if f.tag == int32(tag) && f.tagged.has(v) {
			return int(j)
		}
	}
	return -1
}

// Api keys with header special cases.
const (
	apiKeyControlledShutdown = 7
	apiKeyAPIVersions        = 18
)

// requestHeaderVersion is the request header version of (key, v), as
// codec.RequestHeaderVersion: 2 for flexible versions, else 1, and 0 for
// ControlledShutdown v0; -1 for an unknown api key.
func requestHeaderVersion(key, v int16) int16 {
	m := byKey(requestByKey[:], key)
	switch {
	case m == nil:
		return -1
	case key == apiKeyControlledShutdown && v == 0:
		return 0
	case m.flex.has(v):
		return 2
	}
	return 1
}

// responseHeaderVersion is the response header version of (key, v), as
// codec.ResponseHeaderVersion: 1 for flexible versions, else 0, and always 0 for
// ApiVersions; -1 for an unknown api key.
func responseHeaderVersion(key, v int16) int16 {
	m := byKey(responseByKey[:], key)
	switch {
	case m == nil:
		return -1
	case key != apiKeyAPIVersions && m.flex.has(v):
		return 1
	}
	return 0
}
