package session

import (
	"slices"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
	"github.com/kwire/kwire/internal/errtext"
	"github.com/kwire/kwire/internal/transcode"
)

// BeginNegotiation starts version negotiation and returns the first ApiVersions request
// frame to send: at Config.BootstrapVersion, or kwire's highest ApiVersions version. Next
// applies the answers itself and marks them with Response.Negotiation; when the broker
// does not know the version, the answer carries the retry frame (at the highest version
// both sides know, read from the broker's table in that UNSUPPORTED_VERSION answer).
func (s *Session) BeginNegotiation() ([]byte, error) {
	if s.err != nil {
		return nil, s.failedErr()
	}
	if s.negotiating {
		return nil, errtext.Wrap("kwire session: negotiation already under way: "+ErrNegotiation.Error(), ErrNegotiation)
	}
	v := s.cfg.BootstrapVersion
	if v <= 0 {
		v = apiVersionsInfo().Request.MaxVersion
	}
	s.negotiating = true
	s.tried = s.tried[:0]
	return s.apiVersionsFrame(v)
}

func apiVersionsInfo() codec.APIInfo {
	a, _ := codec.LookupAPI(apiKeyApiVersions)
	return a
}

// apiVersionsFrame encodes an ApiVersions request labelled with version v; above kwire's
// highest version the body is kwire's newest.
func (s *Session) apiVersionsFrame(v int16) ([]byte, error) {
	// The body has every field at its default; FinishFrame fills in the client software
	// fields (v3+) as it does for any ApiVersions request that leaves them empty.
	bv := min(v, apiVersionsInfo().Request.MaxVersion)
	var err error
	if bv >= apiVersionsMinSoftware {
		if err = softwareTooLong(bv, apiVersionsSoftwareFields[0], s.softwareName()); err == nil {
			err = softwareTooLong(bv, apiVersionsSoftwareFields[1], s.softwareVersion())
		}
	}
	var body []byte
	if err == nil {
		body, err = transcode.AppendWire(nil, apiVersionsRequestName, bv, apiVersionsDefault)
	}
	if err != nil {
		s.negotiating = false
		return nil, errtext.Wrap("kwire session: ApiVersions v"+itoa(bv)+" request: "+err.Error(), err)
	}
	s.tried = append(s.tried, v)
	frame, _, err := s.appendRequest(nil, apiKeyApiVersions, v, body, true, true)
	if err != nil {
		s.negotiating = false
		return nil, err
	}
	return frame, nil
}

// negotiationResponse applies the answer to a negotiation request.
func (s *Session) negotiationResponse(r *Response) {
	r.Negotiation = NegotiationDone
	done := func(err error) {
		s.negotiating = false
		r.Err = err
	}
	errorCode, apiKeys, err := readApiVersionsResponse(r.Body, r.BodyVersion)
	if err != nil {
		done(errtext.WrapAll("kwire session: negotiation: ApiVersions v"+itoa(r.BodyVersion)+" response: "+
			ErrNegotiation.Error()+": "+err.Error(), ErrNegotiation, err))
		return
	}
	switch code := kerr.Code(errorCode); code {
	case 0:
		table := make(map[int16]VersionRange, len(apiKeys))
		for _, k := range apiKeys {
			table[k.key] = VersionRange{Min: k.min, Max: k.max}
		}
		s.broker = table
		s.negotiated = true
		done(nil)
	case kerr.UnsupportedVersion:
		// The broker wrote its answer at v0 with (at least) its ApiVersions range.
		next := int16(-1)
		kw := apiVersionsInfo().Request
		for _, k := range apiKeys {
			if k.key == apiKeyApiVersions {
				lo, hi := max(kw.MinVersion, k.min), min(kw.MaxVersion, k.max)
				if hi >= lo {
					next = hi
				}
			}
		}
		if next < 0 && len(apiKeys) == 0 {
			next = 0 // a broker that lists nothing still answers v0
		}
		if next < 0 || slices.Contains(s.tried, next) {
			done(errtext.Wrap("kwire session: negotiation: the broker refused ApiVersions v"+itoa(r.Version)+
				" (UNSUPPORTED_VERSION) and lists no other version to try (tried "+versionsString(s.tried)+
				", broker table "+tableString(apiKeys)+"): "+ErrNegotiation.Error(), ErrNegotiation))
			return
		}
		frame, err := s.apiVersionsFrame(next)
		if err != nil {
			done(err)
			return
		}
		r.Negotiation = NegotiationRetry
		r.Retry = frame
	default:
		done(errtext.Wrap("kwire session: negotiation: ApiVersions v"+itoa(r.Version)+" answered "+errtext.Text(code.Err())+
			": "+ErrNegotiation.Error(), ErrNegotiation))
	}
}

func tableString(keys []apiRange) string {
	s := "["
	for i, k := range keys {
		if i > 0 {
			s += " "
		}
		s += itoa(k.key) + ":" + itoa(k.min) + "-" + itoa(k.max)
	}
	return s + "]"
}

// versionsString renders versions as fmt's %v does: "[3 0]".
func versionsString(versions []int16) string {
	s := "["
	for i, v := range versions {
		if i > 0 {
			s += " "
		}
		s += itoa(v)
	}
	return s + "]"
}

// Negotiated reports whether the broker's version table is known.
func (s *Session) Negotiated() bool { return s.negotiated }

// BrokerVersions returns a copy of the broker's version table (nil before negotiation).
func (s *Session) BrokerVersions() map[int16]VersionRange {
	if s.broker == nil {
		return nil
	}
	out := make(map[int16]VersionRange, len(s.broker))
	for k, v := range s.broker {
		out[k] = v
	}
	return out
}

// SetBrokerVersions installs a broker version table learned elsewhere (for example by
// another connection to the same broker), as if negotiation had read it.
func (s *Session) SetBrokerVersions(table map[int16]VersionRange) {
	s.broker = make(map[int16]VersionRange, len(table))
	for k, v := range table {
		s.broker[k] = v
	}
	s.negotiated = true
}

// VersionFor returns the version to send apiKey at: min(kwire's highest, the broker's
// highest), provided it is at least both lowest versions. It fails before negotiation,
// for an api the broker does not list, and for an api with no version in common.
func (s *Session) VersionFor(apiKey int16) (int16, error) {
	api, ok := codec.LookupAPI(apiKey)
	if !ok {
		return 0, errtext.Wrap("kwire session: api key "+itoa(apiKey)+": "+ErrUnknownAPI.Error(), ErrUnknownAPI)
	}
	if !s.negotiated {
		return 0, errtext.Wrap("kwire session: "+api.Name+": "+ErrNotNegotiated.Error(), ErrNotNegotiated)
	}
	b, ok := s.broker[apiKey]
	if !ok {
		return 0, errtext.Wrap("kwire session: "+api.Name+" (api key "+itoa(apiKey)+"): the broker does not list it: "+
			ErrNoCommonVersion.Error(), ErrNoCommonVersion)
	}
	lo, hi := max(api.Request.MinVersion, b.Min), min(api.Request.MaxVersion, b.Max)
	if hi < lo {
		return 0, errtext.Wrap("kwire session: "+api.Name+" (api key "+itoa(apiKey)+"): kwire knows v"+
			itoa(api.Request.MinVersion)+"-"+itoa(api.Request.MaxVersion)+", the broker v"+itoa(b.Min)+"-"+itoa(b.Max)+
			": "+ErrNoCommonVersion.Error(), ErrNoCommonVersion)
	}
	return hi, nil
}

// NegotiationVersions returns the ApiVersions versions the latest negotiation sent, in
// order: one entry when the broker knew the first, two after an UNSUPPORTED_VERSION retry.
func (s *Session) NegotiationVersions() []int16 { return append([]int16(nil), s.tried...) }
