package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kwire/kwire/internal/gen/goname"
)

func kindConst(k string) string {
	switch k {
	case "request":
		return "KindRequest"
	case "response":
		return "KindResponse"
	case "header":
		return "KindHeader"
	case "data":
		return "KindData"
	}
	panic("unknown kind " + k)
}

func rangeBounds(r vrange) (int, int) {
	if r.empty() {
		return -1, -1
	}
	return r.lo, r.hi
}

func genRootMethods(e *emitter, m *Message) {
	g := m.Root.GoName
	info := "info" + g
	flo, _ := rangeBounds(m.Flexible)
	dlo, dhi := rangeBounds(m.Deprecated)
	var ls []string
	for _, l := range m.Listeners {
		ls = append(ls, strconv.Quote(l))
	}
	var rn []string
	for _, r := range m.Renames {
		rn = append(rn, fmt.Sprintf("{Path: %q, Old: %q, New: %q}", r.Path, r.Old, r.New))
	}
	renames := ""
	if len(rn) > 0 {
		renames = ", Renames: []FieldRename{" + strings.Join(rn, ", ") + "}"
	}
	var sv []string
	for _, x := range m.Superseded {
		sv = append(sv, fmt.Sprintf("{Release: %q, Version: %d}", x.Release, x.Version))
	}
	if len(sv) > 0 {
		renames += ", Superseded: []SupersededVersion{" + strings.Join(sv, ", ") + "}"
	}
	if m.currentName != "" {
		renames += fmt.Sprintf(", CurrentName: %q", m.currentName)
	}
	e.p("var %s = MessageInfo{Name: %q, APIKey: %d, Kind: %s, MinVersion: %d, MaxVersion: %d, FlexibleMin: %d, DeprecatedMin: %d, DeprecatedMax: %d, Listeners: []string{%s}, LatestVersionUnstable: %v, Releases: []string{%s}%s}",
		info, m.Name, m.APIKey, kindConst(m.Kind), m.Valid.lo, m.Valid.hi, flo, dlo, dhi, strings.Join(ls, ", "), m.Unstable, quoteAll(m.Releases), renames)
	e.p("")
	e.p("// MessageName returns %q.", m.Name)
	e.p("func (*%s) MessageName() string { return %q }", g, m.Name)
	e.p("")
	e.p("// APIKey returns %d.", m.APIKey)
	e.p("func (*%s) APIKey() int16 { return %d }", g, m.APIKey)
	e.p("")
	e.p("// MessageKind returns %s.", kindConst(m.Kind))
	e.p("func (*%s) MessageKind() Kind { return %s }", g, kindConst(m.Kind))
	e.p("")
	e.p("// Info returns the generated metadata of %s.", m.Name)
	e.p("func (*%s) Info() *MessageInfo { return &%s }", g, info)
	e.p("")
	e.p("// Encode appends m at the given version to dst.")
	e.p("func (m *%s) Encode(dst []byte, version int16) ([]byte, error) {", g)
	e.p("if version < %d || version > %d { return dst, versionError(m, version) }", m.Valid.lo, m.Valid.hi)
	e.p("var w wire.Encoder")
	e.p("b := m.encode(dst, version, &w)")
	e.p("if w.Err != nil { return dst, encodeError(m, version, &w) }")
	e.p("return b, nil")
	e.p("}")
	e.p("")
	e.p("// Decode replaces m with the message in src, which must hold exactly one %s at the", m.Name)
	e.p("// given version. Slices of m's previous contents may be reused, as encoding/json does.")
	e.p("func (m *%s) Decode(src []byte, version int16) error { return m.DecodeWith(src, version, DecodeOptions{}) }", g)
	e.p("")
	e.p("// DecodeWith is Decode with options.")
	e.p("func (m *%s) DecodeWith(src []byte, version int16, opts DecodeOptions) (err error) {", g)
	e.p("if version < %d || version > %d { return versionError(m, version) }", m.Valid.lo, m.Valid.hi)
	e.p("r := wire.Reader{Src: src, UnsafeStrings: opts.UnsafeStrings}")
	e.p("defer func() {")
	e.p("if p := recover(); p != nil { err = internalFault(m, version, r.Off, p) }")
	e.p("}()")
	e.p("m.decode(&r, version)")
	e.p("return finishDecode(m, &r, version, 0)")
	e.p("}")
	e.p("")
	e.p("// AppendJSON appends the JSON form of m at the given version to dst.")
	e.p("func (m *%s) AppendJSON(dst []byte, version int16) ([]byte, error) { return appendJSONBody(m, dst, version) }", g)
	e.p("")
	e.p("// DecodeJSON replaces m with the message in the JSON form, read at the given version.")
	e.p("func (m *%s) DecodeJSON(data []byte, version int16) error { return decodeJSONBody(m, data, version) }", g)
	e.p("")
	switch m.Kind {
	case "request":
		resp := goname.Ident(strings.TrimSuffix(m.Name, "Request") + "Response")
		e.p("func (*%s) isRequest() {}", g)
		e.p("")
		e.p("// NewResponse returns the paired response, with defaults.")
		e.p("func (*%s) NewResponse() Response { return New%s() }", g, resp)
		e.p("")
		e.p("// ResponseType returns a new paired %s, typed.", resp)
		e.p("func (*%s) ResponseType() *%s { return New%s() }", g, resp, resp)
		e.p("")
	case "response":
		req := goname.Ident(strings.TrimSuffix(m.Name, "Response") + "Request")
		e.p("func (*%s) isResponse() {}", g)
		e.p("")
		e.p("// NewRequest returns the paired request, with defaults.")
		e.p("func (*%s) NewRequest() Request { return New%s() }", g, req)
		e.p("")
		e.p("// RequestType returns a new paired %s, typed.", req)
		e.p("func (*%s) RequestType() *%s { return New%s() }", g, req, req)
		e.p("")
	}
}

func quoteAll(ss []string) string {
	var q []string
	for _, s := range ss {
		q = append(q, strconv.Quote(s))
	}
	return strings.Join(q, ", ")
}

// genRegistry writes the lookup tables over every message.
func genRegistry(msgs []*Message, releases []string) string {
	e := newGoFile(releases, "codec")
	e.p("// SpecReleases are the kafka-clients releases whose descriptors generated this package, oldest first.")
	e.p("var SpecReleases = []string{%s}", quoteAll(releases))
	e.p("")
	e.p("var allMessages = []*MessageInfo{")
	for _, m := range msgs {
		e.p("&info%s,", m.Root.GoName)
	}
	e.p("}")
	e.p("")
	var byName [][2]string
	for _, m := range msgs {
		byName = append(byName, [2]string{strconv.Quote(m.Name), m.Root.GoName})
	}
	genNewSwitch(e, "newMessageByName(name string) Message", "name", byName)
	byKey, keys := primaryByKey(msgs, releases)
	for i, kind := range [2]string{"Request", "Response"} {
		var cases [][2]string
		for _, k := range keys {
			if m := byKey[k][i]; m != nil {
				cases = append(cases, [2]string{strconv.Itoa(k), m.Root.GoName})
			}
		}
		genNewSwitch(e, "new"+kind+"(key int16) "+kind, "key", cases)
	}
	e.p("var allAPIs = []APIInfo{")
	for _, k := range keys {
		p := byKey[k]
		if p[0] == nil || p[1] == nil {
			panic(fmt.Sprintf("api key %d lacks a request or a response", k))
		}
		e.p("{Key: %d, Name: %q, Request: &info%s, Response: &info%s},", k, strings.TrimSuffix(p[0].Name, "Request"), p[0].Root.GoName, p[1].Root.GoName)
	}
	e.p("}")
	e.p("")
	return e.b.String()
}

// genNewSwitch writes func sig, which switches on arg: each case {value, type} returns
// New<type>(), anything else nil.
func genNewSwitch(e *emitter, sig, arg string, cases [][2]string) {
	e.p("func %s {", sig)
	e.p("switch %s {", arg)
	for _, c := range cases {
		e.p("case %s: return New%s()", c[0], c[1])
	}
	e.p("}")
	e.p("return nil")
	e.p("}")
	e.p("")
}

// primaryByKey picks, for every api key, the request and response that the newest
// release names: Kafka 4.x renamed api key 74 (ListClientMetricsResources became
// ListConfigResources), and lookups by key must give the current name.
func primaryByKey(msgs []*Message, releases []string) (map[int][2]*Message, []int) {
	rank := func(m *Message) int {
		last := m.Releases[len(m.Releases)-1]
		for i, r := range releases {
			if r == last {
				return i
			}
		}
		return -1
	}
	byKey := map[int][2]*Message{}
	var keys []int
	for _, m := range msgs {
		if m.APIKey < 0 {
			continue
		}
		p, ok := byKey[m.APIKey]
		if !ok {
			keys = append(keys, m.APIKey)
		}
		i := 1
		if m.Kind == "request" {
			i = 0
		}
		if p[i] == nil || rank(m) > rank(p[i]) {
			p[i] = m
		} else if rank(m) == rank(p[i]) {
			panic(fmt.Sprintf("api key %d: %s and %s both belong to release %s", m.APIKey, m.Name, p[i].Name, m.Releases[len(m.Releases)-1]))
		}
		byKey[m.APIKey] = p
	}
	sort.Ints(keys)
	return byKey, keys
}

// supersededName returns the current name of the api key when m is an older name of it.
func supersededName(m *Message, byKey map[int][2]*Message) string {
	if m.APIKey < 0 {
		return ""
	}
	i := 1
	if m.Kind == "request" {
		i = 0
	}
	if p := byKey[m.APIKey][i]; p != nil && p != m {
		return p.Name
	}
	return ""
}
