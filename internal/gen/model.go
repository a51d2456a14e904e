package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kwire/kwire/internal/gen/goname"
)

// Message is one descriptor after the releases are merged.
type Message struct {
	Name       string
	Kind       string // request, response, header, data
	APIKey     int    // -1 for headers and data
	Valid      vrange
	Flexible   vrange
	Deprecated vrange
	Listeners  []string
	Unstable   bool
	Root       *Struct
	Structs    []*Struct // every struct, root first, in declaration order
	Releases   []string  // releases whose descriptors name this message
	Renames    []Rename  // fields the newer release renamed
	Superseded []Superseded

	currentName    string // the api key's name in the newest release, when it differs
	unstableLatest bool   // this release's latest version is unstable (requests and their responses)

	newValid vrange // valid versions of the newer side while merging
}

// Superseded is a version that an older release marked unstable and a newer release
// redefined; the newer definition is the one generated.
type Superseded struct {
	Release string
	Version int
}

// Rename is a field that a newer release renamed at versions both releases define.
type Rename struct {
	Path     string // JSON path of the struct holding it, "" for the root, "topics[].partitions[]"
	Old, New string // JSON names
}

// Struct is the root of a message or one nested or common struct.
type Struct struct {
	Name     string // descriptor name ("TopicProduceData")
	TypeName string // the name in the bindings' JSON types, "ProduceRequestTopicProduceData"
	GoName   string // the Go type, TypeName in Go's spelling ("DescribeACLsRequest")
	Fields   []*Field
	Common   bool
}

// Field is one descriptor field with its version ranges clamped to the message.
type Field struct {
	Name       string // descriptor name
	GoName     string
	JSONName   string
	Type       string // descriptor type ("int32", "[]string", "[]TopicData", "Cursor")
	Array      bool
	Elem       string // element type for arrays, else Type
	Struct     *Struct
	Versions   vrange
	Nullable   vrange
	Tagged     vrange
	Tag        int // -1 when never tagged
	FlexOver   bool
	Flexible   vrange // only when FlexOver
	Default    string // descriptor default as text; "" when none
	HasDefault bool
	Ignorable  bool
	EntityType string
	Aliases    []string // former JSON names, accepted on input

	inline []*rawField // nested field list from the descriptor, nil for primitives
}

var primitives = map[string]bool{
	"bool": true, "int8": true, "int16": true, "uint16": true, "int32": true, "uint32": true,
	"int64": true, "float64": true, "string": true, "bytes": true, "records": true, "uuid": true,
}

// exportName is the Go name of a descriptor field: exported, in Go's spelling of
// initialisms ("brokerId" is BrokerID).
func exportName(s string) string { return goname.Ident(strings.ToUpper(s[:1]) + s[1:]) }
func jsonName(s string) string   { return strings.ToLower(s[:1]) + s[1:] }

func rawDefault(r json.RawMessage) (string, bool) {
	if len(r) == 0 {
		return "", false
	}
	var s string
	if json.Unmarshal(r, &s) == nil {
		return s, true
	}
	return string(r), true
}

func rawTag(r json.RawMessage) (int, error) {
	if len(r) == 0 {
		return -1, nil
	}
	d, _ := rawDefault(r)
	return strconv.Atoi(d)
}

// buildMessage turns one release's raw descriptor into a Message with ranges clamped to
// its valid versions.
func buildMessage(rel string, rm *rawMessage) (*Message, error) {
	valid, err := parseRange(rm.ValidVersions)
	if err != nil {
		return nil, err
	}
	flex, err := parseRange(rm.FlexibleVersions)
	if err != nil {
		return nil, err
	}
	dep, err := parseRange(rm.DeprecatedVersions)
	if err != nil {
		return nil, err
	}
	m := &Message{
		Name: rm.Name, Kind: rm.Type, APIKey: -1, Valid: valid,
		Flexible: flex.clamp(valid), Deprecated: dep.clamp(valid),
		Listeners: rm.Listeners, Unstable: rm.LatestVersionUnstable,
		Releases: []string{rel},
	}
	if rm.APIKey != nil {
		m.APIKey = *rm.APIKey
	}
	common := map[string]*rawStruct{}
	for _, c := range rm.CommonStructs {
		common[c.Name] = c
	}
	m.Root = &Struct{Name: rm.Name}
	seen := map[string]*Struct{}
	if err := buildFields(m, m.Root, rm.Fields, common, seen, valid); err != nil {
		return nil, fmt.Errorf("%s (%s): %v", rm.Name, rel, err)
	}
	return m, nil
}

func buildFields(m *Message, s *Struct, raws []*rawField, common map[string]*rawStruct, seen map[string]*Struct, valid vrange) error {
	for _, rf := range raws {
		f := &Field{Name: rf.Name, GoName: exportName(rf.Name), JSONName: jsonName(rf.Name), Type: rf.Type,
			Ignorable: rf.Ignorable, EntityType: rf.EntityType}
		var err error
		if f.Versions, err = parseRange(rf.Versions); err != nil {
			return err
		}
		f.Versions = f.Versions.clamp(valid)
		if f.Nullable, err = parseRange(rf.NullableVersions); err != nil {
			return err
		}
		f.Nullable = f.Nullable.clamp(f.Versions)
		if f.Tagged, err = parseRange(rf.TaggedVersions); err != nil {
			return err
		}
		f.Tagged = f.Tagged.clamp(f.Versions)
		if f.Tag, err = rawTag(rf.Tag); err != nil {
			return fmt.Errorf("field %s: bad tag", rf.Name)
		}
		if rf.FlexibleVersions != nil {
			f.FlexOver = true
			if f.Flexible, err = parseRange(*rf.FlexibleVersions); err != nil {
				return err
			}
			f.Flexible = f.Flexible.clamp(valid)
		}
		f.Default, f.HasDefault = rawDefault(rf.Default)
		f.Elem = f.Type
		if strings.HasPrefix(f.Type, "[]") {
			f.Array = true
			f.Elem = f.Type[2:]
		}
		if !primitives[f.Elem] {
			fields := rf.Fields
			isCommon := false
			if fields == nil {
				c, ok := common[f.Elem]
				if !ok {
					return fmt.Errorf("field %s: struct type %s has no fields and no common struct", rf.Name, f.Elem)
				}
				fields = c.Fields
				isCommon = true
			}
			if prev, ok := seen[f.Elem]; ok {
				f.Struct = prev
				// A struct used twice is declared once; the second use must not redefine it.
				if rf.Fields != nil && !isCommon && len(prev.Fields) > 0 {
					return fmt.Errorf("struct %s is defined twice", f.Elem)
				}
			} else {
				st := &Struct{Name: f.Elem, Common: isCommon}
				seen[f.Elem] = st
				m.Structs = append(m.Structs, st)
				f.Struct = st
				if err := buildFields(m, st, fields, common, seen, valid); err != nil {
					return err
				}
			}
		}
		s.Fields = append(s.Fields, f)
	}
	return nil
}

// A rangeUnion sets *dst to the union of a and b, the versions a descriptor key holds
// in two releases.
type rangeUnion struct {
	key  string
	dst  *vrange
	a, b vrange
}

// unionRanges does each union in turn; the first that fails is reported with what
// (the message or field) and its key.
func unionRanges(what string, us ...rangeUnion) error {
	for _, u := range us {
		var err error
		if *u.dst, err = union(u.a, u.b); err != nil {
			return fmt.Errorf("%s %s: %v", what, u.key, err)
		}
	}
	return nil
}

// mergeMessages merges an older release's message into a newer one: the valid versions
// are the union, and fields the newer release dropped with its old versions come back
// with their older ranges, in their older position.
func mergeMessages(old, nw *Message) (*Message, error) {
	if old.APIKey != nw.APIKey || old.Kind != nw.Kind {
		return nil, fmt.Errorf("%s: api key or kind changed between releases", nw.Name)
	}
	var err error
	out := *nw
	if err := unionRanges(nw.Name,
		rangeUnion{"validVersions", &out.Valid, old.Valid, nw.Valid},
		rangeUnion{"flexibleVersions", &out.Flexible, old.Flexible, nw.Flexible}); err != nil {
		return nil, err
	}
	if out.Deprecated, err = union(old.Deprecated, nw.Deprecated); err != nil {
		out.Deprecated = nw.Deprecated
	}
	// Flexible versions, once started, run to the newest version.
	if !out.Flexible.empty() && out.Flexible.hi < out.Valid.hi && !nw.Flexible.empty() {
		out.Flexible.hi = out.Valid.hi
	}
	ls := append([]string{}, nw.Listeners...)
	for _, l := range old.Listeners {
		if !contains(ls, l) {
			ls = append(ls, l)
		}
	}
	out.Listeners = ls
	out.Releases = append(append([]string{}, old.Releases...), nw.Releases...)
	out.Superseded = append([]Superseded(nil), old.Superseded...)
	if old.unstableLatest && nw.Valid.has(old.Valid.hi) {
		out.Superseded = append(out.Superseded, Superseded{Release: old.Releases[len(old.Releases)-1], Version: old.Valid.hi})
	}
	structs := map[string]*Struct{}
	out.Structs = nil
	out.newValid = nw.Valid
	out.Root, err = mergeStruct(&out, old.Root, nw.Root, structs)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", nw.Name, err)
	}
	return &out, nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func mergeStruct(m *Message, a, b *Struct, done map[string]*Struct) (*Struct, error) {
	if a == nil && b == nil {
		return nil, nil
	}
	name := ""
	if b != nil {
		name = b.Name
	} else {
		name = a.Name
	}
	if s, ok := done[name]; ok {
		return s, nil
	}
	out := &Struct{Name: name}
	if b != nil {
		out.Common = b.Common
	} else {
		out.Common = a.Common
	}
	done[name] = out
	if name != m.Name {
		m.Structs = append(m.Structs, out)
	}
	var af, bf []*Field
	if a != nil {
		af = a.Fields
	}
	if b != nil {
		bf = b.Fields
	}
	// A field the newer release lacks at versions it still defines was renamed: pair it,
	// in order, with a new-only field of the same type.
	if a != nil && b != nil {
		var err error
		if af, err = pairRenames(m, af, bf); err != nil {
			return nil, fmt.Errorf("struct %s: %v", name, err)
		}
	}
	byName := map[string]*Field{}
	for _, f := range af {
		byName[f.Name] = f
	}
	// Start from the newer order, then insert old-only fields after their old predecessor.
	var merged []*Field
	inNew := map[string]bool{}
	for _, f := range bf {
		inNew[f.Name] = true
	}
	order := make([]string, 0, len(bf)+len(af))
	for _, f := range bf {
		order = append(order, f.Name)
	}
	for i, f := range af {
		if inNew[f.Name] {
			continue
		}
		pos := 0
		for j := i - 1; j >= 0; j-- {
			if k := indexOf(order, af[j].Name); k >= 0 {
				pos = k + 1
				break
			}
		}
		order = append(order[:pos], append([]string{f.Name}, order[pos:]...)...)
	}
	bByName := map[string]*Field{}
	for _, f := range bf {
		bByName[f.Name] = f
	}
	for _, n := range order {
		fa, fb := byName[n], bByName[n]
		f, err := mergeField(m, fa, fb, done)
		if err != nil {
			return nil, err
		}
		merged = append(merged, f)
	}
	out.Fields = merged
	return out, nil
}

func pairRenames(m *Message, af, bf []*Field) ([]*Field, error) {
	inA, inB := map[string]bool{}, map[string]bool{}
	for _, f := range af {
		inA[f.Name] = true
	}
	for _, f := range bf {
		inB[f.Name] = true
	}
	used := map[string]bool{}
	out := make([]*Field, len(af))
	for i, f := range af {
		out[i] = f
		if inB[f.Name] || f.Versions.clamp(m.newValid).empty() {
			continue
		}
		var match *Field
		for _, g := range bf {
			if !inA[g.Name] && !used[g.Name] && g.Type == f.Type && !g.Versions.clamp(f.Versions).empty() {
				match = g
				break
			}
		}
		if match == nil {
			return nil, fmt.Errorf("field %s disappeared at versions %s that the newer release still defines", f.Name, f.Versions.clamp(m.newValid))
		}
		used[match.Name] = true
		cp := *f
		cp.Name, cp.GoName, cp.JSONName = match.Name, match.GoName, match.JSONName
		cp.Aliases = append(append([]string{}, f.Aliases...), f.JSONName)
		out[i] = &cp
	}
	return out, nil
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

func mergeField(m *Message, a, b *Field, done map[string]*Struct) (*Field, error) {
	var err error
	if a == nil || b == nil {
		f := b
		if f == nil {
			f = a
		}
		cp := *f
		if f.Struct != nil {
			var sa, sb *Struct
			if a != nil {
				sa = a.Struct
			} else {
				sb = b.Struct
			}
			if cp.Struct, err = mergeStruct(m, sa, sb, done); err != nil {
				return nil, err
			}
		}
		return &cp, nil
	}
	if a.Type != b.Type {
		return nil, fmt.Errorf("field %s changed type %s -> %s", a.Name, a.Type, b.Type)
	}
	cp := *b
	if err := unionRanges("field "+a.Name,
		rangeUnion{"versions", &cp.Versions, a.Versions, b.Versions},
		rangeUnion{"nullableVersions", &cp.Nullable, a.Nullable, b.Nullable},
		rangeUnion{"taggedVersions", &cp.Tagged, a.Tagged, b.Tagged}); err != nil {
		return nil, err
	}
	if a.Tag != b.Tag && a.Tag >= 0 && b.Tag >= 0 {
		return nil, fmt.Errorf("field %s changed tag", a.Name)
	}
	if cp.Tag < 0 {
		cp.Tag = a.Tag
	}
	// Ignorability only matters at versions that lack the field; an older release that
	// still has those versions may allow dropping the field there.
	cp.Ignorable = a.Ignorable || b.Ignorable
	cp.Aliases = append(append([]string{}, b.Aliases...), a.Aliases...)
	if a.FlexOver || b.FlexOver {
		cp.FlexOver = true
		if cp.Flexible, err = union(a.Flexible, b.Flexible); err != nil {
			return nil, err
		}
	}
	if a.Struct != nil {
		if cp.Struct, err = mergeStruct(m, a.Struct, b.Struct, done); err != nil {
			return nil, err
		}
	}
	return &cp, nil
}

// collectRenames lists every field with former names, with the JSON path of its struct.
func collectRenames(m *Message, s *Struct, path string, seen map[*Struct]bool) {
	if seen[s] {
		return
	}
	seen[s] = true
	for _, f := range s.Fields {
		for _, a := range f.Aliases {
			m.Renames = append(m.Renames, Rename{Path: path, Old: a, New: f.JSONName})
		}
		if f.Struct != nil {
			p := f.JSONName
			if path != "" {
				p = path + "." + p
			}
			if f.Array {
				p += "[]"
			}
			collectRenames(m, f.Struct, p, seen)
		}
	}
}

// finish assigns Go names and checks the merged model.
func finish(msgs []*Message) error {
	for _, m := range msgs {
		collectRenames(m, m.Root, "", map[*Struct]bool{})
	}
	names := map[string]string{}
	sort.Slice(msgs, func(i, j int) bool { return msgs[i].Name < msgs[j].Name })
	for _, m := range msgs {
		m.Root.TypeName = m.Name
		for _, s := range m.Structs {
			// Structs already named after their message keep their name
			// (MetadataResponseBroker), others take the message as prefix.
			if strings.HasPrefix(s.Name, m.Name) {
				s.TypeName = s.Name
			} else {
				s.TypeName = m.Name + s.Name
			}
		}
		for _, s := range append([]*Struct{m.Root}, m.Structs...) {
			s.GoName = goname.Ident(s.TypeName)
			if prev, ok := names[s.GoName]; ok {
				return fmt.Errorf("type name %s used by %s and %s", s.GoName, prev, m.Name)
			}
			names[s.GoName] = m.Name
			tags := map[int]string{}
			for _, f := range s.Fields {
				if f.Tag >= 0 {
					if p, ok := tags[f.Tag]; ok {
						return fmt.Errorf("%s: tag %d used by %s and %s", s.GoName, f.Tag, p, f.Name)
					}
					tags[f.Tag] = f.Name
					if !f.Tagged.empty() && f.Tagged != f.Versions {
						return fmt.Errorf("%s.%s: tagged versions %s differ from versions %s", s.GoName, f.Name, f.Tagged, f.Versions)
					}
				}
			}
		}
	}
	return nil
}
