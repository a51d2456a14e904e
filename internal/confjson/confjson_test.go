package confjson

import (
	"errors"
	"testing"
)

// TestEmbedded reads a configuration whose "inner" member another parser reads
// from Raw: the failure it reports lands at its place in the outer configuration.
func TestEmbedded(t *testing.T) {
	data := []byte(`{"name": "a", "inner": {"x": [1, true]}}`)
	r := NewReader("outer", data)
	r.Object(func(key string) {
		switch key {
		case "name":
			_ = r.String()
		case "inner":
			at, raw := r.Raw()
			if string(raw) != ` {"x": [1, true]}` {
				t.Errorf("raw %q", raw)
			}
			in := NewReader("inner", raw)
			in.Object(func(string) { in.Array(func(int) { _ = in.Int(0, 9) }) })
			var e *Error
			if !errors.As(in.End(), &e) {
				t.Fatal("the inner configuration reads")
			}
			r.FailAt(at+e.Offset, "$.inner"+e.Path[1:], e.Msg)
		default:
			r.Unknown(key)
		}
	})
	err := r.End()
	want := `outer: $.inner.x[1]: ` // then the decoder's message and the offset
	var e *Error
	if !errors.As(err, &e) || e.Path != "$.inner.x[1]" || e.Offset != 33 || e.Context != "outer" {
		t.Fatalf("%v, want %s... at byte 33", err, want)
	}
}

func TestStrict(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": 1, "a": 2}`: `c: $: duplicate key: "a" (at byte 9)`,
		`{"b": 1}`:         `c: $.b: unknown key: "b" (at byte 5)`,
		`{"a": 1} x`:       `c: $: `,
	} {
		r := NewReader("c", []byte(in))
		r.Object(func(key string) {
			if key != "a" {
				r.Unknown(key)
				return
			}
			_ = r.Int(0, 9)
		})
		err := r.End()
		if err == nil || len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
			t.Errorf("%s: %v, want %s...", in, err, want)
		}
	}
}
