package transcode

import (
	"math"

	"github.com/kwire/kwire/internal/proto"
)

// TreeKind is the kind of a field's value (of each element, for an array).
type TreeKind uint8

const (
	TreeBool TreeKind = iota
	TreeInt
	TreeFloat
	TreeString
	TreeBytes // bytes and records
	TreeUUID
	TreeStruct
)

// TreeField is one field of a message in any of its versions: its JSON name, the kind
// of its value, whether it is an array, an integer's range, a struct's fields (in
// descriptor order), and the versions that have it.
type TreeField struct {
	Name           string
	Kind           TreeKind
	Array          bool
	Lo, Hi         int64
	MinVer, MaxVer int16
	Fields         []*TreeField
	// Entity is the descriptor's entityType (EntityTopicName, ...; 0 for none).
	Entity uint8
}

// MessageTree is the field tree of the request or response (kind) of api key, every
// version's fields together, and the message's name; nil when there is none.
func MessageTree(key int16, kind proto.Kind) ([]*TreeField, string) {
	m := apiMessage(key, kind)
	if m == nil {
		return nil, ""
	}
	return treeOf(&schemaStructs[m.root]), m.name
}

func treeOf(s *structDesc) []*TreeField {
	var out []*TreeField
	for i := range fieldsOf(s) {
		f := &fieldsOf(s)[i]
		t := &TreeField{Name: f.name, Array: f.isArray(), MinVer: f.ver.lo, MaxVer: f.ver.hi, Entity: f.entity}
		switch f.typ {
		case tBool:
			t.Kind = TreeBool
		case tFloat64:
			t.Kind = TreeFloat
		case tString:
			t.Kind = TreeString
		case tBytes, tRecords:
			t.Kind = TreeBytes
		case tUuid:
			t.Kind = TreeUUID
		case tStruct:
			t.Kind = TreeStruct
			t.Fields = treeOf(&schemaStructs[f.sub])
		default:
			t.Kind = TreeInt
			t.Lo, t.Hi = intBounds(f.typ)
		}
		out = append(out, t)
	}
	return out
}

func intBounds(typ uint8) (int64, int64) {
	switch typ {
	case tInt8:
		return math.MinInt8, math.MaxInt8
	case tInt16:
		return math.MinInt16, math.MaxInt16
	case tUint16:
		return 0, math.MaxUint16
	case tInt32:
		return math.MinInt32, math.MaxInt32
	case tUint32:
		return 0, math.MaxUint32
	}
	return math.MinInt64, math.MaxInt64
}
