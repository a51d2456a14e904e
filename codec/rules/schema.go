package rules

import (
	"sync"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/internal/transcode"
)

// A request's fields, as rules see them: every field of the request in any version,
// with its JSON name, its kind and, for structs and arrays of structs, its own fields,
// read from the schema tables of internal/transcode (transcode.MessageTree) once per
// api, when a rule first names that api.

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
	tree, _ := transcode.MessageTree(key, codec.KindRequest)
	if tree == nil {
		return nil
	}
	root := &schemaField{kind: kStruct, fields: fromTree(tree)}
	models[key] = root
	return root
}

// requestName is the request message's name of api key ("CreateTopicsRequest").
func requestName(key int16) string {
	_, name := transcode.MessageTree(key, codec.KindRequest)
	return name
}

var treeKinds = [...]kind{transcode.TreeBool: kBool, transcode.TreeInt: kInt, transcode.TreeFloat: kFloat, transcode.TreeString: kString,
	transcode.TreeBytes: kBytes, transcode.TreeUUID: kUUID, transcode.TreeStruct: kStruct}

func fromTree(ts []*transcode.TreeField) []*schemaField {
	out := make([]*schemaField, len(ts))
	for i, t := range ts {
		out[i] = &schemaField{name: t.Name, kind: treeKinds[t.Kind], array: t.Array, lo: t.Lo, hi: t.Hi, fields: fromTree(t.Fields)}
	}
	return out
}
