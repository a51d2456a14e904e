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
