// Package conformance checks kwire against the vectors that Apache Kafka's own Java code
// wrote (conformance/vectors/kafka-clients-<release>.jsonl, made by the Maven project in
// conformance/reference). For every vector it runs three comparisons:
//
//   - decode: kwire decodes the bytes; its JSON form must equal the vector's json;
//   - encode: kwire reads the vector's json and encodes it; the bytes must equal the vector's;
//   - round trip: kwire decodes the bytes and encodes them again; the bytes must not change.
//
// A failure names the vector, the JSON path of the first differing field and the first
// differing byte offset.
package conformance

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/kwire/kwire/codec"
)

// Vector is one line of a vector file.
type Vector struct {
	ID      string          `json:"id"`
	Name    string          `json:"name"`
	APIKey  int16           `json:"apiKey"`
	Kind    string          `json:"kind"`
	Version int16           `json:"version"`
	Source  string          `json:"source"`
	JSON    json.RawMessage `json:"json"`
	Bytes   []byte          `json:"bytes"`
}

// ManifestMessage is what a Kafka release knows of one message.
type ManifestMessage struct {
	Name        string `json:"name"`
	APIKey      int16  `json:"apiKey"`
	Kind        string `json:"kind"`
	MinVersion  int16  `json:"minVersion"` // -1 with MaxVersion -1: no valid version (removed)
	MaxVersion  int16  `json:"maxVersion"`
	FlexibleMin int16  `json:"flexibleMin"`
	// UnstableVersion is the newest version when the release marks it unstable (not
	// final), else -1.
	UnstableVersion int16   `json:"unstableVersion"`
	HeaderVers      []int16 `json:"headerVersions,omitempty"`
}

// Manifest lists every message of a release, written beside its vectors.
type Manifest struct {
	Release  string            `json:"release"`
	Source   string            `json:"source"`
	Messages []ManifestMessage `json:"messages"`
}

// ReadManifest reads a manifest file.
func ReadManifest(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}

// ReadVectors reads a JSON Lines vector file, gzip-compressed when its name ends in .gz.
func ReadVectors(path string) ([]Vector, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	return DecodeVectors(r, path)
}

// DecodeVectors reads JSON Lines vectors; name is used in errors.
func DecodeVectors(r io.Reader, name string) ([]Vector, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var out []Vector
	seen := map[string]bool{}
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var v Vector
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if v.ID == "" || v.Name == "" || v.Kind == "" || len(v.JSON) == 0 {
			return nil, fmt.Errorf("%s:%d: vector lacks id, name, kind or json", name, line)
		}
		if seen[v.ID] {
			return nil, fmt.Errorf("%s:%d: duplicate vector id %q", name, line, v.ID)
		}
		seen[v.ID] = true
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// Check names one of the three comparisons.
type Check string

// The comparisons run on every vector.
const (
	CheckDecode    Check = "decode"     // bytes -> kwire -> JSON, compared with the vector's json
	CheckEncode    Check = "encode"     // json -> kwire -> bytes, compared with the vector's bytes
	CheckRoundTrip Check = "round-trip" // bytes -> kwire -> bytes, compared with the vector's bytes
)

// Checks lists the comparisons in the order they run.
var Checks = []Check{CheckDecode, CheckEncode, CheckRoundTrip}

// Failure is one failed comparison of one vector.
type Failure struct {
	ID     string
	Check  Check
	Path   string // JSON path of the first differing field ("" when unknown)
	Offset int    // first differing (or failing) byte offset; -1 when unknown
	Detail string
}

func (f Failure) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "vector %s: %s:", f.ID, f.Check)
	if f.Path != "" {
		fmt.Fprintf(&b, " field %s", f.Path)
	}
	if f.Offset >= 0 {
		fmt.Fprintf(&b, " at byte offset %d", f.Offset)
	}
	if f.Path != "" || f.Offset >= 0 {
		b.WriteByte(':')
	}
	fmt.Fprintf(&b, " %s", f.Detail)
	return b.String()
}

// Lookup returns a new kwire message for a vector's message: by descriptor name, or, for a
// request or response whose name kwire does not know (Kafka renamed it between releases),
// by api key and kind. alias is set in the second case.
func Lookup(name string, apiKey int16, kind string) (m codec.Message, alias bool) {
	if m := codec.NewMessage(name); m != nil {
		return m, false
	}
	k, ok := codec.ParseKind(kind)
	if !ok || (k != codec.KindRequest && k != codec.KindResponse) {
		return nil, false
	}
	m = codec.LookupMessage(apiKey, k)
	return m, m != nil
}

// FirstDiff is the first offset where a and b differ: -1 when they are equal, the
// shorter length when one is a prefix of the other.
func FirstDiff(a, b []byte) int {
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

// jsonDiffRenamed is JSONDiff after renaming, in want, the keys that kwire declares
// renamed (codec.MessageInfo.Renames: it writes the newer name and reads either), so a
// vector from an older release compares with kwire's output under the newer names.
func jsonDiffRenamed(want, got []byte, renames []codec.FieldRename) (*Diff, error) {
	return jsonDiff(want, got, func(w any) {
		for _, r := range renames {
			applyRename(w, splitPath(r.Path), r.Old, r.New)
		}
	})
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

// RenamedKeys reports whether a vector's json uses a key that kwire declares renamed.
func RenamedKeys(v Vector, renames []codec.FieldRename) bool {
	if len(renames) == 0 {
		return false
	}
	w, err := parseJSON(v.JSON)
	if err != nil {
		return false
	}
	before, _ := json.Marshal(w)
	for _, r := range renames {
		applyRename(w, splitPath(r.Path), r.Old, r.New)
	}
	after, _ := json.Marshal(w)
	return !bytes.Equal(before, after)
}

// Diff is the first difference between two JSON documents.
type Diff struct {
	Path      string
	Want, Got string
}

// JSONDiff compares two JSON documents semantically: object key order is ignored;
// integers are compared exactly, other numbers as float64 bit patterns. It returns nil
// when they are equal.
func JSONDiff(want, got []byte) (*Diff, error) { return jsonDiff(want, got, nil) }

// jsonDiff is JSONDiff after edit (when not nil) has changed the parsed want.
func jsonDiff(want, got []byte, edit func(w any)) (*Diff, error) {
	w, err := parseJSON(want)
	if err != nil {
		return nil, fmt.Errorf("vector json: %w", err)
	}
	g, err := parseJSON(got)
	if err != nil {
		return nil, fmt.Errorf("kwire json: %w", err)
	}
	if edit != nil {
		edit(w)
	}
	return diffValues("$", w, g), nil
}

func parseJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func show(v any) string {
	if v == nil {
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

func diffValues(path string, w, g any) *Diff {
	switch wv := w.(type) {
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok {
			return &Diff{path, show(w), show(g)}
		}
		keys := make([]string, 0, len(wv)+len(gv))
		for k := range wv {
			keys = append(keys, k)
		}
		for k := range gv {
			if _, ok := wv[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := path + "." + k
			a, inW := wv[k]
			b, inG := gv[k]
			switch {
			case !inW:
				return &Diff{p, "(absent)", show(b)}
			case !inG:
				return &Diff{p, show(a), "(absent)"}
			}
			if d := diffValues(p, a, b); d != nil {
				return d
			}
		}
		return nil
	case []any:
		gv, ok := g.([]any)
		if !ok {
			return &Diff{path, show(w), show(g)}
		}
		for i := 0; i < len(wv) && i < len(gv); i++ {
			if d := diffValues(path+"["+strconv.Itoa(i)+"]", wv[i], gv[i]); d != nil {
				return d
			}
		}
		if len(wv) != len(gv) {
			return &Diff{path, fmt.Sprintf("%d elements", len(wv)), fmt.Sprintf("%d elements", len(gv))}
		}
		return nil
	case json.Number:
		gv, ok := g.(json.Number)
		if !ok || !numbersEqual(wv, gv) {
			return &Diff{path, show(w), show(g)}
		}
		return nil
	default: // string, bool, nil
		if w != g {
			return &Diff{path, show(w), show(g)}
		}
		return nil
	}
}

func isInteger(n json.Number) bool { return !strings.ContainsAny(string(n), ".eE") }

func numbersEqual(a, b json.Number) bool {
	if isInteger(a) && isInteger(b) {
		x, ok1 := new(big.Int).SetString(string(a), 10)
		y, ok2 := new(big.Int).SetString(string(b), 10)
		if ok1 && ok2 {
			return x.Cmp(y) == 0 && (string(a) == "-0") == (string(b) == "-0")
		}
	}
	x, err1 := strconv.ParseFloat(string(a), 64)
	y, err2 := strconv.ParseFloat(string(b), 64)
	return err1 == nil && err2 == nil && math.Float64bits(x) == math.Float64bits(y)
}
