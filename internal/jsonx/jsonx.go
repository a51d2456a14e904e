// Package jsonx writes and strictly reads the JSON form of kwire messages (see
// codec/JSON.md). The generated code drives it field by field; nothing here uses
// reflection.
package jsonx

import (
	"encoding/base64"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = AppendEscape(append(b, s[start:i]...), c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			i += size
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but break some JavaScript parsers.
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendEscape appends the JSON escape of c, an ASCII byte a string cannot hold as it
// is: a control character, '"' or '\\'.
func AppendEscape(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// AppendNullableString appends s or null.
func AppendNullableString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return AppendString(b, *s)
}

// AppendBytes appends standard base64 with padding, or null for nil when nullable.
func AppendBytes(b []byte, v []byte, nullable bool) []byte {
	if v == nil && nullable {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, v)
	return append(b, '"')
}

// AppendInt appends a JSON number. Values of up to four digits, the most common by far
// in Kafka messages (error codes, indexes, small counts, -1), skip strconv, which costs
// more in WebAssembly.
func AppendInt(b []byte, v int64) []byte {
	if v < 0 {
		if v > -10000 {
			return appendSmall(append(b, '-'), -v)
		}
		return strconv.AppendInt(b, v, 10)
	}
	if v < 10000 {
		return appendSmall(b, v)
	}
	return strconv.AppendInt(b, v, 10)
}

// appendSmall appends 0 <= v < 10000 in decimal.
func appendSmall(b []byte, v int64) []byte {
	switch {
	case v < 10:
		return append(b, byte('0'+v))
	case v < 100:
		return append(b, byte('0'+v/10), byte('0'+v%10))
	case v < 1000:
		return append(b, byte('0'+v/100), byte('0'+v/10%10), byte('0'+v%10))
	}
	return append(b, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}

// AppendInt64 appends an int64 as a JSON string so no host rounds it.
func AppendInt64(b []byte, v int64) []byte {
	b = append(b, '"')
	b = strconv.AppendInt(b, v, 10)
	return append(b, '"')
}

// AppendBool appends true or false.
func AppendBool(b []byte, v bool) []byte { return strconv.AppendBool(b, v) }

// AppendFloat64 appends the shortest round-tripping form; NaN and infinities as strings.
func AppendFloat64(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(v, -1):
		return append(b, `"-Infinity"`...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// AppendUUID appends Kafka's text form of a uuid.
func AppendUUID(b []byte, u [16]byte) []byte {
	b = append(b, '"')
	b = base64.RawURLEncoding.AppendEncode(b, u[:])
	return append(b, '"')
}

// Elem appends the start of an element of the array being written: a comma unless b
// ends with the array's '[' (no value ends with one), then open.
func Elem(b []byte, open string) []byte {
	if b[len(b)-1] != '[' {
		b = append(b, ',')
	}
	return append(b, open...)
}

// Key appends a comma when needed and the quoted key with its colon.
func Key(b []byte, first bool, key string) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// ErrSyntax and ErrType are the causes a *Error wraps.
var (
	ErrSyntax  = errors.New("invalid JSON")
	ErrType    = errors.New("wrong type")
	ErrRange   = errors.New("number out of range")
	ErrUnknown = errors.New("unknown key")
	ErrDup     = errors.New("duplicate key")
)

// Error is a failure while reading JSON, with the JSON path of the value.
type Error struct {
	Path   string // "$.topicData[0].name"
	Offset int    // byte offset in the input
	Err    error
	Detail string
}

// Error reports the JSON path, the cause and the byte offset.
func (e *Error) Error() string {
	s := "json " + e.Path + ": " + e.Err.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s + " (at byte " + strconv.Itoa(e.Offset) + ")"
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
