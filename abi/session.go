package abi

import (
	"encoding/base64"
	"errors"
	"math"
	"strconv"
	"sync"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/session"
	"github.com/kwire/kwire/internal/jsonx"
	"github.com/kwire/kwire/internal/transcode"
)

// Sessions behind integer handles (kw_session_*): the sans-IO client session of
// codec/session, with bodies in the JSON form.

var (
	sessMu   sync.Mutex
	sessions = map[int32]*sessionEntry{}
	nextSess int32
)

// sessionEntry is one session; its lock serializes calls on the same handle.
type sessionEntry struct {
	mu sync.Mutex
	s  *session.Session
}

// withSession runs fn with the session of handle h, holding its lock.
func withSession(h int32, fn func(s *session.Session) error) error {
	sessMu.Lock()
	e := sessions[h]
	sessMu.Unlock()
	if e == nil {
		return newErr(StatusArg, "kwire: "+decimal(h)+" is not a live session handle")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return fn(e.s)
}

// parseSessionConfig reads the JSON configuration of kw_session_new.
func parseSessionConfig(json []byte) (session.Config, *Error) {
	var cfg session.Config
	if len(json) == 0 {
		return cfg, nil
	}
	obj, err := transcode.ParseFlat(json, "session config", map[string]string{
		"clientId": "string", "maxFrameSize": "int", "clientSoftwareName": "string",
		"clientSoftwareVersion": "string", "bootstrapVersion": "int"})
	if err != nil {
		return cfg, classify(err)
	}
	if v, ok := obj["clientId"]; ok {
		s := v.(string)
		cfg.ClientID = &s
	}
	if v, ok := obj["maxFrameSize"]; ok {
		n := v.(int64)
		if n < 0 || n > math.MaxInt32 {
			return cfg, newErr(StatusArg, "kwire: session config: maxFrameSize "+decimal(n)+" out of range")
		}
		cfg.MaxFrameSize = int(n)
	}
	if v, ok := obj["clientSoftwareName"]; ok {
		cfg.ClientSoftwareName = v.(string)
	}
	if v, ok := obj["clientSoftwareVersion"]; ok {
		cfg.ClientSoftwareVersion = v.(string)
	}
	if v, ok := obj["bootstrapVersion"]; ok {
		n := v.(int64)
		if n < 0 || n > math.MaxInt16 {
			return cfg, newErr(StatusArg, "kwire: session config: bootstrapVersion "+decimal(n)+" out of range")
		}
		cfg.BootstrapVersion = int16(n)
	}
	return cfg, nil
}

// SessionNew is kw_session_new.
func SessionNew(config []byte) (h int32, err error) {
	defer guard(&err)
	cfg, e := parseSessionConfig(config)
	if e != nil {
		return 0, e
	}
	sessMu.Lock()
	defer sessMu.Unlock()
	if len(sessions) >= maxSessions {
		return 0, newErr(StatusNoMem, "kwire: "+decimal(len(sessions))+" sessions are open; free some with kw_session_free")
	}
	for {
		nextSess++
		if nextSess <= 0 {
			nextSess = 1
		}
		if sessions[nextSess] == nil {
			break
		}
	}
	sessions[nextSess] = &sessionEntry{s: session.New(cfg)}
	return nextSess, nil
}

const maxSessions = 1 << 16

// SessionFree is kw_session_free.
func SessionFree(h int32) (err error) {
	defer guard(&err)
	sessMu.Lock()
	defer sessMu.Unlock()
	if sessions[h] == nil {
		return newErr(StatusArg, "kwire: "+decimal(h)+" is not a live session handle")
	}
	delete(sessions, h)
	return nil
}

var sessionSentinels = []sentinel{
	{session.ErrFrameTooLarge, StatusTooLarge},
	{session.ErrUnknownAPI, StatusUnknownAPI},
	{session.ErrNoCommonVersion, StatusVersion},
	{session.ErrNotNegotiated, StatusVersion},
	{session.ErrNegotiation, StatusUnsupported},
	{session.ErrInvalidField, StatusEncode},
}

// fromSession classifies an error of the session.
func fromSession(err error) *Error {
	e := newErr(sentinelStatus(err, StatusDecode, sessionSentinels), err.Error())
	var ee *codec.EncodeError
	if errors.As(err, &ee) {
		e.Message, e.Version, e.Path = ee.Message, int(ee.Version), ee.Path
	}
	return e
}

// SessionBeginNegotiation is kw_session_begin_negotiation: the first ApiVersions frame.
func SessionBeginNegotiation(dst []byte, h int32) (out []byte, err error) {
	defer guard(&err)
	out = dst
	err = withSession(h, func(s *session.Session) error {
		frame, err := s.BeginNegotiation()
		if err != nil {
			return fromSession(err)
		}
		out = append(dst, frame...)
		return nil
	})
	return out, err
}

// Session request flags.
const (
	SessionNoResponse = 1 // the broker will not answer (Produce with acks=0)
)

// SessionRequest is kw_session_request: the frame of a request whose body is given in
// the JSON form, at version (-1: the negotiated one); it returns the correlation id.
func SessionRequest(dst []byte, h, apiKey, version int32, body []byte, flags int32) (out []byte, corr int32, err error) {
	defer guard(&err)
	if flags&^SessionNoResponse != 0 {
		return dst, 0, newErr(StatusArg, "kwire: unknown session request flags 0x"+hexadecimal(flags))
	}
	if !fits16(apiKey) {
		return dst, 0, newErr(StatusUnknownAPI, "kwire: unknown api key "+decimal(apiKey))
	}
	if version != -1 && !fits16(version) {
		return dst, 0, newErr(StatusVersion, "kwire: version "+decimal(version)+" out of range")
	}
	info, ok := transcode.LookupAPI(int16(apiKey), codec.KindRequest)
	if !ok {
		return dst, 0, newErr(StatusUnknownAPI, "kwire: unknown api key "+decimal(apiKey))
	}
	out = dst
	err = withSession(h, func(s *session.Session) error {
		start := len(dst)
		b, v, c, err := s.StartFrame(dst, int16(apiKey), int16(version))
		if err != nil {
			return fromSession(err)
		}
		if v < info.MinVersion || v > info.MaxVersion {
			return newErr(StatusVersion, "kwire: "+info.Name+" version "+decimal(v)+": unsupported version (valid "+
				decimal(info.MinVersion)+"-"+decimal(info.MaxVersion)+")")
		}
		if b, err = transcode.AppendWire(b, info.Name, v, body); err != nil {
			return classify(err)
		}
		if b, err = s.FinishFrame(b, start, int16(apiKey), v, c, flags&SessionNoResponse != 0); err != nil {
			return fromSession(err)
		}
		out, corr = b, c
		return nil
	})
	if err != nil {
		return dst, 0, err
	}
	return out, corr, nil
}

// SessionFeed is kw_session_feed.
func SessionFeed(h int32, in []byte) (err error) {
	defer guard(&err)
	return withSession(h, func(s *session.Session) error {
		if err := s.Feed(in); err != nil {
			return fromSession(err)
		}
		return nil
	})
}

// SessionNext is kw_session_next: the next complete response as JSON, or nothing (an
// empty result) when none is complete.
func SessionNext(dst []byte, h int32) (out []byte, err error) {
	defer guard(&err)
	var r session.Response
	var ok bool
	if err := withSession(h, func(s *session.Session) error {
		var err error
		if r, ok, err = s.Next(); err != nil {
			return fromSession(err)
		}
		return nil
	}); err != nil || !ok {
		return dst, err
	}
	b := append(dst, `{"correlationId":`...)
	b = strconv.AppendInt(b, int64(r.CorrelationID), 10)
	b = appendInt(b, "apiKey", int64(r.APIKey))
	b = appendInt(b, "apiVersion", int64(r.Version))
	b = appendInt(b, "bodyVersion", int64(r.BodyVersion))
	b = appendInt(b, "headerVersion", int64(r.HeaderVersion))
	b = append(b, `,"negotiation":`...)
	switch r.Negotiation {
	case session.NegotiationDone:
		b = append(b, `"done"`...)
	case session.NegotiationRetry:
		b = append(b, `"retry","retry":"`...)
		b = base64.StdEncoding.AppendEncode(b, r.Retry)
		b = append(b, '"')
	default:
		b = append(b, `"none"`...)
	}
	if r.Err != nil {
		b = appendString(b, "error", r.Err.Error())
	} else {
		info, _ := transcode.LookupAPI(r.APIKey, codec.KindResponse)
		b = append(b, `,"body":`...)
		body, err := transcode.AppendJSON(b, info.Name, r.BodyVersion, r.Body, nil)
		if err != nil {
			// The frame was cut and matched; only this response is lost.
			b = appendString(b[:len(b)-len(`,"body":`)], "error", err.Error())
		} else {
			b = body
		}
	}
	return append(b, '}'), nil
}

// SessionCounters is kw_session_counters.
func SessionCounters(dst []byte, h int32) (out []byte, err error) {
	defer guard(&err)
	var c session.Counters
	var pending int
	var negotiated, buffered bool
	if err := withSession(h, func(s *session.Session) error {
		c, pending, negotiated, buffered = s.Counters(), s.Pending(), s.Negotiated(), s.Buffered()
		return nil
	}); err != nil {
		return dst, err
	}
	b := append(dst, `{"bytesSent":`...)
	b = jsonx.AppendInt64(b, c.BytesSent)
	b = appendInt64(b, "bytesReceived", c.BytesReceived)
	b = appendInt64(b, "requestsSent", c.RequestsSent)
	b = appendInt64(b, "responsesReceived", c.ResponsesReceived)
	b = appendInt(b, "pending", int64(pending))
	b = appendBool(b, "negotiated", negotiated)
	b = appendBool(b, "buffered", buffered)
	return append(b, '}'), nil
}

// SessionVersionFor is kw_session_version_for.
func SessionVersionFor(h, apiKey int32) (v int32, err error) {
	defer guard(&err)
	if !fits16(apiKey) {
		return 0, newErr(StatusUnknownAPI, "kwire: unknown api key "+decimal(apiKey))
	}
	err = withSession(h, func(s *session.Session) error {
		ver, err := s.VersionFor(int16(apiKey))
		if err != nil {
			return fromSession(err)
		}
		v = int32(ver)
		return nil
	})
	return v, err
}
