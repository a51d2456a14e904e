package abi

import (
	"strconv"

	"github.com/kwire/kwire/internal/jsonx"
)

// The JSON objects this package writes are built one field a call: each helper appends
// `,"key":` and the value (keys are ASCII constants, written as they are). An object's
// first field is written with its opening brace.

func appendInt(b []byte, key string, v int64) []byte {
	return strconv.AppendInt(jsonx.Key(b, false, key), v, 10)
}

// appendInt64 writes an int64 as a decimal string, as kwire's JSON form does, so that
// no host rounds it.
func appendInt64(b []byte, key string, v int64) []byte {
	return jsonx.AppendInt64(jsonx.Key(b, false, key), v)
}

func appendString(b []byte, key, s string) []byte {
	return jsonx.AppendString(jsonx.Key(b, false, key), s)
}

func appendBool(b []byte, key string, v bool) []byte {
	return strconv.AppendBool(jsonx.Key(b, false, key), v)
}

// appendKnownString leaves out a string that is not known (empty).
func appendKnownString(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendString(b, key, s)
}

// appendKnownInt leaves out a number that is not known (negative).
func appendKnownInt(b []byte, key string, v int) []byte {
	if v < 0 {
		return b
	}
	return appendInt(b, key, int64(v))
}
