package session

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand"
	"runtime"
	"testing"

	"github.com/kwire/kwire/codec"
)

// responseFrame encodes a response frame for (apiKey, version) the way a broker does,
// with the given header tagged fields (header v1 only).
func responseFrame(t testing.TB, corr int32, apiKey, version int16, body codec.Response, tags []codec.TaggedField) []byte {
	t.Helper()
	h := &codec.ResponseHeader{CorrelationID: corr, UnknownTaggedFields: tags}
	f, err := codec.EncodeResponseFrame(nil, h, version, body)
	if err != nil {
		t.Fatalf("encode %s v%d response: %v", body.MessageName(), version, err)
	}
	return f
}

func newBody(t testing.TB, apiKey int16) codec.Response {
	r := codec.NewResponse(apiKey)
	if r == nil {
		t.Fatalf("no response type for api key %d", apiKey)
	}
	return r
}

// TestHeaderVersions sends one request per header case and answers it: the request frame
// must be byte-identical to the codec's own frame with the same header, and the response
// header must be read at the right version, tagged fields kept.
func TestHeaderVersions(t *testing.T) {
	tags := []codec.TaggedField{{Tag: 3, Data: []byte("x")}, {Tag: 9, Data: []byte{}}}
	cases := []struct {
		name                  string
		apiKey, version       int16
		reqHeader, respHeader int16
		clientID              *string
	}{
		{"ControlledShutdown v0: request header v0", 7, 0, 0, 0, nil},
		{"ControlledShutdown v1: request header v1", 7, 1, 1, 0, nil},
		{"ControlledShutdown v3: flexible", 7, 3, 2, 1, nil},
		{"ApiVersions v0", 18, 0, 1, 0, nil},
		{"ApiVersions v3: flexible request, response header v0", 18, 3, 2, 0, nil},
		{"ApiVersions v5: flexible request, response header v0", 18, 5, 2, 0, nil},
		{"Produce v8: classic", 0, 8, 1, 0, nil},
		{"Produce v9: flexible", 0, 9, 2, 1, nil},
		{"Metadata v9: flexible, custom client id", 3, 9, 2, 1, ptr("app-1")},
		{"SaslHandshake v1: never flexible", 17, 1, 1, 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(Config{ClientID: c.clientID})
			req := codec.NewRequest(c.apiKey)
			body, err := req.Encode(nil, c.version)
			if err != nil {
				t.Fatal(err)
			}
			frame, corr, err := s.BeginRequest(c.apiKey, c.version, body)
			if err != nil {
				t.Fatal(err)
			}
			if av, ok := req.(*codec.APIVersionsRequest); ok && c.version >= 3 {
				// The session fills the client software fields left empty.
				av.ClientSoftwareName, av.ClientSoftwareVersion = DefaultClientSoftwareName, DefaultClientSoftwareVersion
			}
			id := "kwire"
			if c.clientID != nil {
				id = *c.clientID
			}
			want, err := codec.EncodeRequestFrame(nil, codec.NewRequestHeaderFor(req, c.version, corr, id), req)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(frame, want) {
				t.Fatalf("request frame\n got %x\nwant %x", frame, want)
			}
			if got := codec.RequestHeaderVersion(c.apiKey, c.version); got != c.reqHeader {
				t.Fatalf("test table: request header v%d, codec says v%d", c.reqHeader, got)
			}
			dec, err := codec.DecodeRequestFrame(frame)
			if err != nil || dec.HeaderVersion != c.reqHeader {
				t.Fatalf("request frame decodes to header v%d, %v; want v%d", dec.HeaderVersion, err, c.reqHeader)
			}

			var rtags []codec.TaggedField
			if c.respHeader == 1 {
				rtags = tags
			}
			respBody := newBody(t, c.apiKey)
			resp := responseFrame(t, corr, c.apiKey, c.version, respBody, rtags)
			if err := s.Feed(resp); err != nil {
				t.Fatal(err)
			}
			r, ok, err := s.Next()
			if err != nil || !ok {
				t.Fatalf("Next: %v %v", ok, err)
			}
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if r.HeaderVersion != c.respHeader || r.APIKey != c.apiKey || r.Version != c.version || r.CorrelationID != corr {
				t.Fatalf("response %+v, want header v%d", r, c.respHeader)
			}
			wantBody, _ := respBody.Encode(nil, c.version)
			if !bytes.Equal(r.Body, wantBody) || !bytes.Equal(r.Frame, resp) {
				t.Fatalf("body %x, want %x", r.Body, wantBody)
			}
			if len(r.Header.TaggedFields) != len(rtags) {
				t.Fatalf("header tagged fields %v, want %v", r.Header.TaggedFields, rtags)
			}
			for i := range rtags {
				if r.Header.TaggedFields[i].Tag != rtags[i].Tag || !bytes.Equal(r.Header.TaggedFields[i].Data, rtags[i].Data) {
					t.Fatalf("tagged field %d: %v, want %v", i, r.Header.TaggedFields[i], rtags[i])
				}
			}
			// The header re-encodes to the bytes that were read.
			hb, err := r.Header.ResponseHeader().Encode(nil, r.HeaderVersion)
			if err != nil || !bytes.Equal(hb, resp[4:len(resp)-len(r.Body)]) {
				t.Fatalf("header re-encodes to %x (%v), read %x", hb, err, resp[4:len(resp)-len(r.Body)])
			}
			if _, err := DecodeBody(r); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// stream builds n requests on s and the concatenated response frames that answer them,
// in order, with bodies of varying size.
func stream(t testing.TB, s *Session, n int) ([]byte, []Response) {
	var all []byte
	var want []Response
	for i := 0; i < n; i++ {
		key, v := int16(3), int16(12) // Metadata v12: flexible, response header v1
		if i%3 == 1 {
			key, v = 18, 3 // ApiVersions: response header v0
		}
		_, corr, err := s.BeginRequest(key, v, []byte{})
		if err != nil {
			t.Fatal(err)
		}
		body := newBody(t, key)
		if md, ok := body.(*codec.MetadataResponse); ok {
			for j := 0; j < i%7; j++ {
				md.Topics = append(md.Topics, codec.MetadataResponseTopic{Name: ptr(string(rune('a' + j)))})
			}
		}
		f := responseFrame(t, corr, key, v, body, nil)
		all = append(all, f...)
		want = append(want, Response{APIKey: key, Version: v, CorrelationID: corr, Frame: f})
	}
	return all, want
}

func drain(t testing.TB, s *Session) []Response {
	var out []Response
	for {
		r, ok, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, r)
	}
}

// TestChunking feeds the same stream of responses whole, one byte at a time and in
// random splits: the same responses come out, in order.
func TestChunking(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	splits := map[string]func(b []byte) [][]byte{
		"whole": func(b []byte) [][]byte { return [][]byte{b} },
		"1 byte": func(b []byte) [][]byte {
			var out [][]byte
			for i := range b {
				out = append(out, b[i:i+1])
			}
			return out
		},
		"random": func(b []byte) [][]byte {
			var out [][]byte
			for len(b) > 0 {
				n := min(len(b), 1+rng.Intn(40))
				out = append(out, b[:n])
				b = b[n:]
			}
			return out
		},
		"empty chunks between": func(b []byte) [][]byte {
			var out [][]byte
			for len(b) > 0 {
				n := min(len(b), 3)
				out = append(out, nil, b[:n])
				b = b[n:]
			}
			return out
		},
	}
	for name, split := range splits {
		t.Run(name, func(t *testing.T) {
			s := New(Config{})
			all, want := stream(t, s, 40)
			var got []Response
			for _, chunk := range split(all) {
				// Feed a copy and then scribble over it: the session must keep its own bytes.
				c := append([]byte(nil), chunk...)
				if err := s.Feed(c); err != nil {
					t.Fatal(err)
				}
				for i := range c {
					c[i] = 0xee
				}
				got = append(got, drain(t, s)...)
			}
			if len(got) != len(want) {
				t.Fatalf("%d responses, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i].CorrelationID != want[i].CorrelationID || got[i].APIKey != want[i].APIKey ||
					!bytes.Equal(got[i].Frame, want[i].Frame) || got[i].Err != nil {
					t.Fatalf("response %d: %+v, want %+v", i, got[i], want[i])
				}
			}
			c := s.Counters()
			if c.BytesReceived != int64(len(all)) || c.ResponsesReceived != 40 || c.RequestsSent != 40 || s.Pending() != 0 || s.Buffered() {
				t.Fatalf("counters %+v, pending %d, buffered %v", c, s.Pending(), s.Buffered())
			}
		})
	}
}

// TestCounters: bytes sent are the frames returned, bytes received those fed.
func TestCounters(t *testing.T) {
	s := New(Config{})
	var sent int64
	for i := 0; i < 5; i++ {
		f, _, err := s.BeginRequest(18, int16(i%4), nil)
		if err != nil {
			t.Fatal(err)
		}
		sent += int64(len(f))
	}
	f, _, err := s.AppendRequestNoResponse([]byte("prefix"), 0, 9, []byte{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(f, []byte("prefix")) {
		t.Fatalf("append-style request lost dst: %x", f)
	}
	sent += int64(len(f) - len("prefix"))
	c := s.Counters()
	if c.BytesSent != sent || c.RequestsSent != 6 || s.Pending() != 5 {
		t.Fatalf("counters %+v (want %d bytes sent), pending %d", c, sent, s.Pending())
	}
}

// TestFrameLimit: a size prefix above the limit (or negative) fails the session, at the
// limit it is accepted.
func TestFrameLimit(t *testing.T) {
	size := func(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }
	cases := []struct {
		name  string
		max   int
		input []byte
		fail  bool
	}{
		{"at the limit", 100, size(100), false},
		{"one above", 100, size(101), true},
		{"negative", 100, size(-1), true},
		{"200 MiB, default limit", 0, size(200 << 20), true},
		{"100 MiB, default limit", 0, size(100 << 20), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(Config{MaxFrameSize: c.max})
			err := s.Feed(c.input)
			if c.fail != (err != nil) {
				t.Fatalf("Feed: %v, want failure %v", err, c.fail)
			}
			if c.fail {
				if !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("error %v is not ErrFrameTooLarge", err)
				}
				if _, _, err := s.Next(); !errors.Is(err, ErrFailed) {
					t.Fatalf("Next after the failure: %v", err)
				}
			}
		})
	}
}

// TestOverCapNoAllocation: refusing a 200 MiB frame allocates nothing for it, and a legal
// 100 MiB announcement allocates only for the bytes that arrived.
func TestOverCapNoAllocation(t *testing.T) {
	const runs = 20
	sessions := make([]*Session, runs+1)
	for i := range sessions {
		sessions[i] = New(Config{})
	}
	hdr := binary.BigEndian.AppendUint32(nil, 200<<20)
	i := 0
	allocs := testing.AllocsPerRun(runs, func() {
		if err := sessions[i].Feed(hdr); !errors.Is(err, ErrFrameTooLarge) {
			t.Fatalf("Feed: %v", err)
		}
		i++
	})
	// The error value and its message are the only allocations.
	if allocs > 8 {
		t.Fatalf("refusing a 200 MiB frame made %v allocations", allocs)
	}
	var before, after runtime.MemStats
	s := New(Config{})
	runtime.ReadMemStats(&before)
	if err := s.Feed(hdr); err == nil {
		t.Fatal("accepted")
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 64<<10 {
		t.Fatalf("refusing a 200 MiB frame allocated %d bytes", d)
	}

	s = New(Config{})
	if _, _, err := s.BeginRequest(18, 0, nil); err != nil {
		t.Fatal(err)
	}
	big := append(binary.BigEndian.AppendUint32(nil, 100<<20), 0, 0, 0, 0, 0, 0)
	runtime.ReadMemStats(&before)
	if err := s.Feed(big); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Fatalf("10 bytes of a 100 MiB frame allocated %d bytes", d)
	}
	if !s.Buffered() {
		t.Fatal("partial frame not reported by Buffered")
	}
}

// TestLargeFrameGrows: a frame fed in small chunks arrives intact whatever its size.
func TestLargeFrameGrows(t *testing.T) {
	s := New(Config{})
	_, corr, err := s.BeginRequest(3, 12, nil)
	if err != nil {
		t.Fatal(err)
	}
	md := codec.NewMetadataResponse()
	for i := 0; i < 20000; i++ {
		md.Topics = append(md.Topics, codec.MetadataResponseTopic{Name: ptr("topic-with-a-longish-name")})
	}
	f := responseFrame(t, corr, 3, 12, md, nil)
	for len(f) > 0 {
		n := min(len(f), 1000)
		if err := s.Feed(f[:n]); err != nil {
			t.Fatal(err)
		}
		f = f[n:]
	}
	r := drain(t, s)
	if len(r) != 1 {
		t.Fatalf("%d responses", len(r))
	}
	got, err := DecodeBody(r[0])
	if err != nil || len(got.(*codec.MetadataResponse).Topics) != 20000 {
		t.Fatalf("decode: %v", err)
	}
}

// TestUnknownCorrelation: a response nobody waits for fails the session for good.
func TestUnknownCorrelation(t *testing.T) {
	s := New(Config{})
	if _, _, err := s.BeginRequest(18, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Feed(responseFrame(t, 42, 18, 0, codec.NewAPIVersionsResponse(), nil)); err != nil {
		t.Fatal(err)
	}
	_, ok, err := s.Next()
	if ok || !errors.Is(err, ErrUnknownCorrelation) {
		t.Fatalf("Next: %v %v", ok, err)
	}
	if _, _, err := s.Next(); !errors.Is(err, ErrFailed) || !errors.Is(err, ErrUnknownCorrelation) {
		t.Fatalf("Next again: %v", err)
	}
	if err := s.Feed([]byte{0}); !errors.Is(err, ErrFailed) {
		t.Fatalf("Feed: %v", err)
	}
	if _, _, err := s.BeginRequest(18, 0, nil); !errors.Is(err, ErrFailed) {
		t.Fatalf("BeginRequest: %v", err)
	}
	// A response to a request sent without expecting one is unknown too.
	s = New(Config{})
	_, corr, err := s.AppendRequestNoResponse(nil, 0, 9, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Feed(responseFrame(t, corr, 0, 9, codec.NewProduceResponse(), nil))
	if _, _, err := s.Next(); !errors.Is(err, ErrUnknownCorrelation) {
		t.Fatalf("answer to a no-response request: %v", err)
	}
}

// TestMalformedResponses: problems confined to one response fail that response only.
func TestMalformedResponses(t *testing.T) {
	s := New(Config{})
	_, c1, _ := s.BeginRequest(3, 12, nil)
	_, c2, _ := s.BeginRequest(3, 12, nil)
	_, c3, _ := s.BeginRequest(3, 12, nil)
	// c1: header v1 whose tagged field count claims more than the frame holds.
	bad := binary.BigEndian.AppendUint32(nil, 5)
	bad = binary.BigEndian.AppendUint32(bad, uint32(c1))
	bad = append(bad, 9)
	// c2: a well-formed header and a truncated body.
	trunc := binary.BigEndian.AppendUint32(nil, 7)
	trunc = binary.BigEndian.AppendUint32(trunc, uint32(c2))
	trunc = append(trunc, 0, 0, 0)
	ok3 := responseFrame(t, c3, 3, 12, codec.NewMetadataResponse(), nil)
	s.Feed(append(append(bad, trunc...), ok3...))
	rs := drain(t, s)
	if len(rs) != 3 {
		t.Fatalf("%d responses", len(rs))
	}
	if !errors.Is(rs[0].Err, ErrMalformedHeader) {
		t.Errorf("bad header: %v", rs[0].Err)
	}
	if rs[1].Err != nil {
		t.Errorf("header of the truncated body: %v", rs[1].Err)
	}
	var de *codec.DecodeError
	if _, err := DecodeBody(rs[1]); !errors.As(err, &de) {
		t.Errorf("truncated body decodes with %v", err)
	}
	if _, err := DecodeBody(rs[2]); err != nil || s.Err() != nil {
		t.Errorf("the response after them: %v, session %v", err, s.Err())
	}
	// A frame too short to hold a correlation id fails the session.
	s.Feed([]byte{0, 0, 0, 2, 0, 0})
	if _, _, err := s.Next(); !errors.Is(err, ErrMalformedHeader) {
		t.Errorf("2-byte frame: %v", err)
	}
}

// TestTyped: AppendTyped encodes at the negotiated version, Produce acks=0 expects no
// answer, DecodeInto checks the api.
func TestTyped(t *testing.T) {
	s := New(Config{})
	if _, _, _, err := s.AppendTyped(nil, codec.NewMetadataRequest(), -1); !errors.Is(err, ErrNotNegotiated) {
		t.Fatalf("before negotiation: %v", err)
	}
	s.SetBrokerVersions(map[int16]VersionRange{0: {3, 9}, 3: {0, 12}})
	f, corr, v, err := s.AppendTyped(nil, codec.NewMetadataRequest(), -1)
	if err != nil || v != 12 {
		t.Fatalf("Metadata at v%d: %v", v, err)
	}
	if dec, err := codec.DecodeRequestFrame(f); err != nil || dec.Header.CorrelationID != corr || dec.Header.RequestAPIVersion != 12 {
		t.Fatalf("frame decodes to %+v, %v", dec, err)
	}
	p := codec.NewProduceRequest()
	p.Acks = 0
	if _, _, v, err := s.AppendTyped(nil, p, -1); err != nil || v != 9 || s.Pending() != 1 || ExpectsResponse(p) {
		t.Fatalf("acks=0 produce: v%d %v pending %d", v, err, s.Pending())
	}
	s.Feed(responseFrame(t, corr, 3, 12, codec.NewMetadataResponse(), nil))
	r := drain(t, s)
	if err := DecodeInto(r[0], codec.NewProduceResponse()); !errors.Is(err, codec.ErrMismatch) {
		t.Fatalf("DecodeInto with the wrong type: %v", err)
	}
	if err := DecodeInto(r[0], codec.NewMetadataResponse()); err != nil {
		t.Fatal(err)
	}
}

func TestUnknownAPI(t *testing.T) {
	s := New(Config{})
	if _, _, err := s.BeginRequest(9999, 0, nil); !errors.Is(err, ErrUnknownAPI) {
		t.Fatalf("api key 9999: %v", err)
	}
	if _, err := s.VersionFor(9999); !errors.Is(err, ErrUnknownAPI) {
		t.Fatalf("VersionFor(9999): %v", err)
	}
}
