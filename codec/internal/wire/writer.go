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

// Encoder appends a message to Buf. The first failure is kept in Err with its field
// path; generated code stops after it.
type Encoder struct {
	Buf    []byte
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

// Bool appends 1 or 0.
func (e *Encoder) Bool(v bool) {
	if v {
		e.Buf = append(e.Buf, 1)
	} else {
		e.Buf = append(e.Buf, 0)
	}
}

// Int8 appends a signed byte.
func (e *Encoder) Int8(v int8) { e.Buf = append(e.Buf, byte(v)) }

// Int16 appends a big-endian int16.
func (e *Encoder) Int16(v int16) { e.Buf = binary.BigEndian.AppendUint16(e.Buf, uint16(v)) }

// Uint16 appends a big-endian uint16.
func (e *Encoder) Uint16(v uint16) { e.Buf = binary.BigEndian.AppendUint16(e.Buf, v) }

// Int32 appends a big-endian int32.
func (e *Encoder) Int32(v int32) { e.Buf = binary.BigEndian.AppendUint32(e.Buf, uint32(v)) }

// Uint32 appends a big-endian uint32.
func (e *Encoder) Uint32(v uint32) { e.Buf = binary.BigEndian.AppendUint32(e.Buf, v) }

// Int64 appends a big-endian int64.
func (e *Encoder) Int64(v int64) { e.Buf = binary.BigEndian.AppendUint64(e.Buf, uint64(v)) }

// Float64 appends a big-endian IEEE 754 double.
func (e *Encoder) Float64(v float64) {
	e.Buf = binary.BigEndian.AppendUint64(e.Buf, math.Float64bits(v))
}

// UUID appends 16 raw bytes.
func (e *Encoder) UUID(v [16]byte) { e.Buf = append(e.Buf, v[:]...) }

// Uvarint appends an unsigned LEB128 varint.
func (e *Encoder) Uvarint(v uint32) { e.Buf = AppendUvarint(e.Buf, v) }

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

func (e *Encoder) length(n int, compact, wide bool) {
	switch {
	case compact:
		e.Buf = AppendUvarint(e.Buf, uint32(n+1))
	case wide:
		e.Int32(int32(n))
	default:
		e.Int16(int16(n))
	}
}

// String appends a string. Kafka refuses strings longer than 32767 bytes in every form.
func (e *Encoder) String(s string, compact bool) {
	if len(s) > math.MaxInt16 {
		e.Fail(ErrTooLong, "string of "+strconv.Itoa(len(s))+" bytes; the limit is 32767")
		return
	}
	e.length(len(s), compact, false)
	e.Buf = append(e.Buf, s...)
}

// NullableString appends a string or null (nil).
func (e *Encoder) NullableString(s *string, compact bool) {
	if s == nil {
		e.length(-1, compact, false)
		return
	}
	e.String(*s, compact)
}

// Bytes appends a byte string; nil is written as null when nullable, else as empty.
func (e *Encoder) Bytes(b []byte, compact, nullable bool) {
	if b == nil && nullable {
		e.length(-1, compact, true)
		return
	}
	if int64(len(b)) > math.MaxInt32-1 {
		e.Fail(ErrTooLong, "bytes of "+strconv.Itoa(len(b))+" bytes")
		return
	}
	e.length(len(b), compact, true)
	e.Buf = append(e.Buf, b...)
}

// ArrayLen appends an array count, or null (-1) when null is true.
func (e *Encoder) ArrayLen(n int, null, compact bool) {
	if null {
		e.length(-1, compact, true)
		return
	}
	e.length(n, compact, true)
}

// BeginTagged starts one tagged field: it appends the tag and one placeholder byte for
// the size, and returns the offset where the field's data starts.
func (e *Encoder) BeginTagged(tag uint32) int {
	e.Buf = AppendUvarint(e.Buf, tag)
	e.Buf = append(e.Buf, 0)
	return len(e.Buf)
}

// EndTagged writes the size of the tagged field begun at start, widening the
// placeholder when the size needs more than one byte.
func (e *Encoder) EndTagged(start int) {
	size := len(e.Buf) - start
	n := UvarintLen(uint32(size))
	if n == 1 {
		e.Buf[start-1] = byte(size)
		return
	}
	for i := 1; i < n; i++ {
		e.Buf = append(e.Buf, 0)
	}
	copy(e.Buf[start-1+n:], e.Buf[start:start+size])
	AppendUvarint(e.Buf[:start-1], uint32(size))
}

// RawTagged appends one unknown tagged field as it was read.
func (e *Encoder) RawTagged(tag uint32, data []byte) {
	e.Buf = AppendUvarint(e.Buf, tag)
	e.Buf = AppendUvarint(e.Buf, uint32(len(data)))
	e.Buf = append(e.Buf, data...)
}

// TaggedField is one tagged field kept as raw bytes.
type TaggedField struct {
	Tag  uint32
	Data []byte
}
