package main

import (
	"fmt"
	"strings"
)

// genFill writes codectest's random fillers: every field present at the version gets a
// random value valid for that version; nullable ones are sometimes null, tagged ones
// sometimes left at their default, and flexible structs sometimes carry unknown tags.
func genFill(msgs []*Message, releases []string) string {
	e := &emitter{}
	e.b.WriteString(fmt.Sprintf(header, "kafka-clients "+strings.Join(releases, ", ")))
	e.p("package codectest")
	e.p("")
	e.p("import (")
	e.p(`"math/rand"`)
	e.p("")
	e.p(`"github.com/kwire/kwire/codec"`)
	e.p(")")
	e.p("")
	e.p("func fillByType(m codec.Message, r *rand.Rand, v int16) bool {")
	e.p("switch m := m.(type) {")
	for _, msg := range msgs {
		e.p("case *codec.%s: fill%s(m, r, v, 0)", msg.Root.GoName, msg.Root.GoName)
	}
	e.p("default: return false")
	e.p("}")
	e.p("return true")
	e.p("}")
	e.p("")
	for _, msg := range msgs {
		for _, s := range append([]*Struct{msg.Root}, msg.Structs...) {
			genFillStruct(e, msg, s)
		}
	}
	return e.b.String()
}

func genFillStruct(e *emitter, m *Message, s *Struct) {
	e.p("func fill%s(m *codec.%s, r *rand.Rand, v int16, depth int) {", s.GoName, s.GoName)
	e.p("m.SetDefaults()")
	all := setOf(m.Valid)
	for _, f := range s.Fields {
		c := simplify(in(f.Versions), all)
		if c.isFalse() {
			continue
		}
		cs := c.String()
		if !f.Tagged.empty() {
			cs = andGo(cs, "r.Intn(3) > 0")
		}
		if cs != "true" {
			e.p("if %s {", cs)
		}
		genFillField(e, m, f, "m."+f.GoName, all&setOf(f.Versions))
		if cs != "true" {
			e.p("}")
		}
	}
	if hasFlex(m) {
		var tags []string
		for _, f := range s.Fields {
			if f.Tag >= 0 {
				tags = append(tags, fmt.Sprint(f.Tag))
			}
		}
		e.p("if %s {", andGo(simplify(in(m.Flexible), all).String(), "r.Intn(4) == 0"))
		e.p("m.UnknownTaggedFields = unknownTags(r, []uint32{%s})", strings.Join(tags, ", "))
		e.p("}")
	}
	e.p("}")
	e.p("")
}

func genFillField(e *emitter, m *Message, f *Field, x string, known vset) {
	nul := simplify(in(f.Nullable), known)
	// orNil is the condition to leave x nil, "" when it never may be.
	orNil := ""
	if f.nullableEver() && !nul.isFalse() {
		orNil = andGo(nul.String(), "r.Intn(4) == 0")
	}
	if f.Array {
		et := elemGoType(f.Elem, f.Struct)
		if f.Struct != nil {
			et = "codec." + et
		} else if et == "UUID" {
			et = "codec.UUID"
		}
		if orNil != "" {
			e.p("if %s { %s = nil } else {", orNil, x)
		} else {
			e.p("{")
		}
		e.p("s := make([]%s, arrayLen(r, depth))", et)
		e.p("for i := range s {")
		if f.Struct != nil {
			e.p("fill%s(&s[i], r, v, depth+1)", f.Struct.GoName)
		} else {
			e.p("s[i] = %s", scalarGen(f.Elem))
		}
		e.p("}")
		e.p("%s = s", x)
		e.p("}")
		return
	}
	if f.Struct != nil {
		if f.nullableEver() {
			if orNil != "" {
				e.p("if %s { %s = nil } else {", orNil, x)
			} else {
				e.p("{")
			}
			e.p("%s = new(codec.%s)", x, f.Struct.GoName)
			e.p("fill%s(%s, r, v, depth+1)", f.Struct.GoName, x)
			e.p("}")
		} else {
			e.p("fill%s(&%s, r, v, depth+1)", f.Struct.GoName, x)
		}
		return
	}
	switch {
	case f.Elem == "string" && orNil != "":
		e.p("if %s { %s = nil } else { s := randString(r); %s = &s }", orNil, x, x)
	case f.Elem == "string" && f.nullableEver():
		e.p("{ s := randString(r); %s = &s }", x)
	case (f.Elem == "bytes" || f.Elem == "records") && orNil != "":
		e.p("if %s { %s = nil } else { %s = %s }", orNil, x, x, scalarGen(f.Elem))
	default:
		e.p("%s = %s", x, scalarGen(f.Elem))
	}
}

func scalarGen(elem string) string {
	switch elem {
	case "bool":
		return "r.Intn(2) == 0"
	case "int8":
		return "int8(randInt(r, 8))"
	case "int16":
		return "int16(randInt(r, 16))"
	case "uint16":
		return "uint16(randInt(r, 16))"
	case "int32":
		return "int32(randInt(r, 32))"
	case "uint32":
		return "uint32(randInt(r, 32))"
	case "int64":
		return "randInt(r, 64)"
	case "float64":
		return "randFloat(r)"
	case "uuid":
		return "randUUID(r)"
	case "string":
		return "randString(r)"
	case "bytes":
		return "randBytes(r)"
	case "records":
		return "randRecords(r)"
	}
	panic("unknown scalar " + elem)
}
