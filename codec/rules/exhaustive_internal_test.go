package rules

import (
	"math/rand"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/codectest"
	"github.com/kwire/kwire/internal/transcode"
)

// fieldPath is one path a rule can name, and the field it ends at.
type fieldPath struct {
	path string
	f    *schemaField
	each bool
}

// paths lists every path of the request's field tree: each field, and for array
// fields both the array itself and its elements.
func paths(root *schemaField) []fieldPath {
	var out []fieldPath
	var walk func(prefix string, s *schemaField)
	walk = func(prefix string, s *schemaField) {
		for _, f := range s.fields {
			p := prefix + f.name
			if f.array {
				out = append(out, fieldPath{p, f, false}, fieldPath{p + "[]", f, true})
				p += "[]"
			} else {
				out = append(out, fieldPath{p, f, false})
			}
			if f.kind == kStruct {
				walk(p+".", f)
			}
		}
	}
	walk("", root)
	return out
}

// ruleFor is a rule on p with predicates that fit its field.
func ruleFor(api string, p fieldPath, i int) string {
	pred := `"required": true`
	switch {
	case p.f.array && !p.each:
		pred = `"minItems": 1, "maxItems": 3`
	case p.f.kind == kInt:
		pred = `"min": 0, "max": 100, "in": [0, 1, 2, 3]`
	case p.f.kind == kString:
		pred = `"pattern": "^[a-m]", "in": ["a", "b"]`
	case i%2 == 1:
		pred = `"absent": true`
	}
	missing := "pass"
	if i%3 == 0 {
		missing = "refuse"
	}
	return `{"api": "` + api + `", "field": "` + p.path + `", ` + pred + `, "ifMissing": "` + missing + `"}`
}

// TestEveryFieldOfEveryRequest parses a rule on every path of every request, and
// checks every api's rules against a default and a few random bodies of each version.
func TestEveryFieldOfEveryRequest(t *testing.T) {
	total := 0
	r := rand.New(rand.NewSource(1))
	for _, a := range codec.APIs() {
		root := requestModel(a.Key)
		ps := paths(root)
		all := "["
		for i, p := range ps {
			// The name is the schema's: the walker's plan knows the path.
			if _, err := transcode.NewWalkPlan(a.Key, codec.KindRequest, dotted(p.path)); err != nil {
				t.Errorf("%s %s: %v", a.Name, p.path, err)
			}
			js := ruleFor(a.Name, p, i)
			if _, err := Parse([]byte("[" + js + "]")); err != nil {
				t.Errorf("%s: %v", js, err)
				continue
			}
			if i > 0 {
				all += ","
			}
			all += js
			total++
		}
		set, err := Parse([]byte(all + "]"))
		if err != nil {
			t.Errorf("%s: %v", a.Name, err)
			continue
		}
		if len(ps) > 0 && !set.Applies(a.Key) {
			t.Errorf("%s: no rules apply", a.Name)
		}
		for v := a.Request.MinVersion; v <= a.Request.MaxVersion; v++ {
			m := codec.NewRequest(a.Key)
			bodies := [][]byte{encodeOrFail(t, m, v)}
			for k := 0; k < 3; k++ {
				codectest.Fill(m, r, v)
				bodies = append(bodies, encodeOrFail(t, m, v))
			}
			for _, b := range bodies {
				if _, err := set.Check(a.Key, v, nil, b); err != nil {
					t.Errorf("%s v%d: %v", a.Name, v, err)
				}
			}
		}
	}
	if total < 900 {
		t.Errorf("only %d paths", total)
	}
	t.Logf("%d paths in %d requests", total, len(codec.APIs()))
}

func dotted(p string) string {
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		if p[i] == '[' || p[i] == ']' {
			continue
		}
		out = append(out, p[i])
	}
	return string(out)
}

func encodeOrFail(t *testing.T, m codec.Request, v int16) []byte {
	t.Helper()
	b, err := m.Encode(nil, v)
	if err != nil {
		t.Fatalf("%s v%d: %v", m.MessageName(), v, err)
	}
	return b
}
