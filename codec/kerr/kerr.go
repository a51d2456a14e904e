// Package kerr is Kafka's table of protocol error codes: the int16 ErrorCode fields of
// responses, with Kafka's names, whether Kafka treats each as retriable, and a conversion
// to a Go error.
//
// The table covers every code known to the Kafka releases pinned in codec/spec.lock
// (kafka-clients 3.9.2 and 4.4.0), and is tested against a dump of Kafka's own
// org.apache.kafka.common.protocol.Errors for each of them. A code that a later release
// drops stays in the table, with a note in its doc comment, so responses from older
// brokers still name their errors; no code was dropped between 3.9.2 and 4.4.0.
//
// Constant names are Kafka's enum names in Go CamelCase, with "ID" kept as an initialism:
// UNKNOWN_TOPIC_OR_PARTITION is UnknownTopicOrPartition, UNKNOWN_MEMBER_ID is
// UnknownMemberID. The descriptions returned by Message are kwire's own.
//
// Nothing here allocates for a known code, starts goroutines or does I/O.
package kerr

import "strconv"

// Code is a Kafka protocol error code, as carried in the ErrorCode fields of responses.
// Any int16 is a valid Code; Known reports whether Kafka defines it.
type Code int16

// entry is one row of the table: the facts Kafka defines for a code plus kwire's own
// short description.
type entry struct {
	code      Code
	name      string
	retriable bool
	message   string
}

const (
	minCode = UnknownServerError
	maxCode = minCode + Code(len(table)) - 1
)

// errs holds the *Error returned by Err for each known code, so that Err allocates
// nothing and returns the same pointer for the same code.
var errs = func() (e [len(table)]Error) {
	for i := range e {
		e[i].code = minCode + Code(i)
	}
	return e
}()

// lookup returns the table entry for c, or nil when Kafka does not define c.
func (c Code) lookup() *entry {
	if c < minCode || c > maxCode {
		return nil
	}
	return &table[c-minCode]
}

// Known reports whether c is a code Kafka defines.
func (c Code) Known() bool { return c.lookup() != nil }

// String returns Kafka's enum name for c ("UNKNOWN_TOPIC_OR_PARTITION"), or
// "UNKNOWN_CODE(n)" for a code Kafka does not define.
func (c Code) String() string {
	if e := c.lookup(); e != nil {
		return e.name
	}
	return "UNKNOWN_CODE(" + strconv.Itoa(int(c)) + ")"
}

// Retriable reports whether Kafka's exception for c is a RetriableException, that is
// whether Kafka's clients may retry the failed operation as it is. It is false for None
// and for unknown codes.
func (c Code) Retriable() bool {
	if e := c.lookup(); e != nil {
		return e.retriable
	}
	return false
}

// Message returns a short description of c, or "unknown error code" for a code Kafka
// does not define.
func (c Code) Message() string {
	if e := c.lookup(); e != nil {
		return e.message
	}
	return "unknown error code"
}

// Err returns nil for None and otherwise an *Error carrying c. For a known code the
// same pointer is returned on every call and nothing is allocated.
func (c Code) Err() error {
	if c == None {
		return nil
	}
	if c.Known() {
		return &errs[c-minCode]
	}
	return &Error{code: c}
}

// All returns every code Kafka defines, in ascending order. The slice is new on each
// call.
func All() []Code {
	all := make([]Code, len(table))
	for i := range table {
		all[i] = table[i].code
	}
	return all
}

// Error is a non-zero Kafka error code as a Go error. Get one from Code.Err; two
// *Error values match under errors.Is when their codes are equal, so
// errors.Is(err, kerr.UnknownTopicOrPartition.Err()) tests for that code even through
// wrapping. errors.As(err, &e) with e of type *Error recovers the code.
type Error struct {
	code Code
}

// Code returns the Kafka error code e carries.
func (e *Error) Code() Code { return e.code }

// Retriable reports whether Kafka treats e's code as retriable (see Code.Retriable).
func (e *Error) Retriable() bool { return e.code.Retriable() }

// Error returns "kafka error CODE_NAME (n): description".
func (e *Error) Error() string {
	return "kafka error " + e.code.String() + " (" + strconv.Itoa(int(e.code)) + "): " + e.code.Message()
}

// Is reports whether target is an *Error with the same code, which lets errors.Is
// compare a wrapped kafka error against Code.Err of the expected code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && t.code == e.code
}
