// Package proto holds what the typed codec (package codec) and the transcoder
// (internal/transcode) share and both must agree on: the kinds of message, the frame
// size limit and the error types. Package codec re-exports every name.
package proto

import (
	"errors"
	"strconv"

	"github.com/kwire/kwire/internal/errtext"
	"github.com/kwire/kwire/internal/wire"
)

// DefaultMaxFrameSize is the largest frame accepted unless a framer says otherwise:
// 100 MiB, the default of Kafka's socket.request.max.bytes.
const DefaultMaxFrameSize = 100 << 20

// ErrUnknownAPI is the cause of a failure naming an api key the schema lacks.
var ErrUnknownAPI = errors.New("unknown api key")

// Kind says what a message is.
type Kind int8

// The kinds of message.
const (
	KindRequest Kind = iota
	KindResponse
	KindHeader
	KindData
)

var kindNames = []string{"request", "response", "header", "data"}

// String returns "request", "response", "header" or "data".
func (k Kind) String() string { return EnumString(kindNames, 0, int(k), "Kind") }

// EnumString is the String form of a value v of an enumerated type named typ whose
// values from first up are named by names: its name, or typ(v) for a value without one.
func EnumString(names []string, first, v int, typ string) string {
	if i := v - first; i >= 0 && i < len(names) {
		return names[i]
	}
	return typ + "(" + strconv.Itoa(v) + ")"
}

// DecodeError is any failure to decode bytes.
type DecodeError struct {
	Message string // descriptor name of the outermost message being decoded
	Version int16
	Path    string // field path within the message, e.g. "topicData[0].name"
	Offset  int    // byte offset in the input where the failing read started
	Err     error  // cause: one of the wire errors (ErrTruncated, ErrLength, ...)
	Detail  string
	// Hint is set when a response frame failed to decode at the version asked for but
	// decodes cleanly, whole, at exactly one other valid version of its api: the
	// request was most likely of that version.
	Hint *VersionHint
}

// VersionHint names the version at which a response frame that failed to decode
// does decode (see DecodeError.Hint).
type VersionHint struct {
	Message string // "FetchResponse"
	Version int16
}

// String reads "the bytes decode as FetchResponse v12: was the request v12?".
func (h *VersionHint) String() string {
	v := strconv.Itoa(int(h.Version))
	return "the bytes decode as " + h.Message + " v" + v + ": was the request v" + v + "?"
}

// Error reports "kwire: decode <message> v<version> field <path> at offset <n>: <cause> (<detail>)".
func (e *DecodeError) Error() string {
	s := "kwire: decode " + e.Message
	if e.Version >= 0 {
		s += " v" + strconv.Itoa(int(e.Version))
	}
	if e.Path != "" {
		s += " field " + e.Path
	}
	s += " at offset " + strconv.Itoa(e.Offset) + ": " + errText(e.Err)
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	if e.Hint != nil {
		s += "; " + e.Hint.String()
	}
	return s
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// errText is err's text, or "<nil>" as fmt renders a nil error.
func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// EncodeError is any failure to encode a message.
type EncodeError struct {
	Message string
	Version int16
	Path    string
	Err     error
	Detail  string
}

// Error reports "kwire: encode <message> v<version> field <path>: <cause> (<detail>)".
func (e *EncodeError) Error() string {
	s := "kwire: encode " + e.Message + " v" + strconv.Itoa(int(e.Version))
	if e.Path != "" {
		s += " field " + e.Path
	}
	s += ": " + e.Err.Error()
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// Unwrap returns the cause.
func (e *EncodeError) Unwrap() error { return e.Err }

// VersionError is an encode (or JSON) call at a version the message does not have. It
// unwraps to ErrVersion.
type VersionError struct {
	Message  string // "MetadataRequest"
	Version  int16  // the version asked for
	Min, Max int16  // the message's valid versions
}

// Error reads "kwire: MetadataRequest version 99: unsupported version (valid 0-13)".
func (e *VersionError) Error() string {
	return "kwire: " + e.Message + " version " + strconv.Itoa(int(e.Version)) + ": " + wire.ErrVersion.Error() + " (" + errtext.Range(e.Min, e.Max) + ")"
}

// Unwrap returns ErrVersion.
func (e *VersionError) Unwrap() error { return wire.ErrVersion }

// JSONError is a failure to read the JSON form of a message.
type JSONError struct {
	Message string // descriptor name of the message being read
	Path    string // JSON path of the failing value, e.g. "$.topicData[0].name"
	Offset  int    // byte offset in the JSON text
	Err     error  // cause: ErrJSONSyntax, ErrJSONType, ErrJSONRange, ErrJSONUnknownKey or ErrJSONDuplicateKey
	Detail  string
}

// Error reports "kwire: <message>: json <path>: <cause>: <detail> (at byte <n>)".
func (e *JSONError) Error() string {
	s := "kwire: " + e.Message + ": json " + e.Path + ": " + e.Cause()
	return s + " (at byte " + strconv.Itoa(e.Offset) + ")"
}

// Cause is the error text without message, path and offset.
func (e *JSONError) Cause() string {
	if e.Detail != "" {
		return e.Err.Error() + ": " + e.Detail
	}
	return e.Err.Error()
}

// Unwrap returns the cause.
func (e *JSONError) Unwrap() error { return e.Err }
