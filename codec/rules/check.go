package rules

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/internal/transcode"
)

// Set is a parsed rule set. It is read-only after Parse and safe for concurrent use.
type Set struct {
	rules []*rule
	// byKey holds, for each api key, the rules that apply to its requests (its own
	// and those of "*", in configuration order), or nil when none does.
	byKey []*apiRules
	// other is the rules of "*", for api keys beyond byKey.
	other *apiRules
}

type apiRules struct {
	idx      []int // indices in Set.rules, ascending
	needBody bool  // some rule reads the body (not only the header)
}

func newSet(rules []*rule) *Set {
	s := &Set{rules: rules}
	maxKey := int16(-1)
	for _, a := range codec.APIs() {
		maxKey = max(maxKey, a.Key)
	}
	s.byKey = make([]*apiRules, maxKey+1)
	for i, r := range rules {
		if r.key < 0 {
			if s.other == nil {
				s.other = &apiRules{}
			}
			s.other.idx = append(s.other.idx, i)
		}
	}
	for key := range s.byKey {
		var a *apiRules
		for i, r := range rules {
			if r.key == int16(key) || r.key < 0 {
				if a == nil {
					a = &apiRules{}
				}
				a.idx = append(a.idx, i)
				a.needBody = a.needBody || !r.header
			}
		}
		s.byKey[key] = a
	}
	return s
}

// Len is the number of rules.
func (s *Set) Len() int { return len(s.rules) }

// Applies reports whether any rule applies to requests of the api key.
func (s *Set) Applies(apiKey int16) bool { return s.forKey(apiKey) != nil }

func (s *Set) forKey(key int16) *apiRules {
	if key >= 0 && int(key) < len(s.byKey) {
		return s.byKey[key]
	}
	return s.other
}

// Violation is the first rule a request breaks.
type Violation struct {
	// Rule is the index of the rule in the configuration.
	Rule int
	// API is the rule's api ("*" for every api) and Field its path as configured.
	API, Field string
	// Path is where the rule failed, with array indices: "topics[1].replicationFactor".
	Path string
	// Value is the value seen, as text: a number, a quoted string, "null", an array's
	// length for minItems and maxItems, or "" when the field is missing.
	Value string
	// Message is the rule's message, or one that says what failed, e.g.
	// "topics[1].replicationFactor is 1, below the minimum 3".
	Message string
}

// String is the violation's message.
func (v *Violation) String() string { return v.Message }

var docs = sync.Pool{New: func() any { return new(transcode.Doc) }}

// Check applies the rules of apiKey's requests (and those of every api, "*") to one
// request: its version, the client id of its header (nil when null) and its body, the
// bytes after the request header. It returns nil when every rule holds, else the
// first violation (in configuration order; within a rule, the first element in wire
// order). A body that cannot be read at that version is an error, and the caller
// refuses the request: policy fails closed.
//
// Requests of an api no rule names cost one table lookup: the body is not read. Nor
// is it when only header rules apply.
func (s *Set) Check(apiKey, apiVersion int16, clientID *string, body []byte) (*Violation, error) {
	a := s.forKey(apiKey)
	if a == nil {
		return nil, nil
	}
	var doc *transcode.Doc
	if a.needBody {
		doc = docs.Get().(*transcode.Doc)
		defer docs.Put(doc)
		if err := doc.ParseAPI(body, apiKey, codec.KindRequest, apiVersion); err != nil {
			return nil, err
		}
	}
	for _, i := range a.idx {
		r := s.rules[i]
		var v *Violation
		if r.header {
			switch {
			case clientID == nil:
				if r.required || r.refuseMissing && !r.absent {
					v = r.nullViolation("header.clientId")
				}
			case !r.stringHolds(*clientID):
				v = r.stringViolation("header.clientId", *clientID)
			}
		} else {
			c := checker{r: r, doc: doc, version: apiVersion}
			v = c.walk(doc.Root(), 0)
		}
		if v != nil {
			v.Rule, v.API, v.Field = i, r.api, r.field
			if r.message != "" {
				v.Message = r.message
			}
			return v, nil
		}
	}
	return nil, nil
}

// checker applies one rule to one parsed body.
type checker struct {
	r       *rule
	doc     *transcode.Doc
	version int16
	idx     [maxSteps]int // element index at each array step of the path
}

// path is the rule's path up to step n (exclusive) with the indices walked so far.
func (c *checker) path(n int) string {
	var b strings.Builder
	for i, s := range c.r.segs[:n] {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.name)
		if s.each {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(c.idx[i]))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// walk applies the rule below node n, a struct, from path step i.
func (c *checker) walk(n transcode.Node, i int) *Violation {
	segs := c.r.segs
	s := segs[i]
	f := c.doc.Field(n, s.name)
	last := i == len(segs)-1
	if f == transcode.NoNode || (!last || s.each) && c.doc.IsNull(f) {
		// Not in this version (or a tagged field left out, or a null on the way).
		if last && !s.each && c.r.absent {
			return nil
		}
		return c.missing(i, f != transcode.NoNode)
	}
	if !s.each {
		if last {
			return c.value(f, i)
		}
		return c.walk(f, i+1)
	}
	k := 0
	for e := c.doc.First(f); e != transcode.NoNode; e = c.doc.Next(e) {
		if i < len(c.idx) {
			c.idx[i] = k
		}
		var v *Violation
		if last {
			v = c.value(e, i)
		} else {
			v = c.walk(e, i+1)
		}
		if v != nil {
			return v
		}
		k++
	}
	return nil
}

// missing is the outcome when step i's field is not there (or null on the way).
func (c *checker) missing(i int, null bool) *Violation {
	if c.r.absent || !c.r.refuseMissing && !c.r.required {
		return nil
	}
	p := c.path(i)
	if p != "" {
		p += "."
	}
	p += c.r.segs[i].name
	rest := c.r.segs[i+1:]
	for _, s := range rest {
		p += "." + s.name
		if s.each {
			p += "[]"
		}
	}
	if null {
		if c.r.required && len(rest) == 0 {
			return &Violation{Path: p, Value: "null", Message: p + " is null; it is required"}
		}
		if !c.r.refuseMissing {
			return nil
		}
		return &Violation{Path: p, Value: "null", Message: p + " is null"}
	}
	if !c.r.refuseMissing {
		// required, but the version lacks the field: ifMissing (pass) decides.
		return nil
	}
	return &Violation{Path: p, Message: p + " is not in " + c.r.request + " v" + strconv.Itoa(int(c.version))}
}

// value applies the rule's predicates to the value at node n, the field of path step
// i (or one element of it). The path is written only for a violation.
func (c *checker) value(n transcode.Node, i int) *Violation {
	r, d := c.r, c.doc
	if d.IsNull(n) {
		if r.required || r.refuseMissing && !r.absent {
			return r.nullViolation(c.path(i + 1))
		}
		return nil
	}
	f := r.target
	if f.array && !r.segs[len(r.segs)-1].each {
		l := int64(d.Len(n))
		switch {
		case r.absent:
			p := c.path(i + 1)
			return &Violation{Path: p, Value: "[" + items(l) + "]", Message: p + " is set; it must be absent"}
		case r.hasMinItems && l < r.minItems:
			p := c.path(i + 1)
			return &Violation{Path: p, Value: strconv.FormatInt(l, 10), Message: p + " has " + items(l) + ", fewer than the minimum " + strconv.FormatInt(r.minItems, 10)}
		case r.hasMaxItems && l > r.maxItems:
			p := c.path(i + 1)
			return &Violation{Path: p, Value: strconv.FormatInt(l, 10), Message: p + " has " + items(l) + ", more than the maximum " + strconv.FormatInt(r.maxItems, 10)}
		}
		return nil
	}
	switch f.kind {
	case kInt, kBool:
		x := d.Int(n)
		if !r.absent && !(r.hasMin && x < r.min) && !(r.hasMax && x > r.max) && !(r.hasIn && !slices.Contains(r.inInts, x)) {
			return nil
		}
		p := c.path(i + 1)
		text := strconv.FormatInt(x, 10)
		if f.kind == kBool {
			text = strconv.FormatBool(x != 0)
		}
		v := &Violation{Path: p, Value: text}
		switch {
		case r.absent:
			v.Message = p + " is " + text + "; it must be absent"
		case r.hasMin && x < r.min:
			v.Message = p + " is " + text + ", below the minimum " + strconv.FormatInt(r.min, 10)
		case r.hasMax && x > r.max:
			v.Message = p + " is " + text + ", above the maximum " + strconv.FormatInt(r.max, 10)
		default:
			v.Message = p + " is " + text + ", not one of " + r.inText()
		}
		return v
	case kString:
		b, _ := d.Str(n)
		// A view of the body, used only during the call; a violation copies it.
		if r.stringHolds(unsafe.String(unsafe.SliceData(b), len(b))) {
			return nil
		}
		return r.stringViolation(c.path(i+1), string(b))
	}
	if r.absent {
		p := c.path(i + 1)
		var text string
		switch f.kind {
		case kUUID:
			text = codec.UUID(d.UUID(n)).String()
		case kBytes:
			text = "(" + strconv.Itoa(len(d.Bytes(n))) + " bytes)"
		default:
			text = "(set)"
		}
		return &Violation{Path: p, Value: text, Message: p + " is " + text + "; it must be absent"}
	}
	return nil
}

func items(n int64) string {
	if n == 1 {
		return "1 item"
	}
	return strconv.FormatInt(n, 10) + " items"
}

// nullViolation is the violation of a null value at p (required, or ifMissing refuse).
func (r *rule) nullViolation(p string) *Violation {
	if r.required {
		return &Violation{Path: p, Value: "null", Message: p + " is null; it is required"}
	}
	return &Violation{Path: p, Value: "null", Message: p + " is null"}
}

// stringHolds reports whether the string b passes the rule.
func (r *rule) stringHolds(b string) bool {
	if r.absent {
		return false
	}
	if r.hasIn {
		found := false
		for _, s := range r.inStrs {
			if s == b {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return r.pattern == nil || r.patternHolds(b)
}

// patternMemo is the last string a rule's pattern was matched against, and the
// answer: a connection sends the same client id (or topic name) request after
// request, and a match costs a microsecond or two where a comparison costs
// nanoseconds.
type patternMemo struct {
	s  string
	ok bool
}

// patternHolds matches b against the rule's pattern, through the memo.
func (r *rule) patternHolds(b string) bool {
	if m := r.memo.Load(); m != nil && m.s == b {
		return m.ok
	}
	ok := r.pattern.MatchString(b)
	if len(b) <= 256 {
		r.memo.Store(&patternMemo{s: strings.Clone(b), ok: ok})
	}
	return ok
}

// stringViolation is the violation of the string b at p, which failed stringHolds.
func (r *rule) stringViolation(p string, b string) *Violation {
	text := strconv.Quote(b)
	v := &Violation{Path: p, Value: text}
	switch {
	case r.absent:
		v.Message = p + " is " + text + "; it must be absent"
	case r.pattern != nil && !r.pattern.MatchString(b):
		v.Message = p + " is " + text + ", which does not match " + r.pattern.String()
	default:
		v.Message = p + " is " + text + ", not one of " + r.inText()
	}
	return v
}

// inText is the rule's set as JSON text.
func (r *rule) inText() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range r.inInts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(x, 10))
	}
	for i, s := range r.inStrs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(s))
	}
	b.WriteByte(']')
	return b.String()
}

// Reads reports whether a rule that applies to requests of api key has a step named
// name (a field's JSON name) in its path: a caller that checks a request without some
// field's value (a Produce's records, say) can tell whether a rule needs it.
func (s *Set) Reads(apiKey int16, name string) bool {
	a := s.forKey(apiKey)
	if a == nil {
		return false
	}
	for _, i := range a.idx {
		for _, g := range s.rules[i].segs {
			if g.name == name {
				return true
			}
		}
	}
	return false
}

// OnlyReads reports whether every rule that applies to requests of api key is a header
// rule or names one of the top-level fields in names: a caller that has read only
// those fields of a request (a Produce's head) can check it with the rest left out.
func (s *Set) OnlyReads(apiKey int16, names ...string) bool {
	a := s.forKey(apiKey)
	if a == nil {
		return true
	}
	for _, i := range a.idx {
		r := s.rules[i]
		if !r.header && (len(r.segs) == 0 || !slices.Contains(names, r.segs[0].name)) {
			return false
		}
	}
	return true
}
