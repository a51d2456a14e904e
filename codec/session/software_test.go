package session

import (
	"bytes"
	"errors"
	"math/rand"
	"regexp"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
)

// sentApiVersions decodes the ApiVersions request of a frame the session wrote.
func sentApiVersions(t *testing.T, frame []byte) *codec.APIVersionsRequest {
	t.Helper()
	f, err := codec.DecodeRequestFrame(frame)
	if err != nil {
		t.Fatalf("the session wrote a frame that does not decode: %v", err)
	}
	req, ok := f.Body.(*codec.APIVersionsRequest)
	if !ok {
		t.Fatalf("body %T", f.Body)
	}
	return req
}

// TestApiVersionsSoftwareFilled: an ApiVersions v3+ request that leaves the client
// software fields empty gets the session's, by every way of writing a request; a field
// the caller set is kept, and so are unknown tagged fields.
func TestApiVersionsSoftwareFilled(t *testing.T) {
	maxV := apiVersionsInfo().Request.MaxVersion
	if codec.Version == "" || !ValidSoftwareField(DefaultClientSoftwareName) || !ValidSoftwareField(DefaultClientSoftwareVersion) {
		t.Fatalf("the defaults %q %q break Kafka's rule", DefaultClientSoftwareName, DefaultClientSoftwareVersion)
	}
	ways := map[string]func(s *Session, req *codec.APIVersionsRequest, v int16) ([]byte, error){
		"BeginRequest": func(s *Session, req *codec.APIVersionsRequest, v int16) ([]byte, error) {
			body, err := req.Encode(nil, v)
			if err != nil {
				t.Fatal(err)
			}
			f, _, err := s.BeginRequest(18, v, body)
			return f, err
		},
		"AppendTyped": func(s *Session, req *codec.APIVersionsRequest, v int16) ([]byte, error) {
			f, _, _, err := s.AppendTyped([]byte("prefix"), req, v)
			if err == nil {
				if !bytes.HasPrefix(f, []byte("prefix")) {
					t.Fatal("AppendTyped lost what dst held")
				}
				f = f[len("prefix"):]
			}
			return f, err
		},
		"StartFrame+FinishFrame": func(s *Session, req *codec.APIVersionsRequest, v int16) ([]byte, error) {
			b, v2, corr, err := s.StartFrame(nil, 18, v)
			if err != nil {
				t.Fatal(err)
			}
			if b, err = req.Encode(b, v2); err != nil {
				t.Fatal(err)
			}
			return s.FinishFrame(b, 0, 18, v2, corr, false)
		},
	}
	cases := []struct {
		name               string
		cfg                Config
		clientID           *string
		setName, setVer    string
		wantName, wantVers string
	}{
		{"defaults", Config{}, nil, "", "", "kwire-go", codec.Version},
		{"configured", Config{ClientSoftwareName: "my-app", ClientSoftwareVersion: "2.1"}, nil, "", "", "my-app", "2.1"},
		{"name given, version filled", Config{ClientSoftwareVersion: "7"}, ptr("a-much-longer-client-id"), "mine", "", "mine", "7"},
		{"both given", Config{ClientSoftwareName: "unused"}, ptr(""), "mine", "1.2.3", "mine", "1.2.3"},
	}
	for way, write := range ways {
		for _, c := range cases {
			for v := int16(3); v <= maxV; v++ {
				cfg := c.cfg
				cfg.ClientID = c.clientID
				s := New(cfg)
				req := codec.NewAPIVersionsRequest()
				req.ClientSoftwareName, req.ClientSoftwareVersion = c.setName, c.setVer
				req.UnknownTaggedFields = []codec.TaggedField{{Tag: 7, Data: []byte("kept")}}
				frame, err := write(s, req, v)
				if err != nil {
					t.Fatalf("%s %s v%d: %v", way, c.name, v, err)
				}
				got := sentApiVersions(t, frame)
				if got.ClientSoftwareName != c.wantName || got.ClientSoftwareVersion != c.wantVers {
					t.Errorf("%s %s v%d: sent %q %q, want %q %q", way, c.name, v, got.ClientSoftwareName, got.ClientSoftwareVersion, c.wantName, c.wantVers)
				}
				if len(got.UnknownTaggedFields) != 1 || string(got.UnknownTaggedFields[0].Data) != "kept" {
					t.Errorf("%s %s v%d: unknown tagged fields %v", way, c.name, v, got.UnknownTaggedFields)
				}
				if req.ClientSoftwareName != c.setName || req.ClientSoftwareVersion != c.setVer {
					t.Errorf("%s: the caller's request was changed", way)
				}
				if cnt := s.Counters(); cnt.RequestsSent != 1 || cnt.BytesSent != int64(len(frame)) || s.Pending() != 1 {
					t.Errorf("%s %s v%d: counters %+v (frame %d bytes), pending %d", way, c.name, v, cnt, len(frame), s.Pending())
				}
			}
		}
	}
}

// TestApiVersionsBeforeV3Untouched: v0-v2 have no client software fields; their frames
// are the codec's, byte for byte.
func TestApiVersionsBeforeV3Untouched(t *testing.T) {
	for v := int16(0); v < 3; v++ {
		s := New(Config{})
		req := codec.NewAPIVersionsRequest()
		body, _ := req.Encode(nil, v)
		frame, corr, err := s.BeginRequest(18, v, body)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := codec.EncodeRequestFrame(nil, codec.NewRequestHeaderFor(req, v, corr, "kwire"), req)
		if !bytes.Equal(frame, want) {
			t.Errorf("v%d: %x, want %x", v, frame, want)
		}
	}
}

// TestApiVersionsSoftwareRefused: a value Kafka's broker would refuse (INVALID_REQUEST)
// fails the request in the session, naming the field and the rule, and leaves no trace:
// dst as it was, nothing pending, nothing counted.
func TestApiVersionsSoftwareRefused(t *testing.T) {
	cases := []struct {
		cfg             Config
		setName, setVer string
		field           string
	}{
		{Config{}, "my client", "", "clientSoftwareName"},
		{Config{}, "", "1.0-", "clientSoftwareVersion"},
		{Config{ClientSoftwareName: "-kwire"}, "", "", "clientSoftwareName"},
		{Config{ClientSoftwareVersion: "v1_2"}, "ok", "", "clientSoftwareVersion"},
		{Config{}, "kwire", "é", "clientSoftwareVersion"},
	}
	for _, c := range cases {
		s := New(c.cfg)
		req := codec.NewAPIVersionsRequest()
		req.ClientSoftwareName, req.ClientSoftwareVersion = c.setName, c.setVer
		body, _ := req.Encode(nil, 4)
		dst := []byte("before")
		out, _, err := s.AppendRequest(dst, 18, 4, body)
		if !errors.Is(err, ErrInvalidField) {
			t.Fatalf("%+v: %v, want ErrInvalidField", c, err)
		}
		var ee *codec.EncodeError
		if !errors.As(err, &ee) || ee.Path != c.field || ee.Message != "ApiVersionsRequest" || ee.Version != 4 {
			t.Errorf("%+v: %v does not name %s of ApiVersionsRequest v4 (%+v)", c, err, c.field, ee)
		}
		if !strings.Contains(err.Error(), c.field+" ") || !strings.Contains(err.Error(), SoftwarePattern) || !strings.Contains(err.Error(), "INVALID_REQUEST") {
			t.Errorf("%+v: %q names no field, rule or consequence", c, err)
		}
		if string(out) != "before" || s.Pending() != 0 || s.Counters().RequestsSent != 0 {
			t.Errorf("%+v: out %q, pending %d, counters %+v", c, out, s.Pending(), s.Counters())
		}
		if s.Err() != nil {
			t.Errorf("a refused request failed the session: %v", s.Err())
		}
		// The session goes on.
		if _, _, err := s.BeginRequest(3, 12, nil); err != nil {
			t.Errorf("after a refused request: %v", err)
		}
	}
	// Negotiation checks its own values, and can start again once they are right.
	s := New(Config{ClientSoftwareName: "kwire go"})
	if _, err := s.BeginNegotiation(); !errors.Is(err, ErrInvalidField) || !strings.Contains(err.Error(), "clientSoftwareName") {
		t.Fatalf("negotiation with a bad name: %v", err)
	}
	s.cfg.ClientSoftwareName = "kwire-go"
	if _, err := s.BeginNegotiation(); err != nil {
		t.Fatalf("negotiation after the refusal: %v", err)
	}
}

// TestValidSoftwareField: the check is Kafka's regular expression, matched whole.
func TestValidSoftwareField(t *testing.T) {
	re := regexp.MustCompile(`^(?:` + SoftwarePattern + `)$`)
	fixed := []string{"", "a", "-", ".", "a-", "a.", "-a", ".a", "a-b", "a.b", "a..b", "a--b", "kwire-go", "0.1.0",
		"apache-kafka-java", "3.9.2-SNAPSHOT", "a b", "a_b", "é", "a\x00b", "A9", "9"}
	alphabet := []byte("aZ09-._ \xc3\xa9/")
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		b := make([]byte, rng.Intn(6))
		for j := range b {
			b[j] = alphabet[rng.Intn(len(alphabet))]
		}
		fixed = append(fixed, string(b))
	}
	for _, s := range fixed {
		if got, want := ValidSoftwareField(s), re.MatchString(s); got != want {
			t.Errorf("ValidSoftwareField(%q) = %v, Kafka's pattern says %v", s, got, want)
		}
	}
}
