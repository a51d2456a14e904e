package rules

import (
	"regexp"
	"strings"
	"testing"
)

var patternCases = []string{
	`^[a-z0-9-]+$`, `abc`, `^abc`, `abc$`, `a.c`, `a*`, `a+b?c{2,3}`, `(ab|cd)+e`, `(?:x|y){3}`, `\d{3}-\d{4}`,
	`^\w+@\w+\.com$`, `[^a-c]x`, `[\d_]+`, `[a\-z]`, `[]a]`, `[a-]`, `\s+`, `\S\W\D`, `^$`, `a|b|`, `(a|)b`, `x{0}`,
	`x{2,}`, `.*`, `^.{1,5}$`, `\.`, `\\`, `\A\w\z`, `é+`, `[^é]`, `a{,2}`, `{`, `a{1000}`, `(a*)*b`, `(a|a)*c`, `[\s\S]`,
	`^tx-`, `^(prod|staging)\.[a-z]+$`, `((){70}){20}`, `(a{10}){100}`, `(a{10}){101}`, `(a*){1000}`, `((a{2}){2}){250}`,
}

var patternTexts = []string{"", "a", "abc", "xabcx", "ab", "aaaa", "abccc", "cdcde", "xyz", "555-1234", "me@host.com", "dx", "__9",
	"-", "]", " \t", "a\nb", "é", "éé", "a{,2}", "{", "prod.orders", "staging.Orders", "tx-1", strings.Repeat("a", 40) + "c"}

// The subset matches exactly what Go's regexp (RE2) matches, for every pattern both
// accept, on every text.
func TestPatternMatchesRegexp(t *testing.T) {
	for _, src := range patternCases {
		p, err := compilePattern(src)
		re, rerr := regexp.Compile(src)
		if err != nil {
			if rerr == nil {
				t.Errorf("%q: refused (%v), regexp accepts it", src, err)
			}
			continue
		}
		if rerr != nil {
			t.Errorf("%q: accepted, regexp refuses it: %v", src, rerr)
			continue
		}
		for _, s := range patternTexts {
			if got, want := p.MatchString(s), re.MatchString(s); got != want {
				t.Errorf("%q on %q: %v, regexp %v", src, s, got, want)
			}
		}
	}
}

func TestPatternRefusesWhatIsNotInTheSubset(t *testing.T) {
	for src, want := range map[string]string{
		`\p{L}`: `escape \p is not supported`, `(?i)a`: "flags", `a\b`: `escape \b`, `a(`: "missing )", `a)`: "unexpected )",
		`[a`: "missing ]", `*a`: "missing argument", `a**`: "nested repetition", `a{2,1}`: "invalid repeat count", `[[:alpha:]]`: "[: :]",
		`a{1001}`: "invalid repeat count", `((a{1000}){1000}){20}`: "invalid repeat count", `((a|b|c|d|e|f|g|h|i|j){10}){100}`: "too large", `[z-a]`: "invalid character class range",
	} {
		if _, err := compilePattern(src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}

// FuzzPattern: for any pattern the subset accepts, Go's regexp accepts it too and
// matches the same texts; no input panics.
func FuzzPattern(f *testing.F) {
	for i, p := range patternCases {
		f.Add(p, patternTexts[i%len(patternTexts)])
	}
	f.Fuzz(func(t *testing.T, src, s string) {
		if len(src) > 64 {
			return
		}
		p, err := compilePattern(src)
		if err != nil {
			return
		}
		re, rerr := regexp.Compile(src)
		if rerr != nil {
			t.Fatalf("%q: accepted, regexp refuses it: %v", src, rerr)
		}
		if got, want := p.MatchString(s), re.MatchString(s); got != want {
			t.Fatalf("%q on %q: %v, regexp %v", src, s, got, want)
		}
	})
}
