package rules

import (
	"math"
	"reflect"
	"sync"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/internal/transcode"
)

// A request's fields, as rules see them: every field of the request in any version,
// with its JSON name, its kind and, for structs and arrays of structs, its own fields.
//
// The schema tables of internal/transcode do not export their fields, so the tree is
// read from the generated typed message (whose Go fields are the descriptor's fields,
// in descriptor order, every version's) and each JSON name is confirmed against the
// schema with transcode.NewWalkPlan, which knows the exact names. It is built once
// per api, when a rule first names that api.

type kind uint8

const (
	kBool kind = iota
	kInt
	kFloat
	kString
	kBytes
	kUUID
	kStruct
)

var kindNames = [...]string{kBool: "bool", kInt: "integer", kFloat: "float64", kString: "string", kBytes: "byte string", kUUID: "uuid", kStruct: "struct"}

type schemaField struct {
	name   string // JSON name
	kind   kind   // of the value, or of each element when array
	array  bool
	lo, hi int64 // integers: the type's range
	fields []*schemaField
}

// describe is "an integer", "a string", "an array of structs", ... for errors.
func (f *schemaField) describe() string {
	k := kindNames[f.kind]
	if f.array {
		return "an array of " + k + "s"
	}
	switch k[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + k
	}
	return "a " + k
}

func (f *schemaField) child(name string) *schemaField {
	for _, c := range f.fields {
		if c.name == name {
			return c
		}
	}
	return nil
}

func (f *schemaField) names() []string {
	out := make([]string, len(f.fields))
	for i, c := range f.fields {
		out[i] = c.name
	}
	return out
}

var (
	modelsMu sync.Mutex
	models   = map[int16]*schemaField{}
)

// requestModel is the field tree of the request of api key (its root is a struct
// named ""), or nil when there is no such request.
func requestModel(key int16) *schemaField {
	modelsMu.Lock()
	defer modelsMu.Unlock()
	if m, ok := models[key]; ok {
		return m
	}
	req := codec.NewRequest(key)
	if req == nil {
		return nil
	}
	root := &schemaField{kind: kStruct}
	root.fields = structFields(key, reflect.TypeOf(req).Elem(), "")
	models[key] = root
	return root
}

var uuidType = reflect.TypeOf(codec.UUID{})

// structFields lists the fields of the typed struct t, found at the dotted JSON path
// prefix ("" for the root, "topics." below it).
func structFields(key int16, t reflect.Type, prefix string) []*schemaField {
	var out []*schemaField
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() || sf.Name == "UnknownTaggedFields" || sf.Name == "TrailingBytes" {
			continue
		}
		f := &schemaField{name: jsonName(key, prefix, sf.Name)}
		ft := sf.Type
		if ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8 {
			f.array = true
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft == uuidType:
			f.kind = kUUID
		case ft.Kind() == reflect.Bool:
			f.kind = kBool
		case ft.Kind() == reflect.Float64:
			f.kind = kFloat
		case ft.Kind() == reflect.String:
			f.kind = kString
		case ft.Kind() == reflect.Slice:
			f.kind = kBytes
		case ft.Kind() == reflect.Struct:
			f.kind = kStruct
			f.fields = structFields(key, ft, prefix+f.name+".")
		default:
			f.kind = kInt
			f.lo, f.hi = intRange(ft.Kind())
		}
		out = append(out, f)
	}
	return out
}

func intRange(k reflect.Kind) (int64, int64) {
	switch k {
	case reflect.Int8:
		return math.MinInt8, math.MaxInt8
	case reflect.Int16:
		return math.MinInt16, math.MaxInt16
	case reflect.Uint16:
		return 0, math.MaxUint16
	case reflect.Int32:
		return math.MinInt32, math.MaxInt32
	case reflect.Uint32:
		return 0, math.MaxUint32
	}
	return math.MinInt64, math.MaxInt64
}

// jsonName is the JSON name of the Go field goName found at prefix: the descriptor
// name with its first letter lowered, which the Go name spells with Go's initialisms
// (descriptor GroupId is Go GroupID, JSON groupId). Both spellings are tried against
// the schema.
func jsonName(key int16, prefix, goName string) string {
	undone := lowerFirst(undoInitialisms(goName, false))
	for _, c := range [...]string{undone, lowerFirst(undoInitialisms(goName, true)), lowerFirst(goName)} {
		if _, err := transcode.NewWalkPlan(key, codec.KindRequest, prefix+c); err == nil {
			return c
		}
	}
	return undone
}

func lowerFirst(s string) string {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}

// undoInitialisms spells each run of capitals as one word: GroupID -> GroupId,
// ACLBindings -> AclBindings, APIKey -> ApiKey; with plural, a run before a lower-case
// letter is one word too (BrokerIDs -> BrokerIds).
func undoInitialisms(s string, plural bool) string {
	b := []byte(s)
	isUpper := func(c byte) bool { return c >= 'A' && c <= 'Z' }
	for i := 0; i < len(b); {
		if !isUpper(b[i]) {
			i++
			continue
		}
		j := i
		for j < len(b) && isUpper(b[j]) {
			j++
		}
		end := j
		if !plural && j < len(b) && b[j] >= 'a' && b[j] <= 'z' && j-i > 1 {
			end = j - 1 // the last capital starts the next word
		}
		for k := i + 1; k < end; k++ {
			b[k] += 'a' - 'A'
		}
		i = j
	}
	return string(b)
}
