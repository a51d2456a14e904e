package confjson

import (
	"fmt"
	"strings"
	"testing"
)

// TestEmbedded reads a configuration whose "inner" member another parser reads
// from Raw: the failure it reports lands at its place in the outer configuration.
func TestEmbedded(t *testing.T) {
	data := []byte(`{"name": "a", "inner": {"x": [1, true]}}`)
	r := NewReader(data)
	r.Object(func(key string) {
		switch key {
		case "name":
			_ = r.String()
		case "inner":
			at, raw := r.Raw()
			if string(raw) != ` {"x": [1, true]}` {
				t.Errorf("raw %q", raw)
			}
			in := NewReader(raw)
			in.Object(func(string) { in.Array(func(int) { _ = in.Int(0, 9) }) })
			path, off, msg, ok := in.End()
			if ok {
				t.Fatal("the inner configuration reads")
			}
			r.FailAt(at+off, "$.inner"+path[1:], msg)
		default:
			r.Unknown(key)
		}
	})
	if path, off, msg, ok := r.End(); ok || path != "$.inner.x[1]" || off != 33 {
		t.Fatalf("%s at byte %d (%s), want $.inner.x[1] at byte 33", path, off, msg)
	}
}

func TestStrict(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": 1, "a": 2}`: `$: duplicate key: "a" (at byte 9)`,
		`{"b": 1}`:         `$.b: unknown key: "b" (at byte 5)`,
		`{"a": 1} x`:       `$: `,
	} {
		r := NewReader([]byte(in))
		r.Object(func(key string) {
			if key != "a" {
				r.Unknown(key)
				return
			}
			_ = r.Int(0, 9)
		})
		path, off, msg, ok := r.End()
		got := fmt.Sprintf("%s: %s (at byte %d)", path, msg, off)
		if ok || !strings.HasPrefix(got, want) {
			t.Errorf("%s: %s, want %s...", in, got, want)
		}
	}
}
