// Package transcode reads and writes kwire's JSON form (codec/JSON.md) straight from and
// to Kafka wire bytes, driven by schema tables generated from the same merged
// descriptors as the typed codec. It carries no per-message code: one interpreter walks
// the tables. That keeps programs that speak every message through JSON (the WebAssembly
// module, the C library) small, while the typed codec in package codec stays the Go API.
//
// The typed codec's JSON goes through the same interpreter, so the two agree byte for
// byte and error for error: for any input, the JSON text written here is the one the
// typed codec's Decode followed by AppendJSON writes, the bytes are those of
// DecodeJSON followed by Encode, and failures are the same *codec.DecodeError,
// *codec.EncodeError and *codec.JSONError values (message, version, field path, byte
// offset).
package transcode

import (
	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/internal/transcode"
)

// ErrUnknownMessage is the cause of an error for a message name the schema lacks.
var ErrUnknownMessage = transcode.ErrUnknownMessage

// Info describes one message of the schema: Name, APIKey (-1 for headers and data
// types), Kind, MinVersion and MaxVersion, FlexibleMin (the first flexible version, or
// -1) and KeepsTrailing (bytes after the message are accepted and kept, as Kafka's
// readers do for request bodies and the consumer protocol's payloads).
type Info = transcode.Info

// SpecReleases are the kafka-clients releases whose descriptors generated the schema.
func SpecReleases() []string { return transcode.SpecReleases() }

// Lookup returns the description of a message by descriptor name.
func Lookup(name string) (Info, bool) { return transcode.Lookup(name) }

// LookupAPI returns the request or response (kind) of an api key, by the name the
// newest release gives it.
func LookupAPI(key int16, kind codec.Kind) (Info, bool) { return transcode.LookupAPI(key, kind) }

// DecodeOptions tune wire -> JSON transcoding: Records (a RecordsFunc called for each
// records field instead of writing its bytes as base64), TopicName (add the topic's
// name beside each topic id) and the rest documented on its fields.
type DecodeOptions = transcode.DecodeOptions

// RecordsFunc writes the JSON value of one records field (see DecodeOptions.Records):
// it appends it to dst and returns it; a non-nil error fails the decode as it is.
type RecordsFunc = transcode.RecordsFunc

// TopicNameKey is the key of a topic name DecodeOptions.TopicName adds to a struct
// that has no topic name field at any version (ShareFetch's topics, for one).
const TopicNameKey = transcode.TopicNameKey

// EncodeOptions tune JSON -> wire transcoding.
type EncodeOptions = transcode.EncodeOptions

// AppendJSON appends the JSON form of the message `name` at version held by src, which
// must hold exactly that message (request bodies and the consumer protocol's payloads
// may be followed by bytes, kept under "_trailingBytes"). It is the typed codec's
// Decode followed by AppendJSON, in one pass and without building the message.
func AppendJSON(dst []byte, name string, version int16, src []byte, opts *DecodeOptions) ([]byte, error) {
	return transcode.AppendJSON(dst, name, version, src, opts)
}

// AppendWire appends the encoding at version of the JSON form of the message `name`:
// the typed codec's DecodeJSON followed by Encode, without building the message.
func AppendWire(dst []byte, name string, version int16, json []byte) ([]byte, error) {
	return transcode.AppendWire(dst, name, version, json)
}

// Framer transcodes whole frames (a 4-byte big-endian size, the header, the body)
// between wire bytes and a JSON envelope holding the header and the body. The zero
// value refuses frames above codec.DefaultMaxFrameSize, as codec.Framer does. Its
// methods: AppendRequestFrameJSON, AppendResponseFrameJSON, AppendRequestFrame,
// AppendResponseFrame and ResponseVersionHint.
type Framer = transcode.Framer
