// Package transcode is the engine of kwire's JSON form (codec/JSON.md): the schema
// tables, one interpreter from wire bytes to JSON and back, the Doc index, the walker
// and the flat parsers the ABI uses. Package codec (the typed messages' JSON) and
// codec/transcode (its public face) are thin over it.
//
// It reads and writes the JSON form straight from and
// to Kafka wire bytes, driven by schema tables generated from the same merged
// descriptors as the typed codec. It carries no per-message code: one interpreter walks
// the tables. That keeps programs that speak every message through JSON (the WebAssembly
// module, the C library) small, while the typed codec in package codec stays the Go API.
//
// It is the one JSON engine: the typed messages' AppendJSON is their Encode followed by
// AppendJSON here, and their DecodeJSON is AppendWire here followed by their Decode.
// The interpreter's wire reading and the typed decoders agree byte for byte and error
// for error: for any input, the JSON text written here is the one the typed codec's
// Decode followed by AppendJSON writes, and failures are the same *proto.DecodeError,
// *proto.EncodeError and *proto.JSONError values (message, version, field path, byte
// offset). Differential tests and a fuzz target hold them together.
package transcode

import (
	"errors"
	"github.com/kwire/kwire/internal/errtext"
	"sort"
	"strconv"
	"sync"
	"unsafe"

	"github.com/kwire/kwire/internal/jsonx"
	"github.com/kwire/kwire/internal/proto"
)

// ErrUnknownMessage is the cause of an error for a message name the schema lacks.
var ErrUnknownMessage = errors.New("unknown message")

// errRecordsHook marks a failure returned by a DecodeOptions.Records function.
var errRecordsHook = errors.New("records callback failed")

// Info describes one message of the schema.
type Info struct {
	Name                   string
	APIKey                 int16 // -1 for headers and data types
	Kind                   proto.Kind
	MinVersion, MaxVersion int16
	// FlexibleMin is the first flexible version, or -1.
	FlexibleMin int16
	// KeepsTrailing is set when bytes after the message are accepted and kept
	// (request bodies and the consumer protocol's payloads, as Kafka's readers do).
	KeepsTrailing bool
}

// SpecReleases are the kafka-clients releases whose descriptors generated the schema.
func SpecReleases() []string { return append([]string(nil), specReleases[:]...) }

func infoOf(m *message) Info {
	fmin := int16(-1)
	if !m.flex.empty() {
		fmin = m.flex.lo
	}
	return Info{Name: m.name, APIKey: m.apiKey, Kind: proto.Kind(m.kind), MinVersion: m.valid.lo, MaxVersion: m.valid.hi,
		FlexibleMin: fmin, KeepsTrailing: m.flags&msgTrailing != 0}
}

func lookup(name string) *message {
	i := sort.Search(len(schemaMessages), func(i int) bool { return schemaMessages[i].name >= name })
	if i < len(schemaMessages) && schemaMessages[i].name == name {
		return &schemaMessages[i]
	}
	return nil
}

// apiMessage is the request or response (kind) of an api key, or nil.
func apiMessage(key int16, kind proto.Kind) *message {
	switch kind {
	case proto.KindRequest:
		return byKey(requestByKey[:], key)
	case proto.KindResponse:
		return byKey(responseByKey[:], key)
	}
	return nil
}

func byKey(table []int16, key int16) *message {
	if key < 0 || int(key) >= len(table) || table[key] < 0 {
		return nil
	}
	return &schemaMessages[table[key]]
}

// Lookup returns the description of a message by descriptor name.
func Lookup(name string) (Info, bool) {
	m := lookup(name)
	if m == nil {
		return Info{}, false
	}
	return infoOf(m), true
}

// LookupAPI returns the request or response (kind) of an api key, by the name the
// newest release gives it.
func LookupAPI(key int16, kind proto.Kind) (Info, bool) {
	m := apiMessage(key, kind)
	if m == nil {
		return Info{}, false
	}
	return infoOf(m), true
}

func versionError(m *message, v int16) error {
	return &proto.VersionError{Message: m.name, Version: v, Min: m.valid.lo, Max: m.valid.hi}
}

func unknownMessage(name string) error {
	return errtext.Wrap("kwire: "+strconv.Quote(name)+": "+ErrUnknownMessage.Error()+DidYouMean(name), ErrUnknownMessage)
}

// DidYouMean is "; did you mean FetchRequest?" naming the messages closest to name
// (a misspelling, a wrong case, "Fetch" for FetchRequest and FetchResponse), or ""
// when none is close.
func DidYouMean(name string) string {
	names := make([]string, len(schemaMessages))
	for i := range schemaMessages {
		names[i] = schemaMessages[i].name
	}
	return errtext.DidYouMean(name, names)
}

// AppendJSON appends the JSON form of the message `name` at version held by src, which
// must hold exactly that message (request bodies and the consumer protocol's payloads
// may be followed by bytes, kept under "_trailingBytes"). It is the typed codec's
// Decode followed by AppendJSON, in one pass and without building the message.
func AppendJSON(dst []byte, name string, version int16, src []byte, opts *DecodeOptions) ([]byte, error) {
	m := lookup(name)
	if m == nil {
		return dst, unknownMessage(name)
	}
	if !m.valid.has(version) {
		return dst, versionError(m, version)
	}
	d := getDecoder(opts)
	defer putDecoder(d)
	d.r.Reset(src)
	d.out = dst
	if err := d.message(m, version, true); err != nil {
		return dst, err
	}
	return d.out, nil
}

// message decodes one message from d.r at version; whole says the input must end with
// it (unless the message keeps trailing bytes).
func (d *decoder) message(m *message, v int16, whole bool) (err error) {
	defer func() {
		if p := recover(); p != nil {
			// The interpreter checks every bound; this turns a bug into an error rather
			// than a crash of the host process.
			err = &proto.DecodeError{Message: m.name, Version: v, Offset: d.r.Off, Err: errors.New("internal decoder fault"), Detail: errtext.Panic(p)}
		}
	}()
	d.structJSON(m, m.root, v)
	if d.r.Err == nil && whole {
		if m.flags&msgTrailing != 0 {
			if rest := d.r.Src[d.r.Off:]; len(rest) > 0 {
				// Insert before the closing brace of the root object.
				d.out = d.out[:len(d.out)-1]
				d.out = jsonx.Key(d.out, d.out[len(d.out)-1] == '{', "_trailingBytes")
				d.out = jsonx.AppendBytes(d.out, rest, false)
				d.out = append(d.out, '}')
				d.r.Off = len(d.r.Src)
			}
		} else {
			d.r.Trailing()
		}
	}
	if d.recErr != nil {
		return d.recErr
	}
	if d.r.Err != nil {
		return &proto.DecodeError{Message: m.name, Version: v, Path: d.r.Path(), Offset: d.r.ErrOff, Err: d.r.Err, Detail: d.r.Detail}
	}
	return nil
}

// AppendWire appends the encoding at version of the JSON form of the message `name`:
// the typed codec's DecodeJSON followed by Encode, without building the message.
func AppendWire(dst []byte, name string, version int16, json []byte) ([]byte, error) {
	m := lookup(name)
	if m == nil {
		return dst, unknownMessage(name)
	}
	t := getTree()
	defer putTree(t)
	if err := t.parse(m, json, 0); err != nil {
		return dst, err
	}
	if !m.valid.has(version) {
		return dst, versionError(m, version)
	}
	return t.encode(dst, m, version)
}

// parse reads a whole JSON document holding one m; base is added to error offsets.
func (t *tree) parse(m *message, json []byte, base int) error {
	t.reset(json)
	t.object(m, m.root, true)
	t.d.End()
	if err := t.d.Err(); err != nil {
		return jsonError(err, m.name, base)
	}
	return nil
}

// jsonError turns a failure of the JSON reader into the codec's *JSONError for the
// message (or envelope) what, its offset moved by base.
func jsonError(err error, what string, base int) error {
	var je *jsonx.Error
	if errors.As(err, &je) {
		return &proto.JSONError{Message: what, Path: je.Path, Offset: je.Offset + base, Err: je.Err, Detail: je.Detail}
	}
	return err
}

// encode writes the parsed message (its root is node 0) at version v.
func (t *tree) encode(dst []byte, m *message, v int16) (out []byte, err error) {
	e := encoder{t: t}
	defer func() {
		if p := recover(); p != nil {
			out, err = dst, &proto.EncodeError{Message: m.name, Version: v, Err: errors.New("internal encoder fault"), Detail: errtext.Panic(p)}
		}
	}()
	b := e.encodeStruct(dst, m, m.root, 0, v, true)
	if e.w.Err != nil {
		return dst, &proto.EncodeError{Message: m.name, Version: v, Path: e.w.Path(), Err: e.w.Err, Detail: e.w.Detail}
	}
	return b, nil
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// Pools: a decode or encode keeps its buffers for the next call. In WebAssembly, where
// every allocation is dear, this keeps steady-state calls free of garbage.
var (
	decoders = sync.Pool{New: func() any {
		d := new(decoder)
		d.pathOfRecords = d.recordsFieldPath // once: a method value made per call would allocate
		return d
	}}
	trees = sync.Pool{New: func() any { return new(tree) }}
)

var noOptions DecodeOptions

func getDecoder(opts *DecodeOptions) *decoder {
	d := decoders.Get().(*decoder)
	if opts == nil {
		opts = &noOptions
	}
	d.opts = opts
	return d
}

func putDecoder(d *decoder) {
	d.out, d.opts, d.recErr = nil, nil, nil
	d.unk, d.holes, d.segs = d.unk[:0], d.holes[:0], d.segs[:0]
	d.r.Reset(nil)
	decoders.Put(d)
}

func getTree() *tree { return trees.Get().(*tree) }

func putTree(t *tree) {
	t.reset(nil)
	t.opts = nil
	if cap(t.side) > 1<<20 {
		t.side = nil // do not keep a large input's buffer alive
	}
	trees.Put(t)
}
