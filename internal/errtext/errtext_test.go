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

func TestWrapAllMatchesErrorf(t *testing.T) {
	first, second := errors.New("first"), io.ErrUnexpectedEOF
	for _, c := range []struct {
		name   string
		got    error
		want   error
		causes []error
	}{
		{"two", WrapAll("x: "+first.Error()+": "+second.Error(), first, second),
			fmt.Errorf("x: %w: %w", first, second), []error{first, second}},
		{"one", WrapAll("y: "+second.Error(), second), fmt.Errorf("y: %w", second), []error{second}},
	} {
		if c.got.Error() != c.want.Error() {
			t.Errorf("%s: text %q, fmt %q", c.name, c.got, c.want)
		}
		for _, cause := range c.causes {
			if !errors.Is(c.got, cause) {
				t.Errorf("%s: errors.Is(%v) = false", c.name, cause)
			}
		}
		if errors.Is(c.got, io.EOF) {
			t.Errorf("%s: unwraps to an error it does not carry", c.name)
		}
	}
	if n := len(WrapAll("z", nil, first).(interface{ Unwrap() []error }).Unwrap()); n != 1 {
		t.Errorf("WrapAll with a nil cause unwraps to %d errors, want 1", n)
	}
}

func TestText(t *testing.T) {
	for _, err := range []error{nil, io.EOF, errors.New("kwire: x")} {
		if got, want := Text(err), fmt.Sprintf("%v", err); got != want {
			t.Errorf("Text(%v) = %q, want %q", err, got, want)
		}
	}
}
