package jsonx

import (
	"errors"
	"math"
	"strconv"
	"testing"
)

func TestAppendString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{"q\"b\\", `"q\"b\\"`},
		{"\n\t\r\x00\x1f", `"\n\t\r\u0000\u001f"`},
		{"héllo 日本", `"héllo 日本"`},
		{"bad \xff byte", "\"bad \ufffd byte\""},
		{"\u2028", `"\u2028"`},
	}
	for _, tc := range tests {
		if got := string(AppendString(nil, tc.in)); got != tc.want {
			t.Errorf("AppendString(%q) = %s, want %s", tc.in, got, tc.want)
		}
		if tc.in == "bad \xff byte" {
			continue
		}
		d := NewDecoder([]byte(tc.want))
		if got := d.String(); got != tc.in || d.Err() != nil {
			t.Errorf("String(%s) = %q, %v", tc.want, got, d.Err())
		}
	}
}

func TestNumbers(t *testing.T) {
	tests := []struct {
		in       string
		min, max int64
		want     int64
		err      error
	}{
		{"0", -10, 10, 0, nil},
		{"-10", -10, 10, -10, nil},
		{"11", -10, 10, 0, ErrRange},
		{"1.0", -10, 10, 0, ErrType},
		{"1e2", -1000, 1000, 0, ErrType},
		{"01", -10, 10, 0, ErrSyntax},
		{"\"5\"", -10, 10, 0, ErrType},
		{"9223372036854775808", math.MinInt64, math.MaxInt64, 0, ErrRange},
	}
	for _, tc := range tests {
		d := NewDecoder([]byte(tc.in))
		got := d.Int(tc.min, tc.max)
		d.End()
		if !errors.Is(d.Err(), tc.err) || (tc.err == nil && got != tc.want) {
			t.Errorf("Int(%s) = %d, %v; want %d, %v", tc.in, got, d.Err(), tc.want, tc.err)
		}
	}
	for in, want := range map[string]int64{`"-9223372036854775808"`: math.MinInt64, `"42"`: 42, `42`: 42} {
		d := NewDecoder([]byte(in))
		if got := d.Int64(); got != want || d.Err() != nil {
			t.Errorf("Int64(%s) = %d, %v", in, got, d.Err())
		}
	}
	for _, in := range []string{`"042"`, `"+1"`, `""`, `"1.5"`, `"-0"`} {
		d := NewDecoder([]byte(in))
		d.Int64()
		if d.Err() == nil {
			t.Errorf("Int64(%s) accepted", in)
		}
	}
}

func TestFloatSpecials(t *testing.T) {
	for _, v := range []float64{math.Inf(1), math.Inf(-1), 1.5, -0.25, 1e300} {
		d := NewDecoder(AppendFloat64(nil, v))
		if got := d.Float64(); got != v {
			t.Errorf("%v -> %v", v, got)
		}
	}
	d := NewDecoder(AppendFloat64(nil, math.NaN()))
	if got := d.Float64(); math.Float64bits(got) != 0x7ff8000000000000 {
		t.Errorf("NaN reads as %x, want Java's canonical NaN", math.Float64bits(got))
	}
}

func TestErrorPath(t *testing.T) {
	d := NewDecoder([]byte(`{"a": [1, true]}`))
	d.BeginObject()
	first := true
	d.More(&first, '}')
	k := d.Key()
	d.BeginArray()
	f2 := true
	i := 0
	for d.More(&f2, ']') {
		d.Int(0, 10)
		if d.Failed() {
			d.PushIndex(i)
			break
		}
		i++
	}
	d.Push(k)
	err := d.Err()
	var je *Error
	if !errors.As(err, &je) || je.Path != "$.a[1]" || !errors.Is(err, ErrType) || je.Offset != 10 {
		t.Fatalf("err = %v (%+v)", err, je)
	}
}

func TestParseIntMatchesStrconv(t *testing.T) {
	for _, s := range []string{"0", "-0", "7", "-7", "123456789012345678", "-123456789012345678",
		"1234567890123456789", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809"} {
		got, gerr := parseInt(s)
		want, werr := strconv.ParseInt(s, 10, 64)
		if got != want || (gerr == nil) != (werr == nil) {
			t.Errorf("%s: %d %v, strconv %d %v", s, got, gerr, want, werr)
		}
	}
}

func TestAppendIntMatchesStrconv(t *testing.T) {
	for v := int64(-12000); v <= 12000; v++ {
		if got, want := string(AppendInt(nil, v)), strconv.FormatInt(v, 10); got != want {
			t.Fatalf("%d: %s, want %s", v, got, want)
		}
	}
	for _, v := range []int64{math.MinInt64, math.MaxInt64, 99999, -99999, 1 << 40} {
		if got, want := string(AppendInt(nil, v)), strconv.FormatInt(v, 10); got != want {
			t.Fatalf("%d: %s, want %s", v, got, want)
		}
	}
}

func TestStringUTF8Checked(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{{`"abc"`, true}, {"\"h\xc3\xa9\"", true}, {"\"\xff\"", false}, {"\"a\xc3\"", false}} {
		d := NewDecoder([]byte(c.in))
		d.StringBytes()
		if d.Failed() == c.ok {
			t.Errorf("%q: failed=%v", c.in, d.Failed())
		}
	}
}
