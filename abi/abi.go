// Package abi is the logic of kwire's flat ABI (capi/kwire.h), transport-free: byte
// slices in, byte slices out, an int32 status per call. The wasm shims (wasm/) and the
// C shims (capi/) only move bytes between this package and their host's memory, so both
// stay a few lines per function and behave identically.
//
// Every function here returns either a result or an *Error carrying the status that
// the kw_ function returns, and never panics: a panic inside is recovered into
// StatusInternal. Results are freshly allocated (appended to the dst argument where
// there is one) and never alias the input or any state of this package, so a shim may
// hand them to its host as they are.
package abi

import (
	"errors"
	"strconv"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/internal/abitable"
	"github.com/kwire/kwire/internal/jsonx"
)

// The ABI version: kw_abi_version returns Major<<16 | Minor (declared once, in
// internal/abitable, with the exports).
const (
	Major = abitable.Major
	Minor = abitable.Minor
)

// Version is what kw_abi_version returns.
func Version() int32 { return Major<<16 | Minor }

// Status codes, as in kwire.h.
const (
	StatusOK          int32 = 0
	StatusArg         int32 = -1
	StatusDecode      int32 = -2
	StatusEncode      int32 = -3
	StatusJSON        int32 = -4
	StatusUnknownAPI  int32 = -5
	StatusVersion     int32 = -6
	StatusTooLarge    int32 = -7
	StatusNoMem       int32 = -8
	StatusUnsupported int32 = -9
	StatusInternal    int32 = -10
)

// MaxAlloc is KW_MAX_ALLOC: the largest kw_alloc and the largest output.
const MaxAlloc = 512 << 20

// Compression codecs (KW_COMPRESSION_*) and record flags (KW_RECORDS_*).
const (
	FlagSkipCRC = 1
	// FlagInputSpans (KW_RECORDS_INPUT_SPANS) asks the frame-records calls for a
	// layout-3 table, whose spans of uncompressed records point into the input frame.
	FlagInputSpans = 2
	// FlagColumns (KW_RECORDS_COLUMNS, ABI 1.4) asks the frame-records calls for a
	// layout-4 table: the records' fields as columns (see columns.go).
	FlagColumns = 4
)

// StatusName is the category name kw_last_error_json writes for a status.
func StatusName(s int32) string {
	switch s {
	case StatusOK:
		return "ok"
	case StatusArg:
		return "arg"
	case StatusDecode:
		return "decode"
	case StatusEncode:
		return "encode"
	case StatusJSON:
		return "json"
	case StatusUnknownAPI:
		return "unknown_api"
	case StatusVersion:
		return "version"
	case StatusTooLarge:
		return "too_large"
	case StatusNoMem:
		return "nomem"
	case StatusUnsupported:
		return "unsupported"
	case StatusInternal:
		return "internal"
	}
	return "status " + strconv.Itoa(int(s))
}

// Error is a failed ABI call: the status and what kw_last_error reports.
type Error struct {
	Status  int32
	Text    string
	Message string // message being decoded or encoded, when known
	Version int    // its version, -1 when unknown
	Path    string // field path, JSON path or record location, when known
	Offset  int    // byte offset in the input (or JSON text), -1 when unknown
	// Hint, for a response that failed to decode, is the one other version of its api
	// at which the frame decodes (codec.DecodeError.Hint); nil when there is none.
	Hint *codec.VersionHint
}

func (e *Error) Error() string { return e.Text }

// AppendJSON appends the kw_last_error_json form of e.
func (e *Error) AppendJSON(b []byte) []byte {
	b = append(b, `{"status":`...)
	b = strconv.AppendInt(b, int64(e.Status), 10)
	b = appendString(b, "category", StatusName(e.Status))
	b = appendString(b, "text", e.Text)
	b = appendKnownString(b, "message", e.Message)
	b = appendKnownInt(b, "version", e.Version)
	b = appendKnownString(b, "path", e.Path)
	b = appendKnownInt(b, "offset", e.Offset)
	if e.Hint != nil {
		b = append(b, `,"hint":{"message":`...)
		b = jsonx.AppendString(b, e.Hint.Message)
		b = appendInt(b, "version", int64(e.Hint.Version))
		b = appendString(b, "text", e.Hint.String())
		b = append(b, '}')
	}
	return append(b, '}')
}

// OKJSON is kw_last_error_json after a success.
const OKJSON = `{"status":0}`

// StatusOf returns the status of an error returned by this package (StatusOK for nil).
func StatusOf(err error) int32 {
	if err == nil {
		return StatusOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return StatusInternal
}

// AsError returns err as an *Error (nil for nil), classifying foreign errors as internal.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return newErr(StatusInternal, "kwire: internal error: "+err.Error())
}

// newErr is an error with status and text, tied to no version or offset. The texts
// are built without package fmt, which would add a few hundred kilobytes to kwire.wasm.
func newErr(status int32, text string) *Error {
	return &Error{Status: status, Text: text, Version: -1, Offset: -1}
}

// ArgText is a KW_ERR_ARG error with the text "kwire: " + text.
func ArgText(text string) *Error { return newErr(StatusArg, "kwire: "+text) }

// Recovered turns a recovered panic value into a KW_ERR_INTERNAL error.
func Recovered(p any) *Error {
	return newErr(StatusInternal, "kwire: internal error (recovered panic): "+panicText(p))
}

// panicText renders a recovered panic value as fmt's %v does for the values panics
// carry: errors (runtime errors among them), Stringers, strings and ints. A value of any
// other type is named only as such, and one whose Error or String method panics in turn
// is rendered without it.
func panicText(p any) (s string) {
	defer func() {
		if recover() != nil {
			s = "(a panic value whose Error or String method panics)"
		}
	}()
	switch v := p.(type) {
	case nil:
		return "<nil>"
	case error:
		return v.Error()
	case interface{ String() string }:
		return v.String()
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	}
	return "(a panic value of an unprintable type)"
}

// decimal renders an integer in decimal, as fmt's %d does.
func decimal[T ~int8 | ~int16 | ~int32 | ~int | ~int64](v T) string {
	return strconv.FormatInt(int64(v), 10)
}

// hexadecimal renders an integer in lower-case hexadecimal, as fmt's %x does (a negative value
// as "-" and the hexadecimal of its magnitude).
func hexadecimal[T ~int8 | ~int16 | ~int32 | ~int | ~int64](v T) string {
	return strconv.FormatInt(int64(v), 16)
}

// guard recovers a panic into *err. Every exported operation defers it.
func guard(err *error) {
	if p := recover(); p != nil {
		*err = Recovered(p)
	}
}

// sentinel is an error a lower package wraps into its errors and the status that
// reports it.
type sentinel struct {
	err    error
	status int32
}

// sentinelStatus is the status of the first of sentinels that err wraps, else def.
func sentinelStatus(err error, def int32, sentinels []sentinel) int32 {
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.status
		}
	}
	return def
}

var (
	decodeSentinels = []sentinel{
		{codec.ErrTooLarge, StatusTooLarge},
		{codec.ErrUnknownAPI, StatusUnknownAPI},
		{codec.ErrVersion, StatusVersion},
	}
	recordsSentinels = []sentinel{
		{records.ErrTooLarge, StatusTooLarge},
		{records.ErrUnsupported, StatusUnsupported},
	}
)

// fromDecode classifies a codec decode error.
func fromDecode(err error) *Error {
	var de *codec.DecodeError
	if errors.As(err, &de) {
		st := sentinelStatus(de.Err, StatusDecode, decodeSentinels)
		return &Error{Status: st, Text: de.Error(), Message: de.Message, Version: int(de.Version), Path: de.Path, Offset: de.Offset, Hint: de.Hint}
	}
	if errors.Is(err, codec.ErrVersion) {
		return newErr(StatusVersion, err.Error())
	}
	return newErr(StatusDecode, err.Error())
}

// fromEncode classifies a codec encode error.
func fromEncode(err error) *Error {
	var ee *codec.EncodeError
	if errors.As(err, &ee) {
		st := StatusEncode
		if errors.Is(ee.Err, codec.ErrTooLarge) {
			st = StatusTooLarge
		}
		return &Error{Status: st, Text: ee.Error(), Message: ee.Message, Version: int(ee.Version), Path: ee.Path, Offset: -1}
	}
	if errors.Is(err, codec.ErrVersion) {
		return newErr(StatusVersion, err.Error())
	}
	return newErr(StatusEncode, err.Error())
}

// fromJSON classifies a JSON error of the codec or the transcoder (path and offset
// already refer to the caller's whole text).
func fromJSON(je *codec.JSONError) *Error {
	return &Error{Status: StatusJSON, Text: je.Error(), Message: je.Message, Version: -1, Path: je.Path, Offset: je.Offset}
}

// classify turns an error of the transcoder into the ABI's *Error.
func classify(err error) *Error {
	var ve *codec.VersionError
	if errors.As(err, &ve) {
		return &Error{Status: StatusVersion, Text: err.Error(), Message: ve.Message, Version: int(ve.Version), Offset: -1}
	}
	var je *codec.JSONError
	if errors.As(err, &je) {
		return fromJSON(je)
	}
	var ee *codec.EncodeError
	if errors.As(err, &ee) {
		return fromEncode(err)
	}
	if errors.Is(err, codec.ErrUnknownAPI) {
		var de *codec.DecodeError
		if errors.As(err, &de) {
			return fromDecode(err)
		}
		return newErr(StatusUnknownAPI, err.Error())
	}
	return fromDecode(err)
}

// fromRecords classifies an error of the records package.
func fromRecords(err error, encoding bool) *Error {
	st := StatusDecode
	if encoding {
		st = StatusEncode
	}
	e := newErr(sentinelStatus(err, st, recordsSentinels), err.Error())
	var re *records.Error
	if errors.As(err, &re) {
		loc := ""
		if re.BaseOffset >= 0 {
			loc = "batch " + strconv.FormatInt(re.BaseOffset, 10)
		} else {
			loc = "batch"
		}
		if re.Record >= 0 {
			loc += ", record " + strconv.Itoa(re.Record)
		}
		if re.Field != "" {
			loc += ", field " + re.Field
		}
		e.Path = loc
		e.Offset = re.Offset
		e.Message = "records"
	}
	return e
}

// name16 checks that an int32 from the boundary fits Kafka's int16.
func fits16(v int32) bool { return v >= -1<<15 && v < 1<<15 }
