package abi

import (
	"encoding/binary"
	"strconv"
	"sync"

	"github.com/kwire/kwire/codec"
)

// lookup returns a new message by descriptor name, checking the version.
func lookup(name string, version int32) (codec.Message, *Error) {
	m := codec.NewMessage(name)
	if m == nil {
		return nil, newErr(StatusUnknownAPI, "kwire: unknown message %q", name)
	}
	if !fits16(version) || !m.Info().ValidVersion(int16(version)) {
		i := m.Info()
		return nil, &Error{Status: StatusVersion, Text: "kwire: " + name + " version " + strconv.Itoa(int(version)) +
			": unsupported version (valid " + strconv.Itoa(int(i.MinVersion)) + "-" + strconv.Itoa(int(i.MaxVersion)) + ")",
			Message: name, Version: int(version), Offset: -1}
	}
	return m, nil
}

var decodeOpts = codec.DecodeOptions{UnsafeStrings: true} // the message dies before the call returns

// reserve makes room for about n more bytes in dst, so that an output is built with one
// allocation instead of a series of doublings (each a copy, and garbage for the
// collector, which is dear in wasm).
func reserve(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	out := make([]byte, len(dst), len(dst)+n)
	copy(out, dst)
	return out
}

// DecodeMessage is kw_decode_message: the JSON form of the message `name` at version
// held by in, appended to dst.
func DecodeMessage(dst []byte, name string, version int32, in []byte) (out []byte, err error) {
	defer guard(&err)
	m, e := lookup(name, version)
	if e != nil {
		return dst, e
	}
	if err := m.DecodeWith(in, int16(version), decodeOpts); err != nil {
		return dst, fromDecode(err)
	}
	// JSON is about three times the wire size (names, quotes, base64).
	out, err = m.AppendJSON(reserve(dst, 3*len(in)+128), int16(version))
	if err != nil {
		return dst, fromEncode(err)
	}
	return out, nil
}

// EncodeMessage is kw_encode_message: the encoding at version of the JSON form of the
// message `name`, appended to dst.
func EncodeMessage(dst []byte, name string, version int32, json []byte) (out []byte, err error) {
	defer guard(&err)
	m, e := lookup(name, version)
	if e != nil {
		return dst, e
	}
	if err := m.UnmarshalJSON(json); err != nil {
		return dst, fromJSON(err, name, "$", 0)
	}
	out, err = m.Encode(reserve(dst, len(json)/2+16), int16(version))
	if err != nil {
		return dst, fromEncode(err)
	}
	return out, nil
}

func appendEnvelopeHead(b []byte, key, version, hv int16) []byte {
	b = append(b, `{"apiKey":`...)
	b = strconv.AppendInt(b, int64(key), 10)
	b = append(b, `,"apiVersion":`...)
	b = strconv.AppendInt(b, int64(version), 10)
	b = append(b, `,"headerVersion":`...)
	b = strconv.AppendInt(b, int64(hv), 10)
	return append(b, `,"header":`...)
}

var framer = codec.Framer{UnsafeStrings: true}

// DecodeRequestFrame is kw_decode_request_frame.
func DecodeRequestFrame(dst []byte, frame []byte) (out []byte, err error) {
	defer guard(&err)
	f, err := framer.DecodeRequest(frame)
	if err != nil {
		return dst, fromDecode(err)
	}
	v := f.Header.RequestApiVersion
	out = appendEnvelopeHead(reserve(dst, 3*len(frame)+192), f.Header.RequestApiKey, v, f.HeaderVersion)
	if out, err = f.Header.AppendJSON(out, f.HeaderVersion); err != nil {
		return dst, fromEncode(err)
	}
	out = append(out, `,"body":`...)
	if out, err = f.Body.AppendJSON(out, v); err != nil {
		return dst, fromEncode(err)
	}
	return append(out, '}'), nil
}

// DecodeResponseFrame is kw_decode_response_frame.
func DecodeResponseFrame(dst []byte, frame []byte, apiKey, version int32) (out []byte, err error) {
	defer guard(&err)
	if e := checkAPI(apiKey, version, false); e != nil {
		return dst, e
	}
	f, err := framer.DecodeResponse(frame, int16(apiKey), int16(version))
	if err != nil {
		return dst, fromDecode(err)
	}
	out = appendEnvelopeHead(reserve(dst, 3*len(frame)+192), int16(apiKey), int16(version), f.HeaderVersion)
	if out, err = f.Header.AppendJSON(out, f.HeaderVersion); err != nil {
		return dst, fromEncode(err)
	}
	out = append(out, `,"body":`...)
	if out, err = f.Body.AppendJSON(out, int16(version)); err != nil {
		return dst, fromEncode(err)
	}
	return append(out, '}'), nil
}

// checkAPI checks an api key and version from the boundary against the request (or
// response) of that key.
func checkAPI(apiKey, version int32, request bool) *Error {
	var api codec.APIInfo
	ok := fits16(apiKey)
	if ok {
		api, ok = codec.LookupAPI(int16(apiKey))
	}
	if !ok {
		return newErr(StatusUnknownAPI, "kwire: unknown api key %d", apiKey)
	}
	info := api.Response
	if request {
		info = api.Request
	}
	if !fits16(version) || !info.ValidVersion(int16(version)) {
		return &Error{Status: StatusVersion, Text: "kwire: " + info.Name + " version " + strconv.Itoa(int(version)) +
			": unsupported version (valid " + strconv.Itoa(int(info.MinVersion)) + "-" + strconv.Itoa(int(info.MaxVersion)) + ")",
			Message: info.Name, Version: int(version), Offset: -1}
	}
	return nil
}

// envelope is what an encode-frame call reads.
type envelope struct {
	headerStart, headerEnd int
	bodyStart, bodyEnd     int
	apiKey, apiVersion, hv int64
	hasKey, hasVer, hasHV  bool
}

func readEnvelope(json []byte, what string) (*envelope, *Error) {
	e := &envelope{headerStart: -1, bodyStart: -1}
	r := newReader(json)
	r.object(func(key string) {
		switch key {
		case "header":
			e.headerStart, e.headerEnd = r.skip()
			e.headerStart = skipWS(json, e.headerStart)
		case "body":
			e.bodyStart, e.bodyEnd = r.skip()
			e.bodyStart = skipWS(json, e.bodyStart)
		case "apiKey":
			e.apiKey, e.hasKey = r.intIn(-1<<15, 1<<15-1), true
		case "apiVersion":
			e.apiVersion, e.hasVer = r.intIn(-1<<15, 1<<15-1), true
		case "headerVersion":
			e.hv, e.hasHV = r.intIn(-1<<15, 1<<15-1), true
		default:
			r.unknown()
		}
	})
	r.end()
	if r.err == nil && e.headerStart < 0 {
		r.fail(`missing key "header"`)
	}
	if r.err == nil && e.bodyStart < 0 {
		r.fail(`missing key "body"`)
	}
	if r.err != nil {
		return nil, fromReader(r, what)
	}
	return e, nil
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func mismatch(what, key string, got, want int64) *Error {
	return &Error{Status: StatusJSON, Text: "kwire: " + what + ": json $." + key + ": " + strconv.FormatInt(got, 10) +
		" disagrees with " + strconv.FormatInt(want, 10), Message: what, Version: -1, Path: "$." + key, Offset: -1}
}

// EncodeRequestFrame is kw_encode_request_frame.
func EncodeRequestFrame(dst []byte, json []byte) (out []byte, err error) {
	defer guard(&err)
	const what = "request frame"
	env, e := readEnvelope(json, what)
	if e != nil {
		return dst, e
	}
	h := codec.NewRequestHeader()
	if err := h.UnmarshalJSON(json[env.headerStart:env.headerEnd]); err != nil {
		return dst, fromJSON(err, "RequestHeader", "$.header", env.headerStart)
	}
	key, v := h.RequestApiKey, h.RequestApiVersion
	if env.hasKey && env.apiKey != int64(key) {
		return dst, mismatch(what, "apiKey", env.apiKey, int64(key))
	}
	if env.hasVer && env.apiVersion != int64(v) {
		return dst, mismatch(what, "apiVersion", env.apiVersion, int64(v))
	}
	if e := checkAPI(int32(key), int32(v), true); e != nil {
		return dst, e
	}
	if hv := codec.RequestHeaderVersion(key, v); env.hasHV && env.hv != int64(hv) {
		return dst, mismatch(what, "headerVersion", env.hv, int64(hv))
	}
	body := codec.NewRequest(key)
	if err := body.UnmarshalJSON(json[env.bodyStart:env.bodyEnd]); err != nil {
		return dst, fromJSON(err, body.MessageName(), "$.body", env.bodyStart)
	}
	out, err = framer.EncodeRequest(dst, h, body)
	if err != nil {
		return dst, fromEncode(err)
	}
	return out, nil
}

// EncodeResponseFrame is kw_encode_response_frame.
func EncodeResponseFrame(dst []byte, json []byte, apiKey, version int32) (out []byte, err error) {
	defer guard(&err)
	const what = "response frame"
	if e := checkAPI(apiKey, version, false); e != nil {
		return dst, e
	}
	env, e := readEnvelope(json, what)
	if e != nil {
		return dst, e
	}
	if env.hasKey && env.apiKey != int64(apiKey) {
		return dst, mismatch(what, "apiKey", env.apiKey, int64(apiKey))
	}
	if env.hasVer && env.apiVersion != int64(version) {
		return dst, mismatch(what, "apiVersion", env.apiVersion, int64(version))
	}
	if hv := codec.ResponseHeaderVersion(int16(apiKey), int16(version)); env.hasHV && env.hv != int64(hv) {
		return dst, mismatch(what, "headerVersion", env.hv, int64(hv))
	}
	h := codec.NewResponseHeader()
	if err := h.UnmarshalJSON(json[env.headerStart:env.headerEnd]); err != nil {
		return dst, fromJSON(err, "ResponseHeader", "$.header", env.headerStart)
	}
	body := codec.NewResponse(int16(apiKey))
	if err := body.UnmarshalJSON(json[env.bodyStart:env.bodyEnd]); err != nil {
		return dst, fromJSON(err, body.MessageName(), "$.body", env.bodyStart)
	}
	out, err = framer.EncodeResponse(dst, h, int16(version), body)
	if err != nil {
		return dst, fromEncode(err)
	}
	return out, nil
}

// Peek is what kw_peek_request_header fills in.
type Peek struct {
	FrameSize      int32
	APIKey         int32
	APIVersion     int32
	CorrelationID  int32
	HeaderVersion  int32
	ClientIDOffset int32
	ClientIDLength int32 // -1 when null or absent
}

// PeekSize is the size of the kw_peek_header struct.
const PeekSize = 32

// Put writes p as the 32-byte little-endian kw_peek_header.
func (p *Peek) Put(b []byte) {
	_ = b[PeekSize-1]
	le := binary.LittleEndian
	le.PutUint32(b[0:], uint32(p.FrameSize))
	le.PutUint32(b[4:], uint32(p.APIKey))
	le.PutUint32(b[8:], uint32(p.APIVersion))
	le.PutUint32(b[12:], uint32(p.CorrelationID))
	le.PutUint32(b[16:], uint32(p.HeaderVersion))
	le.PutUint32(b[20:], uint32(p.ClientIDOffset))
	le.PutUint32(b[24:], uint32(p.ClientIDLength))
	le.PutUint32(b[28:], 0)
}

// PeekRequestHeader is kw_peek_request_header. It does not allocate.
func PeekRequestHeader(frame []byte) (p Peek, err error) {
	defer guard(&err)
	be := binary.BigEndian
	if len(frame) < 12 {
		return p, &Error{Status: StatusDecode, Text: "kwire: peek request header at offset " + strconv.Itoa(len(frame)) +
			": truncated input (need 12 bytes: size, api key, version, correlation id)", Message: "RequestHeader", Version: -1, Offset: len(frame)}
	}
	size := int32(be.Uint32(frame))
	if size < 0 || size > codec.DefaultMaxFrameSize {
		return p, &Error{Status: StatusTooLarge, Text: "kwire: peek request header: frame size " + strconv.Itoa(int(size)) +
			", limit " + strconv.Itoa(codec.DefaultMaxFrameSize), Message: "RequestHeader", Version: -1, Offset: 0}
	}
	p.FrameSize = size
	p.APIKey = int32(int16(be.Uint16(frame[4:])))
	p.APIVersion = int32(int16(be.Uint16(frame[6:])))
	p.CorrelationID = int32(be.Uint32(frame[8:]))
	p.ClientIDOffset, p.ClientIDLength = -1, -1
	hv := codec.RequestHeaderVersion(int16(p.APIKey), int16(p.APIVersion))
	if hv < 0 {
		return p, &Error{Status: StatusUnknownAPI, Text: "kwire: peek request header field requestApiKey at offset 4: unknown api key " +
			strconv.Itoa(int(p.APIKey)), Message: "RequestHeader", Version: -1, Path: "requestApiKey", Offset: 4}
	}
	p.HeaderVersion = int32(hv)
	if hv >= 1 {
		// The client id keeps the classic int16 length even in flexible headers.
		end := len(frame)
		if 4+int(size) < end {
			end = 4 + int(size)
		}
		if end < 14 {
			return p, &Error{Status: StatusDecode, Text: "kwire: peek request header field clientId at offset 12: truncated input",
				Message: "RequestHeader", Version: int(hv), Path: "clientId", Offset: 12}
		}
		n := int32(int16(be.Uint16(frame[12:])))
		switch {
		case n == -1:
		case n < -1:
			return p, &Error{Status: StatusDecode, Text: "kwire: peek request header field clientId at offset 12: bad length " + strconv.Itoa(int(n)),
				Message: "RequestHeader", Version: int(hv), Path: "clientId", Offset: 12}
		case 14+int(n) > end:
			return p, &Error{Status: StatusDecode, Text: "kwire: peek request header field clientId at offset 12: truncated input (length " +
				strconv.Itoa(int(n)) + ", " + strconv.Itoa(end-14) + " bytes left)", Message: "RequestHeader", Version: int(hv), Path: "clientId", Offset: 12}
		default:
			p.ClientIDOffset, p.ClientIDLength = 14, n
		}
	}
	return p, nil
}

// HeaderVersions is kw_header_versions.
func HeaderVersions(apiKey, version int32) (req, resp int32, err error) {
	defer guard(&err)
	if e := checkAPI(apiKey, version, true); e != nil {
		return 0, 0, e
	}
	return int32(codec.RequestHeaderVersion(int16(apiKey), int16(version))),
		int32(codec.ResponseHeaderVersion(int16(apiKey), int16(version))), nil
}

var (
	catOnce sync.Once
	catJSON []byte
)

// Catalogue is kw_api_catalogue, appended to dst.
func Catalogue(dst []byte) (out []byte, err error) {
	defer guard(&err)
	catOnce.Do(func() { catJSON = buildCatalogue() })
	return append(dst, catJSON...), nil
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendStr(b, s)
	}
	return append(b, ']')
}

func appendInt(b []byte, key string, v int64) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, v, 10)
}

func buildCatalogue() []byte {
	b := []byte(`{"abiVersion":"` + strconv.Itoa(Major) + "." + strconv.Itoa(Minor) + `","specReleases":`)
	b = appendStrings(b, codec.SpecReleases)
	b = append(b, `,"apis":[`...)
	for i, a := range codec.APIs() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"apiKey":`...)
		b = strconv.AppendInt(b, int64(a.Key), 10)
		b = append(b, `,"name":`...)
		b = appendStr(b, a.Name)
		b = append(b, `,"request":`...)
		b = appendStr(b, a.Request.Name)
		b = append(b, `,"response":`...)
		b = appendStr(b, a.Response.Name)
		b = appendInt(b, "minVersion", int64(a.Request.MinVersion))
		b = appendInt(b, "maxVersion", int64(a.Request.MaxVersion))
		b = appendInt(b, "flexibleMin", int64(a.Request.FlexibleMin))
		b = append(b, `,"latestVersionUnstable":`...)
		b = strconv.AppendBool(b, a.Request.LatestVersionUnstable)
		b = append(b, `,"listeners":`...)
		b = appendStrings(b, a.Request.Listeners)
		b = append(b, '}')
	}
	b = append(b, `],"messages":[`...)
	for i, m := range codec.Messages() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendStr(b, m.Name)
		b = appendInt(b, "apiKey", int64(m.APIKey))
		b = append(b, `,"kind":`...)
		b = appendStr(b, m.Kind.String())
		b = appendInt(b, "minVersion", int64(m.MinVersion))
		b = appendInt(b, "maxVersion", int64(m.MaxVersion))
		b = appendInt(b, "flexibleMin", int64(m.FlexibleMin))
		b = appendInt(b, "deprecatedMin", int64(m.DeprecatedMin))
		b = appendInt(b, "deprecatedMax", int64(m.DeprecatedMax))
		b = append(b, `,"latestVersionUnstable":`...)
		b = strconv.AppendBool(b, m.LatestVersionUnstable)
		b = append(b, `,"releases":`...)
		b = appendStrings(b, m.Releases)
		b = append(b, `,"renames":[`...)
		for j, r := range m.Renames {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"path":`...)
			b = appendStr(b, r.Path)
			b = append(b, `,"old":`...)
			b = appendStr(b, r.Old)
			b = append(b, `,"new":`...)
			b = appendStr(b, r.New)
			b = append(b, '}')
		}
		b = append(b, `],"superseded":[`...)
		for j, s := range m.Superseded {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"release":`...)
			b = appendStr(b, s.Release)
			b = appendInt(b, "version", int64(s.Version))
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	return append(b, "]}"...)
}
