package session

import (
	"errors"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
)

// fakeBroker answers ApiVersions requests the way Kafka does: a version it does not know
// gets UNSUPPORTED_VERSION in a v0 body listing its ApiVersions range; a known one gets
// its table.
type fakeBroker struct {
	table map[int16]VersionRange
	// errorCode, when set, is the answer to every known version.
	errorCode int16
	// emptyUnsupported lists nothing in the UNSUPPORTED_VERSION answer.
	emptyUnsupported bool
}

func (b *fakeBroker) answer(t *testing.T, frame []byte) []byte {
	t.Helper()
	p, err := codec.PeekRequestHeader(frame)
	if err != nil || p.APIKey != 18 {
		t.Fatalf("fake broker got %+v, %v", p, err)
	}
	resp := codec.NewAPIVersionsResponse()
	r := b.table[18]
	if p.APIVersion < r.Min || p.APIVersion > r.Max {
		resp.ErrorCode = int16(kerr.UnsupportedVersion)
		if !b.emptyUnsupported {
			resp.APIKeys = []codec.APIVersionsResponseAPIVersion{{APIKey: 18, MinVersion: r.Min, MaxVersion: r.Max}}
		}
		return responseFrame(t, p.CorrelationID, 18, 0, resp, nil)
	}
	resp.ErrorCode = b.errorCode
	for k, v := range b.table {
		resp.APIKeys = append(resp.APIKeys, codec.APIVersionsResponseAPIVersion{APIKey: k, MinVersion: v.Min, MaxVersion: v.Max})
	}
	return responseFrame(t, p.CorrelationID, 18, p.APIVersion, resp, nil)
}

// negotiate runs negotiation against b and returns the versions of the ApiVersions
// requests sent and the final error.
func negotiate(t *testing.T, s *Session, b *fakeBroker) ([]int16, error) {
	t.Helper()
	frame, err := s.BeginNegotiation()
	if err != nil {
		t.Fatal(err)
	}
	var sent []int16
	for step := 0; step < 5; step++ {
		p, _ := codec.PeekRequestHeader(frame)
		sent = append(sent, p.APIVersion)
		if err := s.Feed(b.answer(t, frame)); err != nil {
			t.Fatal(err)
		}
		r, ok, err := s.Next()
		if err != nil || !ok {
			t.Fatalf("Next: %v %v", ok, err)
		}
		switch r.Negotiation {
		case NegotiationDone:
			return sent, r.Err
		case NegotiationRetry:
			if r.BodyVersion != 0 {
				t.Errorf("an UNSUPPORTED_VERSION answer is read at v%d, want v0", r.BodyVersion)
			}
			frame = r.Retry
		default:
			t.Fatalf("a negotiation answer came back as %v", r.Negotiation)
		}
	}
	t.Fatal("negotiation does not end")
	return nil, nil
}

func TestNegotiation(t *testing.T) {
	kwMax := apiVersionsInfo().Request.MaxVersion
	produce, _ := codec.LookupAPI(0)
	cases := []struct {
		name      string
		cfg       Config
		broker    fakeBroker
		wantSent  []int16
		wantErr   error
		versionOf map[int16]int16 // api key -> expected VersionFor; -1: ErrNoCommonVersion
	}{
		{
			name:     "broker knows kwire's version",
			broker:   fakeBroker{table: map[int16]VersionRange{18: {0, kwMax}, 0: {3, produce.Request.MaxVersion + 5}, 3: {0, 7}}},
			wantSent: []int16{kwMax},
			versionOf: map[int16]int16{
				0:  produce.Request.MaxVersion, // kwire's max when the broker knows more
				3:  7,                          // the broker's max when it knows less
				18: kwMax,
				1:  -1, // not listed
			},
		},
		{
			name:      "older broker: UNSUPPORTED_VERSION, retry at its highest",
			broker:    fakeBroker{table: map[int16]VersionRange{18: {0, 2}, 0: {3, 8}}},
			wantSent:  []int16{kwMax, 2},
			versionOf: map[int16]int16{0: 8, 18: 2},
		},
		{
			name:     "newer client version forced: retry at kwire's highest",
			cfg:      Config{BootstrapVersion: kwMax + 3},
			broker:   fakeBroker{table: map[int16]VersionRange{18: {0, kwMax + 1}, 0: {produce.Request.MaxVersion + 1, produce.Request.MaxVersion + 4}}},
			wantSent: []int16{kwMax + 3, kwMax},
			versionOf: map[int16]int16{
				0:  -1, // no overlap: the broker only knows newer Produce versions
				18: kwMax,
			},
		},
		{
			name:     "zero BootstrapVersion means kwire's highest",
			cfg:      Config{BootstrapVersion: 0},
			broker:   fakeBroker{table: map[int16]VersionRange{18: {0, 1}}},
			wantSent: []int16{kwMax, 1},
		},
		{
			name:     "UNSUPPORTED_VERSION with an empty table: retry at v0",
			broker:   fakeBroker{table: map[int16]VersionRange{18: {0, 0}}, emptyUnsupported: true},
			wantSent: []int16{kwMax, 0},
		},
		{
			name:     "no ApiVersions version in common",
			cfg:      Config{BootstrapVersion: kwMax + 3},
			broker:   fakeBroker{table: map[int16]VersionRange{18: {kwMax + 1, kwMax + 2}}},
			wantSent: []int16{kwMax + 3},
			wantErr:  ErrNegotiation,
		},
		{
			name:     "another error code",
			broker:   fakeBroker{table: map[int16]VersionRange{18: {0, kwMax}}, errorCode: int16(kerr.InvalidRequest)},
			wantSent: []int16{kwMax},
			wantErr:  ErrNegotiation,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(c.cfg)
			if _, err := s.VersionFor(0); !errors.Is(err, ErrNotNegotiated) {
				t.Fatalf("VersionFor before negotiation: %v", err)
			}
			sent, err := negotiate(t, s, &c.broker)
			if !equal16(sent, c.wantSent) {
				t.Errorf("ApiVersions sent at %v, want %v", sent, c.wantSent)
			}
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) || s.Negotiated() {
					t.Fatalf("negotiation: %v (negotiated %v), want %v", err, s.Negotiated(), c.wantErr)
				}
				return
			}
			if err != nil || !s.Negotiated() {
				t.Fatalf("negotiation: %v", err)
			}
			for key, want := range c.versionOf {
				v, err := s.VersionFor(key)
				if want < 0 {
					if !errors.Is(err, ErrNoCommonVersion) {
						t.Errorf("api %d: v%d %v, want ErrNoCommonVersion", key, v, err)
					}
					continue
				}
				if err != nil || v != want {
					t.Errorf("api %d: v%d %v, want v%d", key, v, err, want)
				}
			}
			if got := s.NegotiationVersions(); !equal16(got, c.wantSent) {
				t.Errorf("NegotiationVersions() = %v, want %v", got, c.wantSent)
			}
			if s.Pending() != 0 {
				t.Errorf("%d requests still pending", s.Pending())
			}
		})
	}
}

// TestNoOverlapMessage: the error for an api with no common version names both ranges.
func TestNoOverlapMessage(t *testing.T) {
	s := New(Config{})
	s.SetBrokerVersions(map[int16]VersionRange{0: {100, 200}})
	_, err := s.VersionFor(0)
	if !errors.Is(err, ErrNoCommonVersion) || !strings.Contains(err.Error(), "Produce") || !strings.Contains(err.Error(), "v100-200") {
		t.Fatalf("error %q", err)
	}
	if _, _, err := s.BeginRequest(0, -1, nil); !errors.Is(err, ErrNoCommonVersion) {
		t.Fatalf("BeginRequest at the negotiated version: %v", err)
	}
}

func TestNegotiationTwice(t *testing.T) {
	s := New(Config{})
	if _, err := s.BeginNegotiation(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginNegotiation(); !errors.Is(err, ErrNegotiation) {
		t.Fatalf("second BeginNegotiation during the first: %v", err)
	}
}

func equal16(a, b []int16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
