package frames

import (
	"encoding/json"
	"math/rand"
	"testing"
	"unicode/utf8"
)

// TestAppendText: every valid UTF-8 string comes back from a JSON reader unchanged.
func TestAppendText(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []rune{'a', 'Z', '"', '\\', '\n', '\r', '\t', 0, 1, 0x1f, 0x7f, 'é', '€', '𝄞', 0x2028, '/', '<'}
	for i := 0; i < 5000; i++ {
		var rs []rune
		for n := rng.Intn(40); n > 0; n-- {
			rs = append(rs, alphabet[rng.Intn(len(alphabet))])
		}
		s := string(rs)
		b := appendText(nil, []byte(s))
		var got string
		if err := json.Unmarshal(b, &got); err != nil || got != s {
			t.Fatalf("%q: %s -> %q, %v", s, b, got, err)
		}
	}
}

// TestAppendValue: null, text when valid UTF-8, base64 otherwise.
func TestAppendValue(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		want string
	}{
		{nil, `null`},
		{[]byte{}, `{"text":""}`},
		{[]byte("héllo \"x\""), `{"text":"héllo \"x\""}`},
		{[]byte{0, 0, 0, 0, 7, 0xff}, `{"base64":"AAAAAAf/"}`},
	} {
		if got := string(AppendValue(nil, c.in)); got != c.want {
			t.Errorf("%q: %s, want %s", c.in, got, c.want)
		}
		if c.in != nil && !utf8.Valid(c.in) && json.Valid(AppendValue(nil, c.in)) == false {
			t.Errorf("%q: not JSON", c.in)
		}
	}
}
