package abi

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"
)

// This file holds the small strict JSON reader and the writer helpers the ABI needs
// for its own envelopes (frames, records). Message bodies go through the codec's
// generated JSON code; nothing here uses reflection, which keeps the wasm module small.

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s []byte) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"':
				b = append(b, '\\', '"')
			case '\\':
				b = append(b, '\\', '\\')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			i += size
			start = i
			continue
		}
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

func appendStr(b []byte, s string) []byte { return appendString(b, []byte(s)) }

// appendBase64 appends b as a JSON string of standard base64, or null when nil.
func appendBase64(dst []byte, b []byte) []byte {
	if b == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// appendInt64Str appends an int64 the way the JSON form writes it: a decimal string.
func appendInt64Str(b []byte, v int64) []byte {
	b = append(b, '"')
	b = strconv.AppendInt(b, v, 10)
	return append(b, '"')
}

func appendKey(b []byte, first bool, key string) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// jsonErr is a failure while reading an ABI envelope: the JSON path and byte offset.
type jsonErr struct {
	path   string
	offset int
	msg    string
}

// reader is a strict JSON reader: it reports the first error with its path and offset
// and then does nothing more.
type reader struct {
	src  []byte
	pos  int
	path []string
	err  *jsonErr
}

func newReader(src []byte) *reader { return &reader{src: src} }

func (r *reader) pathString() string {
	s := "$"
	for _, p := range r.path {
		if len(p) > 0 && p[0] == '[' {
			s += p
		} else {
			s += "." + p
		}
	}
	return s
}

func (r *reader) fail(msg string) {
	if r.err == nil {
		r.err = &jsonErr{path: r.pathString(), offset: r.pos, msg: msg}
	}
}

func (r *reader) ws() {
	for r.pos < len(r.src) {
		switch r.src[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

func (r *reader) peek() byte {
	r.ws()
	if r.pos >= len(r.src) {
		return 0
	}
	return r.src[r.pos]
}

// end checks that only whitespace follows the value.
func (r *reader) end() {
	if r.err != nil {
		return
	}
	r.ws()
	if r.pos != len(r.src) {
		r.fail("unexpected data after the JSON value")
	}
}

func (r *reader) literal(lit string) bool {
	if r.err != nil {
		return false
	}
	r.ws()
	if len(r.src)-r.pos >= len(lit) && string(r.src[r.pos:r.pos+len(lit)]) == lit {
		r.pos += len(lit)
		return true
	}
	return false
}

// null consumes a null and reports whether there was one.
func (r *reader) null() bool { return r.peek() == 'n' && r.literal("null") }

// object calls fn for every key of an object; fn must consume the value. Duplicate keys
// are an error.
func (r *reader) object(fn func(key string)) {
	if r.err != nil {
		return
	}
	if r.peek() != '{' {
		r.fail("want an object")
		return
	}
	r.pos++
	seen := map[string]bool{}
	first := true
	for r.err == nil {
		c := r.peek()
		if c == '}' {
			r.pos++
			return
		}
		if !first {
			if c != ',' {
				r.fail("want ',' or '}'")
				return
			}
			r.pos++
			c = r.peek()
		}
		first = false
		if c != '"' {
			r.fail("want a key")
			return
		}
		keyAt := r.pos
		key := r.rawString()
		if r.err != nil {
			return
		}
		if r.peek() != ':' {
			r.fail("want ':'")
			return
		}
		r.pos++
		r.path = append(r.path, key)
		if seen[key] {
			r.pos = keyAt
			r.fail("duplicate key")
			return
		}
		seen[key] = true
		fn(key)
		if r.err == nil {
			r.path = r.path[:len(r.path)-1]
		}
	}
}

// array calls fn for every element; fn must consume it.
func (r *reader) array(fn func(i int)) {
	if r.err != nil {
		return
	}
	if r.peek() != '[' {
		r.fail("want an array")
		return
	}
	r.pos++
	for i := 0; r.err == nil; i++ {
		c := r.peek()
		if c == ']' {
			r.pos++
			return
		}
		if i > 0 {
			if c != ',' {
				r.fail("want ',' or ']'")
				return
			}
			r.pos++
		}
		r.path = append(r.path, "["+strconv.Itoa(i)+"]")
		fn(i)
		if r.err == nil {
			r.path = r.path[:len(r.path)-1]
		}
	}
}

// unknown reports an unknown key (the path already names it).
func (r *reader) unknown() { r.fail("unknown key") }

// rawString reads a JSON string (the reader is at its opening quote).
func (r *reader) rawString() string {
	if r.err != nil {
		return ""
	}
	if r.peek() != '"' {
		r.fail("want a string")
		return ""
	}
	r.pos++
	start := r.pos
	var buf []byte
	for r.pos < len(r.src) {
		c := r.src[r.pos]
		switch {
		case c == '"':
			var s string
			if buf == nil {
				s = string(r.src[start:r.pos])
			} else {
				s = string(append(buf, r.src[start:r.pos]...))
			}
			r.pos++
			return s
		case c < 0x20:
			r.fail("control character in string")
			return ""
		case c == '\\':
			buf = append(buf, r.src[start:r.pos]...)
			r.pos++
			if r.pos >= len(r.src) {
				r.fail("unterminated string")
				return ""
			}
			e := r.src[r.pos]
			r.pos++
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				ru, ok := r.hex4()
				if !ok {
					return ""
				}
				if ru >= 0xD800 && ru < 0xDC00 && r.pos+1 < len(r.src) && r.src[r.pos] == '\\' && r.src[r.pos+1] == 'u' {
					save := r.pos
					r.pos += 2
					lo, ok := r.hex4()
					if ok && lo >= 0xDC00 && lo < 0xE000 {
						ru = (ru-0xD800)<<10 + (lo - 0xDC00) + 0x10000
					} else {
						r.err = nil
						r.pos = save
						ru = utf8.RuneError
					}
				} else if ru >= 0xD800 && ru < 0xE000 {
					ru = utf8.RuneError
				}
				buf = utf8.AppendRune(buf, ru)
			default:
				r.pos -= 2
				r.fail("bad escape in string")
				return ""
			}
			start = r.pos
		default:
			r.pos++
		}
	}
	r.fail("unterminated string")
	return ""
}

func (r *reader) hex4() (rune, bool) {
	if len(r.src)-r.pos < 4 {
		r.fail("bad \\u escape")
		return 0, false
	}
	v, err := strconv.ParseUint(string(r.src[r.pos:r.pos+4]), 16, 16)
	if err != nil {
		r.fail("bad \\u escape")
		return 0, false
	}
	r.pos += 4
	return rune(v), true
}

// number reads the text of a JSON number.
func (r *reader) number() string {
	if r.err != nil {
		return ""
	}
	r.ws()
	start := r.pos
	if r.pos < len(r.src) && r.src[r.pos] == '-' {
		r.pos++
	}
	digits := 0
	for r.pos < len(r.src) && r.src[r.pos] >= '0' && r.src[r.pos] <= '9' {
		r.pos++
		digits++
	}
	if digits == 0 || (digits > 1 && r.src[start] == '0') || (digits > 1 && r.src[start] == '-' && r.src[start+1] == '0') {
		r.pos = start
		r.fail("want a number")
		return ""
	}
	if r.pos < len(r.src) && r.src[r.pos] == '.' {
		r.pos++
		n := 0
		for r.pos < len(r.src) && r.src[r.pos] >= '0' && r.src[r.pos] <= '9' {
			r.pos++
			n++
		}
		if n == 0 {
			r.fail("bad number")
			return ""
		}
	}
	if r.pos < len(r.src) && (r.src[r.pos] == 'e' || r.src[r.pos] == 'E') {
		r.pos++
		if r.pos < len(r.src) && (r.src[r.pos] == '+' || r.src[r.pos] == '-') {
			r.pos++
		}
		n := 0
		for r.pos < len(r.src) && r.src[r.pos] >= '0' && r.src[r.pos] <= '9' {
			r.pos++
			n++
		}
		if n == 0 {
			r.fail("bad number")
			return ""
		}
	}
	return string(r.src[start:r.pos])
}

// intIn reads an integral JSON number in [lo, hi].
func (r *reader) intIn(lo, hi int64) int64 {
	if r.err != nil {
		return 0
	}
	at := r.pos
	if c := r.peek(); c != '-' && (c < '0' || c > '9') {
		r.fail("want an integer")
		return 0
	}
	at = r.pos
	s := r.number()
	if r.err != nil {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < lo || v > hi {
		r.pos = at
		r.fail("integer out of range [" + strconv.FormatInt(lo, 10) + ", " + strconv.FormatInt(hi, 10) + "]")
		return 0
	}
	return v
}

func (r *reader) int32() int32 { return int32(r.intIn(-1<<31, 1<<31-1)) }
func (r *reader) int16() int16 { return int16(r.intIn(-1<<15, 1<<15-1)) }

// int64 reads an int64 written as a decimal string (the JSON form) or an integral number.
func (r *reader) int64() int64 {
	if r.err != nil {
		return 0
	}
	if r.peek() != '"' {
		return r.intIn(-1<<63, 1<<63-1)
	}
	at := r.pos
	s := r.rawString()
	if r.err != nil {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		r.pos = at
		r.fail("want an int64 as a decimal string")
		return 0
	}
	return v
}

func (r *reader) bool() bool {
	switch {
	case r.literal("true"):
		return true
	case r.literal("false"):
		return false
	}
	r.fail("want true or false")
	return false
}

func (r *reader) str() string { return r.rawString() }

// base64 reads standard base64 (with padding), or null when nullable (nil result).
func (r *reader) base64(nullable bool) []byte {
	if r.err != nil {
		return nil
	}
	if r.null() {
		if !nullable {
			r.fail("null not allowed here")
		}
		return nil
	}
	at := r.pos
	s := r.rawString()
	if r.err != nil {
		return nil
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		r.pos = at
		r.fail("want standard base64")
		return nil
	}
	if b == nil {
		b = []byte{}
	}
	return b
}

// skip consumes any JSON value and returns its span.
func (r *reader) skip() (start, end int) {
	if r.err != nil {
		return 0, 0
	}
	c := r.peek()
	start = r.pos
	switch {
	case c == '{':
		r.object(func(string) { r.skip() })
	case c == '[':
		r.array(func(int) { r.skip() })
	case c == '"':
		r.rawString()
	case c == 't' || c == 'f':
		r.bool()
	case c == 'n':
		if !r.null() {
			r.fail("invalid literal")
		}
	case c == '-' || (c >= '0' && c <= '9'):
		r.number()
	case c == 0:
		r.fail("unexpected end of input")
	default:
		r.fail("invalid character")
	}
	return start, r.pos
}
