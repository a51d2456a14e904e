package main

import (
	"strconv"
	"strings"
)

func genJSONOut(e *emitter, m *Message, s *Struct) {
	e.p("func (m *%s) appendJSON(b []byte, v int16) []byte {", s.GoName)
	e.p("b = append(b, '{')")
	all := setOf(m.Valid)
	keys := hasFlex(m) || keepsTrailing(m, s)
	for _, f := range s.Fields {
		keys = keys || !simplify(in(f.Versions), all).isFalse()
	}
	if keys {
		e.p("first := true")
	}
	for _, f := range s.Fields {
		c := simplify(in(f.Versions), all)
		if c.isFalse() {
			continue
		}
		if !c.isTrue() {
			e.p("if %s {", c)
		}
		e.p("b = jsonx.Key(b, first, %q)", f.JSONName)
		e.p("first = false")
		genJSONValueOut(e, f, "m."+f.GoName)
		if !c.isTrue() {
			e.p("}")
		}
	}
	if hasFlex(m) {
		e.p("if len(m.UnknownTaggedFields) > 0 {")
		e.p("b = jsonx.Key(b, first, \"_unknownTaggedFields\")")
		e.p("first = false")
		e.p("b = appendUnknownJSON(b, m.UnknownTaggedFields)")
		e.p("}")
	}
	if keepsTrailing(m, s) {
		e.p("if len(m.TrailingBytes) > 0 {")
		e.p("b = jsonx.Key(b, first, \"_trailingBytes\")")
		e.p("b = jsonx.AppendBytes(b, m.TrailingBytes, false)")
		e.p("}")
	}
	e.p("return append(b, '}')")
	e.p("}")
	e.p("")
}

func genJSONValueOut(e *emitter, f *Field, x string) {
	if f.Array {
		if f.nullableEver() {
			e.p("if %s == nil { b = append(b, \"null\"...) } else {", x)
		}
		e.p("b = append(b, '[')")
		e.p("for i := range %s {", x)
		e.p("if i > 0 { b = append(b, ',') }")
		if f.Struct != nil {
			e.p("b = %s[i].appendJSON(b, v)", x)
		} else {
			genJSONScalarOut(e, f.Elem, x+"[i]", false)
		}
		e.p("}")
		e.p("b = append(b, ']')")
		if f.nullableEver() {
			e.p("}")
		}
		return
	}
	if f.Struct != nil {
		if f.nullableEver() {
			e.p("if %s == nil { b = append(b, \"null\"...) } else { b = %s.appendJSON(b, v) }", x, x)
		} else {
			e.p("b = %s.appendJSON(b, v)", x)
		}
		return
	}
	genJSONScalarOut(e, f.Elem, x, f.nullableEver())
}

func genJSONScalarOut(e *emitter, elem, x string, nullableEver bool) {
	switch elem {
	case "bool":
		e.p("b = jsonx.AppendBool(b, %s)", x)
	case "int8", "int16", "uint16", "int32", "uint32":
		e.p("b = jsonx.AppendInt(b, int64(%s))", x)
	case "int64":
		e.p("b = jsonx.AppendInt64(b, %s)", x)
	case "float64":
		e.p("b = jsonx.AppendFloat64(b, %s)", x)
	case "uuid":
		e.p("b = jsonx.AppendUUID(b, %s)", x)
	case "string":
		if nullableEver {
			e.p("b = jsonx.AppendNullableString(b, %s)", x)
		} else {
			e.p("b = jsonx.AppendString(b, %s)", x)
		}
	case "bytes", "records":
		e.p("b = jsonx.AppendBytes(b, %s, %v)", x, nullableEver)
	default:
		panic("unknown scalar " + elem)
	}
}

func genJSONIn(e *emitter, m *Message, s *Struct) {
	e.p("func (m *%s) unmarshalJSON(d *jsonx.Decoder) {", s.GoName)
	e.p("m.SetDefaults()")
	e.p("if !d.BeginObject() { return }")
	n := len(s.Fields) + 1
	if keepsTrailing(m, s) {
		n++
	}
	e.p("var seen [%d]bool", n)
	e.p("for first := true; d.More(&first, '}'); {")
	e.p("key := d.Key()")
	e.p("if d.Failed() { return }")
	e.p("switch key {")
	for i, f := range s.Fields {
		keys := []string{strconv.Quote(f.JSONName)}
		for _, a := range f.Aliases {
			keys = append(keys, strconv.Quote(a))
		}
		e.p("case %s:", strings.Join(keys, ", "))
		e.p("if seen[%d] { d.Duplicate(key) }", i)
		e.p("seen[%d] = true", i)
		genJSONValueIn(e, f, "m."+f.GoName)
	}
	if hasFlex(m) {
		e.p("case \"_unknownTaggedFields\":")
		e.p("if seen[%d] { d.Duplicate(key) }", n-1)
		e.p("seen[%d] = true", n-1)
		e.p("m.UnknownTaggedFields = readUnknownJSON(d)")
	}
	if keepsTrailing(m, s) {
		e.p("case \"_trailingBytes\":")
		e.p("if seen[%d] { d.Duplicate(key) }", n-2)
		e.p("seen[%d] = true", n-2)
		e.p("m.TrailingBytes = d.Bytes(false)")
	}
	e.p("default:")
	e.p("d.UnknownKey(key)")
	e.p("}")
	e.p("if d.Failed() { d.Push(key); return }")
	e.p("}")
	e.p("}")
	e.p("")
}

func genJSONValueIn(e *emitter, f *Field, x string) {
	if f.Array {
		et := elemGoType(f.Elem, f.Struct)
		if f.nullableEver() {
			e.p("if d.Null() { %s = nil } else if d.BeginArray() {", x)
		} else {
			e.p("if d.BeginArray() {")
		}
		e.p("s := []%s{}", et)
		e.p("for first := true; d.More(&first, ']'); {")
		if f.Struct != nil {
			e.p("s = append(s, %s{})", et)
			e.p("s[len(s)-1].unmarshalJSON(d)")
			e.p("if d.Failed() { d.PushIndex(len(s)-1); break }")
		} else {
			e.p("var el %s", et)
			genJSONScalarIn(e, f.Elem, "el", false)
			e.p("if d.Failed() { d.PushIndex(len(s)); break }")
			e.p("s = append(s, el)")
		}
		e.p("}")
		e.p("%s = s", x)
		e.p("}")
		return
	}
	if f.Struct != nil {
		if f.nullableEver() {
			e.p("if d.Null() { %s = nil } else { %s = new(%s); %s.unmarshalJSON(d) }", x, x, f.Struct.GoName, x)
		} else {
			e.p("%s.unmarshalJSON(d)", x)
		}
		return
	}
	genJSONScalarIn(e, f.Elem, x, f.nullableEver())
}

func genJSONScalarIn(e *emitter, elem, x string, nullableEver bool) {
	switch elem {
	case "bool":
		e.p("%s = d.Bool()", x)
	case "int8":
		e.p("%s = int8(d.Int(-1<<7, 1<<7-1))", x)
	case "int16":
		e.p("%s = int16(d.Int(-1<<15, 1<<15-1))", x)
	case "uint16":
		e.p("%s = uint16(d.Int(0, 1<<16-1))", x)
	case "int32":
		e.p("%s = int32(d.Int(-1<<31, 1<<31-1))", x)
	case "uint32":
		e.p("%s = uint32(d.Int(0, 1<<32-1))", x)
	case "int64":
		e.p("%s = d.Int64()", x)
	case "float64":
		e.p("%s = d.Float64()", x)
	case "uuid":
		e.p("%s = d.UUID()", x)
	case "string":
		if nullableEver {
			e.p("%s = d.NullableString()", x)
		} else {
			e.p("%s = d.String()", x)
		}
	case "bytes", "records":
		e.p("%s = d.Bytes(%v)", x, nullableEver)
	default:
		panic("unknown scalar " + elem)
	}
}
