// Package wire holds Kafka's primitive encodings: big-endian integers, varints,
// length-prefixed strings, bytes and arrays in their classic and compact forms, and the
// tagged-field section of flexible versions. The generated message code is written in
// terms of these functions.
//
// The Reader is sticky: the first failure is recorded with its byte offset and every
// later read returns a zero value, so generated code checks once per field and unwinds,
// adding the field's name to the error path on the way out.
package wire

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"unsafe"
)

// Causes of decode failures. A DecodeError wraps one of these (errors.Is works).
var (
	// ErrTruncated means the input ended before a field did, or a length or count
	// prefix claims more than the bytes that remain.
	ErrTruncated = errors.New("input truncated")
	// ErrLength means a length or count prefix is negative other than -1 for null.
	ErrLength = errors.New("invalid length")
	// ErrNull means null arrived where the version does not allow it.
	ErrNull = errors.New("null for a non-nullable field")
	// ErrVarint means a varint ran past its maximum width.
	ErrVarint = errors.New("malformed varint")
	// ErrTags means a tagged-field section is malformed (order, size or duplicate).
	ErrTags = errors.New("malformed tagged fields")
	// ErrTrailing means bytes remained after the message ended.
	ErrTrailing = errors.New("trailing bytes after message")
	// ErrTooLarge means a frame or element exceeds a configured limit.
	ErrTooLarge = errors.New("exceeds limit")
)

// Reader decodes primitives from Src starting at Off.
type Reader struct {
	Src []byte
	Off int
	// UnsafeStrings makes decoded strings alias Src instead of copying them. The caller
	// must then keep Src alive and unchanged for as long as the strings are used.
	UnsafeStrings bool

	// Err is the first failure, ErrOff the offset at which the failing read started and
	// Detail a short explanation ("need 4 bytes, have 1").
	Err    error
	ErrOff int
	Detail string
	path   []string // innermost first

	arena []byte   // string bytes of this decode
	slab  []string // string headers for nullable strings of this decode
}

// Fail records a failure at offset off unless one is already recorded.
func (r *Reader) Fail(err error, off int, detail string) {
	if r.Err == nil {
		r.Err, r.ErrOff, r.Detail = err, off, detail
	}
}

// Push adds one path segment (a field name) while unwinding from a failure.
func (r *Reader) Push(seg string) { r.path = append(r.path, seg) }

// PushIndex adds an array index segment while unwinding from a failure.
func (r *Reader) PushIndex(i int) { r.path = append(r.path, "["+strconv.Itoa(i)+"]") }

// Path returns the recorded field path, outermost first: "topicData[0].name".
func (r *Reader) Path() string { return joinPath(r.path) }

func joinPath(segs []string) string {
	var b []byte
	for i := len(segs) - 1; i >= 0; i-- {
		s := segs[i]
		if len(b) > 0 && (s == "" || s[0] != '[') {
			b = append(b, '.')
		}
		b = append(b, s...)
	}
	return string(b)
}

// Remaining is the number of unread bytes.
func (r *Reader) Remaining() int { return len(r.Src) - r.Off }

// short records a truncation; kept out of line so the primitive reads inline.
//
//go:noinline
func (r *Reader) short(n int) {
	r.Fail(ErrTruncated, r.Off, "need "+strconv.Itoa(n)+" bytes, have "+strconv.Itoa(len(r.Src)-r.Off))
}

// Bool reads one byte; any non-zero value is true, as in Kafka.
func (r *Reader) Bool() bool { return r.Int8() != 0 }

// Int8 reads a signed byte.
func (r *Reader) Int8() int8 {
	if r.Off >= len(r.Src) {
		r.short(1)
		return 0
	}
	v := r.Src[r.Off]
	r.Off++
	return int8(v)
}

// Int16 reads a big-endian int16.
func (r *Reader) Int16() int16 {
	if len(r.Src)-r.Off < 2 {
		r.short(2)
		return 0
	}
	v := binary.BigEndian.Uint16(r.Src[r.Off:])
	r.Off += 2
	return int16(v)
}

// Uint16 reads a big-endian uint16.
func (r *Reader) Uint16() uint16 { return uint16(r.Int16()) }

// Int32 reads a big-endian int32.
func (r *Reader) Int32() int32 {
	if len(r.Src)-r.Off < 4 {
		r.short(4)
		return 0
	}
	v := binary.BigEndian.Uint32(r.Src[r.Off:])
	r.Off += 4
	return int32(v)
}

// Uint32 reads a big-endian uint32.
func (r *Reader) Uint32() uint32 { return uint32(r.Int32()) }

// Int64 reads a big-endian int64.
func (r *Reader) Int64() int64 {
	if len(r.Src)-r.Off < 8 {
		r.short(8)
		return 0
	}
	v := binary.BigEndian.Uint64(r.Src[r.Off:])
	r.Off += 8
	return int64(v)
}

// Float64 reads a big-endian IEEE 754 double.
func (r *Reader) Float64() float64 { return math.Float64frombits(uint64(r.Int64())) }

// UUID reads 16 raw bytes.
func (r *Reader) UUID() (u [16]byte) {
	if len(r.Src)-r.Off < 16 {
		r.short(16)
		return
	}
	copy(u[:], r.Src[r.Off:])
	r.Off += 16
	return
}

// Uvarint reads an unsigned LEB128 varint of at most 5 bytes (Kafka's unsigned varint).
func (r *Reader) Uvarint() uint32 {
	var v uint32
	start := r.Off
	for shift := 0; shift < 35; shift += 7 {
		if r.Off >= len(r.Src) {
			r.Off = start
			r.short(1)
			return 0
		}
		b := r.Src[r.Off]
		r.Off++
		if shift == 28 && b > 0x0f {
			r.Off = start
			r.Fail(ErrVarint, start, "unsigned varint overflows 32 bits")
			return 0
		}
		v |= uint32(b&0x7f) << shift
		if b < 0x80 {
			return v
		}
	}
	r.Off = start
	r.Fail(ErrVarint, start, "unsigned varint longer than 5 bytes")
	return 0
}

// length reads a length prefix: int16 or int32 in classic form, uvarint(n+1) in compact
// form. It returns -1 for null and checks that n*minElem bytes remain.
func (r *Reader) length(compact bool, wide bool, minElem int) int {
	start := r.Off
	var n int
	if compact {
		u := r.Uvarint()
		if r.Err != nil {
			return -1
		}
		n = int(u) - 1
	} else if wide {
		n = int(r.Int32())
	} else {
		n = int(r.Int16())
	}
	if r.Err != nil {
		return -1
	}
	if n < -1 {
		r.Fail(ErrLength, start, "negative length "+strconv.Itoa(n))
		return -1
	}
	if n > 0 && n > (len(r.Src)-r.Off)/minElem {
		r.Fail(ErrTruncated, start, "length "+strconv.Itoa(n)+" exceeds the "+strconv.Itoa(len(r.Src)-r.Off)+" bytes that remain")
		return -1
	}
	return n
}

func (r *Reader) nullErr(start int) {
	r.Fail(ErrNull, start, "null length")
}

func (r *Reader) str(n int) string {
	if n > math.MaxInt16 {
		// Kafka's readers refuse these too; its writers cannot produce them.
		r.Fail(ErrLength, r.Off, "string of "+strconv.Itoa(n)+" bytes; the limit is 32767")
		return ""
	}
	b := r.Src[r.Off : r.Off+n]
	r.Off += n
	if n == 0 {
		return ""
	}
	if r.UnsafeStrings {
		return unsafe.String(&b[0], n)
	}
	// Copy into a chunk shared by the strings of this decode: one allocation for many
	// strings. A chunk lives as long as any string in it.
	if n > cap(r.arena)-len(r.arena) {
		if n >= arenaChunk/4 {
			return string(b)
		}
		// Chunks start small and double, so a message with a few short strings does
		// not pay for a large one.
		size := 2 * cap(r.arena)
		if size < 256 {
			size = 256
		}
		if size > arenaChunk {
			size = arenaChunk
		}
		for size < n {
			size *= 2
		}
		r.arena = make([]byte, 0, size)
	}
	start := len(r.arena)
	r.arena = append(r.arena, b...)
	return unsafe.String(&r.arena[start], n)
}

// arenaChunk is the size of the chunks strings are copied into, and slabChunk the number
// of string headers per chunk of nullable strings.
const (
	arenaChunk = 8192
	slabChunk  = 32
)

// strPtr returns a pointer to a copy of s, carved from a slab of string headers.
func (r *Reader) strPtr(s string) *string {
	if len(r.slab) == 0 {
		r.slab = make([]string, slabChunk)
	}
	p := &r.slab[0]
	r.slab = r.slab[1:]
	*p = s
	return p
}

// String reads a non-nullable string (int16 length, or compact when compact is true).
func (r *Reader) String(compact bool) string {
	start := r.Off
	n := r.length(compact, false, 1)
	if n < 0 {
		if r.Err == nil {
			r.nullErr(start)
		}
		return ""
	}
	return r.str(n)
}

// NullableString reads a string that may be null (nil).
func (r *Reader) NullableString(compact bool) *string {
	n := r.length(compact, false, 1)
	if n < 0 {
		return nil
	}
	return r.strPtr(r.str(n))
}

// StringPtr reads a non-nullable string and returns a pointer to it (for fields whose
// type is *string because other versions allow null).
func (r *Reader) StringPtr(compact bool) *string {
	s := r.String(compact)
	if r.Err != nil {
		return nil
	}
	return r.strPtr(s)
}

// Bytes reads a non-nullable byte string (int32 length, or compact). The result aliases
// Src.
func (r *Reader) Bytes(compact bool) []byte {
	start := r.Off
	n := r.length(compact, true, 1)
	if n < 0 {
		if r.Err == nil {
			r.nullErr(start)
		}
		return nil
	}
	b := r.Src[r.Off : r.Off+n : r.Off+n]
	r.Off += n
	return b
}

// NullableBytes reads a byte string that may be null (nil). A present empty value is a
// non-nil empty slice. The result aliases Src.
func (r *Reader) NullableBytes(compact bool) []byte {
	n := r.length(compact, true, 1)
	if n < 0 {
		return nil
	}
	b := r.Src[r.Off : r.Off+n : r.Off+n]
	r.Off += n
	return b
}

// ArrayLen reads an array count; minElem is the smallest wire size of one element, so a
// count that cannot fit in the remaining bytes fails before anything is allocated. It
// returns -1 for null; when nullable is false, null is an error.
func (r *Reader) ArrayLen(compact, nullable bool, minElem int) int {
	start := r.Off
	n := r.length(compact, true, minElem)
	if n < 0 && !nullable && r.Err == nil {
		r.nullErr(start)
	}
	return n
}

// StructMarker reads the presence byte of a nullable struct: -1 (any negative) is null.
func (r *Reader) StructMarker() bool { return r.Int8() >= 0 }

// NoTag is the tag TagHeader returns when it fails: above every tag a schema declares, so
// a generated decoder's switch takes its default, whose Raw(end) then reads nothing.
const NoTag = ^uint32(0)

// TagHeader reads the tag and size of one tagged field, checking that tags ascend and
// that the size fits. It returns the end offset of the field's data; on failure it
// returns NoTag and the current offset, so a caller may go on without checking r.Err.
func (r *Reader) TagHeader(prev int64) (tag uint32, end int) {
	start := r.Off
	tag = r.Uvarint()
	size := r.Uvarint()
	if r.Err != nil {
		return NoTag, r.Off
	}
	if int64(tag) <= prev {
		r.Fail(ErrTags, start, "tag "+strconv.FormatUint(uint64(tag), 10)+" does not ascend after tag "+strconv.FormatInt(prev, 10))
		return NoTag, r.Off
	}
	if int(size) > len(r.Src)-r.Off {
		r.Fail(ErrTags, start, "tagged field size "+strconv.FormatUint(uint64(size), 10)+" exceeds the "+strconv.Itoa(len(r.Src)-r.Off)+" bytes that remain")
		return NoTag, r.Off
	}
	return tag, r.Off + int(size)
}

// Limit restricts the reader to end and returns the previous Src so Unlimit can restore
// it; used to decode one known tagged field within its declared size.
func (r *Reader) Limit(end int) []byte {
	prev := r.Src
	r.Src = r.Src[:end]
	return prev
}

// Unlimit restores Src after Limit and checks that the field used exactly its size.
func (r *Reader) Unlimit(prev []byte, tag uint32) {
	end := len(r.Src)
	r.Src = prev
	if r.Err == nil && r.Off != end {
		r.Fail(ErrTags, r.Off, "tagged field "+strconv.FormatUint(uint64(tag), 10)+" left "+strconv.Itoa(end-r.Off)+" of its bytes unread")
	}
}

// Raw returns the next n bytes without copying.
func (r *Reader) Raw(end int) []byte {
	b := r.Src[r.Off:end:end]
	r.Off = end
	return b
}

// TagCount reads the number of tagged fields; each needs at least two bytes.
func (r *Reader) TagCount() int {
	start := r.Off
	n := r.Uvarint()
	if r.Err != nil {
		return 0
	}
	if int(n) > (len(r.Src)-r.Off)/2 {
		r.Fail(ErrTags, start, "tagged field count "+strconv.FormatUint(uint64(n), 10)+" exceeds what the remaining bytes can hold")
		return 0
	}
	return int(n)
}

// maxPrealloc bounds how far ahead of the input an array of structs is allocated: a
// count is only trusted up to 16 bytes of Go memory per remaining input byte (or 64
// KiB); past that the slice grows as elements actually decode.
const maxPreallocRatio, maxPreallocFloor = 16, 64 << 10

// Slice returns s resized to n elements, reusing its backing array when it is large
// enough. When n elements would take far more memory than the remaining input could
// describe, it returns a shorter slice and the caller appends as it decodes.
func Slice[T any](s []T, n, remaining int) []T {
	if s != nil && cap(s) >= n {
		return s[:n]
	}
	size := int(unsafe.Sizeof(*new(T)))
	if size > 0 && n > maxPreallocFloor/size && n > maxPreallocRatio*remaining/size {
		return make([]T, 0, max(maxPreallocRatio*remaining/size, maxPreallocFloor/size))
	}
	return make([]T, n)
}

// StringView reads a non-nullable string like String but returns a view of Src instead
// of a copy; the checks and failures are String's.
func (r *Reader) StringView(compact bool) []byte {
	start := r.Off
	n := r.length(compact, false, 1)
	if n < 0 {
		if r.Err == nil {
			r.nullErr(start)
		}
		return nil
	}
	return r.strView(n)
}

// NullableStringView reads a string that may be null like NullableString, returning a
// view of Src; null is (nil, true).
func (r *Reader) NullableStringView(compact bool) ([]byte, bool) {
	n := r.length(compact, false, 1)
	if n < 0 {
		return nil, r.Err == nil
	}
	return r.strView(n), false
}

func (r *Reader) strView(n int) []byte {
	if n > math.MaxInt16 {
		r.Fail(ErrLength, r.Off, "string of "+strconv.Itoa(n)+" bytes; the limit is 32767")
		return nil
	}
	b := r.Src[r.Off : r.Off+n : r.Off+n]
	r.Off += n
	return b
}

// Trailing records ErrTrailing when bytes remain after a message that must end the input.
func (r *Reader) Trailing() {
	if r.Err == nil && r.Off != len(r.Src) {
		r.Fail(ErrTrailing, r.Off, strconv.Itoa(len(r.Src)-r.Off)+" bytes left")
	}
}

// Reset makes r read src from the start, keeping its path buffer.
func (r *Reader) Reset(src []byte) {
	*r = Reader{Src: src, path: r.path[:0]}
}

// PathSegments returns the recorded path segments, innermost first.
func (r *Reader) PathSegments() []string { return r.path }
