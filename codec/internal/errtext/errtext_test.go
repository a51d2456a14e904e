package errtext

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestWrapMatchesErrorf(t *testing.T) {
	got := Wrap("kwire: X version 9: "+io.EOF.Error()+" (valid 0-3)", io.EOF)
	want := fmt.Errorf("kwire: X version 9: %w (valid 0-3)", io.EOF)
	if got.Error() != want.Error() || !errors.Is(got, io.EOF) {
		t.Fatalf("%v / %v", got, want)
	}
}

func TestPanic(t *testing.T) {
	var rt error
	func() {
		defer func() { rt = recover().(error) }()
		var s []int
		_ = s[3]
	}()
	for _, c := range []struct {
		p    any
		want string
	}{
		{"boom", "boom"}, {7, "7"}, {errors.New("e"), "e"}, {rt, rt.Error()}, {3.5, "panic of an unexpected type"},
	} {
		if got := Panic(c.p); got != c.want {
			t.Errorf("Panic(%v) = %q, want %q", c.p, got, c.want)
		}
	}
	if Range(0, 13) != "valid 0-13" {
		t.Error(Range(0, 13))
	}
}
