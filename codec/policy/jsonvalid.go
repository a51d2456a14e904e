package policy

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// MaxJSONDepth is how deeply the JSON check lets arrays and objects nest; a
// deeper document fails (the check uses no recursion, the limit only bounds what
// a record may ask of a consumer's parser).
const MaxJSONDepth = 1000

// JSONError is why bytes are not the JSON a rule asks for.
type JSONError struct {
	// Offset is the byte offset of the failure in the checked bytes.
	Offset int
	// Repeated is true when the failure is a repeated object key: Duplicate (as
	// decoded).
	Repeated  bool
	Duplicate string
	// Msg says what is wrong.
	Msg string
}

// Error reports the message and the offset.
func (e *JSONError) Error() string {
	return e.Msg + " at byte " + strconv.Itoa(e.Offset)
}

// ValidJSON reports whether b is one JSON text as RFC 8259 defines it: one value
// with optional whitespace around it, strings of valid UTF-8 without unescaped
// control characters, nesting at most MaxJSONDepth deep. With uniqueKeys, an
// object that repeats a key (compared after unescaping) fails too. The error is a
// *JSONError; nil means valid.
func ValidJSON(b []byte, uniqueKeys bool) error {
	var v jsonValidator
	return v.check(b, uniqueKeys)
}

// jsonValidator holds the scratch space of the JSON check, reused across records.
type jsonValidator struct {
	stack []byte    // '{' or '[' per open container
	keys  []keySpan // keys of the open objects, innermost last (uniqueKeys)
	kbuf  []byte    // decoded keys
	marks []int     // index in keys where each open object's keys start
	err   JSONError // the last failure (check returns its address)
}

type keySpan struct{ from, to, at int }

func (v *jsonValidator) fail(at int, msg string) error {
	v.err = JSONError{Offset: at, Msg: msg}
	return &v.err
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// check validates b; the returned error points into v and is valid until the
// next call.
func (v *jsonValidator) check(b []byte, unique bool) error {
	v.stack, v.keys, v.kbuf, v.marks = v.stack[:0], v.keys[:0], v.kbuf[:0], v.marks[:0]
	i := skipSpace(b, 0)
	if i == len(b) {
		return v.fail(i, "no JSON value")
	}
	for {
		// A value starts at i (whitespace skipped).
		if i >= len(b) {
			return v.fail(i, "unexpected end of JSON")
		}
		var err error
		switch c := b[i]; {
		case c == '{' || c == '[':
			if len(v.stack) >= MaxJSONDepth {
				return v.fail(i, "JSON nests deeper than "+strconv.Itoa(MaxJSONDepth))
			}
			v.stack = append(v.stack, c)
			i = skipSpace(b, i+1)
			if c == '[' {
				if i < len(b) && b[i] == ']' {
					v.stack = v.stack[:len(v.stack)-1]
					i++
					break
				}
				continue // the first element
			}
			v.marks = append(v.marks, len(v.keys))
			if i < len(b) && b[i] == '}' {
				v.stack = v.stack[:len(v.stack)-1]
				v.marks = v.marks[:len(v.marks)-1]
				i++
				break
			}
			if i, err = v.member(b, i, unique); err != nil {
				return err
			}
			continue // the member's value
		case c == '"':
			if i, err = v.str(b, i, false); err != nil {
				return err
			}
		case c == '-' || (c >= '0' && c <= '9'):
			if i, err = v.number(b, i); err != nil {
				return err
			}
		case c == 't' || c == 'f' || c == 'n':
			lit := "null"
			if c == 't' {
				lit = "true"
			} else if c == 'f' {
				lit = "false"
			}
			if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
				return v.fail(i, "invalid literal (want "+lit+")")
			}
			i += len(lit)
		default:
			return v.fail(i, "invalid character "+quoteByte(c)+" looking for a JSON value")
		}
		// A value ended at i: close containers, or go on to the next element.
		for {
			i = skipSpace(b, i)
			if len(v.stack) == 0 {
				if i != len(b) {
					return v.fail(i, "invalid character "+quoteByte(b[i])+" after the JSON value")
				}
				return nil
			}
			if i >= len(b) {
				return v.fail(i, "unexpected end of JSON")
			}
			top := v.stack[len(v.stack)-1]
			c := b[i]
			if c == ',' {
				i = skipSpace(b, i+1)
				if top == '{' {
					if i, err = v.member(b, i, unique); err != nil {
						return err
					}
				}
				break // the next value
			}
			if (top == '[' && c != ']') || (top == '{' && c != '}') {
				want := "',' or ']'"
				if top == '{' {
					want = "',' or '}'"
				}
				return v.fail(i, "invalid character "+quoteByte(c)+" after a value, want "+want)
			}
			if top == '{' {
				mark := v.marks[len(v.marks)-1]
				if unique {
					if err := v.unique(mark); err != nil {
						return err
					}
				}
				v.keys = v.keys[:mark]
				v.marks = v.marks[:len(v.marks)-1]
				if len(v.keys) == 0 {
					v.kbuf = v.kbuf[:0]
				}
			}
			v.stack = v.stack[:len(v.stack)-1]
			i++
		}
	}
}

// member reads an object member's key and colon at i; it returns where the value
// starts (whitespace skipped).
func (v *jsonValidator) member(b []byte, i int, unique bool) (int, error) {
	if i >= len(b) {
		return i, v.fail(i, "unexpected end of JSON")
	}
	if b[i] != '"' {
		return i, v.fail(i, "invalid character "+quoteByte(b[i])+" looking for an object key")
	}
	at := i
	i, err := v.str(b, i, unique)
	if err != nil {
		return i, err
	}
	i = skipSpace(b, i)
	if i >= len(b) {
		return i, v.fail(i, "unexpected end of JSON")
	}
	if b[i] != ':' {
		return i, v.fail(i, "invalid character "+quoteByte(b[i])+" after an object key, want ':'")
	}
	if unique {
		v.keys[len(v.keys)-1].at = at
	}
	return skipSpace(b, i+1), nil
}

// unique fails when the keys of the object closing (from mark) repeat one.
func (v *jsonValidator) unique(mark int) error {
	keys := v.keys[mark:]
	if len(keys) < 2 {
		return nil
	}
	kb := v.kbuf
	heapSort(keys, kb)
	first := -1
	for j := 1; j < len(keys); j++ {
		if bytes.Equal(kb[keys[j-1].from:keys[j-1].to], kb[keys[j].from:keys[j].to]) && (first < 0 || keys[j].at < keys[first].at) {
			first = j
		}
	}
	if first < 0 {
		return nil
	}
	k := keys[first]
	v.err = JSONError{Offset: k.at, Repeated: true, Duplicate: string(kb[k.from:k.to]), Msg: "duplicate object key " + strconv.Quote(clip(kb[k.from:k.to]))}
	return &v.err
}

// keyLess orders keys by their decoded bytes, then by position.
func keyLess(x, y keySpan, kb []byte) bool {
	if c := bytes.Compare(kb[x.from:x.to], kb[y.from:y.to]); c != 0 {
		return c < 0
	}
	return x.at < y.at
}

// heapSort sorts keys with keyLess: O(n log n) whatever the input, with no
// allocation (and less code in the module than a generic sort).
func heapSort(keys []keySpan, kb []byte) {
	sift := func(root, n int) {
		for {
			child := 2*root + 1
			if child >= n {
				return
			}
			if child+1 < n && keyLess(keys[child], keys[child+1], kb) {
				child++
			}
			if !keyLess(keys[root], keys[child], kb) {
				return
			}
			keys[root], keys[child] = keys[child], keys[root]
			root = child
		}
	}
	for i := len(keys)/2 - 1; i >= 0; i-- {
		sift(i, len(keys))
	}
	for end := len(keys) - 1; end > 0; end-- {
		keys[0], keys[end] = keys[end], keys[0]
		sift(0, end)
	}
}

// str reads a string at i (its opening quote); with key, its decoded form is
// added to v.keys.
func (v *jsonValidator) str(b []byte, i int, key bool) (int, error) {
	from := len(v.kbuf)
	i++
	start := i
	for {
		if i >= len(b) {
			return i, v.fail(i, "unexpected end of JSON in a string")
		}
		c := b[i]
		switch {
		case c == '"':
			if key {
				v.kbuf = append(v.kbuf, b[start:i]...)
				v.keys = append(v.keys, keySpan{from: from, to: len(v.kbuf)})
			}
			return i + 1, nil
		case c == '\\':
			if key {
				v.kbuf = append(v.kbuf, b[start:i]...)
			}
			n, err := v.escape(b, i, key)
			if err != nil {
				return i, err
			}
			i = n
			start = i
		case c < 0x20:
			return i, v.fail(i, "control character "+quoteByte(c)+" in a string")
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size <= 1 {
				return i, v.fail(i, "invalid UTF-8 in a string")
			}
			i += size
		}
	}
}

// escape reads the escape sequence at i (its backslash), appending what it
// stands for to v.kbuf when key.
func (v *jsonValidator) escape(b []byte, i int, key bool) (int, error) {
	if i+1 >= len(b) {
		return i, v.fail(i, "unexpected end of JSON in a string")
	}
	var c byte
	switch b[i+1] {
	case '"', '\\', '/':
		c = b[i+1]
	case 'b':
		c = '\b'
	case 'f':
		c = '\f'
	case 'n':
		c = '\n'
	case 'r':
		c = '\r'
	case 't':
		c = '\t'
	case 'u':
		r, ok := hex4(b, i+2)
		if !ok {
			return i, v.fail(i, "invalid \\u escape")
		}
		n := i + 6
		if r >= 0xD800 && r < 0xDC00 && n+1 < len(b) && b[n] == '\\' && b[n+1] == 'u' {
			if lo, ok := hex4(b, n+2); ok && lo >= 0xDC00 && lo < 0xE000 {
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				n += 6
			}
		}
		if key {
			v.kbuf = appendCodePoint(v.kbuf, r)
		}
		return n, nil
	default:
		return i, v.fail(i, "invalid escape "+quoteByte(b[i+1])+" in a string")
	}
	if key {
		v.kbuf = append(v.kbuf, c)
	}
	return i + 2, nil
}

// appendCodePoint appends r as UTF-8, a lone surrogate (which JSON's escapes can
// write) included, so that keys compare by their code points.
func appendCodePoint(b []byte, r rune) []byte {
	if r >= 0xD800 && r < 0xE000 {
		return append(b, byte(0xE0|r>>12), byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F))
	}
	return utf8.AppendRune(b, r)
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number reads a number at i: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (v *jsonValidator) number(b []byte, i int) (int, error) {
	at := i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return i, v.fail(at, "invalid number")
	}
	if i < len(b) && b[i] == '.' {
		n := digits(b, i+1)
		if n == i+1 {
			return i, v.fail(at, "invalid number: no digit after '.'")
		}
		i = n
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		n := digits(b, i)
		if n == i {
			return i, v.fail(at, "invalid number: no digit in the exponent")
		}
		i = n
	}
	return i, nil
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7F {
		return strconv.QuoteRune(rune(c))
	}
	return "0x" + strconv.FormatUint(uint64(c), 16)
}
