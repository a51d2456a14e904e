package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// vrange is an inclusive version range; hi == open means "and every later version".
type vrange struct{ lo, hi int }

const open = 1 << 20

var none = vrange{1, 0}

func (r vrange) empty() bool    { return r.lo > r.hi }
func (r vrange) has(v int) bool { return v >= r.lo && v <= r.hi }
func (r vrange) String() string {
	switch {
	case r.empty():
		return "none"
	case r.hi >= open:
		return fmt.Sprintf("%d+", r.lo)
	case r.lo == r.hi:
		return strconv.Itoa(r.lo)
	}
	return fmt.Sprintf("%d-%d", r.lo, r.hi)
}

func parseRange(s string) (vrange, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "" || s == "none":
		return none, nil
	case strings.HasSuffix(s, "+"):
		lo, err := strconv.Atoi(strings.TrimSuffix(s, "+"))
		return vrange{lo, open}, err
	case strings.Contains(s, "-"):
		a, b, _ := strings.Cut(s, "-")
		lo, err1 := strconv.Atoi(a)
		hi, err2 := strconv.Atoi(b)
		if err1 != nil || err2 != nil {
			return none, fmt.Errorf("bad version range %q", s)
		}
		return vrange{lo, hi}, nil
	}
	v, err := strconv.Atoi(s)
	return vrange{v, v}, err
}

// clamp bounds r to the valid versions of its message.
func (r vrange) clamp(valid vrange) vrange {
	if r.empty() || valid.empty() {
		return none
	}
	out := vrange{max(r.lo, valid.lo), min(r.hi, valid.hi)}
	if out.empty() {
		return none
	}
	return out
}

// union merges two ranges that must touch or overlap.
func union(a, b vrange) (vrange, error) {
	if a.empty() {
		return b, nil
	}
	if b.empty() {
		return a, nil
	}
	lo, hi := min(a.lo, b.lo), max(a.hi, b.hi)
	// A gap between the two would make one range unable to describe the field.
	if a.hi+1 < b.lo || b.hi+1 < a.lo {
		return none, fmt.Errorf("ranges %s and %s do not touch", a, b)
	}
	return vrange{lo, hi}, nil
}

// rawField and rawMessage mirror the descriptor files. Unknown keys are an error so a new
// descriptor feature cannot be silently ignored.
type rawField struct {
	Name             string          `json:"name"`
	Type             string          `json:"type"`
	Versions         string          `json:"versions"`
	NullableVersions string          `json:"nullableVersions"`
	TaggedVersions   string          `json:"taggedVersions"`
	FlexibleVersions *string         `json:"flexibleVersions"`
	Tag              json.RawMessage `json:"tag"`
	Default          json.RawMessage `json:"default"`
	Ignorable        bool            `json:"ignorable"`
	EntityType       string          `json:"entityType"`
	MapKey           bool            `json:"mapKey"`
	ZeroCopy         bool            `json:"zeroCopy"`
	About            string          `json:"about"`
	Fields           []*rawField     `json:"fields"`
}

type rawStruct struct {
	Name     string      `json:"name"`
	Versions string      `json:"versions"`
	Fields   []*rawField `json:"fields"`
}

type rawMessage struct {
	APIKey                *int         `json:"apiKey"`
	Type                  string       `json:"type"`
	Listeners             []string     `json:"listeners"`
	Name                  string       `json:"name"`
	ValidVersions         string       `json:"validVersions"`
	DeprecatedVersions    string       `json:"deprecatedVersions"`
	FlexibleVersions      string       `json:"flexibleVersions"`
	LatestVersionUnstable bool         `json:"latestVersionUnstable"`
	Fields                []*rawField  `json:"fields"`
	CommonStructs         []*rawStruct `json:"commonStructs"`
}

// stripComments removes // comments that are not inside strings.
func stripComments(b []byte) []byte {
	var out []byte
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			out = append(out, c)
			if c == '\\' && i+1 < len(b) {
				i++
				out = append(out, b[i])
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
		}
		if c == '/' && i+1 < len(b) && b[i+1] == '/' {
			for i < len(b) && b[i] != '\n' {
				i++
			}
			out = append(out, '\n')
			continue
		}
		out = append(out, c)
	}
	return out
}

func loadRelease(dir string) (map[string]*rawMessage, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no descriptors in %s (run make spec)", dir)
	}
	sort.Strings(files)
	out := map[string]*rawMessage{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		dec := json.NewDecoder(strings.NewReader(string(stripComments(b))))
		dec.DisallowUnknownFields()
		var m rawMessage
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		out[m.Name] = &m
	}
	return out, nil
}
