// Package abiconf runs the conformance vectors (conformance/vectors) through an
// implementation of kwire's flat ABI: the abi package itself, the wasm module under a
// runtime (wazero, wasmtime), or anything else that implements Host. It makes the same
// three comparisons as the native runner (package conformance) and prints the same
// coverage table, but every byte goes through the ABI:
//
//   - decode: kw_decode_message(bytes) -> JSON, compared semantically with the vector's
//     json (renamed fields and superseded versions handled as the native runner does,
//     from the ABI's own catalogue);
//   - encode: kw_encode_message(json) -> bytes, compared with the vector's bytes;
//   - round trip: kw_encode_message(kw_decode_message(bytes)) -> bytes, compared with
//     the vector's bytes: what a host sees is JSON, so this also proves the JSON form
//     lossless.
package abiconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/conformance"
)

// Host is an implementation of the ABI under test. Errors of kw_ calls are *CallError.
type Host interface {
	DecodeMessage(name string, version int16, in []byte) ([]byte, error)
	EncodeMessage(name string, version int16, json []byte) ([]byte, error)
	Catalogue() ([]byte, error)
}

// CallError is a kw_ call that returned a negative status, with kw_last_error_json.
type CallError struct {
	Status int32
	Text   string
	JSON   []byte
}

func (e *CallError) Error() string { return fmt.Sprintf("status %d: %s", e.Status, e.Text) }

// Where returns the path and offset of the error JSON ("" and -1 when absent).
func (e *CallError) Where() (path string, offset int) {
	var d struct {
		Path   string `json:"path"`
		Offset *int   `json:"offset"`
	}
	offset = -1
	if json.Unmarshal(e.JSON, &d) == nil {
		path = d.Path
		if d.Offset != nil {
			offset = *d.Offset
		}
	}
	return path, offset
}

// Catalogue is the parsed kw_api_catalogue.
type Catalogue struct {
	ABIVersion   string   `json:"abiVersion"`
	SpecReleases []string `json:"specReleases"`
	APIs         []struct {
		APIKey   int16  `json:"apiKey"`
		Name     string `json:"name"`
		Request  string `json:"request"`
		Response string `json:"response"`
	} `json:"apis"`
	Messages []CatalogueMessage `json:"messages"`
	byName   map[string]*CatalogueMessage
}

// CatalogueMessage is one message of the catalogue.
type CatalogueMessage struct {
	Name       string `json:"name"`
	APIKey     int16  `json:"apiKey"`
	Kind       string `json:"kind"`
	MinVersion int16  `json:"minVersion"`
	MaxVersion int16  `json:"maxVersion"`
	Renames    []struct {
		Path string `json:"path"`
		Old  string `json:"old"`
		New  string `json:"new"`
	} `json:"renames"`
	Superseded []struct {
		Release string `json:"release"`
		Version int16  `json:"version"`
	} `json:"superseded"`
}

// LoadCatalogue reads the catalogue through the host.
func LoadCatalogue(h Host) (*Catalogue, error) {
	b, err := h.Catalogue()
	if err != nil {
		return nil, fmt.Errorf("kw_api_catalogue: %w", err)
	}
	var c Catalogue
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("kw_api_catalogue returned bad JSON: %w", err)
	}
	c.byName = map[string]*CatalogueMessage{}
	for i := range c.Messages {
		c.byName[c.Messages[i].Name] = &c.Messages[i]
	}
	return &c, nil
}

// Lookup resolves a vector's message as the native runner does: by name, else (a
// request or response Kafka renamed) by api key and kind.
func (c *Catalogue) Lookup(name string, apiKey int16, kind string) (m *CatalogueMessage, alias bool) {
	if m := c.byName[name]; m != nil {
		return m, false
	}
	for _, a := range c.APIs {
		if a.APIKey != apiKey {
			continue
		}
		switch kind {
		case "request":
			return c.byName[a.Request], true
		case "response":
			return c.byName[a.Response], true
		}
	}
	return nil, false
}

// Release is one release's vectors and manifest.
type Release struct {
	Name     string
	Manifest *conformance.Manifest
	Vectors  []conformance.Vector
}

// LoadReleases reads the vectors of every release the codec is generated from, from dir
// (conformance/vectors).
func LoadReleases(dir string) ([]Release, error) {
	var out []Release
	for _, rel := range codec.SpecReleases {
		base := filepath.Join(dir, "kafka-clients-"+rel)
		m, err := conformance.ReadManifest(base + ".manifest.json")
		if err != nil {
			return nil, err
		}
		path := base + ".jsonl"
		if _, err := os.Stat(path); err != nil {
			path += ".gz"
		}
		vs, err := conformance.ReadVectors(path)
		if err != nil {
			return nil, err
		}
		out = append(out, Release{rel, m, vs})
	}
	return out, nil
}

// CheckVector runs the three comparisons through the host.
func CheckVector(h Host, cat *Catalogue, v conformance.Vector) []conformance.Failure {
	fail := func(c conformance.Check, path string, off int, format string, args ...any) conformance.Failure {
		return conformance.Failure{ID: v.ID, Check: c, Path: path, Offset: off, Detail: fmt.Sprintf(format, args...)}
	}
	m, _ := cat.Lookup(v.Name, v.APIKey, v.Kind)
	if m == nil {
		f := fail(conformance.CheckDecode, "", -1, "the ABI's catalogue has no message %s (api key %d, %s)", v.Name, v.APIKey, v.Kind)
		return []conformance.Failure{f, {ID: v.ID, Check: conformance.CheckEncode, Offset: -1, Detail: f.Detail},
			{ID: v.ID, Check: conformance.CheckRoundTrip, Offset: -1, Detail: f.Detail}}
	}
	if m.Kind != v.Kind || m.APIKey != v.APIKey {
		return []conformance.Failure{fail(conformance.CheckDecode, "", -1, "the ABI's %s is a %s with api key %d, the vector says %s with %d",
			m.Name, m.Kind, m.APIKey, v.Kind, v.APIKey)}
	}
	var out []conformance.Failure
	callFail := func(c conformance.Check, what string, err error) conformance.Failure {
		path, off := "", -1
		var ce *CallError
		if errors.As(err, &ce) {
			path, off = ce.Where()
			if path != "" && !strings.HasPrefix(path, "$") {
				path = "$." + path
			}
		}
		return fail(c, path, off, "%s: %v", what, err)
	}

	enc, encErr := h.EncodeMessage(m.Name, v.Version, v.JSON)

	// decode: bytes -> JSON through the ABI
	decoded, err := h.DecodeMessage(m.Name, v.Version, v.Bytes)
	if err != nil {
		decoded = nil
		out = append(out, callFail(conformance.CheckDecode, "kw_decode_message failed", err))
	} else if d, err := diffRenamed(v.JSON, decoded, m); err != nil {
		out = append(out, fail(conformance.CheckDecode, "", -1, "%v", err))
	} else if d != nil {
		off := -1
		if encErr == nil {
			off = firstDiff(enc, v.Bytes)
		}
		out = append(out, fail(conformance.CheckDecode, d.Path, off, "JSON differs: want %s, got %s", d.Want, d.Got))
	}

	// encode: json -> bytes through the ABI
	if encErr != nil {
		out = append(out, callFail(conformance.CheckEncode, "kw_encode_message failed", encErr))
	} else if !bytes.Equal(enc, v.Bytes) {
		off := firstDiff(enc, v.Bytes)
		out = append(out, fail(conformance.CheckEncode, pathOfBytes(h, m, v, enc), off,
			"the ABI encodes %d bytes, Kafka wrote %d; at the offset the ABI has %s, Kafka %s",
			len(enc), len(v.Bytes), byteAt(enc, off), byteAt(v.Bytes, off)))
	}

	// round trip: bytes -> JSON -> bytes, both through the ABI
	if decoded != nil {
		re, err := h.EncodeMessage(m.Name, v.Version, decoded)
		if err != nil {
			out = append(out, callFail(conformance.CheckRoundTrip, "kw_encode_message of the ABI's own JSON failed", err))
		} else if !bytes.Equal(re, v.Bytes) {
			off := firstDiff(re, v.Bytes)
			out = append(out, fail(conformance.CheckRoundTrip, pathOfBytes(h, m, v, re), off,
				"re-encoded %d bytes, input had %d; at the offset the ABI has %s, input %s",
				len(re), len(v.Bytes), byteAt(re, off), byteAt(v.Bytes, off)))
		}
	} else {
		out = append(out, fail(conformance.CheckRoundTrip, "", -1, "skipped: the bytes did not decode"))
	}
	return out
}

// pathOfBytes names the field where got differs from the vector: it decodes got through
// the ABI and compares JSON with the vector's.
func pathOfBytes(h Host, m *CatalogueMessage, v conformance.Vector, got []byte) string {
	gj, err := h.DecodeMessage(m.Name, v.Version, got)
	if err != nil {
		var ce *CallError
		if errors.As(err, &ce) {
			if p, _ := ce.Where(); p != "" {
				return "$." + p
			}
		}
		return ""
	}
	if d, err := diffRenamed(v.JSON, gj, m); err == nil && d != nil {
		return d.Path
	}
	return ""
}

// diffRenamed is conformance.JSONDiff after renaming, in want, the keys the catalogue
// declares renamed (the ABI writes the newer name).
func diffRenamed(want, got []byte, m *CatalogueMessage) (*conformance.Diff, error) {
	if len(m.Renames) > 0 {
		dec := json.NewDecoder(bytes.NewReader(want))
		dec.UseNumber()
		var w any
		if err := dec.Decode(&w); err != nil {
			return nil, fmt.Errorf("vector json: %w", err)
		}
		for _, r := range m.Renames {
			applyRename(w, splitPath(r.Path), r.Old, r.New)
		}
		b, err := json.Marshal(w)
		if err != nil {
			return nil, err
		}
		want = b
	}
	return conformance.JSONDiff(want, got)
}

// renamed reports whether the vector's json uses a key the catalogue declares renamed.
func renamed(v conformance.Vector, m *CatalogueMessage) bool {
	if len(m.Renames) == 0 {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(v.JSON))
	dec.UseNumber()
	var w any
	if dec.Decode(&w) != nil {
		return false
	}
	before, _ := json.Marshal(w)
	for _, r := range m.Renames {
		applyRename(w, splitPath(r.Path), r.Old, r.New)
	}
	after, _ := json.Marshal(w)
	return !bytes.Equal(before, after)
}

func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, ".")
}

// applyRename renames key old to new in the objects at path ("topics[]" steps into every
// element of the array under key topics).
func applyRename(v any, path []string, old, new string) {
	obj, ok := v.(map[string]any)
	if !ok {
		return
	}
	if len(path) == 0 {
		if val, has := obj[old]; has {
			if _, clash := obj[new]; !clash {
				delete(obj, old)
				obj[new] = val
			}
		}
		return
	}
	step, rest := path[0], path[1:]
	if key, isArr := strings.CutSuffix(step, "[]"); isArr {
		if arr, ok := obj[key].([]any); ok {
			for _, e := range arr {
				applyRename(e, rest, old, new)
			}
		}
		return
	}
	applyRename(obj[step], rest, old, new)
}

func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) == len(b) {
		return -1
	}
	return n
}

func byteAt(b []byte, off int) string {
	if off < 0 || off >= len(b) {
		return "end of data"
	}
	return fmt.Sprintf("0x%02x", b[off])
}

// Report accumulates one release's results.
type Report struct {
	Host     string
	Release  string
	Manifest *conformance.Manifest
	Vectors  int
	Failures []conformance.Failure
	Excused  []conformance.Failure
	Renamed  int

	failed  map[conformance.Check]map[string]bool
	perMsg  map[string]*msgStats
	aliases map[string]string
	idKind  map[string]string
	byName  map[string]conformance.ManifestMessage
	excused map[string]map[int16]int
}

type msgStats struct {
	kind     string
	versions map[int16]int
	failed   map[string]bool
}

// NewReport starts a report for a release run on the named host.
func NewReport(host string, rel Release) *Report {
	r := &Report{Host: host, Release: rel.Name, Manifest: rel.Manifest, failed: map[conformance.Check]map[string]bool{},
		perMsg: map[string]*msgStats{}, aliases: map[string]string{}, idKind: map[string]string{},
		byName: map[string]conformance.ManifestMessage{}, excused: map[string]map[int16]int{}}
	for _, mm := range rel.Manifest.Messages {
		r.byName[mm.Kind+" "+mm.Name] = mm
	}
	return r
}

// Add checks one vector through the host and records the outcome.
func (r *Report) Add(h Host, cat *Catalogue, v conformance.Vector) []conformance.Failure {
	r.Vectors++
	r.idKind[v.ID] = v.Kind
	key := v.Kind + " " + v.Name
	s := r.perMsg[key]
	if s == nil {
		s = &msgStats{kind: v.Kind, versions: map[int16]int{}, failed: map[string]bool{}}
		r.perMsg[key] = s
	}
	s.versions[v.Version]++
	m, alias := cat.Lookup(v.Name, v.APIKey, v.Kind)
	if alias && m != nil {
		r.aliases[v.Name] = m.Name
	}
	if m != nil && renamed(v, m) {
		r.Renamed++
	}
	fs := CheckVector(h, cat, v)
	if len(fs) > 0 && m != nil && r.superseded(m, v) {
		r.Excused = append(r.Excused, fs...)
		if r.excused[v.Name] == nil {
			r.excused[v.Name] = map[int16]int{}
		}
		r.excused[v.Name][v.Version]++
		return nil
	}
	for _, f := range fs {
		if r.failed[f.Check] == nil {
			r.failed[f.Check] = map[string]bool{}
		}
		r.failed[f.Check][f.ID] = true
		s.failed[f.ID] = true
	}
	r.Failures = append(r.Failures, fs...)
	return fs
}

func (r *Report) superseded(m *CatalogueMessage, v conformance.Vector) bool {
	declared := false
	for _, s := range m.Superseded {
		if s.Release == r.Release && s.Version == v.Version {
			declared = true
		}
	}
	mm, ok := r.byName[v.Kind+" "+v.Name]
	return declared && ok && mm.UnstableVersion == v.Version
}

// FailedVectors is the number of vectors with at least one failed comparison.
func (r *Report) FailedVectors() int {
	ids := map[string]bool{}
	for _, f := range r.Failures {
		ids[f.ID] = true
	}
	return len(ids)
}

// Table is the coverage table, in the native runner's format.
func (r *Report) Table() string {
	kinds := []string{"request", "response", "header", "data"}
	type totals struct {
		messages, removed, triples, vectors int
		perCheck                            map[conformance.Check]int
	}
	tot := map[string]*totals{}
	keys := map[string]map[int16]bool{}
	allKeys := map[int16]bool{}
	for _, k := range kinds {
		tot[k] = &totals{perCheck: map[conformance.Check]int{}}
		keys[k] = map[int16]bool{}
	}
	for _, m := range r.Manifest.Messages {
		t := tot[m.Kind]
		if t == nil {
			continue
		}
		if m.MinVersion < 0 {
			t.removed++
			continue
		}
		t.messages++
		if m.APIKey >= 0 {
			keys[m.Kind][m.APIKey] = true
			allKeys[m.APIKey] = true
		}
	}
	for _, s := range r.perMsg {
		if t := tot[s.kind]; t != nil {
			t.triples += len(s.versions)
			for _, n := range s.versions {
				t.vectors += n
			}
		}
	}
	for c, ids := range r.failed {
		for id := range ids {
			if t := tot[r.idKind[id]]; t != nil {
				t.perCheck[c]++
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "kafka-clients %s vs kwire through the ABI (%s)\n", r.Release, r.Host)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "kind\tmessages\tapi keys\t(api,version,kind)\tvectors\tdecode fail\tencode fail\tround-trip fail\t\n")
	all := &totals{perCheck: map[conformance.Check]int{}}
	for _, k := range kinds {
		t := tot[k]
		ak := "-"
		if k == "request" || k == "response" {
			ak = fmt.Sprint(len(keys[k]))
			if t.removed > 0 {
				ak += fmt.Sprintf(" (+%d removed)", t.removed)
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t\n", k, t.messages, ak, t.triples, t.vectors,
			t.perCheck[conformance.CheckDecode], t.perCheck[conformance.CheckEncode], t.perCheck[conformance.CheckRoundTrip])
		all.messages += t.messages
		all.triples += t.triples
		all.vectors += t.vectors
		for _, c := range conformance.Checks {
			all.perCheck[c] += t.perCheck[c]
		}
	}
	fmt.Fprintf(tw, "total\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", all.messages, len(allKeys), all.triples, all.vectors,
		all.perCheck[conformance.CheckDecode], all.perCheck[conformance.CheckEncode], all.perCheck[conformance.CheckRoundTrip])
	tw.Flush()
	if r.Renamed > 0 {
		fmt.Fprintf(&b, "note: %d vectors use field names that a newer release renamed; compared under the catalogue's declared renames\n", r.Renamed)
	}
	var names []string
	for n := range r.excused {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for v, c := range r.excused[n] {
			fmt.Fprintf(&b, "excused: %s v%d: %d vectors differ; Kafka %s marks v%d unstable and kwire implements the newer definition (catalogue: superseded)\n",
				n, v, c, r.Release, v)
		}
	}
	names = names[:0]
	for n := range r.aliases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "note: kwire has no message named %s; its vectors ran against %s (same api key)\n", n, r.aliases[n])
	}
	return b.String()
}

// FailureText lists up to max failures, one per line.
func (r *Report) FailureText(max int) string {
	var b strings.Builder
	for i, f := range r.Failures {
		if i == max {
			fmt.Fprintf(&b, "... and %d more\n", len(r.Failures)-max)
			break
		}
		b.WriteString(f.Error())
		b.WriteByte('\n')
	}
	return b.String()
}

// Run checks every vector of every release through the host.
func Run(hostName string, h Host, rels []Release) ([]*Report, error) {
	cat, err := LoadCatalogue(h)
	if err != nil {
		return nil, err
	}
	var out []*Report
	for _, rel := range rels {
		r := NewReport(hostName, rel)
		for _, v := range rel.Vectors {
			r.Add(h, cat, v)
		}
		out = append(out, r)
	}
	return out, nil
}
