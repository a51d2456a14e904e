package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// genSchema writes the merged descriptors as data for the transcoder (internal/transcode):
// one flat table of messages, one of structs and one of fields, plain literal arrays
// with no per-message code. The transcoder interprets them with the same rules the
// generated typed code follows, so both engines agree byte for byte.
func genSchema(msgs []*Message, releases []string) string {
	e := newGoFile(releases, "transcode")
	e.p("// specReleases are the kafka-clients releases whose descriptors generated these tables.")
	e.p("var specReleases = [...]string{%s}", quoteAll(releases))
	e.p("")

	structIndex := map[*Struct]int{}
	var structs []*Struct
	var owner []*Message
	for _, m := range msgs {
		for _, s := range append([]*Struct{m.Root}, m.Structs...) {
			structIndex[s] = len(structs)
			structs = append(structs, s)
			owner = append(owner, m)
		}
	}

	e.p("// schemaMessages holds every message, sorted by name.")
	e.p("var schemaMessages = [...]message{")
	for _, m := range msgs {
		flags := []string{}
		if hasFlex(m) {
			flags = append(flags, "msgHasFlex")
		}
		if lenientTrailing(m) {
			flags = append(flags, "msgTrailing")
		}
		fl := "0"
		if len(flags) > 0 {
			fl = strings.Join(flags, "|")
		}
		e.p("{name: %q, apiKey: %d, kind: %s, valid: vr{%d, %d}, flex: %s, root: %d, flags: %s},",
			m.Name, m.APIKey, "kind"+strings.ToUpper(m.Kind[:1])+m.Kind[1:], m.Valid.lo, m.Valid.hi, vrLit(m.Flexible, m.Valid), structIndex[m.Root], fl)
	}
	e.p("}")
	e.p("")

	byKey, keys := primaryByKey(msgs, releases)
	msgIndex := map[*Message]int{}
	for i, m := range msgs {
		msgIndex[m] = i
	}
	maxKey := 0
	for _, k := range keys {
		maxKey = max(maxKey, k)
	}
	for side, name := range []string{"requestByKey", "responseByKey"} {
		e.p("// %s maps an api key to the index of its %s in schemaMessages, or -1.", name, []string{"request", "response"}[side])
		e.p("var %s = [...]int16{", name)
		var row []string
		for k := 0; k <= maxKey; k++ {
			idx := -1
			if p, ok := byKey[k]; ok && p[side] != nil {
				idx = msgIndex[p[side]]
			}
			row = append(row, strconv.Itoa(idx))
		}
		e.p("%s,", strings.Join(row, ", "))
		e.p("}")
		e.p("")
	}

	var fields []string
	var tagged []string
	e.p("// schemaStructs holds every struct: each message's root, then its nested structs.")
	e.p("var schemaStructs = [...]structDesc{")
	for i, s := range structs {
		m := owner[i]
		first := len(fields)
		for _, f := range s.Fields {
			fields = append(fields, fieldLit(m, f, structIndex))
		}
		tfirst := len(tagged)
		fieldPos := map[*Field]int{}
		for j, f := range s.Fields {
			fieldPos[f] = j
		}
		for _, f := range sortedTagged(s) {
			tagged = append(tagged, strconv.Itoa(fieldPos[f]))
		}
		e.p("{name: %q, first: %d, n: %d, taggedFirst: %d, taggedN: %d},", s.TypeName, first, len(s.Fields), tfirst, len(tagged)-tfirst)
	}
	e.p("}")
	e.p("")
	e.p("// schemaFields holds the fields of every struct, in descriptor order.")
	e.p("var schemaFields = [...]field{")
	for _, f := range fields {
		e.p("%s,", f)
	}
	e.p("}")
	e.p("")
	e.p("// schemaTagged lists, per struct, the positions of its tagged fields in tag order.")
	e.p("var schemaTagged = [...]uint8{")
	for i := 0; i < len(tagged); i += 32 {
		e.p("%s,", strings.Join(tagged[i:min(i+32, len(tagged))], ", "))
	}
	e.p("}")
	return e.b.String()
}

// lenientTrailing reports whether bytes after the message are accepted and kept, as
// Kafka's readers do: request bodies (the broker ignores what follows a request) and the
// consumer protocol's payloads (read leniently so newer versions may append fields).
func lenientTrailing(m *Message) bool {
	return m.Kind == "request" || m.Name == "ConsumerProtocolSubscription" || m.Name == "ConsumerProtocolAssignment"
}

// vrLit renders a version range clamped to the message's valid versions; empty ranges
// become vr{1, 0}.
func vrLit(r, valid vrange) string {
	r = r.clamp(valid)
	if r.empty() {
		return "vr{1, 0}"
	}
	return fmt.Sprintf("vr{%d, %d}", r.lo, r.hi)
}

func typeConst(f *Field) string {
	if f.Struct != nil {
		return "tStruct"
	}
	return "t" + strings.ToUpper(f.Elem[:1]) + f.Elem[1:]
}

func fieldLit(m *Message, f *Field, structIndex map[*Struct]int) string {
	var flags []string
	if f.Array {
		flags = append(flags, "fArray")
	}
	if f.nullableEver() {
		flags = append(flags, "fNullableEver")
	}
	if f.Ignorable {
		flags = append(flags, "fIgnorable")
	}
	if f.defaultNull() || defaultIsNil(f) {
		flags = append(flags, "fDefaultNil")
	}
	fl := "0"
	if len(flags) > 0 {
		fl = strings.Join(flags, "|")
	}
	parts := []string{
		fmt.Sprintf("name: %q", f.JSONName),
		"typ: " + typeConst(f),
		"flags: " + fl,
		"ver: " + vrLit(f.Versions, m.Valid),
	}
	if f.nullableEver() {
		parts = append(parts, "nul: "+vrLit(f.Nullable, m.Valid))
	} else {
		parts = append(parts, "nul: vr{1, 0}")
	}
	if !f.Tagged.empty() {
		parts = append(parts, "tagged: "+vrLit(f.Tagged, m.Valid), fmt.Sprintf("tag: %d", f.Tag))
	} else {
		parts = append(parts, "tagged: vr{1, 0}", "tag: -1")
	}
	if f.FlexOver {
		parts = append(parts, "compact: "+vrLit(f.Flexible, m.Valid))
	} else {
		parts = append(parts, "compact: "+vrLit(m.Flexible, m.Valid))
	}
	if f.Struct != nil {
		parts = append(parts, fmt.Sprintf("sub: %d", structIndex[f.Struct]))
	}
	if f.Array {
		parts = append(parts, fmt.Sprintf("minElem: %d", minWire(f.Elem, f.Struct, m)))
	}
	if d := defaultValueLit(f); d != "" {
		parts = append(parts, d)
	}
	if len(f.Aliases) > 0 {
		parts = append(parts, fmt.Sprintf("aliases: %q", strings.Join(f.Aliases, ",")))
	}
	if f.EntityType != "" {
		e, ok := entityConsts[f.EntityType]
		if !ok {
			panic("gen: entity type " + f.EntityType + " of " + f.JSONName + " has no constant in internal/transcode")
		}
		parts = append(parts, "entity: "+e)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// defaultIsNil reports whether the typed codec's default for f is a nil pointer or
// slice (as opposed to an empty but present one).
func defaultIsNil(f *Field) bool {
	if f.Array {
		return !f.nullableEver() || f.defaultNull()
	}
	switch f.Elem {
	case "bytes":
		return !f.nullableEver() || f.defaultNull()
	case "records":
		return true
	case "string":
		return f.nullableEver() && f.defaultNull()
	}
	if f.Struct != nil {
		return f.nullableEver() && f.defaultNull()
	}
	return false
}

// defaultValueLit is the field's scalar default as struct literal parts, or "".
func defaultValueLit(f *Field) string {
	if f.Array || f.Struct != nil {
		return ""
	}
	switch f.Elem {
	case "bool":
		if f.defaultLit() == "true" {
			return "defInt: 1"
		}
	case "int8", "int16", "uint16", "int32", "uint32", "int64":
		if l := intLit(f); l != "0" {
			return "defInt: " + l
		}
	case "float64":
		if l := f.defaultLit(); l != "" {
			v, _ := strconv.ParseFloat(l, 64)
			return fmt.Sprintf("defInt: %d", int64(math.Float64bits(v)))
		}
	case "string":
		if f.HasDefault && f.Default != "" && f.Default != "null" {
			return fmt.Sprintf("defStr: %q", f.Default)
		}
	}
	return ""
}

// entityConsts names internal/transcode's constant for each entityType of the
// descriptors; a new entity type stops the generator until it has one.
var entityConsts = map[string]string{
	"topicName":       "eTopicName",
	"groupId":         "eGroupID",
	"transactionalId": "eTransactionalID",
	"producerId":      "eProducerID",
	"brokerId":        "eBrokerID",
}
