package transcode

import (
	"encoding/binary"
	"errors"
	"github.com/kwire/kwire/internal/errtext"
	"strconv"

	"github.com/kwire/kwire/internal/jsonx"
	"github.com/kwire/kwire/internal/proto"
	"github.com/kwire/kwire/internal/wire"
)

// A frame's JSON form is an envelope:
//
//	{"apiKey": 0, "apiVersion": 9, "headerVersion": 2, "header": {...}, "body": {...}}
//
// On output every key is written. On input "header" and "body" are required; "apiKey",
// "apiVersion" and "headerVersion" are optional and, when present, must agree with the
// header (request frames) or with the api key and version the caller passes (response
// frames).

// Framer transcodes whole frames: a 4-byte big-endian size, the header, the body. The
// zero value refuses frames above proto.DefaultMaxFrameSize, as codec.Framer does.
type Framer struct {
	// MaxFrameSize bounds the size field of a frame; zero means proto.DefaultMaxFrameSize.
	MaxFrameSize int
	// Decode tunes how bodies are read (records fields).
	Decode DecodeOptions
	// Encode tunes how bodies are written (records fields).
	Encode EncodeOptions
}

func (f *Framer) limit() int {
	if f.MaxFrameSize > 0 {
		return f.MaxFrameSize
	}
	return proto.DefaultMaxFrameSize
}

func (f *Framer) checkFrame(frame []byte, name string) error {
	if len(frame) < 4 {
		return &proto.DecodeError{Message: name, Version: -1, Offset: 0, Err: wire.ErrTruncated, Detail: "a frame needs a 4-byte size"}
	}
	size := int(int32(binary.BigEndian.Uint32(frame)))
	if size < 0 || size > f.limit() {
		return &proto.DecodeError{Message: name, Version: -1, Offset: 0, Err: wire.ErrTooLarge,
			Detail: "frame size " + strconv.Itoa(size) + ", limit " + strconv.Itoa(f.limit())}
	}
	if n := 4 + size; n != len(frame) {
		cause := wire.ErrTruncated
		if n < len(frame) {
			cause = wire.ErrTrailing
		}
		return &proto.DecodeError{Message: name, Version: -1, Offset: 0, Err: cause,
			Detail: "size field says " + strconv.Itoa(n-4) + " bytes, frame holds " + strconv.Itoa(len(frame)-4)}
	}
	return nil
}

func headerMessage(request bool) *message {
	if request {
		return lookup("RequestHeader")
	}
	return lookup("ResponseHeader")
}

func envelopeHead(b []byte, key, version, hv int16) []byte {
	b = append(b, `{"apiKey":`...)
	b = strconv.AppendInt(b, int64(key), 10)
	b = append(b, `,"apiVersion":`...)
	b = strconv.AppendInt(b, int64(version), 10)
	b = append(b, `,"headerVersion":`...)
	b = strconv.AppendInt(b, int64(hv), 10)
	return append(b, `,"header":`...)
}

// AppendRequestFrameJSON appends the JSON envelope of one complete request frame (size
// prefix included); the header says which request and version the body is. Failures are
// the typed codec's (codec.Framer.DecodeRequest): error offsets count from the frame start.
func (f *Framer) AppendRequestFrameJSON(dst, frame []byte) ([]byte, error) {
	if err := f.checkFrame(frame, "request frame"); err != nil {
		return dst, err
	}
	if len(frame) < 8 {
		return dst, &proto.DecodeError{Message: "RequestHeader", Version: -1, Offset: 4, Err: wire.ErrTruncated, Detail: "need the api key and version"}
	}
	key := int16(binary.BigEndian.Uint16(frame[4:]))
	v := int16(binary.BigEndian.Uint16(frame[6:]))
	body := byKey(requestByKey[:], key)
	if body == nil {
		return dst, &proto.DecodeError{Message: "RequestHeader", Version: -1, Path: "requestApiKey", Offset: 4, Err: proto.ErrUnknownAPI, Detail: "api key " + strconv.Itoa(int(key))}
	}
	if !body.valid.has(v) {
		return dst, &proto.DecodeError{Message: body.name, Version: v, Path: "requestApiVersion", Offset: 6, Err: wire.ErrVersion,
			Detail: errtext.Range(body.valid.lo, body.valid.hi)}
	}
	hv := requestHeaderVersion(key, v)
	return f.frameJSON(dst, frame, headerMessage(true), body, key, v, hv)
}

// AppendResponseFrameJSON appends the JSON envelope of one complete response frame; a
// response does not say what it answers, so the caller passes the api key and version
// of the request.
func (f *Framer) AppendResponseFrameJSON(dst, frame []byte, apiKey, version int16) ([]byte, error) {
	if err := f.checkFrame(frame, "response frame"); err != nil {
		return dst, err
	}
	body := byKey(responseByKey[:], apiKey)
	if body == nil {
		return dst, &proto.DecodeError{Message: "response frame", Version: version, Offset: 0, Err: proto.ErrUnknownAPI, Detail: "api key " + strconv.Itoa(int(apiKey))}
	}
	if !body.valid.has(version) {
		return dst, &proto.DecodeError{Message: body.name, Version: version, Offset: 0, Err: wire.ErrVersion,
			Detail: errtext.Range(body.valid.lo, body.valid.hi)}
	}
	hv := responseHeaderVersion(apiKey, version)
	out, err := f.frameJSON(dst, frame, headerMessage(false), body, apiKey, version, hv)
	if err != nil {
		return dst, f.hint(err, frame, body, apiKey, version)
	}
	return out, nil
}

// hint sets the Hint of a response decode error (see ResponseVersionHint).
func (f *Framer) hint(err error, frame []byte, body *message, apiKey, version int16) error {
	de, ok := err.(*proto.DecodeError)
	if !ok || de.Hint != nil || errors.Is(de.Err, wire.ErrTooLarge) {
		return err
	}
	de.Hint = f.versionHint(frame, body, apiKey, version)
	return err
}

// ResponseVersionHint returns the one valid version of apiKey other than version at
// which frame decodes cleanly and whole, or nil when none or several do: what
// proto.DecodeError.Hint says after a failed decode. Records fields are read as bytes
// (no records callback): the hint is about the message's layout.
func (f *Framer) ResponseVersionHint(frame []byte, apiKey, version int16) *proto.VersionHint {
	body := byKey(responseByKey[:], apiKey)
	if body == nil || f.checkFrame(frame, "response frame") != nil {
		return nil
	}
	return f.versionHint(frame, body, apiKey, version)
}

func (f *Framer) versionHint(frame []byte, body *message, apiKey, version int16) *proto.VersionHint {
	plain := Framer{MaxFrameSize: f.MaxFrameSize}
	var scratch []byte
	found, n := int16(-1), 0
	for v := body.valid.lo; v <= body.valid.hi && n < 2; v++ {
		if v == version || !body.valid.has(v) {
			continue
		}
		var e error
		if scratch, e = plain.frameJSON(scratch[:0], frame, headerMessage(false), body, apiKey, v, responseHeaderVersion(apiKey, v)); e == nil {
			found, n = v, n+1
		}
	}
	if n != 1 {
		return nil
	}
	return &proto.VersionHint{Message: body.name, Version: found}
}

func (f *Framer) frameJSON(dst, frame []byte, hm, body *message, key, v, hv int16) ([]byte, error) {
	d := getDecoder(&f.Decode)
	defer putDecoder(d)
	d.r.Reset(frame)
	d.r.Off = 4
	d.out = envelopeHead(dst, key, v, hv)
	if err := d.message(hm, hv, false); err != nil {
		return dst, err
	}
	d.out = append(d.out, `,"body":`...)
	if err := d.message(body, v, true); err != nil {
		return dst, err
	}
	return append(d.out, '}'), nil
}

// envelope is what an encode-frame call reads of the envelope.
type envelope struct {
	header, body       span
	apiKey, apiVersion int64
	hv                 int64
	keyAt, verAt, hvAt int // offsets of the values, -1 when absent
}

type span struct{ start, end int }

func readEnvelope(t *tree, json []byte, what string) (*envelope, error) {
	env := &envelope{header: span{-1, -1}, body: span{-1, -1}, keyAt: -1, verAt: -1, hvAt: -1}
	d := &t.d
	d.Reset(json)
	d.Object(func(k string) {
		switch k {
		case "header":
			env.header = skipValue(d)
		case "body":
			env.body = skipValue(d)
		case "apiKey":
			env.keyAt = d.ValueStart()
			env.apiKey = d.Int(-1<<15, 1<<15-1)
		case "apiVersion":
			env.verAt = d.ValueStart()
			env.apiVersion = d.Int(-1<<15, 1<<15-1)
		case "headerVersion":
			env.hvAt = d.ValueStart()
			env.hv = d.Int(-1<<15, 1<<15-1)
		default:
			d.UnknownKey(k)
		}
	})
	d.End()
	if !d.Failed() && env.header.start < 0 {
		d.Fail(jsonx.ErrType, `missing key "header"`)
	}
	if !d.Failed() && env.body.start < 0 {
		d.Fail(jsonx.ErrType, `missing key "body"`)
	}
	if err := d.Err(); err != nil {
		return nil, jsonError(err, what, 0)
	}
	return env, nil
}

func skipValue(d *jsonx.Decoder) span {
	start := d.ValueStart()
	d.Skip()
	return span{start, d.Pos()}
}

func mismatch(what, key string, at int, got, want int64) error {
	return &proto.JSONError{Message: what, Path: "$." + key, Offset: at, Err: jsonx.ErrType,
		Detail: strconv.FormatInt(got, 10) + " disagrees with " + strconv.FormatInt(want, 10)}
}

// rebase moves a JSON error of a nested document to the envelope's path and offsets.
func rebase(err error, prefix string, base int) error {
	var je *proto.JSONError
	if errors.As(err, &je) {
		je.Path = prefix + je.Path[1:]
		je.Offset += base
	}
	return err
}

// intField returns the integer value of a header field from the parsed tree (its
// default when absent).
func (t *tree) intField(m *message, name string) int64 {
	s := &schemaStructs[m.root]
	fields := schemaFields[s.first : s.first+s.n]
	for i := range fields {
		if fields[i].name == name {
			if x := t.slots[t.nodes[0].a+int32(i)]; x >= 0 {
				return t.nodes[x].i
			}
			return fields[i].defInt
		}
	}
	return 0
}

// AppendRequestFrame appends the request frame described by the JSON envelope. The
// header names the api key and version; apiKey and apiVersion in the envelope, when
// present, must agree with it.
func (f *Framer) AppendRequestFrame(dst, json []byte) ([]byte, error) {
	const what = "request frame"
	t := getTree()
	defer putTree(t)
	env, err := readEnvelope(t, json, what)
	if err != nil {
		return dst, err
	}
	hm := headerMessage(true)
	if err := t.parse(hm, json[env.header.start:env.header.end], 0); err != nil {
		return dst, rebase(err, "$.header", env.header.start)
	}
	key, v := int16(t.intField(hm, "requestApiKey")), int16(t.intField(hm, "requestApiVersion"))
	if env.keyAt >= 0 && env.apiKey != int64(key) {
		return dst, mismatch(what, "apiKey", env.keyAt, env.apiKey, int64(key))
	}
	if env.verAt >= 0 && env.apiVersion != int64(v) {
		return dst, mismatch(what, "apiVersion", env.verAt, env.apiVersion, int64(v))
	}
	body := byKey(requestByKey[:], key)
	if body == nil {
		return dst, errtext.Wrap("kwire: request header names api key "+strconv.Itoa(int(key))+": "+proto.ErrUnknownAPI.Error(), proto.ErrUnknownAPI)
	}
	if !body.valid.has(v) {
		return dst, versionError(body, v)
	}
	hv := requestHeaderVersion(key, v)
	if env.hvAt >= 0 && env.hv != int64(hv) {
		return dst, mismatch(what, "headerVersion", env.hvAt, env.hv, int64(hv))
	}
	return f.encodeFrame(dst, t, json, env, hm, body, hv, v)
}

// AppendResponseFrame appends the response frame, for a request of apiKey at version,
// described by the JSON envelope.
func (f *Framer) AppendResponseFrame(dst, json []byte, apiKey, version int16) ([]byte, error) {
	const what = "response frame"
	body := byKey(responseByKey[:], apiKey)
	if body == nil {
		return dst, errtext.Wrap("kwire: unknown api key "+strconv.Itoa(int(apiKey))+": "+proto.ErrUnknownAPI.Error(), proto.ErrUnknownAPI)
	}
	if !body.valid.has(version) {
		return dst, versionError(body, version)
	}
	t := getTree()
	defer putTree(t)
	env, err := readEnvelope(t, json, what)
	if err != nil {
		return dst, err
	}
	if env.keyAt >= 0 && env.apiKey != int64(apiKey) {
		return dst, mismatch(what, "apiKey", env.keyAt, env.apiKey, int64(apiKey))
	}
	if env.verAt >= 0 && env.apiVersion != int64(version) {
		return dst, mismatch(what, "apiVersion", env.verAt, env.apiVersion, int64(version))
	}
	hv := responseHeaderVersion(apiKey, version)
	if env.hvAt >= 0 && env.hv != int64(hv) {
		return dst, mismatch(what, "headerVersion", env.hvAt, env.hv, int64(hv))
	}
	hm := headerMessage(false)
	if err := t.parse(hm, json[env.header.start:env.header.end], 0); err != nil {
		return dst, rebase(err, "$.header", env.header.start)
	}
	return f.encodeFrame(dst, t, json, env, hm, body, hv, version)
}

func (f *Framer) encodeFrame(dst []byte, ht *tree, json []byte, env *envelope, hm, body *message, hv, v int16) ([]byte, error) {
	bt := getTree()
	defer putTree(bt)
	bt.opts = &f.Encode
	if err := bt.parse(body, json[env.body.start:env.body.end], 0); err != nil {
		return dst, rebase(err, "$.body", env.body.start)
	}
	start := len(dst)
	out := append(dst, 0, 0, 0, 0)
	out, err := ht.encode(out, hm, hv)
	if err != nil {
		return dst[:start], err
	}
	if out, err = bt.encode(out, body, v); err != nil {
		return dst[:start], err
	}
	size := len(out) - start - 4
	if size > f.limit() {
		return dst[:start], &proto.EncodeError{Message: body.name, Version: v, Err: wire.ErrTooLarge,
			Detail: "frame of " + strconv.Itoa(size) + " bytes, limit " + strconv.Itoa(f.limit())}
	}
	binary.BigEndian.PutUint32(out[start:], uint32(size))
	return out, nil
}

// ParseFlat reads a JSON object whose values are scalars, strictly: keys names every
// allowed key with its kind, "string", "int" (an integral number, as int64) or "bool".
// Unknown keys, duplicates and wrong types are *proto.JSONError values naming what.
// The ABI uses it for small configuration objects.
func ParseFlat(json []byte, what string, keys map[string]string) (map[string]any, error) {
	out := map[string]any{}
	d := jsonx.NewDecoder(json)
	d.Object(func(k string) {
		switch keys[k] {
		case "string":
			out[k] = string(d.StringBytes())
		case "int":
			out[k] = d.Int(-1<<63, 1<<63-1)
		case "bool":
			out[k] = d.Bool()
		default:
			d.UnknownKey(k)
		}
	})
	d.End()
	if err := d.Err(); err != nil {
		return nil, jsonError(err, what, 0)
	}
	return out, nil
}
