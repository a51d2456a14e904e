package records

import (
	"errors"
	"strconv"

	"github.com/kwire/kwire/internal/errtext"
)

// Sentinel causes carried by *Error. Test for them with errors.Is.
var (
	// ErrTruncated: the input ends inside a field.
	ErrTruncated = errors.New("truncated input")
	// ErrCorrupt: a length, count or flag is impossible.
	ErrCorrupt = errors.New("corrupt data")
	// ErrCRC: the stored checksum does not match the bytes.
	ErrCRC = errors.New("checksum mismatch")
	// ErrTooLarge: decompressing would exceed Options.MaxDecompressedSize.
	ErrTooLarge = errors.New("decompressed size exceeds the limit")
	// ErrUnsupported: a magic, compression codec or frame feature kwire does not read.
	ErrUnsupported = errors.New("unsupported")
)

// Error is the error every decoder and encoder in this package returns. It names
// where the problem is: the batch (by its base offset, or the offset of a legacy
// message), the record inside it, the field, and the byte offset.
type Error struct {
	// BaseOffset is the base offset of the batch (the offset of the wrapper
	// message for a legacy message set); -1 when the batch header itself could not
	// be read that far.
	BaseOffset int64
	// Record is the index of the record inside the batch, or -1 for the batch
	// header and the batch as a whole.
	Record int
	// Field is the field being read or written: "length", "crc", "records",
	// "key", "headers[2].value", ...
	Field string
	// Offset is the byte offset of the problem. It counts from the start of the
	// input given to the decoder, except inside a compressed batch, where it
	// counts from the start of the decompressed records (Decompressed is then true).
	Offset int
	// Decompressed tells whether Offset is inside decompressed data.
	Decompressed bool
	// Err is the cause: one of the Err* sentinels, possibly wrapped with detail.
	Err error
}

// Error names the field, record, batch and byte offset, and the cause.
func (e *Error) Error() string {
	b := make([]byte, 0, 96)
	b = append(b, "records: "...)
	if e.BaseOffset >= 0 {
		b = append(b, "batch at offset "...)
		b = strconv.AppendInt(b, e.BaseOffset, 10)
	} else {
		b = append(b, "batch"...)
	}
	if e.Record >= 0 {
		b = append(b, ", record "...)
		b = strconv.AppendInt(b, int64(e.Record), 10)
	}
	if e.Field != "" {
		b = append(b, ", field "...)
		b = append(b, e.Field...)
	}
	if e.Decompressed {
		b = append(b, ", decompressed byte "...)
	} else {
		b = append(b, ", byte "...)
	}
	b = strconv.AppendInt(b, int64(e.Offset), 10)
	b = append(b, ": "...)
	if e.Err != nil {
		b = append(b, e.Err.Error()...)
	}
	return string(b)
}

// Unwrap returns the cause (ErrTruncated, ErrCorrupt, ...).
func (e *Error) Unwrap() error { return e.Err }

func newErr(base int64, rec int, field string, off int, cause error) *Error {
	return &Error{BaseOffset: base, Record: rec, Field: field, Offset: off, Err: cause}
}

// detail returns an error reading "<cause>: <format with args>" that errors.Is
// sees through to cause. The format knows the verbs the package uses, %d, %v,
// %x, %#x and %#08x, on integers, strings, errors and Stringers; it is built
// here rather than by fmt, which would bring reflection and its formatting
// tables into every WebAssembly module that decodes records.
func detail(cause error, format string, args ...any) error {
	b := make([]byte, 0, 64+len(format))
	b = append(b, cause.Error()...)
	b = append(b, ": "...)
	b = appendf(b, format, args)
	return errtext.Wrap(string(b), cause)
}

// appendf appends format with its verbs replaced by args (see detail).
func appendf(b []byte, format string, args []any) []byte {
	k := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b = append(b, c)
			continue
		}
		i++
		if format[i] == '%' {
			b = append(b, '%')
			continue
		}
		sharp, width := false, 0
		for ; i < len(format) && format[i] == '#'; i++ {
			sharp = true
		}
		for ; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
			width = width*10 + int(format[i]-'0')
		}
		if i == len(format) {
			break
		}
		verb := format[i]
		if k == len(args) {
			b = append(b, "%!"...)
			b = append(b, verb)
			b = append(b, "(MISSING)"...)
			continue
		}
		b = appendArg(b, verb, sharp, width, args[k])
		k++
	}
	return b
}

// appendArg appends one argument: integers in decimal for %d and %v, in hex
// for %x (0x first with #, zero-padded to width); strings, errors and
// Stringers as their text.
func appendArg(b []byte, verb byte, sharp bool, width int, a any) []byte {
	var u uint64
	neg := false
	switch v := a.(type) {
	case int:
		u, neg = abs64(int64(v))
	case int8:
		u, neg = abs64(int64(v))
	case int16:
		u, neg = abs64(int64(v))
	case int32:
		u, neg = abs64(int64(v))
	case int64:
		u, neg = abs64(v)
	case uint:
		u = uint64(v)
	case uint8:
		u = uint64(v)
	case uint16:
		u = uint64(v)
	case uint32:
		u = uint64(v)
	case uint64:
		u = v
	case string:
		return append(b, v...)
	case error:
		return append(b, v.Error()...)
	case interface{ String() string }:
		return append(b, v.String()...)
	case nil:
		return append(b, "<nil>"...)
	default:
		return append(b, "%!(unsupported argument)"...)
	}
	if neg {
		b = append(b, '-')
	}
	if verb != 'x' {
		return strconv.AppendUint(b, u, 10)
	}
	if sharp {
		b = append(b, "0x"...)
	}
	var tmp [16]byte
	digits := strconv.AppendUint(tmp[:0], u, 16)
	for n := len(digits); n < width; n++ {
		b = append(b, '0')
	}
	return append(b, digits...)
}

func abs64(v int64) (uint64, bool) {
	if v < 0 {
		return uint64(-v), true
	}
	return uint64(v), false
}
