package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kwire/kwire/codec/kerr"
	"github.com/kwire/kwire/codec/records"
)

func TestValidJSON(t *testing.T) {
	deep := strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth)
	tooDeep := strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1)
	for _, tc := range []struct {
		in     string
		unique bool
		want   string // "" for valid, else a part of the error
	}{
		{`{}`, false, ""},
		{` {"a":[1,-2.5e+3,true,false,null,"x\u00e9\n"],"b":{}} `, false, ""},
		{`"top-level string"`, false, ""},
		{`0`, false, ""},
		{`-0.0E-0`, false, ""},
		{"\t[\r\n]\n", false, ""},
		{deep, false, ""},
		{`{"é":1,"\u00e9":2}`, false, ""},
		{``, false, "no JSON value"},
		{`   `, false, "no JSON value"},
		{`{`, false, "unexpected end"},
		{`{"a":1,}`, false, "looking for an object key"},
		{`[1,]`, false, "looking for a JSON value"},
		{`[1 2]`, false, "want ',' or ']'"},
		{`{"a" 1}`, false, "want ':'"},
		{`{} x`, false, "after the JSON value"},
		{`01`, false, "after the JSON value"},
		{`1.`, false, "no digit after '.'"},
		{`1e`, false, "no digit in the exponent"},
		{`-`, false, "invalid number"},
		{`+1`, false, "looking for a JSON value"},
		{`tru`, false, "invalid literal"},
		{`nul1`, false, "invalid literal"},
		{`"a` + "\x01" + `"`, false, "control character"},
		{`"\x"`, false, "invalid escape"},
		{`"\u12"`, false, "invalid \\u escape"},
		{"\"\xff\"", false, "invalid UTF-8"},
		{"\"\xed\xa0\x80\"", false, "invalid UTF-8"}, // an encoded surrogate
		{"\xef\xbb\xbf{}", false, "looking for a JSON value"},
		{`NaN`, false, "looking for a JSON value"},
		{tooDeep, false, "nests deeper"},
		{`{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}`, true, ""},
		{`{"a":1,"b":2,"a":3}`, true, `duplicate object key "a" at byte 13`},
		{`{"a":1,"\u0061":2}`, true, `duplicate object key "a"`},
		{`{"😀":1,"\ud83d\ude00":2}`, true, `duplicate object key "😀"`},
		{`{"\ud800":1,"\ud800":2}`, true, "duplicate object key"},
		{`{"\ud800":1,"\udc00":2}`, true, ""},
		{`[{"x":{"y":1,"y":2}}]`, true, `duplicate object key "y" at byte 13`},
		{`{"a":1,"a":2}`, false, ""},
		{`{"":1,"":2}`, true, `duplicate object key "" at byte 6`},
		{`{"b":1,"a":2,"c":3,"a":4,"b":5}`, true, `duplicate object key "a" at byte 19`},
	} {
		err := ValidJSON([]byte(tc.in), tc.unique)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%.40q (unique %v): %v, want valid", tc.in, tc.unique, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%.40q (unique %v): %v, want an error containing %q", tc.in, tc.unique, err, tc.want)
		}
		if err != nil {
			var je *JSONError
			if !errors.As(err, &je) || je.Offset < 0 || je.Offset > len(tc.in) {
				t.Errorf("%.40q: error %v is not a *JSONError within the input", tc.in, err)
			}
		}
	}
}

// duplicateKeys reports whether valid JSON b repeats a key in one object, read
// with encoding/json's tokenizer (keys compared after decoding).
func duplicateKeys(b []byte) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	type obj struct {
		keys      map[string]bool
		expectKey bool
	}
	var stack []*obj
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return false
		}
		if err != nil {
			return false
		}
		var top *obj
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch x := tok.(type) {
		case json.Delim:
			switch x {
			case '{', '[':
				if top != nil && top.expectKey == false && top.keys != nil {
					top.expectKey = true
				}
				o := &obj{}
				if x == '{' {
					o.keys, o.expectKey = map[string]bool{}, true
				}
				stack = append(stack, o)
				continue
			default:
				stack = stack[:len(stack)-1]
				continue
			}
		case string:
			if top != nil && top.keys != nil && top.expectKey {
				if top.keys[x] {
					return true
				}
				top.keys[x] = true
				top.expectKey = false
				continue
			}
		}
		if top != nil && top.keys != nil {
			top.expectKey = true
		}
	}
}

// FuzzValidJSON holds ValidJSON to encoding/json: on valid UTF-8 within the depth
// limit they agree on validity; invalid UTF-8 always fails ValidJSON (encoding/json
// lets it pass, replaced); with unique keys, ValidJSON fails exactly when
// encoding/json's tokens repeat a key in an object.
func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2,{"b":null}],"a":"\u0061"}`, `[1e5,-0.1,"x\ud83d\ude00"]`, `"\xff"`, `{"a":1 "b":2}`, `01`, ` true `} {
		f.Add([]byte(s))
	}
	var n int
	f.Fuzz(func(t *testing.T, b []byte) {
		if n++; n%64 == 0 {
			runtime.Gosched()
		}
		err := ValidJSON(b, false)
		var je *JSONError
		if err != nil && (!errors.As(err, &je) || je.Offset < 0 || je.Offset > len(b)) {
			t.Fatalf("%q: error %v is not a *JSONError within the input", b, err)
		}
		if err != nil && strings.Contains(err.Error(), "nests deeper") {
			return
		}
		std := json.Valid(b)
		if !utf8.Valid(b) {
			if err == nil {
				t.Fatalf("%q: invalid UTF-8 accepted", b)
			}
			if std && !strings.Contains(err.Error(), "UTF-8") {
				t.Fatalf("%q: encoding/json accepts, ValidJSON: %v (want the UTF-8 failure)", b, err)
			}
			return
		}
		if std != (err == nil) {
			t.Fatalf("%q: encoding/json says valid=%v, ValidJSON: %v", b, std, err)
		}
		if !std {
			return
		}
		uerr := ValidJSON(b, true)
		if dup := duplicateKeys(b); dup != (uerr != nil) {
			t.Fatalf("%q: encoding/json's tokens repeat a key: %v; ValidJSON with unique keys: %v", b, dup, uerr)
		}
	})
}

func rec(key, value []byte, h ...string) records.Message {
	return records.Message{Key: key, Value: value, Headers: hdr(h...)}
}

func TestValidationRules(t *testing.T) {
	p, err := Parse([]byte(`{"default":"none","rules":[
		{"topic":"json","policy":"enforce","value":{"require_schema":false,"json":true}},
		{"topic":"uniq","policy":"enforce","value":{"require_schema":false,"unique_keys":true},"error":"POLICY_VIOLATION"},
		{"topic":"framed","policy":"enforce","value":{"schema_ids":[7],"json":true}},
		{"topic":"tomb","policy":"enforce","value":{"require_schema":false,"null":"refuse"}},
		{"topic":"tombok","policy":"enforce"},
		{"topic":"keys","policy":"enforce","value":{"require_schema":false},"key":{"json":true,"null":"refuse"}},
		{"topic":"keyid","policy":"enforce","value":{"require_schema":false},"key":{"schema_ids":[3]}},
		{"topic":"keyjson","policy":"enforce","value":{"require_schema":false},"key":{"require_schema":true,"json":true}},
		{"topic":"legacy","policy":"enforce","schema_ids":[1]},
		{"prefix":"w.","policy":"warn","value":{"require_schema":false,"json":true}}],
		"error":"INVALID_RECORD"}`))
	if err != nil {
		t.Fatal(err)
	}
	type fail struct {
		reason Reason
		field  string
		detail string
	}
	j := []byte(`{"a":1}`)
	for _, tc := range []struct {
		name, topic string
		msgs        []records.Message
		code        kerr.Code // 0: accepted
		fails       []fail
	}{
		{"json ok", "json", []records.Message{rec(nil, j), rec(nil, []byte(`[1,2]`))}, 0, nil},
		{"json invalid", "json", []records.Message{rec(nil, j), rec(nil, []byte(`{"a":`))}, kerr.InvalidRecord,
			[]fail{{InvalidJSON, "value", "value: not JSON: unexpected end of JSON at byte 5"}}},
		{"json empty", "json", []records.Message{rec(nil, []byte{})}, kerr.InvalidRecord, []fail{{InvalidJSON, "value", "no JSON value"}}},
		{"json tombstone passes", "json", []records.Message{rec(nil, nil)}, 0, nil},
		{"json ignores the key", "json", []records.Message{rec([]byte("not json"), j)}, 0, nil},
		{"unique ok", "uniq", []records.Message{rec(nil, []byte(`{"a":{"a":1}}`))}, 0, nil},
		{"unique duplicate", "uniq", []records.Message{rec(nil, []byte(`{"a":1,"a":2}`))}, kerr.PolicyViolation,
			[]fail{{DuplicateKey, "value", `value: duplicate object key "a" at byte 7`}}},
		{"unique empty key", "uniq", []records.Message{rec(nil, []byte(`{"":1,"\u0000":2,"":3}`))}, kerr.PolicyViolation,
			[]fail{{DuplicateKey, "value", `duplicate object key "" at byte 17`}}},
		{"unique also parses", "uniq", []records.Message{rec(nil, []byte(`{"a"}`))}, kerr.PolicyViolation, []fail{{InvalidJSON, "value", "want ':'"}}},
		{"framed payload", "framed", []records.Message{rec(nil, prefixed(7, `{"x":[]}`))}, 0, nil},
		{"framed bad payload", "framed", []records.Message{rec(nil, prefixed(7, `{x}`))}, kerr.InvalidRecord, []fail{{InvalidJSON, "value", "at byte 1"}}},
		{"framed wrong id", "framed", []records.Message{rec(nil, prefixed(8, `{}`))}, kerr.InvalidRecord, []fail{{IDNotAllowed, "value", "schema id 8"}}},
		{"header id: whole value", "framed", []records.Message{rec(nil, j, "schema.id", "7")}, 0, nil},
		{"no schema", "framed", []records.Message{rec(nil, j)}, kerr.InvalidRecord, []fail{{NoSchema, "value", "no schema reference"}}},
		{"tombstone refused", "tomb", []records.Message{rec(nil, []byte("x")), rec([]byte("k"), nil)}, kerr.InvalidRecord,
			[]fail{{NullRefused, "value", "value: null (a tombstone)"}}},
		{"tombstone allowed by default", "tombok", []records.Message{rec([]byte("k"), nil), rec(nil, prefixed(1, "x"))}, 0, nil},
		{"key json", "keys", []records.Message{rec([]byte(`"k"`), []byte("v")), rec([]byte(`k`), nil)}, kerr.InvalidRecord,
			[]fail{{InvalidJSON, "key", "key: not JSON"}}},
		{"key null refused", "keys", []records.Message{rec(nil, []byte("v"))}, kerr.InvalidRecord, []fail{{NullRefused, "key", "key: null"}}},
		{"key id", "keyid", []records.Message{rec(prefixed(3, "k"), nil), rec(nil, nil)}, 0, nil},
		{"key wrong id", "keyid", []records.Message{rec(prefixed(4, "k"), nil)}, kerr.InvalidRecord, []fail{{IDNotAllowed, "key", "key: schema id 4"}}},
		{"key no prefix", "keyid", []records.Message{rec([]byte("k"), nil, "schema.id", "3")}, kerr.InvalidRecord,
			[]fail{{NoSchema, "key", "key: no schema reference (no schema-id prefix in the key)"}}},
		{"key framed json", "keyjson", []records.Message{rec(prefixed(1, `{"id":1}`), nil)}, 0, nil},
		{"key framed bad json", "keyjson", []records.Message{rec(prefixed(1, `{"id":1`), nil)}, kerr.InvalidRecord, []fail{{InvalidJSON, "key", "key: not JSON"}}},
		{"legacy form", "legacy", []records.Message{rec(nil, prefixed(2, "x"))}, kerr.InvalidRecord, []fail{{IDNotAllowed, "value", "schema id 2"}}},
		{"warn reports json", "w.x", []records.Message{rec(nil, []byte("nope")), rec(nil, j)}, 0, []fail{{InvalidJSON, "value", "not JSON"}}},
	} {
		for _, c := range []records.Compression{records.CompressionNone, records.CompressionLZ4} {
			recs := batch(t, c, append([]records.Message(nil), tc.msgs...)...)
			v := p.NewChecker().Check(tc.topic, 0, recs)
			if v.Accept != (tc.code == 0) || v.ErrorCode != int16(tc.code) || v.Records != len(tc.msgs) || v.Err != nil {
				t.Errorf("%s/%s: accept %v code %d records %d err %v, want code %d (%s)", tc.name, c, v.Accept, v.ErrorCode, v.Records, v.Err, tc.code, v.Message())
			}
			if len(v.Failures) != len(tc.fails) {
				t.Errorf("%s/%s: failures %+v, want %+v", tc.name, c, v.Failures, tc.fails)
				continue
			}
			for i, f := range tc.fails {
				got := v.Failures[i]
				if got.Reason != f.reason || got.Field != f.field || !strings.Contains(got.Detail, f.detail) {
					t.Errorf("%s/%s: failure %d is %s %s %q, want %s %s containing %q", tc.name, c, i, got.Reason, got.Field, got.Detail, f.reason, f.field, f.detail)
				}
			}
		}
	}
}

func TestValidationConfig(t *testing.T) {
	// The top-level fields and "value" say the same.
	a, err := Parse([]byte(`{"rules":[{"topic":"t","policy":"enforce","schema_ids":[1],"versions":[2]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse([]byte(`{"rules":[{"topic":"t","policy":"enforce","value":{"schema_ids":[1],"versions":[2]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if ra, rb := a.RuleFor("t"), b.RuleFor("t"); !equalParts(ra.value, rb.value) || ra.key.checks() || ra.code != 87 || rb.code != 87 {
		t.Errorf("top-level %+v vs value %+v", ra.value, rb.value)
	}
	// Config round-trips through New and keeps its own copies.
	c := b.Config()
	c.Rules[0].Value.SchemaIDs[0] = 99
	if b.RuleFor("t").value.ids[0] != 1 || b.Config().Rules[0].Value.SchemaIDs[0] != 1 {
		t.Error("Config shares the policy's slices")
	}
	p2, err := New(b.Config())
	if err != nil || !equalParts(p2.RuleFor("t").value, b.RuleFor("t").value) {
		t.Errorf("New(Config()): %v", err)
	}
	d, err := Parse([]byte(`{"error":"POLICY_VIOLATION","default":"enforce","rules":[{"topic":"x","policy":"warn","error":"INVALID_RECORD"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if d.RuleFor("other").code != 44 || d.RuleFor("x").code != 87 {
		t.Errorf("codes: default %d, x %d", d.RuleFor("other").code, d.RuleFor("x").code)
	}
	for _, tc := range []struct{ json, path, want string }{
		{`{"rules":[{"topic":"a","policy":"warn","schema_ids":[1],"value":{"json":true}}]}`, "$.rules[0].value", "give them in value or at the top level"},
		{`{"rules":[{"topic":"a","policy":"warn","value":{"schema_ids":[1,-1]}}]}`, "$.rules[0].value.schema_ids[1]", "-1 is negative"},
		{`{"rules":[{"topic":"a","policy":"warn","value":{"require_schema":false,"versions":[1]}}]}`, "$.rules[0].value.require_schema", "need a schema reference"},
		{`{"rules":[{"topic":"a","policy":"warn","key":{"require_version":true}}]}`, "$.rules[0].key.require_version", "carries no version"},
		{`{"rules":[{"topic":"a","policy":"warn","key":{"versions":[1]}}]}`, "$.rules[0].key.versions", "carries no version"},
		{`{"rules":[{"topic":"a","policy":"warn","key":{"null":"never"}}]}`, "$.rules[0].key.null", `unknown null policy "never"`},
		{`{"rules":[{"topic":"a","policy":"warn","key":{"jsn":true}}]}`, "$.rules[0].key.jsn", "unknown key"},
		{`{"rules":[{"topic":"a","policy":"warn","value":{"json":1}}]}`, "$.rules[0].value.json", "want boolean"},
		{`{"rules":[{"topic":"a","policy":"warn","error":"CORRUPT_MESSAGE"}]}`, "$.rules[0].error", "want INVALID_RECORD or POLICY_VIOLATION"},
		{`{"error":"X"}`, "$.error", "unknown error"},
	} {
		_, err := Parse([]byte(tc.json))
		ce, ok := err.(*ConfigError)
		if !ok || ce.Path != tc.path || !strings.Contains(ce.Msg, tc.want) || ce.Offset <= 0 {
			t.Errorf("%s: %v, want %s: ...%s... with an offset", tc.json, err, tc.path, tc.want)
		}
	}
	if _, err := New(Config{Rules: []Rule{{Topic: "a", Mode: Warn, Error: ErrorCode(kerr.CorruptMessage)}}}); err == nil || !strings.Contains(err.Error(), "$.rules[0].error") {
		t.Errorf("New with error 2: %v", err)
	}
	if _, err := New(Config{Rules: []Rule{{Topic: "a", Mode: Warn, Key: &Check{Null: 5}}}}); err == nil || !strings.Contains(err.Error(), "$.rules[0].key.null") {
		t.Errorf("New with null 5: %v", err)
	}
	// encoding/json writes the configuration in the form Parse reads.
	rt := Config{Error: PolicyViolation, Rules: []Rule{{Topic: "a", Mode: Enforce, Error: InvalidRecord,
		Value: &Check{JSON: true, Null: RefuseNull, RequireSchema: new(bool)}, Key: &Check{UniqueKeys: true}}}}
	text, err := json.Marshal(rt)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(text)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	if r := back.RuleFor("a"); r.code != 87 || !r.value.json || !r.value.refuseNull || r.value.schema || !r.key.unique || back.cfg.Error != PolicyViolation {
		t.Errorf("%s read back as %+v", text, r)
	}
}

func equalParts(a, b part) bool {
	return a.schema == b.schema && a.requireVersion == b.requireVersion && a.json == b.json && a.unique == b.unique &&
		a.refuseNull == b.refuseNull && slicesEqual(a.ids, b.ids) && slicesEqual(a.versions, b.versions)
}

func slicesEqual(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzCheckValidation holds the verdicts of the validation rules to their
// contract on any records: an accepted partition under enforce has no failure, a
// rejected one has its rule's error (or the decoding errors'), every failure names
// its side and a validation reason.
func FuzzCheckValidation(f *testing.F) {
	f.Add(batch(f, records.CompressionNone, rec([]byte(`{"k":1}`), []byte(`{"a":1,"a":2}`)), rec(nil, nil)))
	f.Add(batch(f, records.CompressionLZ4, rec(prefixed(3, "[]"), prefixed(1, `{"x":"\u00e9"}`))))
	p, err := Parse([]byte(`{"default":"enforce","max_decompressed_bytes":1048576,"error":"POLICY_VIOLATION","rules":[
		{"topic":"j","policy":"enforce","value":{"require_schema":false,"unique_keys":true,"null":"refuse"},"key":{"json":true,"null":"refuse"},"error":"INVALID_RECORD"},
		{"topic":"f","policy":"enforce","value":{"schema_ids":[1],"json":true},"key":{"require_schema":true,"unique_keys":true}}]}`))
	if err != nil {
		f.Fatal(err)
	}
	c := p.NewChecker()
	f.Fuzz(func(t *testing.T, recs []byte) {
		for _, topic := range []string{"j", "f", "t"} {
			v := c.Check(topic, 0, recs)
			if v.Accept && (v.Err != nil || v.Failed > 0) {
				t.Fatalf("%s: accepted under enforce with err %v, %d failed", topic, v.Err, v.Failed)
			}
			want := int16(kerr.PolicyViolation)
			if topic == "j" {
				want = int16(kerr.InvalidRecord)
			}
			if !v.Accept && v.Err == nil && v.ErrorCode != want {
				t.Fatalf("%s: rejected with %d, want %d", topic, v.ErrorCode, want)
			}
			if !v.Accept && v.Err != nil && v.ErrorCode != int16(kerr.InvalidRecord) && v.ErrorCode != int16(kerr.CorruptMessage) {
				t.Fatalf("%s: undecodable records rejected with %d", topic, v.ErrorCode)
			}
			for _, fl := range v.Failures {
				if (fl.Field != "key" && fl.Field != "value") || fl.Reason == OK || fl.Reason == Undecodable || !strings.HasPrefix(fl.Detail, fl.Field+": ") && fl.Field == "key" {
					t.Fatalf("%s: failure %+v", topic, fl)
				}
			}
		}
	})
}

func BenchmarkValidJSON(b *testing.B) {
	doc := []byte(`{"id":12345,"name":"caf\u00e9 ☕","tags":["a","b","c"],"price":12.5e-1,"nested":{"ok":true,"none":null,"list":[1,2,3,{"x":-0.5}]}}`)
	for i := 0; len(doc) < 1024; i++ {
		doc = append(doc[:len(doc)-1], []byte(`,"key`+strconv.Itoa(i)+`":[1,"two",{"three":3}]}`)...)
	}
	if err := ValidJSON(doc, true); err != nil {
		b.Fatal(err)
	}
	var v jsonValidator
	for _, bc := range []struct {
		name string
		fn   func() bool
	}{
		{"kwire", func() bool { return v.check(doc, false) == nil }},
		{"kwire-unique", func() bool { return v.check(doc, true) == nil }},
		{"encoding-json", func() bool { return json.Valid(doc) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if !bc.fn() {
					b.Fatal("invalid")
				}
			}
		})
	}
}
