// Package session is the sans-IO client side of one Kafka connection: it hands out
// correlation ids, writes request frames (size, header, body), cuts the received byte
// stream into response frames, matches each to its request and reads its header with the
// right header version, negotiates api versions with ApiVersions, and counts bytes and
// requests in both directions.
//
// It performs no I/O, starts no goroutines and reads no clock: the caller writes the
// frames it returns, feeds it the bytes it reads (in any chunking) and asks for completed
// responses. A Session is not safe for concurrent use; a connection guards it with a lock.
//
// The core works on bytes: a request is an api key, a version and an encoded body; a
// response is handed back with its header and its body bytes, undecoded. Apart from the
// ApiVersions messages it needs for negotiation it references none of the generated
// message types, so a host that wraps it (the flat ABI) does not link them. Typed helpers
// (AppendTyped, DecodeBody) are in typed.go.
//
// # Errors
//
// Next distinguishes two kinds of failure. An error returned by Next (or Feed) is an
// error of the session: the stream can no longer be trusted (a frame above the size
// limit, a response for a correlation id that is not pending, a header that cannot be
// read), the session stays failed and the connection should be closed. A problem with
// one response whose request is known (a malformed body, a failed negotiation step) is
// reported in Response.Err and concerns that request only.
package session

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/internal/errtext"
	"github.com/kwire/kwire/internal/wire"
)

// apiKeyApiVersions is the api key of ApiVersions.
const apiKeyApiVersions = 18

// errUnsupportedVersion is Kafka's UNSUPPORTED_VERSION error code.
const errUnsupportedVersion = 35

// Sentinel causes, for errors.Is.
var (
	// ErrFrameTooLarge: a frame's size prefix is negative or above Config.MaxFrameSize.
	ErrFrameTooLarge = errors.New("frame too large")
	// ErrUnknownCorrelation: a response names a correlation id with no pending request.
	ErrUnknownCorrelation = errors.New("response for an unknown correlation id")
	// ErrMalformedHeader: a response header cannot be read.
	ErrMalformedHeader = errors.New("malformed response header")
	// ErrNoCommonVersion: kwire and the broker share no version of an api.
	ErrNoCommonVersion = errors.New("no version in common with the broker")
	// ErrNotNegotiated: a request asks for the negotiated version before negotiation.
	ErrNotNegotiated = errors.New("api versions not negotiated yet")
	// ErrNegotiation: the broker's ApiVersions answer could not be used.
	ErrNegotiation = errors.New("version negotiation failed")
	// ErrUnknownAPI: kwire does not know the api key.
	ErrUnknownAPI = errors.New("unknown api key")
	// ErrFailed: the session failed earlier; its first error is wrapped alongside.
	ErrFailed = errors.New("session failed")
)

// Config configures a Session. The zero value is usable.
type Config struct {
	// ClientID is the client id written in request headers v1 and v2. Nil means "kwire".
	ClientID *string
	// MaxFrameSize bounds the size prefix of received frames (the bytes after it). Zero
	// means codec.DefaultMaxFrameSize (100 MiB). Larger frames fail the session before
	// anything is allocated for them.
	MaxFrameSize int
	// ClientSoftwareName and ClientSoftwareVersion go into ApiVersions v3+ requests: the
	// session's negotiation and any ApiVersions request that leaves them empty. Empty
	// means DefaultClientSoftwareName ("kwire-go") and DefaultClientSoftwareVersion
	// (codec.Version). Kafka accepts only values matching SoftwarePattern.
	ClientSoftwareName, ClientSoftwareVersion string
	// BootstrapVersion is the ApiVersions version of the first negotiation request. Zero
	// means kwire's highest. A version above kwire's highest sends kwire's newest body
	// labelled with that version, as a newer client would: a way to exercise the
	// broker's UNSUPPORTED_VERSION answer.
	BootstrapVersion int16
}

// Counters count what passed through a session.
type Counters struct {
	// BytesSent is the total size of the request frames the session produced.
	BytesSent int64
	// BytesReceived is the number of bytes fed to the session.
	BytesReceived int64
	// RequestsSent counts request frames produced (negotiation included).
	RequestsSent int64
	// ResponsesReceived counts response frames returned by Next.
	ResponsesReceived int64
}

// Header is a decoded response header: its correlation id and, in header v1, its tagged
// fields, kept as read (Data aliases the frame).
type Header struct {
	CorrelationID int32
	TaggedFields  []codec.TaggedField
}

// NegotiationStep tells what a response did to version negotiation.
type NegotiationStep int8

// The negotiation steps.
const (
	// NotNegotiation: an ordinary response.
	NotNegotiation NegotiationStep = iota
	// NegotiationDone: the broker's version table is now known (or, with Err set,
	// negotiation failed for good).
	NegotiationDone
	// NegotiationRetry: the broker does not know the version asked; Retry holds the
	// next ApiVersions request frame, to send as is.
	NegotiationRetry
)

// Response is one complete response frame, matched to its request.
type Response struct {
	APIKey        int16 // api key of the request
	Version       int16 // version of the request (and of the body, except as noted below)
	CorrelationID int32
	HeaderVersion int16
	Header        Header
	// Frame is the whole frame, size prefix included; Body is the part after the header.
	// Both are owned by the caller: the session keeps no reference to them.
	Frame, Body []byte
	// BodyVersion is the version the body is written in: Version, except for an
	// ApiVersions response carrying UNSUPPORTED_VERSION, which Kafka writes at v0.
	BodyVersion int16
	// Negotiation is set on the responses to the requests of BeginNegotiation, which the
	// session has already applied.
	Negotiation NegotiationStep
	// Retry is the ApiVersions frame to send next when Negotiation is NegotiationRetry.
	Retry []byte
	// Err is a failure that concerns this response only (its request is known, the
	// session continues).
	Err error
}

type pending struct {
	apiKey, version, headerVersion int16
	negotiation                    bool
}

// VersionRange is an inclusive range of api versions.
type VersionRange struct{ Min, Max int16 }

// Session is the state of one connection's client side. See the package comment.
type Session struct {
	cfg      Config
	clientID *string
	maxFrame int

	nextCorr int32
	pending  map[int32]pending

	// Framing state: the size prefix being read, then the frame being filled.
	sizeBuf [4]byte
	sizeN   int
	cur     []byte // len = bytes filled so far, target length curLen
	curLen  int
	frames  [][]byte // complete frames not yet returned by Next

	counters Counters
	err      error

	// Negotiation state.
	negotiating bool
	negotiated  bool
	tried       []int16 // ApiVersions versions sent in this negotiation
	broker      map[int16]VersionRange
}

// New returns a session.
func New(cfg Config) *Session {
	s := &Session{cfg: cfg, pending: make(map[int32]pending)}
	s.clientID = cfg.ClientID
	if s.clientID == nil {
		id := "kwire"
		s.clientID = &id
	}
	s.maxFrame = cfg.MaxFrameSize
	if s.maxFrame <= 0 {
		s.maxFrame = codec.DefaultMaxFrameSize
	}
	return s
}

// Err returns the error that failed the session, or nil.
func (s *Session) Err() error { return s.err }

// Counters returns the session's counters.
func (s *Session) Counters() Counters { return s.counters }

// Pending returns the number of requests awaiting a response.
func (s *Session) Pending() int { return len(s.pending) }

// Buffered reports whether part of a frame has been fed but not completed: a stream that
// ends now ends mid-frame.
func (s *Session) Buffered() bool { return s.sizeN > 0 || s.cur != nil || len(s.frames) > 0 }

func (s *Session) fail(err error) error {
	if s.err == nil {
		s.err = err
	}
	return s.err
}

func (s *Session) failedErr() error {
	return errtext.WrapAll("kwire session: "+ErrFailed.Error()+": "+errtext.Text(s.err), ErrFailed, s.err)
}

// BeginRequest returns a new request frame for (apiKey, version) with body as its
// encoded body, registering the correlation id it carries. A version of -1 picks the
// negotiated version (VersionFor). The body is not checked: it must be apiKey's request
// at version. (ApiVersions v3+ is the exception: see FinishFrame.)
func (s *Session) BeginRequest(apiKey, version int16, body []byte) (frame []byte, corr int32, err error) {
	return s.AppendRequest(nil, apiKey, version, body)
}

// AppendRequest is BeginRequest appending the frame to dst.
func (s *Session) AppendRequest(dst []byte, apiKey, version int16, body []byte) ([]byte, int32, error) {
	return s.appendRequest(dst, apiKey, version, body, true, false)
}

// AppendRequestNoResponse appends a request that the broker will not answer (a Produce
// with acks=0): no correlation id is registered, so nothing waits for it.
func (s *Session) AppendRequestNoResponse(dst []byte, apiKey, version int16, body []byte) ([]byte, int32, error) {
	return s.appendRequest(dst, apiKey, version, body, false, false)
}

// StartFrame is the first half of an append-style request: it appends the size
// placeholder and the request header for (apiKey, version) (-1: negotiated) to dst and
// returns the version used. The caller appends the body and calls FinishFrame.
func (s *Session) StartFrame(dst []byte, apiKey, version int16) ([]byte, int16, int32, error) {
	if s.err != nil {
		return dst, 0, 0, s.failedErr()
	}
	if version < 0 {
		v, err := s.VersionFor(apiKey)
		if err != nil {
			return dst, 0, 0, err
		}
		version = v
	}
	hv := codec.RequestHeaderVersion(apiKey, version)
	if hv < 0 {
		return dst, 0, 0, errtext.Wrap("kwire session: request api key "+itoa(apiKey)+": "+ErrUnknownAPI.Error(), ErrUnknownAPI)
	}
	corr := s.nextCorr
	s.nextCorr++
	if s.nextCorr < 0 {
		s.nextCorr = 0
	}
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint16(dst, uint16(apiKey))
	dst = binary.BigEndian.AppendUint16(dst, uint16(version))
	dst = binary.BigEndian.AppendUint32(dst, uint32(corr))
	if hv >= 1 {
		// The client id keeps the classic int16 length even in header v2.
		if s.clientID == nil {
			dst = binary.BigEndian.AppendUint16(dst, 0xffff)
		} else {
			dst = binary.BigEndian.AppendUint16(dst, uint16(len(*s.clientID)))
			dst = append(dst, *s.clientID...)
		}
	}
	if hv >= 2 {
		dst = append(dst, 0) // no tagged fields
	}
	return dst, version, corr, nil
}

// FinishFrame completes a frame begun at start by StartFrame: it writes the size prefix,
// registers the correlation id (unless noResponse) and counts the request.
//
// An ApiVersions request at v3 or later whose clientSoftwareName or clientSoftwareVersion
// is empty gets the session's (Config), as the Java client fills them; either value
// breaking Kafka's rule for these fields (SoftwarePattern) fails the request with
// ErrInvalidField instead of the broker's INVALID_REQUEST.
func (s *Session) FinishFrame(dst []byte, start int, apiKey, version int16, corr int32, noResponse bool) ([]byte, error) {
	if apiKey == apiKeyApiVersions && version >= apiVersionsMinSoftware {
		var err error
		body := s.requestBodyOffset(start, codec.RequestHeaderVersion(apiKey, version))
		if body <= len(dst) {
			if dst, err = s.fillApiVersions(dst, body, version); err != nil {
				return dst[:start], err
			}
		}
	}
	size := len(dst) - start - 4
	if size < 0 || size > s.maxFrame || int64(size) > 1<<31-1 {
		return dst[:start], errtext.Wrap("kwire session: request api key "+itoa(apiKey)+" v"+itoa(version)+": frame of "+
			itoa(size)+" bytes, limit "+itoa(s.maxFrame)+": "+ErrFrameTooLarge.Error(), ErrFrameTooLarge)
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(size))
	if !noResponse {
		s.pending[corr] = pending{apiKey: apiKey, version: version,
			headerVersion: codec.ResponseHeaderVersion(apiKey, version)}
	}
	s.counters.RequestsSent++
	s.counters.BytesSent += int64(size) + 4
	return dst, nil
}

func (s *Session) appendRequest(dst []byte, apiKey, version int16, body []byte, expect, negotiation bool) ([]byte, int32, error) {
	start := len(dst)
	dst, version, corr, err := s.StartFrame(dst, apiKey, version)
	if err != nil {
		return dst, 0, err
	}
	dst = append(dst, body...)
	dst, err = s.FinishFrame(dst, start, apiKey, version, corr, !expect)
	if err != nil {
		return dst, 0, err
	}
	if negotiation {
		p := s.pending[corr]
		p.negotiation = true
		s.pending[corr] = p
	}
	return dst, corr, nil
}

// Feed gives the session bytes read from the connection, in any chunking. Complete
// frames become available to Next. Feed copies what it keeps. A frame whose size prefix
// is above the limit fails the session before anything is allocated for it.
func (s *Session) Feed(p []byte) error {
	if s.err != nil {
		return s.failedErr()
	}
	s.counters.BytesReceived += int64(len(p))
	for len(p) > 0 {
		if s.cur == nil {
			n := copy(s.sizeBuf[s.sizeN:], p)
			s.sizeN += n
			p = p[n:]
			if s.sizeN < 4 {
				return nil
			}
			s.sizeN = 0
			size := int(int32(binary.BigEndian.Uint32(s.sizeBuf[:])))
			if size < 0 || size > s.maxFrame {
				return s.fail(errtext.Wrap("kwire session: response frame size "+itoa(size)+", limit "+itoa(s.maxFrame)+": "+
					ErrFrameTooLarge.Error(), ErrFrameTooLarge))
			}
			s.curLen = 4 + size
			// Allocate for what has arrived (at least 32 KiB), not for what the prefix
			// announces: memory follows the input, growing by doubling up to the frame.
			c := max(4+len(p), 32<<10)
			s.cur = make([]byte, 4, min(s.curLen, c))
			copy(s.cur, s.sizeBuf[:])
		}
		need := s.curLen - len(s.cur)
		take := min(need, len(p))
		if len(s.cur)+take > cap(s.cur) {
			nc := min(s.curLen, max(2*cap(s.cur), len(s.cur)+take))
			grown := make([]byte, len(s.cur), nc)
			copy(grown, s.cur)
			s.cur = grown
		}
		s.cur = append(s.cur, p[:take]...)
		p = p[take:]
		if len(s.cur) == s.curLen {
			s.frames = append(s.frames, s.cur)
			s.cur = nil
		}
	}
	return nil
}

// Next returns the next complete response, ok=false when none is complete yet. An error
// fails the session (see the package comment); per-response problems are in
// Response.Err.
func (s *Session) Next() (Response, bool, error) {
	if s.err != nil {
		return Response{}, false, s.failedErr()
	}
	if len(s.frames) == 0 {
		return Response{}, false, nil
	}
	frame := s.frames[0]
	s.frames[0] = nil
	s.frames = s.frames[1:]
	if len(s.frames) == 0 {
		s.frames = s.frames[:0:0]
	}
	if len(frame) < 8 {
		return Response{}, false, s.fail(errtext.Wrap("kwire session: response frame of "+itoa(len(frame)-4)+" bytes has no correlation id: "+
			ErrMalformedHeader.Error(), ErrMalformedHeader))
	}
	corr := int32(binary.BigEndian.Uint32(frame[4:]))
	p, ok := s.pending[corr]
	if !ok {
		return Response{}, false, s.fail(errtext.Wrap("kwire session: correlation id "+itoa(corr)+" ("+itoa(len(s.pending))+" requests pending): "+
			ErrUnknownCorrelation.Error(), ErrUnknownCorrelation))
	}
	delete(s.pending, corr)
	s.counters.ResponsesReceived++
	r := Response{APIKey: p.apiKey, Version: p.version, BodyVersion: p.version, CorrelationID: corr,
		HeaderVersion: p.headerVersion, Frame: frame, Header: Header{CorrelationID: corr}}
	rd := wire.Reader{Src: frame, Off: 8}
	if p.headerVersion >= 1 {
		n := rd.TagCount()
		prev := int64(-1)
		for i := 0; i < n && rd.Err == nil; i++ {
			tag, end := rd.TagHeader(prev)
			if rd.Err != nil {
				break
			}
			prev = int64(tag)
			r.Header.TaggedFields = append(r.Header.TaggedFields, codec.TaggedField{Tag: tag, Data: rd.Raw(end)})
		}
		if rd.Err != nil {
			// The frame is cut and matched; only this response is lost.
			r.Err = errtext.Wrap("kwire session: "+apiName(p.apiKey)+" v"+itoa(p.version)+" response (correlation id "+itoa(corr)+
				"): header v"+itoa(p.headerVersion)+" tagged fields at offset "+itoa(rd.ErrOff)+": "+ErrMalformedHeader.Error()+
				" ("+errtext.Text(rd.Err)+": "+rd.Detail+")", ErrMalformedHeader)
			return r, true, nil
		}
	}
	r.Body = frame[rd.Off:]
	if p.apiKey == apiKeyApiVersions && len(r.Body) >= 2 && int16(binary.BigEndian.Uint16(r.Body)) == errUnsupportedVersion {
		r.BodyVersion = 0
	}
	if p.negotiation {
		s.negotiationResponse(&r)
	}
	return r, true, nil
}

// itoa renders an integer in decimal, as fmt's %d does.
func itoa[T ~int8 | ~int16 | ~int32 | ~int | ~int64](v T) string {
	return strconv.FormatInt(int64(v), 10)
}

func apiName(key int16) string {
	if a, ok := codec.LookupAPI(key); ok {
		return a.Name
	}
	return "api key " + strconv.Itoa(int(key))
}
