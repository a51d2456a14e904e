package session

import (
	"encoding/binary"
	"errors"
	"strconv"
	"testing"

	"github.com/kwire/kwire/codec"
)

// TestErrorTexts pins the text of every error the package builds (the bindings compare
// them) and checks that each still unwraps to its sentinels.
func TestErrorTexts(t *testing.T) {
	// Texts that name kwire's newest versions follow the spec.
	produce, _ := codec.LookupAPI(0)
	produceMax := strconv.Itoa(int(produce.Request.MaxVersion))
	apiVersionsMax := strconv.Itoa(int(apiVersionsInfo().Request.MaxVersion))
	negotiationAnswer := func(t *testing.T, b *fakeBroker) error {
		_, err := negotiate(t, New(Config{}), b)
		return err
	}
	cases := []struct {
		name string
		run  func(t *testing.T) error
		is   []error
		want string
	}{
		{"negotiation twice", func(t *testing.T) error {
			s := New(Config{})
			s.BeginNegotiation()
			_, err := s.BeginNegotiation()
			return err
		}, []error{ErrNegotiation},
			"kwire session: negotiation already under way: version negotiation failed"},
		{"version for an unknown api", func(t *testing.T) error {
			_, err := New(Config{}).VersionFor(9999)
			return err
		}, []error{ErrUnknownAPI},
			"kwire session: api key 9999: unknown api key"},
		{"version before negotiation", func(t *testing.T) error {
			_, err := New(Config{}).VersionFor(0)
			return err
		}, []error{ErrNotNegotiated},
			"kwire session: Produce: api versions not negotiated yet"},
		{"api the broker does not list", func(t *testing.T) error {
			s := New(Config{})
			s.SetBrokerVersions(map[int16]VersionRange{18: {0, 3}})
			_, err := s.VersionFor(0)
			return err
		}, []error{ErrNoCommonVersion},
			"kwire session: Produce (api key 0): the broker does not list it: no version in common with the broker"},
		{"no common version", func(t *testing.T) error {
			s := New(Config{})
			s.SetBrokerVersions(map[int16]VersionRange{0: {100, 200}})
			_, err := s.VersionFor(0)
			return err
		}, []error{ErrNoCommonVersion},
			"kwire session: Produce (api key 0): kwire knows v0-" + produceMax + ", the broker v100-200: no version in common with the broker"},
		{"request for an unknown api", func(t *testing.T) error {
			_, _, err := New(Config{}).BeginRequest(9999, 0, nil)
			return err
		}, []error{ErrUnknownAPI},
			"kwire session: request api key 9999: unknown api key"},
		{"request over the frame limit", func(t *testing.T) error {
			_, _, err := New(Config{MaxFrameSize: 64}).BeginRequest(3, 12, make([]byte, 100))
			return err
		}, []error{ErrFrameTooLarge},
			"kwire session: request api key 3 v12: frame of 116 bytes, limit 64: frame too large"},
		{"ApiVersions with a client software name Kafka refuses", func(t *testing.T) error {
			req := codec.NewAPIVersionsRequest()
			req.ClientSoftwareName = "my client"
			body, _ := req.Encode(nil, 3)
			_, _, err := New(Config{}).BeginRequest(18, 3, body)
			return err
		}, []error{ErrInvalidField},
			`kwire session: ApiVersions v3 request: clientSoftwareName "my client" does not match [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])? (letters, digits, '-' and '.', beginning and ending with a letter or digit), which the broker checks: it would answer INVALID_REQUEST: invalid field value`},
		{"ApiVersions with a configured client software version Kafka refuses", func(t *testing.T) error {
			_, err := New(Config{ClientSoftwareVersion: "1.0-"}).BeginNegotiation()
			return err
		}, []error{ErrInvalidField},
			`kwire session: ApiVersions v` + apiVersionsMax + ` request: clientSoftwareVersion "1.0-" does not match [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])? (letters, digits, '-' and '.', beginning and ending with a letter or digit), which the broker checks: it would answer INVALID_REQUEST: invalid field value`},
		{"response over the frame limit", func(t *testing.T) error {
			return New(Config{MaxFrameSize: 64}).Feed([]byte{0, 0, 1, 0})
		}, []error{ErrFrameTooLarge},
			"kwire session: response frame size 256, limit 64: frame too large"},
		{"frame without a correlation id", func(t *testing.T) error {
			s := New(Config{})
			s.Feed([]byte{0, 0, 0, 2, 0, 0})
			_, _, err := s.Next()
			return err
		}, []error{ErrMalformedHeader},
			"kwire session: response frame of 2 bytes has no correlation id: malformed response header"},
		{"unknown correlation id", func(t *testing.T) error {
			s := New(Config{})
			s.BeginRequest(18, 0, nil)
			s.Feed(responseFrame(t, 42, 18, 0, codec.NewAPIVersionsResponse(), nil))
			_, _, err := s.Next()
			return err
		}, []error{ErrUnknownCorrelation},
			"kwire session: correlation id 42 (1 requests pending): response for an unknown correlation id"},
		{"failed session", func(t *testing.T) error {
			s := New(Config{})
			s.BeginRequest(18, 0, nil)
			s.Feed(responseFrame(t, 42, 18, 0, codec.NewAPIVersionsResponse(), nil))
			s.Next()
			_, _, err := s.Next()
			return err
		}, []error{ErrFailed, ErrUnknownCorrelation},
			"kwire session: session failed: kwire session: correlation id 42 (1 requests pending): response for an unknown correlation id"},
		{"malformed header tags", func(t *testing.T) error {
			s := New(Config{})
			_, c, _ := s.BeginRequest(3, 12, nil)
			bad := binary.BigEndian.AppendUint32(nil, 5)
			bad = binary.BigEndian.AppendUint32(bad, uint32(c))
			s.Feed(append(bad, 9))
			r, _, _ := s.Next()
			return r.Err
		}, []error{ErrMalformedHeader},
			"kwire session: Metadata v12 response (correlation id 0): header v1 tagged fields at offset 8: malformed response header (malformed tagged fields: tagged field count 9 exceeds what the remaining bytes can hold)"},
		{"negotiation: nothing left to try", func(t *testing.T) error {
			return negotiationAnswer(t, &fakeBroker{table: map[int16]VersionRange{18: {1, 1}}, emptyUnsupported: true})
		}, []error{ErrNegotiation},
			"kwire session: negotiation: the broker refused ApiVersions v0 (UNSUPPORTED_VERSION) and lists no other version to try (tried [" + apiVersionsMax + " 0], broker table []): version negotiation failed"},
		{"negotiation: no version in common", func(t *testing.T) error {
			return negotiationAnswer(t, &fakeBroker{table: map[int16]VersionRange{18: {50, 60}}})
		}, []error{ErrNegotiation},
			"kwire session: negotiation: the broker refused ApiVersions v" + apiVersionsMax + " (UNSUPPORTED_VERSION) and lists no other version to try (tried [" + apiVersionsMax + "], broker table [18:50-60]): version negotiation failed"},
		{"negotiation: error code", func(t *testing.T) error {
			return negotiationAnswer(t, &fakeBroker{table: map[int16]VersionRange{18: {0, 4}}, errorCode: 31})
		}, []error{ErrNegotiation},
			"kwire session: negotiation: ApiVersions v4 answered kafka error CLUSTER_AUTHORIZATION_FAILED (31): not authorized for the cluster-level operation: version negotiation failed"},
		{"negotiation: undecodable answer", func(t *testing.T) error {
			s := New(Config{})
			f, _ := s.BeginNegotiation()
			p, _ := codec.PeekRequestHeader(f)
			bad := binary.BigEndian.AppendUint32(nil, 6)
			bad = binary.BigEndian.AppendUint32(bad, uint32(p.CorrelationID))
			s.Feed(append(bad, 0, 0))
			r, _, _ := s.Next()
			return r.Err
		}, []error{ErrNegotiation, codec.ErrTruncated},
			"kwire session: negotiation: ApiVersions v" + apiVersionsMax + " response: version negotiation failed: kwire: decode ApiVersionsResponse v" + apiVersionsMax + " field apiKeys at offset 2: input truncated (need 1 bytes, have 0)"},
		{"decode an unknown api", func(t *testing.T) error {
			_, err := DecodeBody(Response{APIKey: 9999, CorrelationID: 7})
			return err
		}, []error{ErrUnknownAPI},
			"kwire session: api key 9999: unknown api key"},
		{"decode a truncated body", func(t *testing.T) error {
			_, err := DecodeBody(Response{APIKey: 3, Version: 12, BodyVersion: 12, CorrelationID: 7, Body: []byte{0, 0, 0}})
			return err
		}, []error{codec.ErrTruncated},
			"kwire session: correlation id 7: kwire: decode MetadataResponse v12 field throttleTimeMs at offset 0: input truncated (need 4 bytes, have 3)"},
		{"decode into another api", func(t *testing.T) error {
			return DecodeInto(Response{APIKey: 3, CorrelationID: 7}, codec.NewAPIVersionsResponse())
		}, []error{codec.ErrMismatch},
			"kwire session: correlation id 7 answers api key 3, not ApiVersionsResponse: header and body disagree"},
		{"decode into a truncated body", func(t *testing.T) error {
			return DecodeInto(Response{APIKey: 3, Version: 12, BodyVersion: 12, CorrelationID: 7, Body: []byte{0, 0, 0}}, codec.NewMetadataResponse())
		}, []error{codec.ErrTruncated},
			"kwire session: correlation id 7: kwire: decode MetadataResponse v12 field throttleTimeMs at offset 0: input truncated (need 4 bytes, have 3)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run(t)
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != c.want {
				t.Errorf("text\n got %q\nwant %q", err.Error(), c.want)
			}
			for _, target := range c.is {
				if !errors.Is(err, target) {
					t.Errorf("%q does not unwrap to %v", err, target)
				}
			}
		})
	}
}
