package abi

import (
	"encoding/binary"
	"strconv"
	"sync"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/internal/recordsjson"
	"github.com/kwire/kwire/internal/transcode"
)

// lookup checks a message name and version from the boundary.
func lookup(name string, version int32) *Error {
	info, ok := transcode.Lookup(name)
	if !ok {
		return newErr(StatusUnknownAPI, "kwire: unknown message "+strconv.Quote(name)+transcode.DidYouMean(name))
	}
	if !fits16(version) || version < int32(info.MinVersion) || version > int32(info.MaxVersion) {
		return unsupportedVersion(name, version, info.MinVersion, info.MaxVersion)
	}
	return nil
}

// unsupportedVersion is the error of a message asked for at a version it does not have.
func unsupportedVersion(name string, version int32, min, max int16) *Error {
	return &Error{Status: StatusVersion, Text: "kwire: " + name + " version " + strconv.Itoa(int(version)) +
		": unsupported version (valid " + strconv.Itoa(int(min)) + "-" + strconv.Itoa(int(max)) + ")",
		Message: name, Version: int(version), Offset: -1}
}

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
	if e := lookup(name, version); e != nil {
		return dst, e
	}
	// JSON is about three times the wire size (names, quotes, base64).
	out, err = transcode.AppendJSON(reserve(dst, 3*len(in)+128), name, int16(version), in, nil)
	return transcoded(dst, out, err)
}

// EncodeMessage is kw_encode_message: the encoding at version of the JSON form of the
// message `name`, appended to dst.
func EncodeMessage(dst []byte, name string, version int32, json []byte) (out []byte, err error) {
	defer guard(&err)
	if e := lookup(name, version); e != nil {
		return dst, e
	}
	out, err = transcode.AppendWire(reserve(dst, len(json)/2+16), name, int16(version), json)
	return transcoded(dst, out, err)
}

var framer transcode.Framer

// transcoded is the result of a transcoder call that appended to dst: its output, or
// dst and the ABI's form of its error.
func transcoded(dst, out []byte, err error) ([]byte, error) {
	if err != nil {
		return dst, classify(err)
	}
	return out, nil
}

// DecodeRequestFrame is kw_decode_request_frame.
func DecodeRequestFrame(dst []byte, frame []byte) (out []byte, err error) {
	defer guard(&err)
	out, err = framer.AppendRequestFrameJSON(reserve(dst, 3*len(frame)+192), frame)
	return transcoded(dst, out, err)
}

// DecodeResponseFrame is kw_decode_response_frame.
func DecodeResponseFrame(dst []byte, frame []byte, apiKey, version int32) (out []byte, err error) {
	defer guard(&err)
	if e := checkAPI(apiKey, version, false); e != nil {
		return dst, e
	}
	out, err = framer.AppendResponseFrameJSON(reserve(dst, 3*len(frame)+192), frame, int16(apiKey), int16(version))
	return transcoded(dst, out, err)
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
		return newErr(StatusUnknownAPI, "kwire: unknown api key "+decimal(apiKey))
	}
	info := api.Response
	if request {
		info = api.Request
	}
	if !fits16(version) || !info.ValidVersion(int16(version)) {
		return unsupportedVersion(info.Name, version, info.MinVersion, info.MaxVersion)
	}
	return nil
}

// EncodeRequestFrame is kw_encode_request_frame.
func EncodeRequestFrame(dst []byte, json []byte) (out []byte, err error) {
	defer guard(&err)
	out, err = framer.AppendRequestFrame(reserve(dst, len(json)/2+32), json)
	return transcoded(dst, out, err)
}

// EncodeResponseFrame is kw_encode_response_frame.
func EncodeResponseFrame(dst []byte, json []byte, apiKey, version int32) (out []byte, err error) {
	defer guard(&err)
	if e := checkAPI(apiKey, version, false); e != nil {
		return dst, e
	}
	out, err = framer.AppendResponseFrame(reserve(dst, len(json)/2+32), json, int16(apiKey), int16(version))
	return transcoded(dst, out, err)
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
	fields := [PeekSize / 4]int32{p.FrameSize, p.APIKey, p.APIVersion, p.CorrelationID, p.HeaderVersion,
		p.ClientIDOffset, p.ClientIDLength, 0}
	for i, v := range fields {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
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
		b = recordsjson.AppendString(b, s)
	}
	return append(b, ']')
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
		b = recordsjson.AppendString(b, a.Name)
		b = append(b, `,"request":`...)
		b = recordsjson.AppendString(b, a.Request.Name)
		b = append(b, `,"response":`...)
		b = recordsjson.AppendString(b, a.Response.Name)
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
		b = recordsjson.AppendString(b, m.Name)
		b = appendInt(b, "apiKey", int64(m.APIKey))
		b = append(b, `,"kind":`...)
		b = recordsjson.AppendString(b, m.Kind.String())
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
			b = recordsjson.AppendString(b, r.Path)
			b = append(b, `,"old":`...)
			b = recordsjson.AppendString(b, r.Old)
			b = append(b, `,"new":`...)
			b = recordsjson.AppendString(b, r.New)
			b = append(b, '}')
		}
		b = append(b, `],"superseded":[`...)
		for j, s := range m.Superseded {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"release":`...)
			b = recordsjson.AppendString(b, s.Release)
			b = appendInt(b, "version", int64(s.Version))
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	return append(b, "]}"...)
}
