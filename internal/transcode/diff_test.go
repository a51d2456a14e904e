package transcode_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/codectest"
	"github.com/kwire/kwire/conformance"
	"github.com/kwire/kwire/internal/transcode"
)

// typedDecode is the reference: the typed codec's Decode then AppendJSON. AppendJSON
// is the typed Encode then this package's AppendJSON, so agreement checks that the
// typed decoder fails where the interpreter fails, with the same error, and that the
// typed decode and encode lose nothing the interpreter reads.
func typedDecode(name string, v int16, src []byte) ([]byte, error) {
	m := codec.NewMessage(name)
	if err := m.Decode(src, v); err != nil {
		return nil, err
	}
	return m.AppendJSON(nil, v)
}

// typedEncode is the reference: the typed codec's DecodeJSON (this package's AppendWire
// then the typed Decode) then Encode: agreement checks that the typed codec decodes and
// re-encodes exactly what the interpreter writes.
func typedEncode(name string, v int16, js []byte) ([]byte, error) {
	m := codec.NewMessage(name)
	if err := m.DecodeJSON(js, v); err != nil {
		return nil, err
	}
	return m.Encode(nil, v)
}

// sameError fails unless both errors are nil or both render the same text and have the
// same type.
func sameError(t *testing.T, what string, got, want error) bool {
	t.Helper()
	if (got == nil) != (want == nil) {
		t.Errorf("%s: transcoder error %v, typed codec error %v", what, got, want)
		return false
	}
	if got == nil {
		return true
	}
	if got.Error() != want.Error() || fmt.Sprintf("%T", got) != fmt.Sprintf("%T", want) {
		t.Errorf("%s: errors differ\n transcoder: %T %v\n typed:      %T %v", what, got, got, want, want)
		return false
	}
	return true
}

// checkDecode compares both engines on wire bytes.
func checkDecode(t *testing.T, what, name string, v int16, src []byte) bool {
	t.Helper()
	want, werr := typedDecode(name, v, src)
	got, gerr := transcode.AppendJSON(nil, name, v, src, nil)
	if !sameError(t, what+": decode", gerr, werr) {
		return false
	}
	if werr == nil && !bytes.Equal(got, want) {
		t.Errorf("%s: decode JSON differs\n transcoder: %s\n typed:      %s", what, got, want)
		return false
	}
	return true
}

// checkEncode compares both engines on JSON text.
func checkEncode(t *testing.T, what, name string, v int16, js []byte) bool {
	t.Helper()
	want, werr := typedEncode(name, v, js)
	got, gerr := transcode.AppendWire(nil, name, v, js)
	if !sameError(t, what+": encode", gerr, werr) {
		return false
	}
	if werr == nil && !bytes.Equal(got, want) {
		t.Errorf("%s: encode bytes differ\n transcoder: %x\n typed:      %x\n json %s", what, got, want, js)
		return false
	}
	return true
}

func TestConformanceVectorsBothEngines(t *testing.T) {
	files, _ := filepath.Glob("../../conformance/vectors/kafka-clients-*.jsonl")
	if len(files) == 0 {
		t.Fatal("no conformance vectors found")
	}
	n := 0
	for _, f := range files {
		vs, err := conformance.ReadVectors(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, vec := range vs {
			if _, ok := transcode.Lookup(vec.Name); !ok || codec.NewMessage(vec.Name) == nil {
				continue
			}
			n++
			ok := checkDecode(t, vec.ID, vec.Name, vec.Version, vec.Bytes)
			ok = checkEncode(t, vec.ID, vec.Name, vec.Version, vec.JSON) && ok
			if !ok && t.Failed() && n > 50 {
				t.FailNow()
			}
		}
	}
	if n < 10000 {
		t.Fatalf("only %d vectors compared", n)
	}
	t.Logf("%d vectors: both engines agree", n)
}

func TestRandomMessagesBothEngines(t *testing.T) {
	const perVersion = 12
	pairs := 0
	for _, info := range codec.Messages() {
		for v := info.MinVersion; v <= info.MaxVersion; v++ {
			pairs++
			for seed := 0; seed < perVersion; seed++ {
				what := fmt.Sprintf("%s/v%d/seed%d", info.Name, v, seed)
				r := rand.New(rand.NewSource(int64(seed)*104729 + int64(v)*131 + int64(len(info.Name))))
				m := codec.NewMessage(info.Name)
				codectest.Fill(m, r, v)
				b, err := m.Encode(nil, v)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				js, _ := m.AppendJSON(nil, v)
				if !checkDecode(t, what, info.Name, v, b) || !checkEncode(t, what, info.Name, v, js) {
					t.FailNow()
				}
				// The same JSON at every other version: exercises the rules for fields
				// the version lacks (ignorable, non-default, null) on both sides.
				for w := info.MinVersion; w <= info.MaxVersion; w++ {
					if w != v && !checkEncode(t, what+fmt.Sprintf("@v%d", w), info.Name, w, js) {
						t.FailNow()
					}
				}
				// Truncations and single-byte changes of the wire bytes.
				for i := 0; i < 8 && len(b) > 0; i++ {
					cut := r.Intn(len(b))
					if !checkDecode(t, what+fmt.Sprintf(" cut %d", cut), info.Name, v, b[:cut]) {
						t.FailNow()
					}
					mut := append([]byte(nil), b...)
					mut[r.Intn(len(mut))] ^= byte(1 + r.Intn(255))
					if !checkDecode(t, what+" mutated", info.Name, v, mut) {
						t.Logf("input %x", mut)
						t.FailNow()
					}
				}
			}
		}
	}
	t.Logf("%d (message, version) pairs", pairs)
}

func TestVersionAndNameErrors(t *testing.T) {
	if _, err := transcode.AppendJSON(nil, "NoSuchMessage", 0, nil, nil); !errors.Is(err, transcode.ErrUnknownMessage) {
		t.Fatalf("unknown message: %v", err)
	}
	checkDecode(t, "bad version", "ProduceRequest", 99, []byte{0})
	checkEncode(t, "bad version", "ProduceRequest", 99, []byte(`{}`))
}
