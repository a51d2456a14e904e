package session

import (
	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/internal/errtext"
)

// The typed helpers below link the generated message types; a host that only moves
// bytes (the flat ABI) uses the byte-level methods and does not need them.

// AppendTyped appends the request frame of req at version (-1: the negotiated version)
// to dst, encoding the body straight into the frame. It returns the frame, the
// correlation id and the version used. A Produce request with Acks == 0 registers no
// correlation id: the broker does not answer it.
func (s *Session) AppendTyped(dst []byte, req codec.Request, version int16) ([]byte, int32, int16, error) {
	start := len(dst)
	key := req.APIKey()
	dst, v, corr, err := s.StartFrame(dst, key, version)
	if err != nil {
		return dst[:start], 0, 0, err
	}
	if dst, err = req.Encode(dst, v); err != nil {
		return dst[:start], 0, 0, err
	}
	noResponse := false
	if p, ok := req.(*codec.ProduceRequest); ok && p.Acks == 0 {
		noResponse = true
	}
	dst, err = s.FinishFrame(dst, start, key, v, corr, noResponse)
	if err != nil {
		return dst[:start], 0, 0, err
	}
	return dst, corr, v, nil
}

// ExpectsResponse reports whether the broker answers req (every request except a
// Produce with Acks == 0).
func ExpectsResponse(req codec.Request) bool {
	p, ok := req.(*codec.ProduceRequest)
	return !ok || p.Acks != 0
}

// DecodeBody decodes the body of r into a new response of r's api, at r.BodyVersion.
func DecodeBody(r Response) (codec.Response, error) {
	if r.Err != nil {
		return nil, r.Err
	}
	resp := codec.NewResponse(r.APIKey)
	if resp == nil {
		return nil, errtext.Wrap("kwire session: api key "+itoa(r.APIKey)+": "+ErrUnknownAPI.Error(), ErrUnknownAPI)
	}
	if err := resp.Decode(r.Body, r.BodyVersion); err != nil {
		return nil, errtext.Wrap("kwire session: correlation id "+itoa(r.CorrelationID)+": "+err.Error(), err)
	}
	return resp, nil
}

// DecodeInto decodes the body of r into resp, which must be r's api's response type.
func DecodeInto(r Response, resp codec.Response) error {
	if r.Err != nil {
		return r.Err
	}
	if resp.APIKey() != r.APIKey {
		return errtext.Wrap("kwire session: correlation id "+itoa(r.CorrelationID)+" answers api key "+itoa(r.APIKey)+
			", not "+resp.MessageName()+": "+codec.ErrMismatch.Error(), codec.ErrMismatch)
	}
	if err := resp.Decode(r.Body, r.BodyVersion); err != nil {
		return errtext.Wrap("kwire session: correlation id "+itoa(r.CorrelationID)+": "+err.Error(), err)
	}
	return nil
}

// ResponseHeader returns h as the codec's typed response header.
func (h Header) ResponseHeader() *codec.ResponseHeader {
	return &codec.ResponseHeader{CorrelationID: h.CorrelationID, UnknownTaggedFields: h.TaggedFields}
}
