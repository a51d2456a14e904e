package rules

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/internal/transcode"
)

// Refusal is a request frame that a rule set refuses, and what a proxy answers in the
// broker's place.
type Refusal struct {
	// Violation is the first rule the request breaks; nil when its body could not be
	// read at its version (policy fails closed), which Message then says.
	Violation *Violation
	// Message is the refusal's text: the violation's message, or why the request could
	// not be read.
	Message string
	// Place is where the error lands in the api's response; Nowhere means no response
	// can carry it, and the connection should be closed instead.
	Place Place
	// Response is the whole response frame (size prefix, response header with the
	// request's correlation id, body) that answers the request with the error. It is
	// nil when Place is Nowhere, and when the client reads no response (a Produce
	// request with acks=0).
	Response []byte
}

// CheckFrame applies the rules to one whole request frame (its size prefix, header and
// body) and returns nil when every rule holds. A request that breaks a rule, or whose
// body cannot be read, gets a Refusal with the answer a broker gives: the api's own
// error response, every error field set to code (PolicyViolation unless the caller's
// configuration says otherwise) and every message to the refusal's. An error means the
// frame's header could not be read (a frame too short, an unknown api key or version):
// no answer can be built, and a proxy closes the connection.
func (s *Set) CheckFrame(frame []byte, code int16) (*Refusal, error) {
	if len(frame) < 4 || 4+int(int32(binary.BigEndian.Uint32(frame))) != len(frame) {
		n := -1
		if len(frame) >= 4 {
			n = int(int32(binary.BigEndian.Uint32(frame)))
		}
		return nil, errors.New("kwire: rules: a frame of " + strconv.Itoa(len(frame)) + " bytes whose size prefix says " + strconv.Itoa(n) + " follow it")
	}
	hlen, err := codec.RequestHeaderLen(frame) // checks the api key and version
	if err != nil {
		return nil, err
	}
	key, ver := int16(binary.BigEndian.Uint16(frame[4:])), int16(binary.BigEndian.Uint16(frame[6:]))
	corr := int32(binary.BigEndian.Uint32(frame[8:]))
	if !s.Applies(key) {
		return nil, nil
	}
	var clientID *string
	if hlen >= 14 {
		if n := int(int16(binary.BigEndian.Uint16(frame[12:]))); n >= 0 && 14+n <= hlen {
			id := string(frame[14 : 14+n])
			clientID = &id
		}
	}
	body := frame[hlen:]
	v, err := s.Check(key, ver, clientID, body)
	r := &Refusal{Violation: v}
	switch {
	case err != nil:
		r.Message = "the request could not be read for the rules: " + err.Error()
	case v == nil:
		return nil, nil
	default:
		r.Message = v.Message
	}
	resp, place, err := errorFrame(key, ver, corr, body, code, r.Message)
	if err != nil {
		place = Nowhere
	}
	r.Place = place
	if place != Nowhere {
		r.Response = resp
	}
	return r, nil
}

// ErrorFrame answers one whole request frame (size prefix, header, body) with the
// error code and message in its api's own response shape, as a broker refusing it
// would (ErrorResponse): it returns the whole response frame, with the request's
// correlation id, and where the error lands. With Place Nowhere the frame carries the
// error nowhere (a request that names no entity gets the answer with none), and a
// proxy that must make a refusal seen closes the connection instead. The frame is nil
// for a Produce request with acks=0, whose client reads no response (Kafka's broker
// closes the connection after a failed one, and so does kwire's Envoy filter). An
// error means the request could not be read.
func ErrorFrame(frame []byte, code int16, message string) ([]byte, Place, error) {
	hlen, err := codec.RequestHeaderLen(frame)
	if err != nil {
		return nil, Nowhere, err
	}
	key, ver := int16(binary.BigEndian.Uint16(frame[4:])), int16(binary.BigEndian.Uint16(frame[6:]))
	return errorFrame(key, ver, int32(binary.BigEndian.Uint32(frame[8:])), frame[hlen:], code, message)
}

// errorFrame is ErrorFrame for a request of api key at ver, whose body is body.
func errorFrame(key, ver int16, corr int32, body []byte, code int16, message string) ([]byte, Place, error) {
	resp, place, err := ErrorResponse(key, ver, body, code, message)
	if err != nil {
		return nil, Nowhere, err
	}
	if key == apiProduce && producesNoResponse(body, ver) {
		return nil, place, nil
	}
	b := make([]byte, 8, 9+len(resp))
	binary.BigEndian.PutUint32(b[4:], uint32(corr))
	if codec.ResponseHeaderVersion(key, ver) == 1 {
		b = append(b, 0) // no tagged fields
	}
	b = append(b, resp...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b, place, nil
}

const apiProduce = 0

// producesNoResponse reports whether a Produce request body asks for no response
// (acks=0).
func producesNoResponse(body []byte, version int16) bool {
	d := docs.Get().(*transcode.Doc)
	defer docs.Put(d)
	return d.ParseAPI(body, apiProduce, codec.KindRequest, version) == nil && d.Int(d.Field(d.Root(), "acks")) == 0
}
