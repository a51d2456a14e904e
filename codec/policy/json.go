package policy

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/kwire/kwire/internal/jsonx"
)

// ConfigError is a bad configuration: the JSON path of the offending value, and
// its byte offset when the configuration was read from JSON text.
type ConfigError struct {
	// Context names the configuration: "policy", or what embeds one.
	Context string
	// Path is the JSON path of the value: "$.rules[1].schema_ids[0]".
	Path string
	// Offset is the byte offset of the value in the JSON text; -1 for a Config
	// given to New.
	Offset int
	// Msg says what is wrong.
	Msg string

	segs []string // path below $, outermost first (validation errors of New)
}

// Error reports context, path, message and offset.
func (e *ConfigError) Error() string {
	s := e.Context + ": " + e.Path + ": " + e.Msg
	if e.Offset >= 0 {
		s += " (at byte " + strconv.Itoa(e.Offset) + ")"
	}
	return s
}

// invalid is a validation failure of New at the path segs (keys and "[i]").
func invalid(msg string, segs ...string) *ConfigError {
	p := "$"
	for _, s := range segs {
		if s[0] != '[' {
			p += "."
		}
		p += s
	}
	return &ConfigError{Context: "policy", Path: p, Offset: -1, Msg: msg, segs: segs}
}

// Parse reads a Config from JSON strictly (an unknown or repeated key, a wrong type
// or trailing data is an error) and validates it. A failure is a *ConfigError with
// the JSON path and byte offset of the offending value:
//
//	policy: $.rules[0].policy: unknown mode "block" (want none, warn or enforce) (at byte 41)
func Parse(data []byte) (*Policy, error) {
	r := NewReader("policy", data)
	p := r.Policy()
	if err := r.End(); err != nil {
		return nil, err
	}
	return p, nil
}

// Reader reads a JSON configuration strictly, without reflection: for programs
// whose own configuration embeds a policy (kwire's proxy filter reads its plugin
// configuration with it), so that every error names the JSON path and byte offset
// of the value. Reads are sticky: after the first failure every read returns a zero
// value, and End reports the failure.
//
// A caller reads an object with Object, giving a function that reads each member's
// value with one of the value methods (or calls Unknown for a key it does not
// know), and arrays with Array likewise.
type Reader struct {
	d       jsonx.Decoder
	context string
	src     []byte
}

// NewReader returns a reader of data; context names the configuration in errors.
func NewReader(context string, data []byte) *Reader {
	return &Reader{d: *jsonx.NewDecoder(data), context: context, src: data}
}

// Raw reads one value of any type, checking its syntax, and returns its text and
// its byte offset (for a configuration read by another parser).
func (r *Reader) Raw() ([]byte, int) {
	at := r.d.ValueStart()
	r.d.Skip()
	if r.d.Failed() {
		return nil, at
	}
	return r.src[at:r.d.Pos():r.d.Pos()], at
}

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

// End checks that nothing follows the top-level value and returns the first
// failure as a *ConfigError, or nil.
func (r *Reader) End() error {
	r.d.End()
	err := r.d.Err()
	if err == nil {
		return nil
	}
	var je *jsonx.Error
	if !errors.As(err, &je) {
		return &ConfigError{Context: r.context, Path: "$", Offset: -1, Msg: err.Error()}
	}
	msg := je.Err.Error()
	if je.Detail != "" {
		msg += ": " + je.Detail
	}
	return &ConfigError{Context: r.context, Path: je.Path, Offset: je.Offset, Msg: msg}
}

// Policy reads a policy configuration (an object, as Parse reads it) and
// validates it; nil after a failure.
func (r *Reader) Policy() *Policy {
	d := &r.d
	offs := map[string]int{} // path below $ -> offset of its value
	var cfg Config
	mode := func() Mode {
		at := d.Pos()
		s := d.String()
		if d.Failed() {
			return None
		}
		m, err := ParseMode(s)
		if err != nil {
			r.Fail(at, unknownMode(s))
		}
		return m
	}
	int32s := func(path string) (out []int32) {
		r.Array(func(i int) {
			offs[path+"["+strconv.Itoa(i)+"]"] = d.Pos()
			out = append(out, int32(d.Int(math.MinInt32, math.MaxInt32)))
		})
		return out
	}
	errorCode := func() ErrorCode {
		at := d.Pos()
		s := d.String()
		var c ErrorCode
		if !d.Failed() {
			if err := c.UnmarshalText([]byte(s)); err != nil {
				r.Fail(at, strings.TrimPrefix(err.Error(), "policy: "))
			}
		}
		return c
	}
	check := func(path string) *Check {
		c := &Check{}
		r.Object(func(key string) {
			offs[path+"."+key] = d.Pos()
			switch key {
			case "require_schema":
				v := d.Bool()
				c.RequireSchema = &v
			case "schema_ids":
				c.SchemaIDs = int32s(path + ".schema_ids")
			case "require_version":
				c.RequireVersion = d.Bool()
			case "versions":
				c.Versions = int32s(path + ".versions")
			case "json":
				c.JSON = d.Bool()
			case "unique_keys":
				c.UniqueKeys = d.Bool()
			case "null":
				at := d.Pos()
				s := d.String()
				if !d.Failed() {
					if err := c.Null.UnmarshalText([]byte(s)); err != nil {
						r.Fail(at, unknownNull(s))
					}
				}
			default:
				d.UnknownKey(key)
			}
		})
		return c
	}
	offs[""] = d.Pos()
	r.Object(func(key string) {
		offs[key] = d.Pos()
		switch key {
		case "default":
			cfg.Default = mode()
		case "error":
			cfg.Error = errorCode()
		case "max_decompressed_bytes":
			cfg.MaxDecompressedBytes = int(d.Int(math.MinInt32, math.MaxInt32))
		case "skip_crc":
			cfg.SkipCRC = d.Bool()
		case "rules":
			r.Array(func(i int) {
				at := "rules[" + strconv.Itoa(i) + "]"
				offs[at] = d.Pos()
				var rule Rule
				r.Object(func(key string) {
					offs[at+"."+key] = d.Pos()
					switch key {
					case "topic":
						rule.Topic = d.String()
					case "prefix":
						rule.Prefix = d.String()
					case "policy":
						rule.Mode = mode()
					case "schema_ids":
						rule.SchemaIDs = int32s(at + ".schema_ids")
					case "require_version":
						rule.RequireVersion = d.Bool()
					case "versions":
						rule.Versions = int32s(at + ".versions")
					case "value":
						rule.Value = check(at + ".value")
					case "key":
						rule.Key = check(at + ".key")
					case "error":
						rule.Error = errorCode()
					default:
						d.UnknownKey(key)
					}
				})
				cfg.Rules = append(cfg.Rules, rule)
			})
		default:
			d.UnknownKey(key)
		}
	})
	if d.Failed() {
		return nil
	}
	p, err := New(cfg)
	if err != nil {
		ce := err.(*ConfigError)
		// Point at the value the failure names, or the nearest enclosing one read.
		segs := ce.segs
		for n := len(segs); n >= 0; n-- {
			key := strings.TrimPrefix(strings.Join(segs[:n], "."), ".")
			key = strings.ReplaceAll(key, ".[", "[")
			if at, ok := offs[key]; ok {
				d.Rewind(at)
				break
			}
		}
		d.Fail(errors.New(ce.Msg), "")
		for i := len(segs) - 1; i >= 0; i-- {
			if segs[i][0] == '[' {
				n, _ := strconv.Atoi(segs[i][1 : len(segs[i])-1])
				d.PushIndex(n)
			} else {
				d.Push(segs[i])
			}
		}
		return nil
	}
	return p
}
