package records

import (
	"errors"
	"fmt"
	"strconv"
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

func (e *Error) Unwrap() error { return e.Err }

func newErr(base int64, rec int, field string, off int, cause error) *Error {
	return &Error{BaseOffset: base, Record: rec, Field: field, Offset: off, Err: cause}
}

func detail(cause error, format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{cause}, args...)...)
}
