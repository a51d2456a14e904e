package wire

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// Causes of encode failures. An EncodeError wraps one of these.
var (
	// ErrNonDefault means a field the version lacks holds a non-default value and the
	// field is not ignorable.
	ErrNonDefault = errors.New("field holds a non-default value the version cannot carry")
	// ErrNotNullable means a null value where the version forbids it.
	ErrNotNullable = errors.New("null is not allowed at this version")
	// ErrTooLong means a string, bytes or array is longer than its length prefix allows.
	ErrTooLong = errors.New("value too long to serialize")
	// ErrBadTags means unknown tagged fields are out of order or collide with a known tag.
	ErrBadTags = errors.New("invalid unknown tagged fields")
	// ErrVersion means the version is outside the message's valid range.
	ErrVersion = errors.New("unsupported version")
)

// Encoder carries the first encode failure and its field path; the bytes themselves
// travel in a local slice through generated code.
type Encoder struct {
	Err    error
	Detail string
	path   []string
}

// Fail records a failure unless one is already recorded.
func (e *Encoder) Fail(err error, detail string) {
	if e.Err == nil {
		e.Err, e.Detail = err, detail
	}
}

// Push adds one path segment while unwinding from a failure.
func (e *Encoder) Push(seg string) { e.path = append(e.path, seg) }

// PushIndex adds an array index segment while unwinding from a failure.
func (e *Encoder) PushIndex(i int) { e.path = append(e.path, "["+strconv.Itoa(i)+"]") }

// Path returns the recorded field path, outermost first.
func (e *Encoder) Path() string { return joinPath(e.path) }

// AppendUvarint appends v as an unsigned LEB128 varint.
func AppendUvarint(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// UvarintLen is the encoded size of v.
func UvarintLen(v uint32) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// TooLong is the failure detail for a string over Kafka's 32767-byte limit.
func TooLong(n int) string {
	return "string of " + strconv.Itoa(n) + " bytes; the limit is 32767"
}

// TaggedField is one tagged field kept as raw bytes.
type TaggedField struct {
	Tag  uint32
	Data []byte
}

// The Append functions below are the encode fast path: generated code keeps the buffer
// in a local variable and only touches an Encoder to report a failure.

// AppendBool appends 1 or 0.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// AppendInt16 appends a big-endian int16.
func AppendInt16(b []byte, v int16) []byte { return binary.BigEndian.AppendUint16(b, uint16(v)) }

// AppendUint16 appends a big-endian uint16.
func AppendUint16(b []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(b, v) }

// AppendInt32 appends a big-endian int32.
func AppendInt32(b []byte, v int32) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }

// AppendUint32 appends a big-endian uint32.
func AppendUint32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }

// AppendInt64 appends a big-endian int64.
func AppendInt64(b []byte, v int64) []byte { return binary.BigEndian.AppendUint64(b, uint64(v)) }

// AppendFloat64 appends a big-endian IEEE 754 double.
func AppendFloat64(b []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(b, math.Float64bits(v))
}

// AppendLength appends a length or count prefix: uvarint(n+1) when compact, else int32
// when wide, else int16. n is -1 for null.
func AppendLength(b []byte, n int, compact, wide bool) []byte {
	switch {
	case compact:
		return AppendUvarint(b, uint32(n+1))
	case wide:
		return binary.BigEndian.AppendUint32(b, uint32(int32(n)))
	}
	return binary.BigEndian.AppendUint16(b, uint16(int16(n)))
}

// AppendString appends a string; the caller has checked len(s) <= 32767.
func AppendString(b []byte, s string, compact bool) []byte {
	b = AppendLength(b, len(s), compact, false)
	return append(b, s...)
}

// AppendNullableString appends a string or null (nil).
func AppendNullableString(b []byte, s *string, compact bool) []byte {
	if s == nil {
		return AppendLength(b, -1, compact, false)
	}
	return AppendString(b, *s, compact)
}

// AppendBytes appends a byte string; nil is null when nullable, else empty.
func AppendBytes(b []byte, v []byte, compact, nullable bool) []byte {
	if v == nil && nullable {
		return AppendLength(b, -1, compact, true)
	}
	b = AppendLength(b, len(v), compact, true)
	return append(b, v...)
}

// AppendArrayLen appends an array count, or null.
func AppendArrayLen(b []byte, n int, null, compact bool) []byte {
	if null {
		return AppendLength(b, -1, compact, true)
	}
	return AppendLength(b, n, compact, true)
}

// BeginTag appends a tag and a one-byte size placeholder; it returns the buffer and the
// offset where the field's data starts.
func BeginTag(b []byte, tag uint32) ([]byte, int) {
	b = AppendUvarint(b, tag)
	b = append(b, 0)
	return b, len(b)
}

// EndTag writes the size of the tagged field begun at start, widening the placeholder
// when the size needs more than one byte.
func EndTag(b []byte, start int) []byte {
	size := len(b) - start
	n := UvarintLen(uint32(size))
	if n == 1 {
		b[start-1] = byte(size)
		return b
	}
	for i := 1; i < n; i++ {
		b = append(b, 0)
	}
	copy(b[start-1+n:], b[start:start+size])
	AppendUvarint(b[:start-1], uint32(size))
	return b
}

// AppendRawTag appends one unknown tagged field as it was read.
func AppendRawTag(b []byte, tag uint32, data []byte) []byte {
	b = AppendUvarint(b, tag)
	b = AppendUvarint(b, uint32(len(data)))
	return append(b, data...)
}

// Reset clears a failure and the path, keeping the path buffer.
func (e *Encoder) Reset() { *e = Encoder{path: e.path[:0]} }

// WriteUnknownTags appends the tagged fields u[i:] that sort below limit (all of them
// when limit < 0), checking that they ascend after last and do not reuse the known tag
// limit; it returns the buffer, the index of the first field not written and the last
// tag written. Failures go to w, which stays sticky.
func WriteUnknownTags(b []byte, w *Encoder, u []TaggedField, i int, last int64, limit int64) ([]byte, int, int64) {
	for ; i < len(u); i++ {
		t := int64(u[i].Tag)
		if limit >= 0 && t >= limit {
			if t == limit {
				w.Fail(ErrBadTags, "unknown tag "+strconv.FormatInt(t, 10)+" is a tag this version defines")
			}
			break
		}
		if t <= last {
			w.Fail(ErrBadTags, "unknown tags must ascend: "+strconv.FormatInt(t, 10)+" after "+strconv.FormatInt(last, 10))
			break
		}
		b = AppendRawTag(b, u[i].Tag, u[i].Data)
		last = t
	}
	return b, i, last
}
