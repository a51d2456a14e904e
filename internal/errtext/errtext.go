// Package errtext builds the codec's error values without package fmt. fmt brings
// reflection and its formatting tables into every program that reaches it, which in a
// WebAssembly module costs a few hundred kilobytes; the codec's errors need only string
// concatenation.
package errtext

import (
	"runtime"
	"strconv"
)

// wrapped is an error with its own text that unwraps to a cause, as fmt.Errorf's %w.
type wrapped struct {
	msg   string
	cause error
}

func (e *wrapped) Error() string { return e.msg }
func (e *wrapped) Unwrap() error { return e.cause }

// Wrap returns an error whose text is msg and which errors.Is and errors.As see
// through to cause.
func Wrap(msg string, cause error) error { return &wrapped{msg: msg, cause: cause} }

// wrappedAll is an error with its own text that unwraps to several causes, as
// fmt.Errorf with more than one %w.
type wrappedAll struct {
	msg    string
	causes []error
}

func (e *wrappedAll) Error() string   { return e.msg }
func (e *wrappedAll) Unwrap() []error { return e.causes }

// WrapAll returns an error whose text is msg and which errors.Is and errors.As see
// through to each non-nil cause, in order, as fmt.Errorf with one %w per cause.
func WrapAll(msg string, causes ...error) error {
	kept := make([]error, 0, len(causes))
	for _, c := range causes {
		if c != nil {
			kept = append(kept, c)
		}
	}
	return &wrappedAll{msg: msg, causes: kept}
}

// Text renders err as fmt's %v does for an error (its Error text, "<nil>" for nil).
func Text(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// Panic renders a recovered panic value for an error's detail.
func Panic(p any) string {
	switch v := p.(type) {
	case runtime.Error:
		return v.Error()
	case error:
		return v.Error()
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	}
	return "panic of an unexpected type"
}

// Range renders "valid lo-hi".
func Range(lo, hi int16) string {
	return "valid " + strconv.Itoa(int(lo)) + "-" + strconv.Itoa(int(hi))
}

// Suggest returns the names closest to name for a "did you mean" (case-insensitive
// edit distance, at most a third of the name's length and at least 2; a name that
// differs only in case, or that name starts, comes first), at most three; nil when
// none is close.
func Suggest(name string, names []string) []string {
	if name == "" {
		return nil
	}
	lower := toLower(name)
	limit := len(name) / 3
	if limit < 2 {
		limit = 2
	}
	best := limit + 1
	var out []string
	for _, n := range names {
		ln := toLower(n)
		d := distance(lower, ln)
		if d > 0 && len(ln) > len(lower) && ln[:len(lower)] == lower {
			d = 1 // "fetch" for "FetchRequest"
		}
		if ln == lower {
			d = 0
		}
		switch {
		case d < best:
			best, out = d, append(out[:0], n)
		case d == best && len(out) < 3:
			out = append(out, n)
		}
	}
	if best > limit {
		return nil
	}
	return out
}

// DidYouMean is "; did you mean A?" (or "A or B?", "A, B or C?") for the
// suggestions of Suggest, "" when there are none.
func DidYouMean(name string, names []string) string {
	s := Suggest(name, names)
	if len(s) == 0 {
		return ""
	}
	b := "; did you mean "
	for i, n := range s {
		switch {
		case i == 0:
		case i == len(s)-1:
			b += " or "
		default:
			b += ", "
		}
		b += n
	}
	return b + "?"
}

func toLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// distance is the Levenshtein distance of a and b (bytes).
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			if prev[j]+1 < c {
				c = prev[j] + 1
			}
			if cur[j-1]+1 < c {
				c = cur[j-1] + 1
			}
			cur[j] = c
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
