package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kwire/kwire/codec"
)

// Target is an implementation the vectors run through: kwire's typed codec (Native) or
// the flat ABI under some host (abi/abiconf). The runner makes the three comparisons
// and keeps the coverage report; a Target only calls its implementation.
type Target interface {
	// Name is how failure texts name the implementation ("kwire", "the ABI").
	Name() string
	// Message resolves a vector's message: by descriptor name, or, for a request or
	// response Kafka renamed between releases, by api key and kind (alias set). Nil
	// when the implementation has no such message.
	Message(name string, apiKey int16, kind string) (m *Message, alias bool)
	// Decode reads wire bytes and returns their JSON form.
	Decode(m *Message, version int16, b []byte) ([]byte, error)
	// Encode reads the JSON form and returns wire bytes.
	Encode(m *Message, version int16, json []byte) ([]byte, error)
	// RoundTrip encodes again what Decode read: b are the bytes, json what Decode
	// returned for them.
	RoundTrip(m *Message, version int16, b, json []byte) ([]byte, error)
	// Where is the JSON path ("$..." or "") and byte offset (-1 when unknown) an
	// error of the calls above names.
	Where(err error) (path string, offset int)
}

// Message is what the runner needs to know of one message of a Target.
type Message struct {
	Name       string
	Kind       string
	APIKey     int16
	Renames    []codec.FieldRename       // fields the implementation writes under a newer name
	Superseded []codec.SupersededVersion // unstable versions it implements as a newer release defines them
}

// Release is one release's manifest and vectors.
type Release struct {
	Name     string
	Manifest *Manifest
	Vectors  []Vector
}

// LoadReleases reads the manifest and vectors of every release the codec is generated
// from, from dir (conformance/vectors).
func LoadReleases(dir string) ([]Release, error) {
	var out []Release
	for _, rel := range codec.SpecReleases {
		base := filepath.Join(dir, "kafka-clients-"+rel)
		m, err := ReadManifest(base + ".manifest.json")
		if err != nil {
			return nil, err
		}
		if m.Release != rel {
			return nil, fmt.Errorf("%s.manifest.json is for release %q", base, m.Release)
		}
		path := base + ".jsonl"
		if _, err := os.Stat(path); err != nil {
			path += ".gz"
		}
		vs, err := ReadVectors(path)
		if err != nil {
			return nil, err
		}
		out = append(out, Release{rel, m, vs})
	}
	return out, nil
}

// Run checks every vector of every release through t; host names the run in the
// coverage tables ("" for the typed codec in process).
func Run(t Target, host string, rels []Release) []*Report {
	var out []*Report
	for _, rel := range rels {
		r := NewTargetReport(t, host, rel.Name, rel.Manifest)
		for _, v := range rel.Vectors {
			r.Add(v)
		}
		out = append(out, r)
	}
	return out
}

// CheckVector runs the three comparisons on a vector with kwire's typed codec.
func CheckVector(v Vector) []Failure { return CheckVectorOn(Native, v) }

// CheckVectorOn runs the three comparisons on a vector through t and returns what
// failed.
func CheckVectorOn(t Target, v Vector) []Failure {
	fail := func(c Check, path string, off int, format string, args ...any) Failure {
		return Failure{ID: v.ID, Check: c, Path: path, Offset: off, Detail: fmt.Sprintf(format, args...)}
	}
	callFail := func(c Check, err error) Failure {
		path, off := t.Where(err)
		return fail(c, path, off, "%v", err)
	}
	name := t.Name()
	m, _ := t.Message(v.Name, v.APIKey, v.Kind)
	if m == nil {
		f := fail(CheckDecode, "", -1, "%s has no message %s (api key %d, %s)", name, v.Name, v.APIKey, v.Kind)
		return []Failure{f, {ID: v.ID, Check: CheckEncode, Offset: -1, Detail: f.Detail},
			{ID: v.ID, Check: CheckRoundTrip, Offset: -1, Detail: f.Detail}}
	}
	if m.Kind != v.Kind || m.APIKey != v.APIKey {
		return []Failure{fail(CheckDecode, "", -1, "%s's %s is a %s with api key %d, the vector says %s with %d",
			name, m.Name, m.Kind, m.APIKey, v.Kind, v.APIKey)}
	}
	var out []Failure
	// sameBytes checks what c gave (got, or its error) against the vector's bytes; format
	// words a difference with args and then the two bytes at its offset.
	sameBytes := func(c Check, got []byte, err error, format string, args ...any) {
		if err != nil {
			out = append(out, callFail(c, err))
		} else if !bytes.Equal(got, v.Bytes) {
			off := FirstDiff(got, v.Bytes)
			args = append(args, byteAt(got, off), byteAt(v.Bytes, off))
			out = append(out, fail(c, pathOfBytes(t, m, v, got), off, format, args...))
		}
	}

	// The vector's json, encoded: used for the encode check and to find the first
	// differing byte when a decode disagrees.
	enc, encErr := t.Encode(m, v.Version, v.JSON)

	// decode: bytes -> JSON
	decoded, err := t.Decode(m, v.Version, v.Bytes)
	if err != nil {
		decoded = nil
		out = append(out, callFail(CheckDecode, err))
	} else if d, err := jsonDiffRenamed(v.JSON, decoded, m.Renames); err != nil {
		out = append(out, fail(CheckDecode, "", -1, "%v", err))
	} else if d != nil {
		off := -1
		if encErr == nil {
			off = FirstDiff(enc, v.Bytes)
		}
		out = append(out, fail(CheckDecode, d.Path, off, "JSON differs: want %s, got %s", d.Want, d.Got))
	}

	// encode: json -> bytes
	sameBytes(CheckEncode, enc, encErr, "%s encodes %d bytes, Kafka wrote %d; at the offset %s has %s, Kafka %s",
		name, len(enc), len(v.Bytes), name)

	// round trip: bytes -> decoded -> bytes
	if decoded == nil {
		return append(out, fail(CheckRoundTrip, "", -1, "skipped: the bytes did not decode"))
	}
	re, err := t.RoundTrip(m, v.Version, v.Bytes, decoded)
	sameBytes(CheckRoundTrip, re, err, "re-encoded %d bytes, input had %d; at the offset %s has %s, input %s",
		len(re), len(v.Bytes), name)
	return out
}

// pathOfBytes finds which field a byte difference belongs to: it decodes both byte
// strings and compares the two JSON forms; failing that, it compares the reading of
// got with the vector's json. Empty when neither tells.
func pathOfBytes(t Target, m *Message, v Vector, got []byte) string {
	gj, err := t.Decode(m, v.Version, got)
	if err != nil {
		path, _ := t.Where(err)
		return path
	}
	if wj, err := t.Decode(m, v.Version, v.Bytes); err == nil {
		if d, err := JSONDiff(wj, gj); err == nil && d != nil {
			return d.Path
		}
	}
	if d, err := jsonDiffRenamed(v.JSON, gj, m.Renames); err == nil && d != nil {
		return d.Path
	}
	return ""
}

// Native is kwire's typed codec in process: the generated messages' Decode,
// AppendJSON, UnmarshalJSON and Encode.
var Native Target = native{}

type native struct{}

func (native) Name() string { return "kwire" }

func (native) Message(name string, apiKey int16, kind string) (*Message, bool) {
	km, alias := Lookup(name, apiKey, kind)
	if km == nil {
		return nil, false
	}
	info := km.Info()
	return &Message{Name: km.MessageName(), Kind: km.MessageKind().String(), APIKey: km.APIKey(),
		Renames: info.Renames, Superseded: info.Superseded}, alias
}

// decodeThen reads b into a new message of m's type and writes it again with write
// (its JSON form, or its encoding); failing writes are the failure named.
func decodeThen(m *Message, version int16, b []byte, write func(codec.Message, []byte, int16) ([]byte, error), failure string) ([]byte, error) {
	km := codec.NewMessage(m.Name)
	if err := km.Decode(b, version); err != nil {
		return nil, fmt.Errorf("kwire cannot decode the bytes: %w", err)
	}
	out, err := write(km, nil, version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", failure, err)
	}
	return out, nil
}

func (native) Decode(m *Message, version int16, b []byte) ([]byte, error) {
	return decodeThen(m, version, b, codec.Message.AppendJSON, "kwire decoded the bytes but cannot write JSON")
}

func (native) Encode(m *Message, version int16, js []byte) ([]byte, error) {
	km := codec.NewMessage(m.Name)
	if err := km.DecodeJSON(js, version); err != nil {
		var ee *codec.EncodeError
		var ve *codec.VersionError
		if errors.As(err, &ee) || errors.As(err, &ve) { // a value or a message the version cannot carry
			return nil, fmt.Errorf("kwire cannot encode the json: %w", err)
		}
		return nil, &jsonFailure{path: jsonErrPath(err), err: fmt.Errorf("kwire cannot read the json: %w", err)}
	}
	b, err := km.Encode(nil, version)
	if err != nil {
		return nil, fmt.Errorf("kwire cannot encode the json: %w", err)
	}
	return b, nil
}

// RoundTrip re-encodes the decoded struct, not its JSON: the typed codec is lossless
// on its own.
func (native) RoundTrip(m *Message, version int16, b, _ []byte) ([]byte, error) {
	return decodeThen(m, version, b, codec.Message.Encode, "kwire cannot re-encode what it decoded")
}

func (native) Where(err error) (string, int) {
	var de *codec.DecodeError
	var ee *codec.EncodeError
	var jf *jsonFailure
	switch {
	case errors.As(err, &de):
		if de.Path == "" {
			return "$", de.Offset
		}
		return "$." + de.Path, de.Offset
	case errors.As(err, &jf):
		return jf.path, -1
	case errors.As(err, &ee) && ee.Path != "":
		return "$." + ee.Path, -1
	}
	return "", -1
}

// jsonFailure is JSON the typed codec cannot read, with the path its error names.
type jsonFailure struct {
	path string
	err  error
}

func (e *jsonFailure) Error() string { return e.err.Error() }
func (e *jsonFailure) Unwrap() error { return e.err }

// jsonErrPath pulls a "$..." path out of a JSON error message, if it has one.
func jsonErrPath(err error) string {
	s := err.Error()
	i := strings.Index(s, "$")
	if i < 0 {
		return ""
	}
	j := i
	for j < len(s) && !strings.ContainsRune(" :,;)", rune(s[j])) {
		j++
	}
	return s[i:j]
}
