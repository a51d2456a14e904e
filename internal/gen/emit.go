package main

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

type emitter struct {
	b strings.Builder
}

func (e *emitter) p(format string, args ...any) {
	fmt.Fprintf(&e.b, format, args...)
	e.b.WriteByte('\n')
}

// always reports whether r covers every valid version.
func always(r, valid vrange) bool { return simplify(in(r), setOf(valid)).isTrue() }

func elemGoType(elem string, s *Struct) string {
	switch elem {
	case "bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64", "string":
		return elem
	case "bytes", "records":
		return "[]byte"
	case "uuid":
		return "UUID"
	}
	return s.GoName
}

func (f *Field) nullableEver() bool { return !f.Nullable.empty() }

// goType is the Go type of a field.
func (f *Field) goType() string {
	if f.Array {
		return "[]" + elemGoType(f.Elem, f.Struct)
	}
	t := elemGoType(f.Elem, f.Struct)
	if f.nullableEver() && (f.Elem == "string" || f.Struct != nil) {
		return "*" + t
	}
	return t
}

func (f *Field) isStruct() bool { return f.Struct != nil && !f.Array }

// defaultNull reports whether the descriptor default is null.
func (f *Field) defaultNull() bool { return f.HasDefault && f.Default == "null" }

// intLit renders an integer default in range for the type.
func intLit(f *Field) string {
	if !f.HasDefault || f.Default == "" {
		return "0"
	}
	v, err := strconv.ParseInt(f.Default, 0, 64)
	if err != nil {
		u, err2 := strconv.ParseUint(f.Default, 0, 64)
		if err2 != nil {
			panic(fmt.Sprintf("field %s: bad default %q", f.Name, f.Default))
		}
		return strconv.FormatUint(u, 10)
	}
	return strconv.FormatInt(v, 10)
}

// zeroDefault reports whether the field's default equals Go's zero value for its type,
// so constructors need not set it.
func (f *Field) zeroDefault() bool {
	return f.defaultLit() == ""
}

// defaultLit is the Go expression of the default, or "" when it is the zero value.
func (f *Field) defaultLit() string {
	if f.Array {
		if f.nullableEver() && !f.defaultNull() {
			return "[]" + elemGoType(f.Elem, f.Struct) + "{}"
		}
		return ""
	}
	switch f.Elem {
	case "bool":
		if f.HasDefault && f.Default == "true" {
			return "true"
		}
		return ""
	case "int8", "int16", "uint16", "int32", "uint32", "int64":
		if l := intLit(f); l != "0" {
			return l
		}
		return ""
	case "float64":
		if f.HasDefault && f.Default != "" {
			v, err := strconv.ParseFloat(f.Default, 64)
			if err != nil {
				panic(fmt.Sprintf("field %s: bad float default %q", f.Name, f.Default))
			}
			if v != 0 || math.Signbit(v) {
				return strconv.FormatFloat(v, 'g', -1, 64)
			}
		}
		return ""
	case "string":
		if f.nullableEver() {
			if f.defaultNull() {
				return ""
			}
			return "newString(" + strconv.Quote(f.Default) + ")"
		}
		if f.HasDefault && f.Default != "" && f.Default != "null" {
			return strconv.Quote(f.Default)
		}
		return ""
	case "bytes":
		if f.nullableEver() && !f.defaultNull() {
			return "[]byte{}"
		}
		return ""
	case "records":
		return ""
	case "uuid":
		return ""
	}
	// Structs.
	if f.nullableEver() {
		if f.defaultNull() {
			return ""
		}
		return "New" + f.Struct.GoName + "()"
	}
	return "*New" + f.Struct.GoName + "()"
}

// isDefaultExpr is the Go condition that the field holds its default value.
func (f *Field) isDefaultExpr(x string) string {
	if f.Array {
		if f.nullableEver() {
			if f.defaultNull() {
				return x + " == nil"
			}
			return "(" + x + " != nil && len(" + x + ") == 0)"
		}
		return "len(" + x + ") == 0"
	}
	switch f.Elem {
	case "bool":
		if f.defaultLit() == "true" {
			return x
		}
		return "!" + x
	case "int8", "int16", "uint16", "int32", "uint32", "int64":
		return x + " == " + intLit(f)
	case "float64":
		l := f.defaultLit()
		if l == "" {
			l = "0"
		}
		return x + " == " + l
	case "string":
		if f.nullableEver() {
			if f.defaultNull() {
				return x + " == nil"
			}
			return "(" + x + " != nil && *" + x + " == " + strconv.Quote(f.Default) + ")"
		}
		d := ""
		if f.HasDefault && f.Default != "null" {
			d = f.Default
		}
		return x + " == " + strconv.Quote(d)
	case "bytes":
		if f.nullableEver() {
			if f.defaultNull() {
				return x + " == nil"
			}
			return "(" + x + " != nil && len(" + x + ") == 0)"
		}
		return "len(" + x + ") == 0"
	case "records":
		return x + " == nil"
	case "uuid":
		return x + " == (UUID{})"
	}
	if f.nullableEver() {
		if f.defaultNull() {
			return x + " == nil"
		}
		return "(" + x + " != nil && " + x + ".isDefault())"
	}
	return x + ".isDefault()"
}

// minWire is the smallest wire size of one element of type elem, used to bound counts.
func minWire(elem string, s *Struct, m *Message) int {
	switch elem {
	case "string", "bytes", "records":
		return 1
	}
	if c, ok := fixedScalars[elem]; ok {
		return c.width
	}
	n := 0
	if always(m.Flexible, m.Valid) {
		n++ // tag count
	}
	for _, f := range s.Fields {
		if !always(f.Versions, m.Valid) || !f.Tagged.empty() {
			continue
		}
		switch {
		case f.Array || f.nullableEver():
			n++
		default:
			n += minWire(f.Elem, f.Struct, m)
		}
	}
	if n < 1 {
		n = 1
	}
	return n
}

func sortedTagged(s *Struct) []*Field {
	var t []*Field
	for _, f := range s.Fields {
		if !f.Tagged.empty() {
			t = append(t, f)
		}
	}
	sort.Slice(t, func(i, j int) bool { return t[i].Tag < t[j].Tag })
	return t
}

func hasFlex(m *Message) bool { return !m.Flexible.empty() }

func rangeDoc(r vrange) string { return r.String() }
