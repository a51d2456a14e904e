// Package codec encodes and decodes every Kafka request and response, in every version,
// plus the request and response headers and Kafka's "data" payload types, byte for byte
// as Apache Kafka's own serializers do. The message types are generated from Kafka's JSON
// message descriptors (see SpecReleases); this file and frame.go are the hand-written
// surface around them.
//
// The codec performs no I/O: bytes in, typed messages out, and back. Decoding never
// panics; every failure is a *DecodeError naming the message, version, field path and
// byte offset. Decoded bytes, keys and records alias the input; strings are copied
// unless DecodeOptions.UnsafeStrings is set.
package codec

import (
	"encoding/base64"
	"errors"
	"github.com/kwire/kwire/internal/errtext"
	"sort"
	"strconv"
	"sync"

	"github.com/kwire/kwire/internal/jsonx"
	"github.com/kwire/kwire/internal/proto"
	"github.com/kwire/kwire/internal/transcode"
	"github.com/kwire/kwire/internal/wire"
)

// Kind says what a message is: request, response, header or data.
type Kind = proto.Kind

// The kinds of message.
const (
	KindRequest  = proto.KindRequest
	KindResponse = proto.KindResponse
	KindHeader   = proto.KindHeader
	KindData     = proto.KindData
)

// ParseKind is the inverse of Kind.String.
func ParseKind(s string) (Kind, bool) {
	for k := KindRequest; k <= KindData; k++ {
		if k.String() == s {
			return k, true
		}
	}
	return 0, false
}

// UUID is Kafka's 128-bit uuid.
type UUID [16]byte

// String returns Kafka's text form: URL-safe base64 without padding (22 characters).
func (u UUID) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// ParseUUID parses Kafka's text form of a uuid.
func ParseUUID(s string) (UUID, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || len(b) != 16 {
		return UUID{}, errors.New("kwire: " + strconv.Quote(s) + " is not a uuid (22 characters of URL-safe base64)")
	}
	return UUID(b), nil
}

// TaggedField is one tagged field that the descriptors do not define, kept as read so
// that re-encoding reproduces it. Data aliases the decoded input.
type TaggedField = wire.TaggedField

// Message is implemented by every generated request, response, header and data type.
type Message interface {
	// MessageName is the descriptor name, e.g. "ProduceRequest".
	MessageName() string
	// APIKey is the api key, or -1 for headers and data types.
	APIKey() int16
	// MessageKind says whether this is a request, response, header or data type.
	MessageKind() Kind
	// Info returns the generated metadata of the message.
	Info() *MessageInfo
	// Encode appends the message at version to dst.
	Encode(dst []byte, version int16) ([]byte, error)
	// Decode replaces the message with the one in src, which must hold exactly one
	// message at version.
	Decode(src []byte, version int16) error
	// DecodeWith is Decode with options.
	DecodeWith(src []byte, version int16, opts DecodeOptions) error
	// AppendJSON appends the JSON form (codec/JSON.md) at version to dst.
	AppendJSON(dst []byte, version int16) ([]byte, error)
	// DecodeJSON replaces the message with the one in data (the JSON form), read at
	// version: the JSON form names the fields of one version, so reading it needs one.
	DecodeJSON(data []byte, version int16) error
	// SetDefaults resets every field to its descriptor default.
	SetDefaults()

	decode(r *wire.Reader, v int16)
	encode(b []byte, v int16, w *wire.Encoder) []byte
}

// Request is a request body; NewResponse returns its paired response type.
type Request interface {
	Message
	NewResponse() Response
	isRequest()
}

// Response is a response body; NewRequest returns its paired request type.
type Response interface {
	Message
	NewRequest() Request
	isResponse()
}

// MessageInfo is the generated metadata of one message.
type MessageInfo struct {
	Name   string
	APIKey int16 // -1 for headers and data types
	Kind   Kind
	// MinVersion and MaxVersion bound the valid versions (the union over SpecReleases).
	MinVersion, MaxVersion int16
	// FlexibleMin is the first flexible version, or -1 when the message is never flexible.
	FlexibleMin int16
	// DeprecatedMin and DeprecatedMax bound the deprecated versions, or are -1.
	DeprecatedMin, DeprecatedMax int16
	// Listeners are the listener types that accept the request (requests only).
	Listeners []string
	// LatestVersionUnstable is set when the newest version is not yet stable.
	LatestVersionUnstable bool
	// Releases are the kafka-clients releases whose descriptors include the message.
	Releases []string
	// Renames are fields a newer release renamed at versions an older one also defines.
	// The JSON form writes the newer name and accepts either.
	Renames []FieldRename
	// Superseded are versions that an older release marked unstable (not yet final) and
	// a newer release redefined. kwire implements the newer definition; the older
	// release's unstable encoding of that version is not supported.
	Superseded []SupersededVersion
	// CurrentName is set when a newer release gave this api key another name (Kafka 4
	// calls api key 74 ListConfigResources, 3.9 ListClientMetricsResources): lookups by
	// api key return the current name's type, and this one stays for older peers.
	CurrentName string
}

// SupersededVersion is one version of one release whose unstable definition a newer
// release replaced.
type SupersededVersion struct {
	Release string
	Version int16
}

// FieldRename is one renamed field: Path is the JSON path of its struct ("" for the
// message itself, "topics[].partitions[]" inside arrays), Old and New its JSON names.
type FieldRename struct {
	Path, Old, New string
}

// ValidVersion reports whether v is a valid version of the message.
func (i *MessageInfo) ValidVersion(v int16) bool { return v >= i.MinVersion && v <= i.MaxVersion }

// Flexible reports whether version v uses the flexible (compact, tagged) encoding.
func (i *MessageInfo) Flexible(v int16) bool { return i.FlexibleMin >= 0 && v >= i.FlexibleMin }

// APIInfo pairs the request and response of one api key.
type APIInfo struct {
	Key      int16
	Name     string // "Produce", "Fetch", ...
	Request  *MessageInfo
	Response *MessageInfo
}

// Messages returns the metadata of every message, sorted by name.
func Messages() []*MessageInfo { return append([]*MessageInfo(nil), allMessages...) }

// APIs returns every api key's metadata, in key order.
func APIs() []APIInfo { return append([]APIInfo(nil), allAPIs...) }

// LookupAPI returns the metadata of an api key.
func LookupAPI(key int16) (APIInfo, bool) {
	if key >= 0 && int(key) < len(apiIndex) {
		if i := apiIndex[key]; i > 0 {
			return allAPIs[i-1], true
		}
		return APIInfo{}, false
	}
	i := sort.Search(len(allAPIs), func(i int) bool { return allAPIs[i].Key >= key })
	if i < len(allAPIs) && allAPIs[i].Key == key {
		return allAPIs[i], true
	}
	return APIInfo{}, false
}

// apiIndex maps the api keys below 256 to their index in allAPIs plus one (0: not
// an api key): a lookup per frame is an array index, not a search.
var apiIndex = func() (idx [256]uint8) {
	for i, a := range allAPIs {
		if a.Key >= 0 && int(a.Key) < len(idx) && i < 255 {
			idx[a.Key] = uint8(i + 1)
		}
	}
	return idx
}()

// NewMessage returns a new message with defaults by descriptor name ("ProduceRequest",
// "RequestHeader", "ConsumerProtocolSubscription"), or nil.
func NewMessage(name string) Message { return newMessageByName(name) }

// NewRequest returns a new request of the api key with defaults, or nil.
func NewRequest(key int16) Request { return newRequest(key) }

// NewResponse returns a new response of the api key with defaults, or nil.
func NewResponse(key int16) Response { return newResponse(key) }

// LookupMessage returns a new message by api key and kind (request or response).
func LookupMessage(key int16, kind Kind) Message {
	switch kind {
	case KindRequest:
		if r := newRequest(key); r != nil {
			return r
		}
	case KindResponse:
		if r := newResponse(key); r != nil {
			return r
		}
	}
	return nil
}

// DecodeOptions tune decoding.
type DecodeOptions struct {
	// UnsafeStrings makes decoded strings alias the input instead of copying them. The
	// input must then stay alive and unchanged while the strings are in use.
	UnsafeStrings bool
}

// DecodeError is any failure to decode bytes: Message, Version, Path (the field path
// within the message, e.g. "topicData[0].name"), Offset (where the failing read
// started), Err (the cause, one of the wire errors), Detail, and Hint (set when a
// response frame decodes cleanly at exactly one other version of its api).
type DecodeError = proto.DecodeError

// VersionHint names the version at which a response frame that failed to decode
// does decode (see DecodeError.Hint).
type VersionHint = proto.VersionHint

// EncodeError is any failure to encode a message: Message, Version, Path, Err, Detail.
type EncodeError = proto.EncodeError

// Causes of failures; DecodeError and EncodeError wrap them, so errors.Is works.
var (
	ErrTruncated   = wire.ErrTruncated
	ErrLength      = wire.ErrLength
	ErrNull        = wire.ErrNull
	ErrVarint      = wire.ErrVarint
	ErrTags        = wire.ErrTags
	ErrTrailing    = wire.ErrTrailing
	ErrTooLarge    = wire.ErrTooLarge
	ErrNonDefault  = wire.ErrNonDefault
	ErrNotNullable = wire.ErrNotNullable
	ErrTooLong     = wire.ErrTooLong
	ErrBadTags     = wire.ErrBadTags
	ErrVersion     = wire.ErrVersion
	ErrUnknownAPI  = proto.ErrUnknownAPI
	ErrMismatch    = errors.New("header and body disagree")
)

func versionError(m Message, v int16) error {
	i := m.Info()
	return &VersionError{Message: m.MessageName(), Version: v, Min: i.MinVersion, Max: i.MaxVersion}
}

// VersionError is an encode (or JSON) call at a version the message does not have:
// Message, Version (the one asked for), Min and Max (the valid ones). It unwraps to
// ErrVersion.
type VersionError = proto.VersionError

func encodeError(m Message, v int16, w *wire.Encoder) error {
	return &EncodeError{Message: m.MessageName(), Version: v, Path: w.Path(), Err: w.Err, Detail: w.Detail}
}

func internalFault(m Message, v int16, off int, p any) error {
	// Generated decoders check every bound; this turns a bug into an error rather than
	// a crash of the host process.
	return &DecodeError{Message: m.MessageName(), Version: v, Offset: off, Err: errors.New("internal decoder fault"), Detail: errtext.Panic(p)}
}

// finishDecode checks that the whole input, from start, was used and turns a failure into
// an error.
func finishDecode(m Message, r *wire.Reader, v int16, start int) error {
	if r.Err != nil {
		return decodeFailure(m, r, v, start)
	}
	if r.Off != len(r.Src) {
		r.Fail(wire.ErrTrailing, r.Off, strconv.Itoa(len(r.Src)-r.Off)+" bytes left")
		return &DecodeError{Message: m.MessageName(), Version: v, Offset: r.ErrOff, Err: r.Err, Detail: r.Detail}
	}
	return nil
}

// decodeFailure is the error of a decode of m that failed in r. The generated decoders
// check for a failure once per struct and per array, so they do not know the field path;
// it is found again by reading the same bytes with the schema tables, whose reader fails
// on the same byte with the same error.
func decodeFailure(m Message, r *wire.Reader, v int16, start int) error {
	e := &DecodeError{Message: m.MessageName(), Version: v, Offset: r.ErrOff, Err: r.Err, Detail: r.Detail}
	buf := rereadBuf.Get().(*[]byte)
	out, err := transcode.AppendJSON((*buf)[:0], e.Message, v, r.Src[start:], nil)
	if te, ok := err.(*proto.DecodeError); ok && te.Offset+start == e.Offset {
		e.Path = te.Path
	}
	if cap(out) <= 64<<10 {
		*buf = out[:0]
		rereadBuf.Put(buf)
	}
	return e
}

// rereadBuf holds the output buffers of decodeFailure's second reading.
var rereadBuf = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// decodeAt decodes m from r at version v; when whole is set the reader must end with it.
func decodeAt(m Message, r *wire.Reader, v int16, whole bool) (err error) {
	if !m.Info().ValidVersion(v) {
		return versionError(m, v)
	}
	defer func() {
		if p := recover(); p != nil {
			err = internalFault(m, v, r.Off, p)
		}
	}()
	start := r.Off
	m.decode(r, v)
	if !whole {
		if r.Err != nil {
			return decodeFailure(m, r, v, start)
		}
		return nil
	}
	return finishDecode(m, r, v, start)
}

// appendJSONBody is the typed message's JSON: its encoding at v, written as JSON by the
// transcoder, the one JSON engine.
func appendJSONBody(m Message, dst []byte, v int16) ([]byte, error) {
	if !m.Info().ValidVersion(v) {
		return dst, versionError(m, v)
	}
	sp := scratch.Get().(*[]byte)
	defer scratch.Put(sp)
	b, err := m.Encode((*sp)[:0], v)
	if cap(b) <= 1<<20 {
		*sp = b[:0] // keep a grown buffer, but not a large message's
	}
	if err != nil {
		return dst, err
	}
	return transcode.AppendJSON(dst, m.MessageName(), v, b, nil)
}

// decodeJSONBody reads the JSON form through the transcoder into wire bytes at v and
// decodes them. The message aliases those bytes (as Decode aliases its input), so they
// are the message's own and never reused.
func decodeJSONBody(m Message, data []byte, v int16) error {
	b, err := transcode.AppendWire(nil, m.MessageName(), v, data)
	if err != nil {
		return err
	}
	return m.Decode(b, v)
}

// scratch holds the encodings AppendJSON writes as JSON.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

// JSONError is a failure to read the JSON form of a message: Message, Path (the JSON
// path of the failing value, e.g. "$.topicData[0].name"), Offset (in the JSON text), Err
// (ErrJSONSyntax, ErrJSONType, ErrJSONRange, ErrJSONUnknownKey or
// ErrJSONDuplicateKey) and Detail.
type JSONError = proto.JSONError

// Causes of JSON failures; a JSONError wraps one of them.
var (
	ErrJSONSyntax       = jsonx.ErrSyntax
	ErrJSONType         = jsonx.ErrType
	ErrJSONRange        = jsonx.ErrRange
	ErrJSONUnknownKey   = jsonx.ErrUnknown
	ErrJSONDuplicateKey = jsonx.ErrDup
)

// writeUnknownTags appends the unknown tags from u[i:] that sort below limit (all of them
// when limit < 0); see wire.WriteUnknownTags.
func writeUnknownTags(b []byte, w *wire.Encoder, u []TaggedField, i int, last int64, limit int64) ([]byte, int, int64) {
	return wire.WriteUnknownTags(b, w, u, i, last, limit)
}

func newString(s string) *string { return &s }
