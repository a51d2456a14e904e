package jsonx

import (
	"encoding/base64"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Decoder reads one JSON value strictly. Like wire.Reader it is sticky: after the first
// failure every read returns a zero value and generated code unwinds, pushing the path.
type Decoder struct {
	src    []byte
	pos    int
	err    error
	errOff int
	detail string
	path   []string // innermost first

	scratch []byte // decoded text of the last escaped string (strBytes)
	bin     []byte // decoded bytes of the last base64 value (BytesView)
}

// NewDecoder returns a decoder over src.
func NewDecoder(src []byte) *Decoder { return &Decoder{src: src} }

// Failed reports whether a failure has been recorded.
func (d *Decoder) Failed() bool { return d.err != nil }

// Err returns the recorded failure as an *Error, or nil.
func (d *Decoder) Err() error {
	if d.err == nil {
		return nil
	}
	p := "$"
	for i := len(d.path) - 1; i >= 0; i-- {
		s := d.path[i]
		if s == "" {
			s = `""`
		}
		if s[0] == '[' {
			p += s
		} else {
			p += "." + s
		}
	}
	return &Error{Path: p, Offset: d.errOff, Err: d.err, Detail: d.detail}
}

// Fail records a failure at the current position unless one is already recorded.
func (d *Decoder) Fail(err error, detail string) {
	if d.err == nil {
		d.err, d.errOff, d.detail = err, d.pos, detail
	}
}

// Push adds a key to the error path while unwinding.
func (d *Decoder) Push(key string) { d.path = append(d.path, key) }

// PushIndex adds an array index to the error path while unwinding.
func (d *Decoder) PushIndex(i int) { d.path = append(d.path, "["+strconv.Itoa(i)+"]") }

func (d *Decoder) ws() {
	for d.pos < len(d.src) {
		switch d.src[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// ValueStart steps over white space and returns the offset where the next value (or
// key, or closing bracket) starts: where an error about that value should point.
func (d *Decoder) ValueStart() int {
	d.ws()
	return d.pos
}

// Peek is the first byte of the next value after white space, 0 at the end.
func (d *Decoder) Peek() byte { return d.peek() }

func (d *Decoder) peek() byte {
	d.ws()
	if d.pos >= len(d.src) {
		return 0
	}
	return d.src[d.pos]
}

// End checks that nothing but white space follows the value.
func (d *Decoder) End() {
	if d.err != nil {
		return
	}
	d.ws()
	if d.pos != len(d.src) {
		d.Fail(ErrSyntax, "unexpected data after the top-level value")
	}
}

func (d *Decoder) literal(lit string) bool {
	if len(d.src)-d.pos >= len(lit) && string(d.src[d.pos:d.pos+len(lit)]) == lit {
		d.pos += len(lit)
		return true
	}
	return false
}

// Null consumes a null and reports whether there was one.
func (d *Decoder) Null() bool {
	if d.err != nil {
		return false
	}
	if d.peek() == 'n' && d.literal("null") {
		return true
	}
	return false
}

func (d *Decoder) typeErr(want string) {
	c := d.peek()
	got := "end of input"
	switch {
	case c == '{':
		got = "object"
	case c == '[':
		got = "array"
	case c == '"':
		got = "string"
	case c == 't' || c == 'f':
		got = "boolean"
	case c == 'n':
		got = "null"
	case c == '-' || (c >= '0' && c <= '9'):
		got = "number"
	case c != 0:
		d.Fail(ErrSyntax, "unexpected character "+strconv.QuoteRune(rune(c)))
		return
	}
	d.Fail(ErrType, "want "+want+", got "+got)
}

// BeginObject consumes '{'.
func (d *Decoder) BeginObject() bool { return d.begin('{', "object") }

// BeginArray consumes '['.
func (d *Decoder) BeginArray() bool { return d.begin('[', "array") }

// begin consumes open, the first byte of a value of type what.
func (d *Decoder) begin(open byte, what string) bool {
	if d.err != nil {
		return false
	}
	if d.peek() != open {
		d.typeErr(what)
		return false
	}
	d.pos++
	return true
}

// More reports whether another member or element follows in the object or array whose
// closing byte is end, consuming the separating comma, or the closing byte when done.
func (d *Decoder) More(first *bool, end byte) bool {
	if d.err != nil {
		return false
	}
	c := d.peek()
	if c == end {
		d.pos++
		return false
	}
	if !*first {
		if c != ',' {
			d.Fail(ErrSyntax, "want ',' or '"+string(end)+"'")
			return false
		}
		d.pos++
		d.ws()
	}
	*first = false
	return true
}

// Object reads an object strictly, calling member with each key to read its value: a
// repeated key is a duplicate-key failure, and a failure gets the key on its path.
func (d *Decoder) Object(member func(key string)) {
	if !d.BeginObject() {
		return
	}
	var buf [8]string
	seen := buf[:0]
	for first := true; d.More(&first, '}'); {
		key := string(d.KeyBytes())
		if d.err != nil {
			return
		}
		for _, k := range seen {
			if k == key {
				d.Duplicate(key)
			}
		}
		seen = append(seen, key)
		member(key)
		if d.err != nil {
			d.Push(key)
			return
		}
	}
}

// Key reads an object key and its colon.
func (d *Decoder) Key() string {
	if d.peek() != '"' {
		d.Fail(ErrSyntax, "want an object key")
		return ""
	}
	k := d.str()
	if d.err != nil {
		return ""
	}
	if d.peek() != ':' {
		d.Fail(ErrSyntax, "want ':' after key")
		return ""
	}
	d.pos++
	return k
}

// UnknownKey records an unknown-key failure.
func (d *Decoder) UnknownKey(key string) {
	d.Fail(ErrUnknown, strconv.Quote(key))
}

// Duplicate records a duplicate-key failure.
func (d *Decoder) Duplicate(key string) {
	d.Fail(ErrDup, strconv.Quote(key))
}

// str reads a JSON string at the current position (which holds '"').
func (d *Decoder) str() string {
	b := d.strBytes()
	if d.err != nil {
		return ""
	}
	return string(b)
}

// strBytes reads a JSON string at the current position (which holds '"') and returns
// its decoded bytes: a view of the input when the string has no escapes, else the
// decoder's scratch buffer, valid until the next read.
func (d *Decoder) strBytes() []byte {
	start := d.pos
	d.pos++
	// Fast path: no escapes. Only text with bytes above 0x7f needs a UTF-8 check.
	var high byte
	for i := d.pos; i < len(d.src); i++ {
		c := d.src[i]
		if c == '"' {
			s := d.src[d.pos:i]
			if high >= utf8.RuneSelf && !utf8.Valid(s) {
				d.pos = start
				d.Fail(ErrSyntax, "string is not valid UTF-8")
				return nil
			}
			d.pos = i + 1
			return s
		}
		if c == '\\' || c < 0x20 {
			break
		}
		high |= c
	}
	b := d.scratch[:0]
	defer func() { d.scratch = b[:0] }()
	for {
		if d.pos >= len(d.src) {
			d.Fail(ErrSyntax, "unterminated string")
			return nil
		}
		c := d.src[d.pos]
		switch {
		case c == '"':
			d.pos++
			if !utf8.Valid(b) {
				d.Fail(ErrSyntax, "string is not valid UTF-8")
				return nil
			}
			if b == nil {
				b = []byte{}
			}
			return b
		case c < 0x20:
			d.Fail(ErrSyntax, "control character in string")
			return nil
		case c == '\\':
			if d.pos+1 >= len(d.src) {
				d.Fail(ErrSyntax, "unterminated escape")
				return nil
			}
			e := d.src[d.pos+1]
			d.pos += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := d.hex4()
				if !ok {
					return nil
				}
				if utf16.IsSurrogate(r) {
					if d.literal("\\u") {
						r2, ok := d.hex4()
						if !ok {
							return nil
						}
						r = utf16.DecodeRune(r, r2)
					} else {
						r = utf8.RuneError
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				d.Fail(ErrSyntax, "invalid escape")
				return nil
			}
		default:
			b = append(b, c)
			d.pos++
		}
	}
}

func (d *Decoder) hex4() (rune, bool) {
	if len(d.src)-d.pos < 4 {
		d.Fail(ErrSyntax, "short \\u escape")
		return 0, false
	}
	v, err := strconv.ParseUint(string(d.src[d.pos:d.pos+4]), 16, 16)
	if err != nil {
		d.Fail(ErrSyntax, "invalid \\u escape")
		return 0, false
	}
	d.pos += 4
	return rune(v), true
}

// String reads a string value.
func (d *Decoder) String() string {
	if d.err != nil {
		return ""
	}
	if d.peek() != '"' {
		d.typeErr("string")
		return ""
	}
	return d.str()
}

// NullableString reads a string or null.
func (d *Decoder) NullableString() *string {
	if d.Null() {
		return nil
	}
	s := d.String()
	return &s
}

// Bool reads true or false.
func (d *Decoder) Bool() bool {
	if d.err != nil {
		return false
	}
	switch d.peek() {
	case 't':
		if d.literal("true") {
			return true
		}
	case 'f':
		if d.literal("false") {
			return false
		}
	}
	d.typeErr("boolean")
	return false
}

// digits is the end of the run of decimal digits that starts at src[i], or -1 when
// there is none.
func digits(src []byte, i int) int {
	j := i
	for j < len(src) && src[j] >= '0' && src[j] <= '9' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// number skips white space and scans a JSON number: where it starts, its text and
// whether it is an integer.
func (d *Decoder) number() (start int, s string, integer bool) {
	d.ws()
	start = d.pos
	i := d.pos
	if i < len(d.src) && d.src[i] == '-' {
		i++
	}
	if i >= len(d.src) || d.src[i] < '0' || d.src[i] > '9' {
		d.typeErr("number")
		return start, "", false
	}
	if d.src[i] == '0' {
		i++
	} else {
		i = digits(d.src, i)
	}
	integer = true
	if i < len(d.src) && d.src[i] == '.' {
		integer = false
		i = digits(d.src, i+1)
	}
	if i >= 0 && i < len(d.src) && (d.src[i] == 'e' || d.src[i] == 'E') {
		integer = false
		i++
		if i < len(d.src) && (d.src[i] == '+' || d.src[i] == '-') {
			i++
		}
		i = digits(d.src, i)
	}
	if i < 0 {
		d.Fail(ErrSyntax, "invalid number")
		return start, "", false
	}
	d.pos = i
	return start, unsafeString(d.src[start:i]), integer
}

// Int reads an integral number within [min, max].
func (d *Decoder) Int(min, max int64) int64 {
	if d.err != nil {
		return 0
	}
	start, s, integer := d.number()
	if d.err != nil {
		return 0
	}
	if !integer {
		d.pos = start
		d.Fail(ErrType, "want an integer, got "+string([]byte(s)))
		return 0
	}
	v, err := parseInt(s)
	if err != nil || v < min || v > max {
		d.pos = start
		s = string([]byte(s))
		d.Fail(ErrRange, s+" is outside ["+strconv.FormatInt(min, 10)+", "+strconv.FormatInt(max, 10)+"]")
		return 0
	}
	return v
}

// parseInt parses the integer text number() accepted (an optional '-', then digits).
// Up to 18 digits cannot overflow an int64 and are summed directly, which is much
// cheaper than strconv in WebAssembly; longer ones go through strconv.
func parseInt(s string) (int64, error) {
	digits := s
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return strconv.ParseInt(s, 10, 64)
	}
	var v int64
	for i := 0; i < len(digits); i++ {
		v = v*10 + int64(digits[i]-'0')
	}
	if len(digits) != len(s) {
		v = -v
	}
	return v, nil
}

// Int64 reads an int64 written as a decimal string (the output form) or an integral
// number.
func (d *Decoder) Int64() int64 {
	if d.err != nil {
		return 0
	}
	if d.peek() != '"' {
		return d.Int(math.MinInt64, math.MaxInt64)
	}
	start := d.pos
	s := unsafeString(d.strBytes())
	if d.err != nil {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		s = string([]byte(s))
	}
	if err != nil || s == "" || s[0] == '+' || (len(s) > 1 && s[0] == '0') || (len(s) >= 2 && s[0] == '-' && s[1] == '0') {
		d.pos = start
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			d.Fail(ErrRange, strconv.Quote(s)+" is outside the int64 range")
		} else {
			d.Fail(ErrType, "want a decimal integer string, got "+strconv.Quote(s))
		}
		return 0
	}
	return v
}

// Float64 reads a number, or one of the strings "NaN", "Infinity", "-Infinity".
func (d *Decoder) Float64() float64 {
	if d.err != nil {
		return 0
	}
	if d.peek() == '"' {
		start := d.pos
		switch unsafeString(d.strBytes()) {
		case "NaN":
			// Java's canonical NaN (Double.NaN), which Kafka's writers emit; Go's
			// math.NaN() has a different payload and would change the bytes.
			return math.Float64frombits(0x7ff8000000000000)
		case "Infinity":
			return math.Inf(1)
		case "-Infinity":
			return math.Inf(-1)
		}
		d.pos = start
		d.Fail(ErrType, "want a number, \"NaN\", \"Infinity\" or \"-Infinity\"")
		return 0
	}
	start, s, _ := d.number()
	if d.err != nil {
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		d.pos = start
		d.Fail(ErrRange, string([]byte(s))+" does not fit a float64")
		return 0
	}
	return v
}

// Bytes reads standard base64 (padding required), or null when nullable. A present
// empty value is a non-nil empty slice.
func (d *Decoder) Bytes(nullable bool) []byte {
	b, null := d.BytesAppend(nil, nullable)
	if null || d.err != nil {
		return nil
	}
	if b == nil {
		b = []byte{}
	}
	return b
}

// UUID reads Kafka's 22-character URL-safe base64 text form.
func (d *Decoder) UUID() (u [16]byte) {
	if d.err != nil {
		return
	}
	start := d.pos
	s := d.StringBytes()
	if d.err != nil {
		return
	}
	var buf [24]byte
	b, err := base64.RawURLEncoding.Strict().AppendDecode(buf[:0], s)
	if err != nil || len(b) != 16 {
		d.pos = start
		d.Fail(ErrType, "want a uuid as 22 characters of URL-safe base64, got "+strconv.Quote(string(s)))
		return
	}
	copy(u[:], b)
	return
}

// unsafeString views b as a string without copying; b must not change while it is used.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// KeyBytes is Key without allocating: the decoded key, a view of the input or of the
// decoder's scratch buffer, valid until the next read.
func (d *Decoder) KeyBytes() []byte {
	if d.peek() != '"' {
		d.Fail(ErrSyntax, "want an object key")
		return nil
	}
	k := d.strBytes()
	if d.err != nil {
		return nil
	}
	if d.peek() != ':' {
		d.Fail(ErrSyntax, "want ':' after key")
		return nil
	}
	d.pos++
	return k
}

// StringBytes is String without allocating: the decoded text, a view of the input or
// of the decoder's scratch buffer, valid until the next read.
func (d *Decoder) StringBytes() []byte {
	if d.err != nil {
		return nil
	}
	if d.peek() != '"' {
		d.typeErr("string")
		return nil
	}
	return d.strBytes()
}

// BytesView is Bytes decoding into the decoder's buffer: the result is valid until the
// next BytesView call. It reports null (when nullable) as (nil, true).
func (d *Decoder) BytesView(nullable bool) (b []byte, null bool) {
	b, null = d.BytesAppend(d.bin[:0], nullable)
	if null || d.err != nil {
		return nil, null
	}
	d.bin = b
	if b == nil {
		b = []byte{}
	}
	return b, false
}

// BytesAppend is Bytes appending the decoded bytes to dst. It reports null (when
// nullable) with null set and dst unchanged.
func (d *Decoder) BytesAppend(dst []byte, nullable bool) (out []byte, null bool) {
	if nullable && d.Null() {
		return dst, true
	}
	if d.err != nil {
		return dst, false
	}
	start := d.pos
	s := d.StringBytes()
	if d.err != nil {
		return dst, false
	}
	out, err := base64.StdEncoding.Strict().AppendDecode(dst, s)
	if err != nil {
		d.pos = start
		d.Fail(ErrType, "want standard base64: "+err.Error())
		return dst, false
	}
	return out, false
}

// Pos is the offset of the next unread byte.
func (d *Decoder) Pos() int { return d.pos }

// Src is the input.
func (d *Decoder) Src() []byte { return d.src }

// Reset makes d read src from the start, keeping its buffers.
func (d *Decoder) Reset(src []byte) {
	*d = Decoder{src: src, path: d.path[:0], scratch: d.scratch[:0], bin: d.bin[:0]}
}

// Skip reads one JSON value of any type, checking its syntax, and discards it.
func (d *Decoder) Skip() {
	d.skip(0)
}

const maxSkipDepth = 512

func (d *Decoder) skip(depth int) {
	if d.err != nil {
		return
	}
	if depth > maxSkipDepth {
		d.Fail(ErrSyntax, "nesting deeper than "+strconv.Itoa(maxSkipDepth))
		return
	}
	switch c := d.peek(); {
	case c == '{':
		d.pos++
		for first := true; d.More(&first, '}'); {
			d.KeyBytes()
			d.skip(depth + 1)
		}
	case c == '[':
		d.pos++
		for first := true; d.More(&first, ']'); {
			d.skip(depth + 1)
		}
	case c == '"':
		d.strBytes()
	case c == 't' || c == 'f':
		d.Bool()
	case c == 'n':
		if !d.Null() {
			d.typeErr("a value")
		}
	default:
		d.number()
	}
}

// Rewind moves the read position back to pos (a position already passed), so that a
// failure recorded next points at the value that starts there.
func (d *Decoder) Rewind(pos int) {
	if pos >= 0 && pos <= d.pos {
		d.pos = pos
	}
}

// TaggedFields reads the reserved list of unknown tagged fields, [{"tag": n, "data":
// "<base64>"}, ...], strictly: both keys are required, tags ascend. add gets each tag
// and its data, which is valid only during the call.
func (d *Decoder) TaggedFields(add func(tag uint32, data []byte)) {
	if !d.BeginArray() {
		return
	}
	last := int64(-1)
	for i, first := 0, true; d.More(&first, ']'); i++ {
		var tag uint32
		var data []byte
		var seenTag, seenData bool
		if d.BeginObject() {
			for f := true; d.More(&f, '}'); {
				k := d.Key()
				switch k {
				case "tag":
					if seenTag {
						d.Duplicate(k)
					}
					seenTag = true
					tag = uint32(d.Int(0, 1<<32-1))
				case "data":
					if seenData {
						d.Duplicate(k)
					}
					seenData = true
					data, _ = d.BytesView(false)
				default:
					d.UnknownKey(k)
				}
				if d.Failed() {
					d.Push(k)
					break
				}
			}
		}
		if !d.Failed() && (!seenTag || !seenData) {
			d.Fail(ErrType, "an unknown tagged field needs both \"tag\" and \"data\"")
		}
		if !d.Failed() && int64(tag) <= last {
			d.Fail(ErrType, "unknown tags must ascend")
		}
		if d.Failed() {
			d.PushIndex(i)
			return
		}
		last = int64(tag)
		add(tag, data)
	}
}
