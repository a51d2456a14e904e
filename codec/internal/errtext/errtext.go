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
