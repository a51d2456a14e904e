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
	// The methods every message has (gofmt indents them): the arguments are the Go type,
	// the descriptor name, the api key, the kind, the info variable and the valid versions.
	fmt.Fprintf(&e.b, `// MessageName returns %[2]q.
func (*%[1]s) MessageName() string { return %[2]q }

// APIKey returns %[3]d.
func (*%[1]s) APIKey() int16 { return %[3]d }

// MessageKind returns %[4]s.
func (*%[1]s) MessageKind() Kind { return %[4]s }

// Info returns the generated metadata of %[2]s.
func (*%[1]s) Info() *MessageInfo { return &%[5]s }

// Encode appends m at the given version to dst.
func (m *%[1]s) Encode(dst []byte, version int16) ([]byte, error) {
if version < %[6]d || version > %[7]d { return dst, versionError(m, version) }
var w wire.Encoder
b := m.encode(dst, version, &w)
if w.Err != nil { return dst, encodeError(m, version, &w) }
return b, nil
}

// Decode replaces m with the message in src, which must hold exactly one %[2]s at the
// given version. Slices of m's previous contents may be reused, as encoding/json does.
func (m *%[1]s) Decode(src []byte, version int16) error { return m.DecodeWith(src, version, DecodeOptions{}) }

// DecodeWith is Decode with options.
func (m *%[1]s) DecodeWith(src []byte, version int16, opts DecodeOptions) (err error) {
if version < %[6]d || version > %[7]d { return versionError(m, version) }
r := wire.Reader{Src: src, UnsafeStrings: opts.UnsafeStrings}
defer func() {
if p := recover(); p != nil { err = internalFault(m, version, r.Off, p) }
}()
m.decode(&r, version)
return finishDecode(m, &r, version, 0)
}

// AppendJSON appends the JSON form of m at the given version to dst.
func (m *%[1]s) AppendJSON(dst []byte, version int16) ([]byte, error) { return appendJSONBody(m, dst, version) }

// DecodeJSON replaces m with the message in the JSON form, read at the given version.
func (m *%[1]s) DecodeJSON(data []byte, version int16) error { return decodeJSONBody(m, data, version) }

`, g, m.Name, m.APIKey, kindConst(m.Kind), info, m.Valid.lo, m.Valid.hi)
	if m.Kind == "request" || m.Kind == "response" {
		// The pairing: a request names its response, a response its request.
		own, other := "Request", "Response"
		if m.Kind == "response" {
			own, other = other, own
		}
		pair := goname.Ident(strings.TrimSuffix(m.Name, own) + other)
		e.p("func (*%s) is%s() {}", g, own)
		e.p("")
		e.p("// New%s returns the paired %s, with defaults.", other, strings.ToLower(other))
		e.p("func (*%s) New%s() %s { return New%s() }", g, other, other, pair)
		e.p("")
		e.p("// %sType returns a new paired %s, typed.", other, pair)
		e.p("func (*%s) %sType() *%s { return New%s() }", g, other, pair, pair)
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
