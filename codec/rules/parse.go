package rules

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/internal/errtext"
	"github.com/kwire/kwire/internal/jsonx"
)

// ConfigError is a bad rule configuration: the JSON path of the offending value, its
// byte offset in the JSON text, and what is wrong.
type ConfigError struct {
	// Path is the JSON path of the value: "$[1].field".
	Path string
	// Offset is the byte offset of the value in the JSON text.
	Offset int
	// Msg says what is wrong.
	Msg string
}

// Error reports path, message and offset.
func (e *ConfigError) Error() string {
	return "rules: " + e.Path + ": " + e.Msg + " (at byte " + strconv.Itoa(e.Offset) + ")"
}

// rule is one compiled rule.
type rule struct {
	api     string
	key     int16  // -1: every api ("*")
	request string // the request's message name
	field   string
	header  bool // header.clientId
	segs    []seg
	target  *schemaField // nil for the header

	hasMin, hasMax           bool
	min, max                 int64
	inInts                   []int64
	inStrs                   []string
	hasIn                    bool
	pattern                  *pattern
	required, absent         bool
	hasMinItems, hasMaxItems bool
	minItems, maxItems       int64
	refuseMissing            bool
	message                  string
	memo                     atomic.Pointer[patternMemo] // the last pattern match (check.go)
}

// maxSteps bounds a path's steps (Kafka's requests nest a handful deep).
const maxSteps = 16

// seg is one step of a path: a field, and whether the path goes into each element of
// that array field ("topics[]").
type seg struct {
	name  string
	each  bool
	field *schemaField
}

// Parse reads a rule set: a JSON array of rule objects, strictly (an unknown or
// repeated key, a wrong type or trailing data is an error), and checks every rule
// against the descriptors. A failure is a *ConfigError with the JSON path and byte
// offset of the offending value:
//
//	rules: $[0].field: CreateTopicsRequest has no field topics[].replicationFactr in any version; did you mean replicationFactor? (at byte 40)
func Parse(data []byte) (*Set, error) {
	d := jsonx.NewDecoder(data)
	var rules []*rule
	if d.BeginArray() {
		i := 0
		for first := true; d.More(&first, ']'); i++ {
			r := readRule(d)
			if d.Failed() {
				d.PushIndex(i)
				break
			}
			rules = append(rules, r)
		}
	}
	d.End()
	if err := d.Err(); err != nil {
		var je *jsonx.Error
		if !errors.As(err, &je) {
			return nil, &ConfigError{Path: "$", Msg: err.Error()}
		}
		msg := je.Err.Error()
		if je.Detail != "" {
			msg += ": " + je.Detail
		}
		return nil, &ConfigError{Path: je.Path, Offset: je.Offset, Msg: msg}
	}
	return newSet(rules), nil
}

// fail records msg as the failure of the value that starts at byte at, under key.
func fail(d *jsonx.Decoder, at int, key, msg string) {
	d.Rewind(at)
	d.Fail(errors.New(msg), "")
	if key != "" {
		d.Push(key)
	}
}

// object reads an object strictly, calling member with each key and the key's offset
// to read its value; a repeated key is an error at that key.
func object(d *jsonx.Decoder, member func(key string, keyAt int)) {
	if !d.BeginObject() {
		return
	}
	var seen []string
	for first := true; d.More(&first, '}'); {
		keyAt := d.ValueStart()
		key := d.Key()
		if d.Failed() {
			return
		}
		if slices.Contains(seen, key) {
			d.Rewind(keyAt)
			d.Duplicate(key)
			d.Push(key)
			return
		}
		seen = append(seen, key)
		member(key, keyAt)
		if d.Failed() {
			d.Push(key)
			return
		}
	}
}

// inValue is one member of "in" as read, before the field's kind is known.
type inValue struct {
	num   int64
	str   string
	isStr bool
	at    int
}

// ruleReader is what readRule has read of a rule object before it checks it.
type ruleReader struct {
	d                            *jsonx.Decoder
	r                            *rule
	keys                         []string // the keys read, with their values' offsets in at
	at                           []int
	hasAPI, hasField, hasPattern bool
	ins                          []inValue
	pattern, ifMissing           string
}

// member reads the value of one key of a rule object.
func (rr *ruleReader) member(key string, keyAt int) {
	d, r := rr.d, rr.r
	rr.keys, rr.at = append(rr.keys, key), append(rr.at, d.ValueStart())
	switch key {
	case "api":
		r.api, rr.hasAPI = d.String(), true
	case "field":
		r.field, rr.hasField = d.String(), true
	case "min":
		r.min, r.hasMin = d.Int(math.MinInt64, math.MaxInt64), true
	case "max":
		r.max, r.hasMax = d.Int(math.MinInt64, math.MaxInt64), true
	case "in":
		r.hasIn = true
		rr.readIn()
	case "pattern":
		rr.pattern, rr.hasPattern = d.String(), true
	case "required":
		r.required = d.Bool()
	case "absent":
		r.absent = d.Bool()
	case "minItems":
		r.minItems, r.hasMinItems = d.Int(0, math.MaxInt32), true
	case "maxItems":
		r.maxItems, r.hasMaxItems = d.Int(0, math.MaxInt32), true
	case "ifMissing":
		rr.ifMissing = d.String()
	case "message":
		r.message = d.String()
	default:
		d.Rewind(keyAt)
		d.UnknownKey(key)
	}
}

// readIn reads the array of "in": numbers or strings, not both.
func (rr *ruleReader) readIn() {
	d := rr.d
	if !d.BeginArray() {
		return
	}
	i := 0
	for first := true; d.More(&first, ']'); i++ {
		v := inValue{at: d.ValueStart()}
		if d.Peek() == '"' {
			v.str, v.isStr = d.String(), true
		} else {
			v.num = d.Int(math.MinInt64, math.MaxInt64)
		}
		if d.Failed() {
			d.PushIndex(i)
			return
		}
		if len(rr.ins) > 0 && rr.ins[0].isStr != v.isStr {
			d.Rewind(v.at)
			d.Fail(errors.New("mixes numbers and strings"), "")
			d.PushIndex(i)
			return
		}
		rr.ins = append(rr.ins, v)
	}
}

// bad records msg as the failure of the value of key ("": of the whole rule, which
// starts at start) and returns nil.
func (rr *ruleReader) bad(start int, key, msg string) *rule {
	at := start
	if i := slices.Index(rr.keys, key); i >= 0 {
		at = rr.at[i]
	} else {
		key = ""
	}
	fail(rr.d, at, key, msg)
	return nil
}

// readRule reads and compiles one rule object; on failure d holds the error.
func readRule(d *jsonx.Decoder) *rule {
	start := d.ValueStart()
	rr := &ruleReader{d: d, r: &rule{}}
	object(d, rr.member)
	if d.Failed() {
		return nil
	}
	end := d.Pos()
	r := rr.compile(start)
	if r != nil {
		d.Rewind(end)
	}
	return r
}

// compile checks what member read and compiles the rule: its api, its field in the
// descriptors, its predicates against the field's kind; nil on failure.
func (rr *ruleReader) compile(start int) *rule {
	r := rr.r
	switch {
	case !rr.hasAPI:
		return rr.bad(start, "", `a rule needs "api"`)
	case !rr.hasField:
		return rr.bad(start, "", `a rule needs "field"`)
	}
	switch rr.ifMissing {
	case "", "pass":
	case "refuse":
		r.refuseMissing = true
	default:
		return rr.bad(start, "ifMissing", "ifMissing is "+strconv.Quote(rr.ifMissing)+"; want pass or refuse")
	}
	if !r.hasMin && !r.hasMax && !r.hasIn && !rr.hasPattern && !r.required && !r.absent && !r.hasMinItems && !r.hasMaxItems {
		return rr.bad(start, "", "the rule for "+r.field+" has no predicate (min, max, in, pattern, required, absent, minItems or maxItems)")
	}
	if r.required && r.absent {
		return rr.bad(start, "absent", "a field cannot be both required and absent")
	}
	if r.hasIn && len(rr.ins) == 0 {
		return rr.bad(start, "in", "in is empty: nothing could pass")
	}
	if r.hasMin && r.hasMax && r.min > r.max {
		return rr.bad(start, "max", "max "+strconv.FormatInt(r.max, 10)+" is below min "+strconv.FormatInt(r.min, 10))
	}
	if r.hasMinItems && r.hasMaxItems && r.minItems > r.maxItems {
		return rr.bad(start, "maxItems", "maxItems "+strconv.FormatInt(r.maxItems, 10)+" is below minItems "+strconv.FormatInt(r.minItems, 10))
	}
	// The api.
	r.key = -1
	if r.api != "*" {
		names := make([]string, 0, 100)
		for _, a := range codec.APIs() {
			names = append(names, a.Name)
			if a.Name == r.api {
				r.key = a.Key
			}
		}
		if r.key < 0 {
			return rr.bad(start, "api", "no api "+strconv.Quote(r.api)+errtext.DidYouMean(r.api, names))
		}
	}
	// The field.
	if msg := r.resolve(); msg != "" {
		return rr.bad(start, "field", msg)
	}
	// Predicates against the field's kind.
	f, what := r.target, r.field+" is "
	kindOf := kString // the header's client id
	isArray, each := false, false
	if f != nil {
		kindOf, isArray = f.kind, f.array
		each = r.segs[len(r.segs)-1].each
		what += f.describe()
		if isArray && each {
			what = r.field + " is each element of " + r.field[:len(r.field)-2] + ", " + f.describe()
		}
	} else {
		what += "a string"
	}
	value := !isArray || each // the path names a single value, not an array
	if r.hasMinItems || r.hasMaxItems {
		key := "minItems"
		if !r.hasMinItems {
			key = "maxItems"
		}
		if !isArray {
			return rr.bad(start, key, key+" needs an array; "+what)
		}
		if each {
			return rr.bad(start, key, key+" counts the array itself: write "+r.field[:len(r.field)-2]+", without []")
		}
	}
	for _, k := range [...]struct {
		key string
		on  bool
	}{{"min", r.hasMin}, {"max", r.hasMax}} {
		if k.on && (!value || kindOf != kInt) {
			return rr.bad(start, k.key, k.key+" needs an integer; "+what)
		}
	}
	if r.hasIn {
		switch {
		case !value || (kindOf != kInt && kindOf != kString):
			return rr.bad(start, "in", "in needs an integer or a string; "+what)
		case kindOf == kInt && rr.ins[0].isStr:
			return rr.bad(start, "in", "in holds strings; "+what)
		case kindOf == kString && !rr.ins[0].isStr:
			return rr.bad(start, "in", "in holds numbers; "+what)
		}
		for _, v := range rr.ins {
			if v.isStr {
				r.inStrs = append(r.inStrs, v.str)
			} else {
				r.inInts = append(r.inInts, v.num)
			}
		}
	}
	if rr.hasPattern {
		if !value || kindOf != kString {
			return rr.bad(start, "pattern", "pattern needs a string; "+what)
		}
		re, err := compilePattern(rr.pattern)
		if err != nil {
			return rr.bad(start, "pattern", "pattern: "+err.Error())
		}
		r.pattern = re
	}
	return r
}

// resolve finds the rule's field in the api's request (or the header); it returns
// what is wrong, or "".
func (r *rule) resolve() string {
	path := r.field
	if rest, ok := strings.CutPrefix(path, "header."); ok {
		if rest != "clientId" {
			return "the request header's field that rules can check is header.clientId" + errtext.DidYouMean(rest, []string{"clientId"})
		}
		r.header = true
		return ""
	}
	if r.key < 0 {
		return `a rule for every api ("*") can check only header.clientId`
	}
	msgName := requestName(r.key)
	r.request = msgName
	if path == "" {
		return "the field is empty"
	}
	cur := requestModel(r.key)
	parts := strings.Split(path, ".")
	if len(parts) > maxSteps {
		return "the path " + strconv.Quote(path) + " has more than " + strconv.Itoa(maxSteps) + " steps"
	}
	for i, part := range parts {
		name, each := strings.CutSuffix(part, "[]")
		prefix := strings.Join(parts[:i], ".")
		if name == "" {
			return "the path " + strconv.Quote(path) + " has an empty name"
		}
		if cur.kind != kStruct {
			return prefix + " is " + cur.describe() + ", which has no field " + name
		}
		f := cur.child(name)
		if f == nil {
			return msgName + " has no field " + path + " in any version" + errtext.DidYouMean(name, cur.names())
		}
		last := i == len(parts)-1
		if each && !f.array {
			return strings.Join(append(parts[:i:i], name), ".") + " is " + f.describe() + ", not an array: write it without []"
		}
		if f.array && !each && !last {
			return strings.Join(append(parts[:i:i], name), ".") + " is " + f.describe() + ": write " + name + "[] to check each element"
		}
		r.segs = append(r.segs, seg{name: name, each: each, field: f})
		cur = f
	}
	r.target = cur
	return ""
}
