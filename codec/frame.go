package codec

import (
	"encoding/binary"
	"errors"
	"github.com/kwire/kwire/internal/errtext"
	"strconv"

	"github.com/kwire/kwire/internal/proto"
	"github.com/kwire/kwire/internal/wire"
)

// DefaultMaxFrameSize is the largest frame accepted unless a Framer says otherwise:
// 100 MiB, the default of Kafka's socket.request.max.bytes.
const DefaultMaxFrameSize = proto.DefaultMaxFrameSize

// Api keys with header special cases.
const (
	apiKeyControlledShutdown = 7
	apiKeyApiVersions        = 18
)

// RequestHeaderVersion is the request header version used by (apiKey, version): 2 for
// flexible versions, else 1, and 0 for ControlledShutdown v0. It returns -1 for an
// unknown api key.
func RequestHeaderVersion(apiKey, version int16) int16 {
	api, ok := LookupAPI(apiKey)
	if !ok {
		return -1
	}
	if apiKey == apiKeyControlledShutdown && version == 0 {
		return 0
	}
	if api.Request.Flexible(version) {
		return 2
	}
	return 1
}

// ResponseHeaderVersion is the response header version used by (apiKey, version): 1 for
// flexible versions, else 0; ApiVersions responses always use 0 so that a client can read
// them whatever version it asked for. It returns -1 for an unknown api key.
func ResponseHeaderVersion(apiKey, version int16) int16 {
	api, ok := LookupAPI(apiKey)
	if !ok {
		return -1
	}
	if apiKey == apiKeyApiVersions {
		return 0
	}
	if api.Response.Flexible(version) {
		return 1
	}
	return 0
}

// RequestFrame is a decoded request: its header and body.
type RequestFrame struct {
	Header        RequestHeader
	HeaderVersion int16
	Body          Request
}

// ResponseFrame is a decoded response: its header and body.
type ResponseFrame struct {
	Header        ResponseHeader
	HeaderVersion int16
	Body          Response
}

// Framer encodes and decodes whole frames: a 4-byte big-endian size, then the header,
// then the body. The zero value uses DefaultMaxFrameSize.
type Framer struct {
	// MaxFrameSize bounds the size field of a frame (the bytes after it). Zero means
	// DefaultMaxFrameSize.
	MaxFrameSize int
	// UnsafeStrings makes decoded strings alias the frame (see DecodeOptions).
	UnsafeStrings bool
}

func (f Framer) limit() int {
	if f.MaxFrameSize > 0 {
		return f.MaxFrameSize
	}
	return DefaultMaxFrameSize
}

// FrameLength reports how many bytes the frame at the start of b occupies, size prefix
// included, once at least 4 bytes are available (0 and no error before that). A size
// that is negative or above the limit is an error, so a stream reader can refuse it
// before buffering it.
func (f Framer) FrameLength(b []byte) (int, error) {
	if len(b) < 4 {
		return 0, nil
	}
	size := int(int32(binary.BigEndian.Uint32(b)))
	if size < 0 || size > f.limit() {
		return 0, &DecodeError{Message: "frame", Version: -1, Offset: 0, Err: ErrTooLarge,
			Detail: "frame size " + strconv.Itoa(size) + ", limit " + strconv.Itoa(f.limit())}
	}
	return 4 + size, nil
}

// checkFrame validates the size prefix of one complete frame.
func (f Framer) checkFrame(frame []byte, name string) error {
	if len(frame) < 4 {
		return &DecodeError{Message: name, Version: -1, Offset: 0, Err: ErrTruncated, Detail: "a frame needs a 4-byte size"}
	}
	n, err := f.FrameLength(frame)
	if err != nil {
		de := err.(*DecodeError)
		de.Message = name
		return de
	}
	if n != len(frame) {
		cause := ErrTruncated
		if n < len(frame) {
			cause = ErrTrailing
		}
		return &DecodeError{Message: name, Version: -1, Offset: 0, Err: cause,
			Detail: "size field says " + strconv.Itoa(n-4) + " bytes, frame holds " + strconv.Itoa(len(frame)-4)}
	}
	return nil
}

func (f Framer) finishFrame(dst []byte, start int, name string, version int16) ([]byte, error) {
	size := len(dst) - start - 4
	if size > f.limit() {
		return dst[:start], &EncodeError{Message: name, Version: version, Err: ErrTooLarge,
			Detail: "frame of " + strconv.Itoa(size) + " bytes, limit " + strconv.Itoa(f.limit())}
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(size))
	return dst, nil
}

// EncodeRequest appends a request frame to dst. The header names the api key and
// version; the body must be that api's request.
func (f Framer) EncodeRequest(dst []byte, h *RequestHeader, body Request) ([]byte, error) {
	if h.RequestAPIKey != body.APIKey() {
		return dst, errtext.Wrap("kwire: request header names api key "+strconv.Itoa(int(h.RequestAPIKey))+" but the body is "+
			body.MessageName()+" (api key "+strconv.Itoa(int(body.APIKey()))+"): "+ErrMismatch.Error(), ErrMismatch)
	}
	v := h.RequestAPIVersion
	if !body.Info().ValidVersion(v) {
		return dst, versionError(body, v)
	}
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst, err := h.Encode(dst, RequestHeaderVersion(h.RequestAPIKey, v))
	if err != nil {
		return dst[:start], err
	}
	if dst, err = body.Encode(dst, v); err != nil {
		return dst[:start], err
	}
	return f.finishFrame(dst, start, body.MessageName(), v)
}

// DecodeRequest decodes one complete request frame (size prefix included). The header
// says which request and version the body is. Error offsets count from the frame start.
func (f Framer) DecodeRequest(frame []byte) (*RequestFrame, error) {
	if err := f.checkFrame(frame, "request frame"); err != nil {
		return nil, err
	}
	if len(frame) < 8 {
		return nil, &DecodeError{Message: "RequestHeader", Version: -1, Offset: 4, Err: ErrTruncated, Detail: "need the api key and version"}
	}
	key := int16(binary.BigEndian.Uint16(frame[4:]))
	v := int16(binary.BigEndian.Uint16(frame[6:]))
	body := NewRequest(key)
	if body == nil {
		return nil, &DecodeError{Message: "RequestHeader", Version: -1, Path: "requestApiKey", Offset: 4, Err: ErrUnknownAPI, Detail: "api key " + strconv.Itoa(int(key))}
	}
	if !body.Info().ValidVersion(v) {
		return nil, &DecodeError{Message: body.MessageName(), Version: v, Path: "requestApiVersion", Offset: 6, Err: ErrVersion,
			Detail: errtext.Range(body.Info().MinVersion, body.Info().MaxVersion)}
	}
	out := &RequestFrame{HeaderVersion: RequestHeaderVersion(key, v), Body: body}
	if err := f.decodeParts(frame, &out.Header, out.HeaderVersion, body, v); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeParts decodes a frame's header (at version hv) and the body that fills the
// rest of it (at v).
func (f Framer) decodeParts(frame []byte, header Message, hv int16, body Message, v int16) error {
	r := wire.Reader{Src: frame, Off: 4, UnsafeStrings: f.UnsafeStrings}
	if err := decodeAt(header, &r, hv, false); err != nil {
		return err
	}
	return decodeAt(body, &r, v, true)
}

// EncodeResponse appends a response frame for the given request version to dst.
func (f Framer) EncodeResponse(dst []byte, h *ResponseHeader, version int16, body Response) ([]byte, error) {
	if !body.Info().ValidVersion(version) {
		return dst, versionError(body, version)
	}
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst, err := h.Encode(dst, ResponseHeaderVersion(body.APIKey(), version))
	if err != nil {
		return dst[:start], err
	}
	if dst, err = body.Encode(dst, version); err != nil {
		return dst[:start], err
	}
	return f.finishFrame(dst, start, body.MessageName(), version)
}

// DecodeResponse decodes one complete response frame; a response does not say what it
// answers, so the caller passes the api key and version of the request.
func (f Framer) DecodeResponse(frame []byte, apiKey, version int16) (*ResponseFrame, error) {
	if err := f.checkFrame(frame, "response frame"); err != nil {
		return nil, err
	}
	body := NewResponse(apiKey)
	if body == nil {
		return nil, &DecodeError{Message: "response frame", Version: version, Offset: 0, Err: ErrUnknownAPI, Detail: "api key " + strconv.Itoa(int(apiKey))}
	}
	if !body.Info().ValidVersion(version) {
		return nil, &DecodeError{Message: body.MessageName(), Version: version, Offset: 0, Err: ErrVersion,
			Detail: errtext.Range(body.Info().MinVersion, body.Info().MaxVersion)}
	}
	out, err := f.decodeResponse(frame, body, apiKey, version)
	if err != nil {
		return nil, f.hint(err, frame, apiKey, version)
	}
	return out, nil
}

func (f Framer) decodeResponse(frame []byte, body Response, apiKey, version int16) (*ResponseFrame, error) {
	out := &ResponseFrame{HeaderVersion: ResponseHeaderVersion(apiKey, version), Body: body}
	if err := f.decodeParts(frame, &out.Header, out.HeaderVersion, body, version); err != nil {
		return nil, err
	}
	return out, nil
}

// hint sets the Hint of a response decode error when exactly one other valid version
// of the api decodes the whole frame (the most common mistake is a wrong version).
func (f Framer) hint(err error, frame []byte, apiKey, version int16) error {
	de, ok := err.(*DecodeError)
	if !ok || de.Hint != nil || errors.Is(de.Err, ErrTooLarge) {
		return err
	}
	info := NewResponse(apiKey).Info()
	found, n := int16(-1), 0
	for v := info.MinVersion; v <= info.MaxVersion && n < 2; v++ {
		if v == version || !info.ValidVersion(v) {
			continue
		}
		if _, e := f.decodeResponse(frame, NewResponse(apiKey), apiKey, v); e == nil {
			found, n = v, n+1
		}
	}
	if n == 1 {
		de.Hint = &VersionHint{Message: NewResponse(apiKey).MessageName(), Version: found}
	}
	return err
}

// PeekedHeader is what PeekRequestHeader reads.
type PeekedHeader struct {
	APIKey        int16
	APIVersion    int16
	CorrelationID int32
	ClientID      *string // nil when null or absent (header v0)
	HeaderVersion int16
	// FrameSize is the value of the size prefix (bytes after it).
	FrameSize int
}

// PeekRequestHeader reads the api key, version, correlation id and client id of a
// request frame without decoding the body or the header's tagged fields. The frame may
// be incomplete past the client id; the size prefix is still checked against the limit.
func (f Framer) PeekRequestHeader(frame []byte) (PeekedHeader, error) {
	var p PeekedHeader
	r := wire.Reader{Src: frame}
	size := int(r.Int32())
	if r.Err == nil && (size < 0 || size > f.limit()) {
		r.Fail(ErrTooLarge, 0, "frame size "+strconv.Itoa(size)+", limit "+strconv.Itoa(f.limit()))
	}
	if r.Err == nil && len(frame) > 4+size {
		r.Src = frame[:4+size]
	}
	p.FrameSize = size
	p.APIKey = r.Int16()
	p.APIVersion = r.Int16()
	p.CorrelationID = r.Int32()
	if r.Err != nil {
		return p, &DecodeError{Message: "RequestHeader", Version: -1, Offset: r.ErrOff, Err: r.Err, Detail: r.Detail}
	}
	p.HeaderVersion = RequestHeaderVersion(p.APIKey, p.APIVersion)
	if p.HeaderVersion < 0 {
		return p, &DecodeError{Message: "RequestHeader", Version: -1, Path: "requestApiKey", Offset: 4, Err: ErrUnknownAPI, Detail: "api key " + strconv.Itoa(int(p.APIKey))}
	}
	if p.HeaderVersion >= 1 {
		// The client id keeps the classic int16 length even in flexible headers.
		p.ClientID = r.NullableString(false)
		if r.Err != nil {
			return p, &DecodeError{Message: "RequestHeader", Version: p.HeaderVersion, Path: "clientId", Offset: r.ErrOff, Err: r.Err, Detail: r.Detail}
		}
	}
	return p, nil
}

// EncodeRequestFrame is Framer{}.EncodeRequest.
func EncodeRequestFrame(dst []byte, h *RequestHeader, body Request) ([]byte, error) {
	return Framer{}.EncodeRequest(dst, h, body)
}

// DecodeRequestFrame is Framer{}.DecodeRequest.
func DecodeRequestFrame(frame []byte) (*RequestFrame, error) { return Framer{}.DecodeRequest(frame) }

// EncodeResponseFrame is Framer{}.EncodeResponse.
func EncodeResponseFrame(dst []byte, h *ResponseHeader, version int16, body Response) ([]byte, error) {
	return Framer{}.EncodeResponse(dst, h, version, body)
}

// DecodeResponseFrame is Framer{}.DecodeResponse.
func DecodeResponseFrame(frame []byte, apiKey, version int16) (*ResponseFrame, error) {
	return Framer{}.DecodeResponse(frame, apiKey, version)
}

// PeekRequestHeader is Framer{}.PeekRequestHeader.
func PeekRequestHeader(frame []byte) (PeekedHeader, error) { return Framer{}.PeekRequestHeader(frame) }

// NewRequestHeaderFor returns a request header for body at version.
func NewRequestHeaderFor(body Request, version int16, correlationID int32, clientID string) *RequestHeader {
	h := NewRequestHeader()
	h.RequestAPIKey = body.APIKey()
	h.RequestAPIVersion = version
	h.CorrelationID = correlationID
	h.ClientID = &clientID
	return h
}

// RequestHeaderLen returns where the body of a request frame (size prefix included)
// starts: after the api key, version, correlation id, client id and, in flexible
// headers, the tagged fields. It reads only the header, so frame may be any prefix of
// the frame that holds it. The error wraps ErrTruncated when frame ends inside the
// header (read more and call again), ErrUnknownAPI for an api key kwire does not know,
// and ErrVarint or ErrLength for a malformed header.
func RequestHeaderLen(frame []byte) (int, error) {
	if len(frame) < 12 {
		return 0, headerErr("RequestHeader", -1, "", len(frame), ErrTruncated, "")
	}
	key := int16(binary.BigEndian.Uint16(frame[4:]))
	hv := RequestHeaderVersion(key, int16(binary.BigEndian.Uint16(frame[6:])))
	if hv < 0 {
		return 0, headerErr("RequestHeader", -1, "requestApiKey", 4, ErrUnknownAPI, "api key "+strconv.Itoa(int(key)))
	}
	off := 12
	if hv >= 1 {
		// The client id keeps the classic int16 length even in flexible headers.
		if len(frame) < off+2 {
			return 0, headerErr("RequestHeader", hv, "clientId", off, ErrTruncated, "")
		}
		n := int(int16(binary.BigEndian.Uint16(frame[off:])))
		if n < -1 {
			return 0, headerErr("RequestHeader", hv, "clientId", off, ErrLength, "length "+strconv.Itoa(n))
		}
		off += 2 + max(n, 0)
		if off > len(frame) {
			return 0, headerErr("RequestHeader", hv, "clientId", off-n, ErrTruncated, "")
		}
	}
	if hv >= 2 {
		return skipHeaderTags(frame, off, "RequestHeader", hv)
	}
	return off, nil
}

// ResponseHeaderLen returns where the body of a response frame (size prefix included)
// to a request of (apiKey, version) starts: after the correlation id and, in flexible
// headers, the tagged fields. Its errors are those of RequestHeaderLen.
func ResponseHeaderLen(frame []byte, apiKey, version int16) (int, error) {
	if len(frame) < 8 {
		return 0, headerErr("ResponseHeader", -1, "", len(frame), ErrTruncated, "")
	}
	switch ResponseHeaderVersion(apiKey, version) {
	case -1:
		return 0, headerErr("ResponseHeader", -1, "", 0, ErrUnknownAPI, "api key "+strconv.Itoa(int(apiKey)))
	case 1:
		return skipHeaderTags(frame, 8, "ResponseHeader", 1)
	}
	return 8, nil
}

// skipHeaderTags returns the offset after the tagged-field section at off.
func skipHeaderTags(b []byte, off int, msg string, hv int16) (int, error) {
	uvarint := func() (uint64, error) {
		v, n := binary.Uvarint(b[min(off, len(b)):])
		switch {
		case n == 0 && len(b)-off < binary.MaxVarintLen32:
			return 0, headerErr(msg, hv, "_tagged_fields", off, ErrTruncated, "")
		case n <= 0 || n > binary.MaxVarintLen32 || v > 1<<31-1:
			return 0, headerErr(msg, hv, "_tagged_fields", off, ErrVarint, "")
		}
		off += n
		return v, nil
	}
	count, err := uvarint()
	if err != nil {
		return 0, err
	}
	for ; count > 0; count-- {
		if _, err := uvarint(); err != nil {
			return 0, err
		}
		size, err := uvarint()
		if err != nil {
			return 0, err
		}
		if size > uint64(len(b)-off) {
			return 0, headerErr(msg, hv, "_tagged_fields", off, ErrTruncated, "tagged field of "+strconv.FormatUint(size, 10)+" bytes")
		}
		off += int(size)
	}
	return off, nil
}

func headerErr(msg string, hv int16, path string, off int, err error, detail string) error {
	return &DecodeError{Message: msg, Version: hv, Path: path, Offset: off, Err: err, Detail: detail}
}
