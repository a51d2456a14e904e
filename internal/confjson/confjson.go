// Package confjson reads JSON configurations strictly (an unknown or repeated key, a
// wrong type or trailing data is an error) without reflection, each failure naming
// the JSON path and the byte offset of the offending value. The
// schema policy and the proxy filter's plugin configuration, which embeds one, are
// read with it.
package confjson

import (
	"errors"

	"github.com/kwire/kwire/internal/jsonx"
)

// Reader reads a JSON configuration strictly, without reflection, so that every
// error names the JSON path and byte offset of the value. Reads are sticky: after the first failure every read returns a zero
// value, and End reports the failure.
//
// A caller reads an object with Object, giving a function that reads each member's
// value with one of the value methods (or calls Unknown for a key it does not
// know), and arrays with Array likewise.
type Reader struct {
	d    jsonx.Decoder
	path string // the whole path FailAt gave, instead of the one unwinding builds
}

// NewReader returns a reader of data.
func NewReader(data []byte) *Reader {
	return &Reader{d: *jsonx.NewDecoder(data)}
}

// Decoder is the reader's JSON decoder, for values the methods here do not read.
func (r *Reader) Decoder() *jsonx.Decoder { return &r.d }

// Failed reports whether a read failed.
func (r *Reader) Failed() bool { return r.d.Failed() }

// Pos is the byte offset of the next unread byte.
func (r *Reader) Pos() int { return r.d.Pos() }

// Object reads an object, calling member for each key; member must read the value.
// A repeated key is an error.
func (r *Reader) Object(member func(key string)) {
	d := &r.d
	if !d.BeginObject() {
		return
	}
	var seen []string
	for first := true; d.More(&first, '}'); {
		at := d.Pos()
		key := d.Key()
		if d.Failed() {
			return
		}
		for _, k := range seen {
			if k == key {
				d.Rewind(at)
				d.Duplicate(key)
				return
			}
		}
		seen = append(seen, key)
		member(key)
		if d.Failed() {
			d.Push(key)
			return
		}
	}
}

// Array reads an array, calling elem for each element; elem must read it.
func (r *Reader) Array(elem func(i int)) {
	d := &r.d
	if !d.BeginArray() {
		return
	}
	i := 0
	for first := true; d.More(&first, ']'); i++ {
		elem(i)
		if d.Failed() {
			d.PushIndex(i)
			return
		}
	}
}

// String reads a string.
func (r *Reader) String() string { return r.d.String() }

// Int reads an integral number within [min, max].
func (r *Reader) Int(min, max int64) int64 { return r.d.Int(min, max) }

// Bool reads true or false.
func (r *Reader) Bool() bool { return r.d.Bool() }

// Null consumes a null and reports whether there was one.
func (r *Reader) Null() bool { return r.d.Null() }

// Unknown records an unknown-key failure (from an Object member function).
func (r *Reader) Unknown(key string) { r.d.UnknownKey(key) }

// Fail records msg as the failure of the value that starts at byte at (a
// position already read, from Pos).
func (r *Reader) Fail(at int, msg string) {
	r.d.Rewind(at)
	r.d.Fail(errors.New(msg), "")
}

// Raw reads one value of any type, checking its syntax only, and returns the byte
// offset where it starts and its bytes: a configuration embedded in this one, read
// by its own parser.
func (r *Reader) Raw() (at int, raw []byte) {
	at = r.d.Pos()
	r.d.Skip()
	return at, r.d.Src()[at:r.d.Pos()]
}

// FailAt records msg as the failure of the value at byte at, under the whole JSON
// path path: how an embedded configuration read from Raw reports its failure, with
// at and path translated into this configuration's.
func (r *Reader) FailAt(at int, path, msg string) {
	if r.d.Failed() {
		return
	}
	r.Fail(at, msg)
	r.path = path
}

// End checks that nothing follows the top-level value and returns the first
// failure: its JSON path, its byte offset (-1 when unknown) and what is wrong. ok
// is true when nothing failed.
func (r *Reader) End() (path string, offset int, msg string, ok bool) {
	r.d.End()
	err := r.d.Err()
	if err == nil {
		return "", 0, "", true
	}
	var je *jsonx.Error
	if !errors.As(err, &je) {
		return "$", -1, err.Error(), false
	}
	msg = je.Err.Error()
	if je.Detail != "" {
		msg += ": " + je.Detail
	}
	path = je.Path
	if r.path != "" {
		path = r.path
	}
	return path, je.Offset, msg, false
}
