package conformance

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kwire/kwire/codec"
)

const vectorDir = "vectors"

// Every valid version of every message has the default instance and 8 random ones; a
// flexible version also has two instances carrying unknown tagged fields.
const (
	perVersion         = 1 + 8
	perFlexibleVersion = perVersion + 2
)

var (
	loadOnce sync.Once
	loaded   []Release
	loadErr  error
)

// releases loads the vectors of every release the codec is generated from.
func releases(t testing.TB) []Release {
	t.Helper()
	loadOnce.Do(func() { loaded, loadErr = LoadReleases(vectorDir) })
	if loadErr != nil {
		t.Fatalf("loading vectors (regenerate with `make vectors`): %v", loadErr)
	}
	return loaded
}

// TestKafkaVectors runs the three comparisons on every vector that kafka-clients wrote and
// prints the coverage table.
func TestKafkaVectors(t *testing.T) {
	for _, rel := range releases(t) {
		t.Run(rel.Name, func(t *testing.T) {
			r := NewReport(rel.Name, rel.Manifest)
			source := "kafka-clients " + rel.Name
			for _, v := range rel.Vectors {
				if v.Source != source {
					t.Errorf("vector %s: source %q, want %q", v.ID, v.Source, source)
				}
				r.Add(v)
			}
			t.Logf("\n%s", r.Table())
			t.Logf("per message:\n%s", r.Detail())
			for _, m := range missing(r) {
				t.Errorf("coverage: %s", m)
			}
			if len(r.Failures) > 0 {
				const show = 60
				var b strings.Builder
				for i, f := range r.Failures {
					if i == show {
						fmt.Fprintf(&b, "... and %d more\n", len(r.Failures)-show)
						break
					}
					b.WriteString(f.Error())
					b.WriteByte('\n')
				}
				t.Errorf("%d of %d vectors failed (%d failed comparisons), by message and version:\n%s\nfirst failures:\n%s",
					r.FailedVectors(), r.Vectors, len(r.Failures), r.FailureSummary(), b.String())
			}
		})
	}
}

// missing applies the per-version minimums, stricter for flexible versions.
func missing(r *Report) []string {
	out := r.Missing(perVersion)
	for _, m := range r.Manifest.Messages {
		if m.MinVersion < 0 || m.FlexibleMin < 0 {
			continue
		}
		s := r.perMsg[m.Kind+" "+m.Name]
		for v := max(m.MinVersion, m.FlexibleMin); v <= m.MaxVersion; v++ {
			if s != nil && s.versions[v] >= perVersion && s.versions[v] < perFlexibleVersion {
				out = append(out, fmt.Sprintf("%s %s v%d (flexible): %d vectors, want >= %d",
					m.Kind, m.Name, v, s.versions[v], perFlexibleVersion))
			}
		}
	}
	return out
}

// TestManifestCoversCodec: every api key kafka-clients lists for a release with valid
// versions is one kwire knows, in every one of those versions.
func TestManifestCoversCodec(t *testing.T) {
	for _, rel := range releases(t) {
		for _, m := range rel.Manifest.Messages {
			if m.MinVersion < 0 {
				continue
			}
			km, _ := Lookup(m.Name, m.APIKey, m.Kind)
			if km == nil {
				t.Errorf("%s: kwire has no %s %s", rel.Name, m.Kind, m.Name)
				continue
			}
			info := km.Info()
			if !info.ValidVersion(m.MinVersion) || !info.ValidVersion(m.MaxVersion) {
				t.Errorf("%s: %s is valid in v%d-%d, kwire's %s in v%d-%d", rel.Name, m.Name, m.MinVersion,
					m.MaxVersion, info.Name, info.MinVersion, info.MaxVersion)
			}
			if info.Flexible(m.MaxVersion) != (m.FlexibleMin >= 0 && m.MaxVersion >= m.FlexibleMin) {
				t.Errorf("%s: %s v%d flexibility differs (Kafka's first flexible version %d, kwire's %d)",
					rel.Name, m.Name, m.MaxVersion, m.FlexibleMin, info.FlexibleMin)
			}
		}
	}
}

// cleanVectors returns vectors that pass all three comparisons, at most n, preferring
// variety (one per message).
func cleanVectors(t *testing.T, n int) []Vector {
	var out []Vector
	seen := map[string]bool{}
	for _, rel := range releases(t) {
		for _, v := range rel.Vectors {
			if len(out) == n {
				return out
			}
			if seen[v.Name] || len(v.Bytes) < 4 || !strings.Contains(v.ID, "random") {
				continue
			}
			if len(CheckVector(v)) == 0 {
				seen[v.Name] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// TestBrokenByteIsReported flips one byte of copies of real vectors and checks that the
// runner fails and that its message names the vector id, a JSON field path and a byte offset.
func TestBrokenByteIsReported(t *testing.T) {
	vs := cleanVectors(t, 40)
	if len(vs) < 10 {
		t.Fatalf("only %d vectors pass cleanly; cannot run the corruption test", len(vs))
	}
	flipped := 0
	defer func() { t.Logf("flipped a byte in %d copies of %d vectors", flipped, len(vs)) }()
	for _, orig := range vs {
		for _, where := range []int{len(orig.Bytes) / 2, len(orig.Bytes) - 1} {
			flipped++
			v := orig
			v.Bytes = bytes.Clone(orig.Bytes)
			v.Bytes[where] ^= 0x01
			fs := CheckVector(v)
			if len(fs) == 0 {
				t.Errorf("vector %s with byte %d flipped: the runner found no failure", v.ID, where)
				continue
			}
			named := false
			if flipped == 1 {
				t.Logf("example, %s with byte %d flipped:\n%s", orig.ID, where, fs[0].Error())
			}
			for _, f := range fs {
				msg := f.Error()
				if !strings.Contains(msg, v.ID) {
					t.Errorf("failure message does not name the vector %s: %s", v.ID, msg)
				}
				if f.Path != "" && strings.HasPrefix(f.Path, "$") && f.Offset >= 0 &&
					strings.Contains(msg, "field "+f.Path) && strings.Contains(msg, fmt.Sprintf("offset %d", f.Offset)) {
					named = true
				}
			}
			if !named {
				var all []string
				for _, f := range fs {
					all = append(all, f.Error())
				}
				t.Errorf("vector %s with byte %d flipped: no failure names both a field path and an offset:\n%s",
					v.ID, where, strings.Join(all, "\n"))
			}
		}
	}
}

// TestBrokenJSONIsReported changes one value of a vector's json: the decode and encode
// comparisons must both fail and name the field.
func TestBrokenJSONIsReported(t *testing.T) {
	vs := cleanVectors(t, 40)
	changed := 0
	for _, orig := range vs {
		// Find a top-level int field by name in the JSON text and change its value.
		i := bytes.Index(orig.JSON, []byte(`":0`))
		if i < 0 {
			continue
		}
		v := orig
		v.JSON = append(append(bytes.Clone(orig.JSON[:i]), `":7`...), orig.JSON[i+3:]...)
		if d, err := JSONDiff(orig.JSON, v.JSON); err != nil || d == nil {
			continue // the change made invalid JSON or hit a string
		}
		changed++
		fs := CheckVector(v)
		checks := map[Check]bool{}
		for _, f := range fs {
			checks[f.Check] = true
			if !strings.Contains(f.Error(), v.ID) || f.Path == "" {
				t.Errorf("failure does not name the vector and a path: %s", f.Error())
			}
		}
		if !checks[CheckDecode] || !checks[CheckEncode] {
			t.Errorf("vector %s with its json changed: want decode and encode failures, got %v", v.ID, fs)
		}
	}
	if changed < 5 {
		t.Fatalf("only %d vectors could be changed", changed)
	}
}

func TestJSONDiff(t *testing.T) {
	cases := []struct {
		a, b string
		path string // "" means equal
	}{
		{`{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, ""},
		{`{"a":9007199254740993}`, `{"a":9007199254740992}`, "$.a"},
		{`{"a":"9007199254740993"}`, `{"a":"9007199254740993"}`, ""},
		{`{"x":-0.0}`, `{"x":0}`, "$.x"},
		{`{"x":-0.0}`, `{"x":-0}`, ""},
		{`{"x":1.0E21}`, `{"x":1e+21}`, ""},
		{`{"x":0.1}`, `{"x":0.10000000000000002}`, "$.x"},
		{`{"a":{"b":[{"c":null}]}}`, `{"a":{"b":[{"c":""}]}}`, "$.a.b[0].c"},
		{`{"a":[1]}`, `{"a":[1,2]}`, "$.a"},
		{`{"a":1}`, `{"a":1,"b":2}`, "$.b"},
		{`{"a":true}`, `{"a":"true"}`, "$.a"},
	}
	for _, c := range cases {
		d, err := JSONDiff([]byte(c.a), []byte(c.b))
		if err != nil {
			t.Fatalf("%s vs %s: %v", c.a, c.b, err)
		}
		got := ""
		if d != nil {
			got = d.Path
		}
		if got != c.path {
			t.Errorf("%s vs %s: diff at %q, want %q", c.a, c.b, got, c.path)
		}
	}
}

func TestDecodeVectorsRejectsBadFiles(t *testing.T) {
	good := `{"id":"x","name":"RequestHeader","apiKey":-1,"kind":"header","version":1,"source":"s","json":{},"bytes":"AA=="}`
	if _, err := DecodeVectors(strings.NewReader(good+"\n"), "t"); err != nil {
		t.Fatalf("good line: %v", err)
	}
	for _, bad := range []string{
		good + "\n" + good,                              // duplicate id
		strings.Replace(good, `"id":"x",`, "", 1),       // no id
		strings.Replace(good, `"AA=="`, `"A"`, 1),       // bad base64
		strings.Replace(good, `"source"`, `"sauce"`, 1), // unknown key
	} {
		if _, err := DecodeVectors(strings.NewReader(bad), "t"); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// TestSupersededNeedsUnstable: a failing vector is excused only when kwire declares its
// version superseded for the release and the release itself marks that version unstable.
func TestSupersededNeedsUnstable(t *testing.T) {
	var rel *Release
	for i := range releases(t) {
		if loaded[i].Name == "3.9.2" {
			rel = &loaded[i]
		}
	}
	if rel == nil {
		t.Skip("no 3.9.2 vectors")
	}
	var target []Vector
	for _, v := range rel.Vectors {
		km, _ := Lookup(v.Name, v.APIKey, v.Kind)
		if km == nil {
			continue
		}
		for _, s := range km.Info().Superseded {
			if s.Release == rel.Name && s.Version == v.Version && len(CheckVector(v)) > 0 {
				target = append(target, v)
			}
		}
	}
	if len(target) == 0 {
		t.Skip("no failing vector at a superseded version: nothing to excuse")
	}
	// With the real manifest the failures are excused...
	r := NewReport(rel.Name, rel.Manifest)
	for _, v := range target {
		r.Add(v)
	}
	if len(r.Failures) != 0 || len(r.Excused) == 0 {
		t.Fatalf("real manifest: %d failures, %d excused; want 0 and > 0", len(r.Failures), len(r.Excused))
	}
	// ...but not when the release does not mark the version unstable.
	m := *rel.Manifest
	m.Messages = append([]ManifestMessage(nil), m.Messages...)
	for i := range m.Messages {
		m.Messages[i].UnstableVersion = -1
	}
	r = NewReport(rel.Name, &m)
	for _, v := range target {
		r.Add(v)
	}
	if r.FailedVectors() != len(target) || len(r.Excused) != 0 {
		t.Fatalf("stable manifest: %d failing vectors, %d excused; want %d and 0", r.FailedVectors(), len(r.Excused), len(target))
	}
}

// TestRenamesAreDeclared: the vector keys compared under a rename are exactly those
// kwire declares; an undeclared rename would still fail.
func TestRenamesAreDeclared(t *testing.T) {
	w := `{"a":1,"t":[{"p":[{"old":2}]}]}`
	g := `{"a":1,"t":[{"p":[{"new":2}]}]}`
	d, err := jsonDiffRenamed([]byte(w), []byte(g), nil)
	if err != nil || d == nil {
		t.Fatalf("without the rename: diff %v, err %v; want a difference", d, err)
	}
	d, err = jsonDiffRenamed([]byte(w), []byte(g), []codec.FieldRename{{Path: "t[].p[]", Old: "old", New: "new"}})
	if err != nil || d != nil {
		t.Fatalf("with the rename: diff %v, err %v; want none", d, err)
	}
}
