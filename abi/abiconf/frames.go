package abiconf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/conformance"
)

// FrameHost is a host with the frame functions.
type FrameHost interface {
	Host
	DecodeRequestFrame(frame []byte) ([]byte, error)
	EncodeRequestFrame(json []byte) ([]byte, error)
	DecodeResponseFrame(frame []byte, key, version int16) ([]byte, error)
	EncodeResponseFrame(json []byte, key, version int16) ([]byte, error)
	// PeekRequestHeader returns the eight int32 of kw_peek_header.
	PeekRequestHeader(frame []byte) ([8]int32, error)
}

type frameEnvelope struct {
	APIKey        *int16          `json:"apiKey"`
	APIVersion    *int16          `json:"apiVersion"`
	HeaderVersion *int16          `json:"headerVersion"`
	Header        json.RawMessage `json:"header"`
	Body          json.RawMessage `json:"body"`
}

// CheckFrames wraps the body of every request and response vector in a frame (header
// built by the Go codec, correlation id and client id varying) and checks, through the
// host: the frame decodes to the envelope of kwire.h with the body the host's
// kw_decode_message gives; the envelope encodes back to the same frame; the peek reads
// the header fields. Vectors whose body the host cannot decode are left to the vector
// run. It returns the number of frames checked.
func CheckFrames(h FrameHost, rels []conformance.Release) (int, error) {
	cat, err := LoadCatalogue(h)
	if err != nil {
		return 0, err
	}
	var fails []string
	n := 0
	for _, rel := range rels {
		for i, v := range rel.Vectors {
			if v.Kind != "request" && v.Kind != "response" {
				continue
			}
			m, _ := cat.Lookup(v.Name, v.APIKey, v.Kind)
			if m == nil {
				continue
			}
			// A frame is decoded by its api key: compare with the api's own message, which
			// may be newer than the vector's name (Kafka renamed some messages).
			name := cat.apiMessage(v.APIKey, v.Kind)
			if name == "" {
				continue
			}
			body, err := h.DecodeMessage(name, v.Version, v.Bytes)
			if err != nil {
				continue
			}
			n++
			if msg := checkFrame(h, m, v, int32(i*7919), body); msg != "" {
				fails = append(fails, "vector "+v.ID+": "+msg)
			}
		}
	}
	if len(fails) > 0 {
		if len(fails) > 40 {
			fails = append(fails[:40], fmt.Sprintf("... and %d more", len(fails)-40))
		}
		return n, fmt.Errorf("%d of %d frames failed:\n%s", len(fails), n, strings.Join(fails, "\n"))
	}
	if n == 0 {
		return 0, errors.New("no frame was checked")
	}
	return n, nil
}

func checkFrame(h FrameHost, m *CatalogueMessage, v conformance.Vector, corr int32, body []byte) string {
	var hdr []byte
	var hv int16
	var err error
	clientID := fmt.Sprintf("client-%d", corr%97)
	decodeFrame, encodeFrame := h.DecodeRequestFrame, h.EncodeRequestFrame
	if v.Kind == "request" {
		hv = codec.RequestHeaderVersion(v.APIKey, v.Version)
		rh := codec.NewRequestHeader()
		rh.RequestAPIKey, rh.RequestAPIVersion, rh.CorrelationID, rh.ClientID = v.APIKey, v.Version, corr, &clientID
		hdr, err = rh.Encode(nil, hv)
	} else {
		hv = codec.ResponseHeaderVersion(v.APIKey, v.Version)
		rh := codec.NewResponseHeader()
		rh.CorrelationID = corr
		hdr, err = rh.Encode(nil, hv)
		decodeFrame = func(frame []byte) ([]byte, error) { return h.DecodeResponseFrame(frame, v.APIKey, v.Version) }
		encodeFrame = func(js []byte) ([]byte, error) { return h.EncodeResponseFrame(js, v.APIKey, v.Version) }
	}
	if err != nil {
		return "building the header: " + err.Error()
	}
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(hdr)+len(v.Bytes)))
	frame = append(append(frame, hdr...), v.Bytes...)

	js, err := decodeFrame(frame)
	if err != nil {
		return "decoding the frame: " + err.Error()
	}
	var env frameEnvelope
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return "frame JSON: " + err.Error()
	}
	if env.APIKey == nil || *env.APIKey != v.APIKey || env.APIVersion == nil || *env.APIVersion != v.Version ||
		env.HeaderVersion == nil || *env.HeaderVersion != hv {
		return fmt.Sprintf("frame JSON names api %v version %v header version %v, want %d %d %d",
			deref(env.APIKey), deref(env.APIVersion), deref(env.HeaderVersion), v.APIKey, v.Version, hv)
	}
	if !strings.HasPrefix(string(js), `{"apiKey":`) {
		return "frame JSON does not start with apiKey"
	}
	if d, err := conformance.JSONDiff(body, env.Body); err != nil || d != nil {
		return fmt.Sprintf("frame body differs from kw_decode_message: %v %v", d, err)
	}
	var hdrFields struct {
		CorrelationId int32   `json:"correlationId"`
		ClientId      *string `json:"clientId"`
	}
	if err := json.Unmarshal(env.Header, &hdrFields); err != nil || hdrFields.CorrelationId != corr {
		return fmt.Sprintf("header JSON %s: correlation id, want %d (%v)", env.Header, corr, err)
	}
	if v.Kind == "request" && hv >= 1 && (hdrFields.ClientId == nil || *hdrFields.ClientId != clientID) {
		return fmt.Sprintf("header JSON %s: client id, want %q", env.Header, clientID)
	}

	re, err := encodeFrame(js)
	if err != nil {
		return "encoding the frame JSON back: " + err.Error()
	}
	if !bytes.Equal(re, frame) {
		return fmt.Sprintf("the frame JSON encodes to %d bytes, the frame had %d; first difference at %d", len(re), len(frame), conformance.FirstDiff(re, frame))
	}

	if v.Kind == "request" {
		p, err := h.PeekRequestHeader(frame)
		if err != nil {
			return "peek: " + err.Error()
		}
		want := [8]int32{int32(len(frame) - 4), int32(v.APIKey), int32(v.Version), corr, int32(hv), -1, -1, 0}
		if hv >= 1 {
			want[5], want[6] = 14, int32(len(clientID))
		}
		if p != want {
			return fmt.Sprintf("peek gives %v, want %v", p, want)
		}
		// A peek needs only the first bytes of a frame.
		if hv >= 1 {
			if p2, err := h.PeekRequestHeader(frame[:14+len(clientID)]); err != nil || p2 != want {
				return fmt.Sprintf("peek of the frame's first %d bytes gives %v, %v", 14+len(clientID), p2, err)
			}
		}
	}
	return ""
}

func (c *Catalogue) apiMessage(key int16, kind string) string {
	for _, a := range c.APIs {
		if a.APIKey == key {
			if kind == "request" {
				return a.Request
			}
			return a.Response
		}
	}
	return ""
}

func deref(p *int16) any {
	if p == nil {
		return "(absent)"
	}
	return *p
}
