package transcode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const tenantEntities = 1<<EntityTopicName | 1<<EntityGroupID | 1<<EntityTransactionalID

// entityPaths lists the JSON paths of the message's entity strings (of the kinds in
// mask), from the Doc.
func entityPaths(t *testing.T, src []byte, name string, v int16, mask uint32) map[string]bool {
	t.Helper()
	var d Doc
	if err := d.Parse(src, name, v); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for i := 1; i < len(d.nodes); i++ {
		p := &d.nodes[i]
		if p.kind == dScalar && p.f != nil && p.f.typ == tString && p.f.entity != eNone && mask&(1<<p.f.entity) != 0 {
			if _, null := d.Str(Node(i)); !null {
				out[d.Path(Node(i))] = true
			}
		}
	}
	return out
}

// flatten maps every leaf of decoded JSON to its path ("topics[0].name").
func flatten(v any, path string, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(e, p, out)
		}
	case []any:
		for i, e := range x {
			flatten(e, fmt.Sprintf("%s[%d]", path, i), out)
		}
	default:
		b, _ := json.Marshal(x)
		out[path] = string(b)
	}
}

func jsonLeaves(t *testing.T, src []byte, name string, v int16) map[string]string {
	t.Helper()
	j, err := AppendJSON(nil, name, v, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(j, &x); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	flatten(x, "", out)
	return out
}

// Every request and response vector of every api and version: prefixing the topic
// names, group ids and transactional ids changes exactly those values (each one, and
// nothing else), and stripping the prefix again gives the original bytes.
func TestRenameEveryVector(t *testing.T) {
	files, _ := filepath.Glob("../../conformance/vectors/kafka-clients-*.jsonl")
	if len(files) == 0 {
		t.Fatal("no vectors")
	}
	prefix := func(_ uint8, s string) (string, bool) { return "team-a." + s, true }
	strip := func(_ uint8, s string) (string, bool) { return strings.CutPrefix(s, "team-a.") }
	messages, renamed := map[string]bool{}, 0
	kinds := map[string]int{}
	for _, file := range files {
		for _, vec := range readVectorFile(t, file) {
			m := lookup(vec.Name)
			if m == nil || (m.kind != kindRequest && m.kind != kindResponse) {
				continue
			}
			if err := (&Doc{}).Parse(vec.Bytes, vec.Name, vec.Version); err != nil {
				continue // a version this build's schema refuses (superseded)
			}
			want := entityPaths(t, vec.Bytes, vec.Name, vec.Version, tenantEntities)
			out, n, err := Rename(nil, vec.Bytes, vec.Name, vec.Version, tenantEntities, prefix)
			if err != nil {
				// A name too long for its field once prefixed is the one refusal.
				if strings.Contains(err.Error(), "too long") {
					continue
				}
				t.Fatalf("%s: %v", vec.ID, err)
			}
			if n != len(want) {
				t.Fatalf("%s: renamed %d, the message holds %d entity names", vec.ID, n, len(want))
			}
			before, after := jsonLeaves(t, vec.Bytes, vec.Name, vec.Version), jsonLeaves(t, out, vec.Name, vec.Version)
			if len(before) != len(after) {
				t.Fatalf("%s: %d leaves, %d after the rename", vec.ID, len(before), len(after))
			}
			for path, b := range before {
				a := after[path]
				switch {
				case want[path] && a == b:
					t.Fatalf("%s: %s (an entity) unchanged: %s", vec.ID, path, a)
				case !want[path] && a != b:
					t.Fatalf("%s: %s (no entity) changed: %s -> %s", vec.ID, path, b, a)
				case want[path] && a != `"team-a.`+b[1:]:
					t.Fatalf("%s: %s became %s, want the prefix before %s", vec.ID, path, a, b)
				}
			}
			back, n2, err := Rename(nil, out, vec.Name, vec.Version, tenantEntities, strip)
			if err != nil || n2 != n || !bytes.Equal(back, vec.Bytes) {
				t.Fatalf("%s: prefix then strip: %v, %d of %d names, identical %v", vec.ID, err, n2, n, bytes.Equal(back, vec.Bytes))
			}
			messages[vec.Name] = true
			renamed += n
			for p := range want {
				kinds[vec.Name+" "+p[strings.LastIndexByte(p, '.')+1:]]++
			}
		}
	}
	if len(messages) < 150 || renamed < 1000 {
		t.Errorf("only %d messages and %d names", len(messages), renamed)
	}
	var names []string
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	t.Logf("%d messages, %d names renamed and restored, %d (message, field) pairs", len(messages), renamed, len(names))
}

// A Renamer that refuses a name (a tenant naming another tenant's topic) refuses the
// message.
func TestRenameRefused(t *testing.T) {
	body, err := AppendWire(nil, "DeleteTopicsRequest", 5, []byte(`{"topicNames":["team-a.x","team-b.y"],"timeoutMs":1}`))
	if err != nil {
		t.Fatal(err)
	}
	strip := func(_ uint8, s string) (string, bool) { return strings.CutPrefix(s, "team-a.") }
	if _, _, err := Rename(nil, body, "DeleteTopicsRequest", 5, tenantEntities, strip); err != ErrRenameRefused {
		t.Fatalf("got %v", err)
	}
	// Only the kinds in the mask.
	out, n, err := Rename(nil, body, "DeleteTopicsRequest", 5, 1<<EntityGroupID, strip)
	if err != nil || n != 0 || !bytes.Equal(out, body) {
		t.Fatalf("a group-id rename touched topic names: %v %d", err, n)
	}
}

// FuzzRename: any message bytes at any version: no panic; a message that parses is
// renamed and restored to the same bytes, and no name escapes the prefix.
func FuzzRename(f *testing.F) {
	t := &testing.T{}
	files, _ := filepath.Glob("../../conformance/vectors/kafka-clients-4.4.0.jsonl")
	for _, file := range files {
		for i, vec := range readVectorFile(t, file) {
			if i%11 == 0 {
				f.Add(vec.Name, vec.Version, vec.Bytes)
			}
		}
	}
	f.Fuzz(func(t *testing.T, name string, v int16, src []byte) {
		m := lookup(name)
		if m == nil {
			return
		}
		seen := 0
		out, n, err := Rename(nil, src, name, v, tenantEntities, func(_ uint8, s string) (string, bool) { seen++; return "p." + s, true })
		if err != nil {
			return
		}
		if n != seen {
			t.Fatalf("%d renamed, %d seen", n, seen)
		}
		// Every entity name of the result carries the prefix.
		if _, _, err := Rename(nil, out, name, v, tenantEntities, func(_ uint8, s string) (string, bool) { return s, strings.HasPrefix(s, "p.") }); err != nil {
			t.Fatalf("a name without the prefix after the rename: %v", err)
		}
		back, _, err := Rename(nil, out, name, v, tenantEntities, func(_ uint8, s string) (string, bool) { return strings.CutPrefix(s, "p.") })
		if err != nil {
			t.Fatalf("strip: %v", err)
		}
		var d Doc
		if d.Parse(src, name, v) == nil {
			want, _ := d.AppendTo(nil)
			if !bytes.Equal(back, want) {
				t.Fatal("prefix then strip changed the message")
			}
		}
	})
}

// Filter drops the array elements whose names a tenant may not see: on every vector,
// names chosen by a hash are dropped with their element; the message still decodes,
// holds none of them, and keeps every other name; a dropped name outside any array
// refuses the message.
func TestFilterEveryVector(t *testing.T) {
	files, _ := filepath.Glob("../../conformance/vectors/kafka-clients-4.4.0.jsonl")
	odd := func(s string) bool {
		h := uint32(2166136261)
		for i := 0; i < len(s); i++ {
			h = (h ^ uint32(s[i])) * 16777619
		}
		return h%2 == 1
	}
	dropped, refused, messages := 0, 0, 0
	for _, file := range files {
		for _, vec := range readVectorFile(t, file) {
			m := lookup(vec.Name)
			if m == nil || (m.kind != kindRequest && m.kind != kindResponse) || (&Doc{}).Parse(vec.Bytes, vec.Name, vec.Version) != nil {
				continue
			}
			out, _, n, err := Filter(nil, vec.Bytes, vec.Name, vec.Version, tenantEntities, func(_ uint8, s string) (string, Verdict) {
				if odd(s) {
					return s, Drop
				}
				return s, Keep
			})
			if err == ErrRenameRefused {
				refused++
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", vec.ID, err)
			}
			if _, err := AppendJSON(nil, vec.Name, vec.Version, out, nil); err != nil {
				t.Fatalf("%s: the filtered message does not decode: %v", vec.ID, err)
			}
			// None of the dropped names is left.
			if _, _, err := Rename(nil, out, vec.Name, vec.Version, tenantEntities, func(_ uint8, s string) (string, bool) { return s, !odd(s) }); err != nil {
				t.Fatalf("%s: a dropped name is still there", vec.ID)
			}
			if n == 0 && !bytes.Equal(out, vec.Bytes) {
				t.Fatalf("%s: nothing dropped, but the message changed", vec.ID)
			}
			dropped += n
			messages++
		}
	}
	if dropped < 100 || refused == 0 {
		t.Errorf("dropped %d elements, refused %d messages", dropped, refused)
	}
	t.Logf("%d messages filtered, %d elements dropped, %d messages refused (a dropped name outside any array)", messages, dropped, refused)
}

// A compact string whose length is written in a longer varint than it needs ("\x80\x00"
// for 0) is null to Str as it is to Parse, and Filter leaves it null: found by
// codec/tenant's FuzzTenant, which saw such a name prefixed.
func TestNonCanonicalNullString(t *testing.T) {
	body := []byte("\x020000000000000000\x80\x00\x0000\x00") // Metadata v11: one topic, id, name
	var d Doc
	if err := d.Parse(body, "MetadataRequest", 11); err != nil {
		t.Fatal(err)
	}
	name := d.Field(d.First(d.Field(d.Root(), "topics")), "name")
	if _, null := d.Str(name); !null || !d.IsNull(name) {
		t.Fatal("a null name in a two-byte varint reads as a string")
	}
	out, n, err := Rename(nil, body, "MetadataRequest", 11, tenantEntities, func(_ uint8, s string) (string, bool) { return "p." + s, true })
	if err != nil || n != 0 || !bytes.Equal(out, body) {
		t.Fatalf("renamed %d: %q, %v", n, out, err)
	}
}
