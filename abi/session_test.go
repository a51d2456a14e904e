package abi

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
)

// fakeBroker answers request frames the way a broker knowing ApiVersions 0..maxAV and
// Metadata up to v12 does.
func brokerAnswer(t *testing.T, frame []byte, maxAV int16) []byte {
	t.Helper()
	f, err := codec.DecodeRequestFrame(frame)
	if err != nil {
		t.Fatalf("broker cannot read the request: %v", err)
	}
	h := codec.NewResponseHeader()
	h.CorrelationID = f.Header.CorrelationID
	v := f.Header.RequestAPIVersion
	switch body := f.Body.(type) {
	case *codec.APIVersionsRequest:
		r := codec.NewAPIVersionsResponse()
		r.APIKeys = []codec.APIVersionsResponseAPIVersion{{APIKey: 18, MinVersion: 0, MaxVersion: maxAV}, {APIKey: 3, MinVersion: 0, MaxVersion: 12}}
		if v > maxAV {
			r.ErrorCode = int16(kerr.UnsupportedVersion)
			v = 0
		}
		out, err := codec.EncodeResponseFrame(nil, h, v, r)
		if err != nil {
			t.Fatal(err)
		}
		return out
	case *codec.MetadataRequest:
		_ = body
		r := codec.NewMetadataResponse()
		r.Brokers = []codec.MetadataResponseBroker{{NodeID: 1, Host: "127.0.0.1", Port: 9092}}
		out, err := codec.EncodeResponseFrame(nil, h, v, r)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Fatalf("unexpected request %T", f.Body)
	return nil
}

type nextResult struct {
	CorrelationID int32           `json:"correlationId"`
	APIKey        int16           `json:"apiKey"`
	APIVersion    int16           `json:"apiVersion"`
	BodyVersion   int16           `json:"bodyVersion"`
	HeaderVersion int16           `json:"headerVersion"`
	Negotiation   string          `json:"negotiation"`
	Retry         string          `json:"retry"`
	Body          json.RawMessage `json:"body"`
	Error         string          `json:"error"`
}

func next(t *testing.T, h int32) *nextResult {
	t.Helper()
	out, err := SessionNext(nil, h)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		return nil
	}
	var r nextResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return &r
}

// feedChunks feeds b one byte, then three bytes at a time.
func feedChunks(t *testing.T, h int32, b []byte) {
	t.Helper()
	for i := 0; i < len(b); {
		n := 1 + (i % 3)
		if i+n > len(b) {
			n = len(b) - i
		}
		if err := SessionFeed(h, b[i:i+n]); err != nil {
			t.Fatal(err)
		}
		i += n
	}
}

func TestSessionNegotiationAndRequest(t *testing.T) {
	h, err := SessionNew([]byte(`{"clientId":"abi-test"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer SessionFree(h)
	if _, _, err := SessionRequest(nil, h, 3, -1, []byte(`{}`), 0); err == nil {
		t.Fatal("a request at the negotiated version before negotiation was accepted")
	} else {
		status(t, err, StatusVersion)
	}
	// The broker knows ApiVersions up to v2 only: negotiation retries.
	frame, err := SessionBeginNegotiation(nil, h)
	if err != nil {
		t.Fatal(err)
	}
	feedChunks(t, h, brokerAnswer(t, frame, 2))
	r := next(t, h)
	if r == nil || r.Negotiation != "retry" || r.BodyVersion != 0 || r.HeaderVersion != 0 {
		t.Fatalf("first answer %+v", r)
	}
	retry, _ := base64.StdEncoding.DecodeString(r.Retry)
	feedChunks(t, h, brokerAnswer(t, retry, 2))
	if r = next(t, h); r == nil || r.Negotiation != "done" || r.APIVersion != 2 || r.Error != "" {
		t.Fatalf("second answer %+v", r)
	}
	v, err := SessionVersionFor(h, 3)
	if err != nil || v != 12 {
		t.Fatalf("Metadata version %d %v", v, err)
	}
	// Two requests in flight, answered in order, fed in one chunk.
	f1, c1, err := SessionRequest(nil, h, 3, -1, []byte(`{"topics":null}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	f2, c2, err := SessionRequest(nil, h, 3, 4, []byte(`{"topics":[]}`), 0)
	if err != nil || c2 == c1 {
		t.Fatal(err, c1, c2)
	}
	both := append(brokerAnswer(t, f1, 2), brokerAnswer(t, f2, 2)...)
	if err := SessionFeed(h, both); err != nil {
		t.Fatal(err)
	}
	r1, r2 := next(t, h), next(t, h)
	if r1 == nil || r2 == nil || r1.CorrelationID != c1 || r2.CorrelationID != c2 || r1.APIVersion != 12 || r2.APIVersion != 4 ||
		r1.HeaderVersion != 1 || r2.HeaderVersion != 0 {
		t.Fatalf("responses %+v %+v", r1, r2)
	}
	var md struct {
		Brokers []struct{ Host string } `json:"brokers"`
	}
	if err := json.Unmarshal(r1.Body, &md); err != nil || len(md.Brokers) != 1 || md.Brokers[0].Host != "127.0.0.1" {
		t.Fatalf("body %s", r1.Body)
	}
	if next(t, h) != nil {
		t.Fatal("a response out of nothing")
	}
	c, err := SessionCounters(nil, h)
	if err != nil {
		t.Fatal(err)
	}
	var counters struct {
		RequestsSent, ResponsesReceived string
		Pending                         int
	}
	if err := json.Unmarshal(c, &counters); err != nil || counters.RequestsSent != "4" || counters.ResponsesReceived != "4" || counters.Pending != 0 {
		t.Fatalf("counters %s", c)
	}
	// A response nobody asked for fails the session for good.
	if err := SessionFeed(h, brokerAnswer(t, f1, 2)); err != nil {
		t.Fatal(err)
	}
	_, err = SessionNext(nil, h)
	status(t, err, StatusDecode)
	_, _, err = SessionRequest(nil, h, 3, 12, []byte(`{}`), 0)
	status(t, err, StatusDecode)
}

func TestSessionErrors(t *testing.T) {
	if _, err := SessionNew([]byte(`{"nope":1}`)); err == nil {
		t.Fatal("unknown config key accepted")
	} else {
		status(t, err, StatusJSON)
	}
	_, err := SessionNext(nil, 987654)
	status(t, err, StatusArg)
	h, err := SessionNew([]byte(`{"maxFrameSize":1024}`))
	if err != nil {
		t.Fatal(err)
	}
	// A body that is not the api's JSON form.
	_, _, err = SessionRequest(nil, h, 3, 12, []byte(`{"topics":5}`), 0)
	status(t, err, StatusJSON)
	// A frame announcing 200 MiB fails before anything is allocated for it.
	err = SessionFeed(h, []byte{0x0c, 0x80, 0, 0})
	status(t, err, StatusTooLarge)
	if err := SessionFree(h); err != nil {
		t.Fatal(err)
	}
	status(t, SessionFree(h), StatusArg)
}

// TestSessionApiVersionsSoftware: kw_session_request of ApiVersions with an empty body
// sends the session's client software fields (the configured ones, else kwire-go and
// the library's version); a value Kafka refuses is KW_ERR_ENCODE naming the field.
func TestSessionApiVersionsSoftware(t *testing.T) {
	for _, c := range []struct{ config, name, version string }{
		{``, "kwire-go", codec.Version},
		{`{"clientSoftwareName":"kwire-js","clientSoftwareVersion":"9.8.7"}`, "kwire-js", "9.8.7"},
	} {
		h, err := SessionNew([]byte(c.config))
		if err != nil {
			t.Fatal(err)
		}
		frame, _, err := SessionRequest(nil, h, 18, 3, []byte(`{}`), 0)
		if err != nil {
			t.Fatal(err)
		}
		f, err := codec.DecodeRequestFrame(frame)
		if err != nil {
			t.Fatal(err)
		}
		req := f.Body.(*codec.APIVersionsRequest)
		if req.ClientSoftwareName != c.name || req.ClientSoftwareVersion != c.version {
			t.Errorf("config %s: sent %q %q, want %q %q", c.config, req.ClientSoftwareName, req.ClientSoftwareVersion, c.name, c.version)
		}
		_, _, err = SessionRequest(nil, h, 18, 3, []byte(`{"clientSoftwareName":"my app"}`), 0)
		e := status(t, err, StatusEncode)
		if e.Path != "clientSoftwareName" || e.Message != "ApiVersionsRequest" || e.Version != 3 {
			t.Errorf("error %+v does not name the field", e)
		}
		SessionFree(h)
	}
}
