package session

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/internal/errtext"
)

// The session reads and writes ApiVersions with the transcoder (apiversions.go). The
// tests below hold it to what it did with the typed codec: the typed* functions are the
// former code, and every result (bytes, errors, correlation ids) must be the same.

// typedFill is fillApiVersions as it was with codec.APIVersionsRequest.
func typedFill(s *Session, dst []byte, body int, version int16) ([]byte, error) {
	bv := min(version, apiVersionsInfo().Request.MaxVersion)
	req := codec.NewAPIVersionsRequest()
	if err := req.Decode(dst[body:], bv); err != nil {
		return dst, nil
	}
	changed := false
	if req.ClientSoftwareName == "" {
		req.ClientSoftwareName = s.softwareName()
		changed = true
	}
	if req.ClientSoftwareVersion == "" {
		req.ClientSoftwareVersion = s.softwareVersion()
		changed = true
	}
	if err := checkSoftware(version, "clientSoftwareName", req.ClientSoftwareName); err != nil {
		return dst, err
	}
	if err := checkSoftware(version, "clientSoftwareVersion", req.ClientSoftwareVersion); err != nil {
		return dst, err
	}
	if !changed {
		return dst, nil
	}
	enc, err := req.Encode(nil, bv)
	if err != nil {
		return dst, errtext.Wrap("kwire session: ApiVersions v"+itoa(version)+" request: "+err.Error(), err)
	}
	return append(dst[:body], enc...), nil
}

// typedFrame is apiVersionsFrame as it was (with typedFill in FinishFrame).
func typedFrame(s *Session, v int16) ([]byte, error) {
	req := codec.NewAPIVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = s.softwareName(), s.softwareVersion()
	bv := min(v, apiVersionsInfo().Request.MaxVersion)
	body, err := req.Encode(nil, bv)
	if err != nil {
		return nil, errtext.Wrap("kwire session: ApiVersions v"+itoa(bv)+" request: "+err.Error(), err)
	}
	dst, v, _, err := s.StartFrame(nil, apiKeyApiVersions, v)
	if err != nil {
		return nil, err
	}
	dst = append(dst, body...)
	if v >= apiVersionsMinSoftware {
		if dst, err = typedFill(s, dst, s.requestBodyOffset(0, codec.RequestHeaderVersion(apiKeyApiVersions, v)), v); err != nil {
			return nil, err
		}
	}
	binary.BigEndian.PutUint32(dst, uint32(len(dst)-4))
	return dst, nil
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// softwareConfigs are client software settings, valid and not.
var softwareConfigs = []Config{
	{},
	{ClientSoftwareName: "my-app", ClientSoftwareVersion: "2.1"},
	{ClientSoftwareName: "my client"},
	{ClientSoftwareVersion: "1.0-"},
	{ClientSoftwareName: "caf\xe9"},
	{ClientSoftwareVersion: "\xff\xfe"},
	{ClientSoftwareName: "naïve"},
	{ClientSoftwareName: strings.Repeat("a", 40000)},
	{ClientSoftwareVersion: strings.Repeat("1", 32768)},
	{ClientSoftwareName: strings.Repeat("a", 32767), ClientSoftwareVersion: strings.Repeat("1", 32767)},
	{ClientSoftwareName: strings.Repeat("a b", 20000)},
	{ClientSoftwareName: "x", ClientSoftwareVersion: "y", ClientID: ptr("client-1")},
}

// TestApiVersionsFrameAsTyped: negotiation frames at every version (and above kwire's
// highest) are the typed codec's, byte for byte, and so are the failures and the
// correlation ids they use.
func TestApiVersionsFrameAsTyped(t *testing.T) {
	maxV := apiVersionsInfo().Request.MaxVersion
	for i, cfg := range softwareConfigs {
		for v := int16(0); v <= maxV+2; v++ {
			s, ref := New(cfg), New(cfg)
			s.negotiating = true
			got, err := s.apiVersionsFrame(v)
			want, wantErr := typedFrame(ref, v)
			if !bytes.Equal(got, want) || errString(err) != errString(wantErr) {
				t.Errorf("config %d v%d: %x, %v\nwant %x, %v", i, v, got, errString(err), want, errString(wantErr))
			}
			if s.nextCorr != ref.nextCorr {
				t.Errorf("config %d v%d: next correlation id %d, want %d", i, v, s.nextCorr, ref.nextCorr)
			}
		}
	}
}

// TestApiVersionsFillAsTyped: FinishFrame's filling of ApiVersions v3+ requests gives
// the typed codec's bytes and errors, for bodies with and without the fields, with the
// later fields, unknown tagged fields and trailing bytes, and for bodies that do not
// decode (left as they are).
func TestApiVersionsFillAsTyped(t *testing.T) {
	maxV := apiVersionsInfo().Request.MaxVersion
	values := []string{"", "mine", "1.2.3", "my client", "\xff", "é"}
	var bodies [][]byte
	for v := int16(3); v <= maxV; v++ {
		for _, name := range values {
			for _, ver := range values {
				for _, extra := range []func(*codec.APIVersionsRequest){
					func(*codec.APIVersionsRequest) {},
					func(r *codec.APIVersionsRequest) { r.ClusterID, r.NodeID = ptr("cluster-\xff"), 7 },
					func(r *codec.APIVersionsRequest) {
						r.UnknownTaggedFields = []codec.TaggedField{{Tag: 9, Data: []byte("kept")}}
						r.TrailingBytes = []byte{1, 2, 3}
					},
				} {
					req := codec.NewAPIVersionsRequest()
					req.ClientSoftwareName, req.ClientSoftwareVersion = name, ver
					extra(req)
					b, err := req.Encode(nil, v)
					if err != nil {
						t.Fatal(err)
					}
					bodies = append(bodies, b)
				}
			}
		}
	}
	// Bodies that do not decode at some versions: truncations and noise.
	rng := rand.New(rand.NewSource(1))
	for _, b := range bodies[:40] {
		for n := 0; n < len(b); n++ {
			bodies = append(bodies, b[:n])
		}
		c := append([]byte(nil), b...)
		c[rng.Intn(len(c))] ^= byte(1 + rng.Intn(255))
		bodies = append(bodies, c)
	}
	for i, cfg := range softwareConfigs {
		for _, body := range bodies {
			for v := int16(3); v <= maxV+1; v++ {
				s := New(cfg)
				dst := append([]byte("head:"), body...)
				got, err := s.fillApiVersions(append([]byte(nil), dst...), 5, v)
				want, wantErr := typedFill(s, append([]byte(nil), dst...), 5, v)
				if !bytes.Equal(got, want) || errString(err) != errString(wantErr) {
					t.Fatalf("config %d v%d body %x:\n%x, %v\nwant %x, %v", i, v, body, got, errString(err), want, errString(wantErr))
				}
			}
		}
	}
}

// typedRead is the former reading of an ApiVersions response.
func typedRead(body []byte, v int16) (int16, string, error) {
	resp := codec.NewAPIVersionsResponse()
	if err := resp.Decode(body, v); err != nil {
		return 0, "", err
	}
	s := "["
	for i, k := range resp.APIKeys {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%d:%d-%d", k.APIKey, k.MinVersion, k.MaxVersion)
	}
	return resp.ErrorCode, s + "]", nil
}

// TestApiVersionsResponseAsTyped: the error code and table read from responses at every
// version, and the failures for bodies that do not decode, are the typed codec's.
func TestApiVersionsResponseAsTyped(t *testing.T) {
	maxV := apiVersionsInfo().Response.MaxVersion
	rng := rand.New(rand.NewSource(2))
	var samples []*codec.APIVersionsResponse
	for _, n := range []int{0, 1, 3, 90} {
		r := codec.NewAPIVersionsResponse()
		r.ErrorCode = int16(rng.Intn(3)*35 - 1)
		for i := 0; i < n; i++ {
			r.APIKeys = append(r.APIKeys, codec.APIVersionsResponseAPIVersion{APIKey: int16(i*7 - 3), MinVersion: int16(rng.Intn(5) - 1), MaxVersion: int16(rng.Intn(70000) - 35000)})
		}
		if n > 1 {
			r.APIKeys[0].UnknownTaggedFields = []codec.TaggedField{{Tag: 4, Data: []byte("x")}}
			r.ThrottleTimeMs = 12
			r.SupportedFeatures = []codec.APIVersionsResponseSupportedFeatureKey{{Name: "metadata.version", MinVersion: 1, MaxVersion: 20}}
			r.FinalizedFeaturesEpoch = 5
			r.FinalizedFeatures = []codec.APIVersionsResponseFinalizedFeatureKey{{Name: "kraft.version", MaxVersionLevel: 1, MinVersionLevel: 1}}
			r.ZkMigrationReady = true
			r.UnknownTaggedFields = []codec.TaggedField{{Tag: 17, Data: []byte("later")}}
		}
		samples = append(samples, r)
	}
	check := func(body []byte, v int16) {
		t.Helper()
		code, keys, err := readApiVersionsResponse(body, v)
		wantCode, wantTable, wantErr := typedRead(body, v)
		table := ""
		if err == nil {
			table = tableString(keys)
		}
		if code != wantCode || table != wantTable || errString(err) != errString(wantErr) {
			t.Fatalf("v%d %x: %d %s %v\nwant %d %s %v", v, body, code, table, errString(err), wantCode, wantTable, errString(wantErr))
		}
	}
	for v := int16(-1); v <= maxV+1; v++ {
		for _, r := range samples {
			ev := max(0, min(v, maxV))
			if ev < 3 && len(r.APIKeys) > 1 {
				c := *r
				c.APIKeys = append([]codec.APIVersionsResponseAPIVersion(nil), r.APIKeys...)
				c.APIKeys[0].UnknownTaggedFields, c.UnknownTaggedFields = nil, nil
				r = &c
			}
			b, err := r.Encode(nil, ev)
			if err != nil {
				t.Fatal(err)
			}
			check(b, v)
			for n := 0; n < len(b) && n < 200; n++ {
				check(b[:n], v)
			}
			check(append(b, 0), v)
			for i := 0; i < 200; i++ {
				c := append([]byte(nil), b...)
				c[rng.Intn(len(c))] ^= byte(1 + rng.Intn(255))
				check(c, v)
			}
		}
	}
}

// TestApiVersionsFillKeepsRest: filling rewrites only the two client software fields;
// what follows them is kept as the caller wrote it, even an encoding the typed codec
// would have written differently (a tag count of 0 in two bytes).
func TestApiVersionsFillKeepsRest(t *testing.T) {
	s := New(Config{ClientSoftwareName: "a", ClientSoftwareVersion: "b"})
	got, err := s.fillApiVersions([]byte{1, 1, 0x80, 0x00}, 0, 3)
	if want := []byte{2, 'a', 2, 'b', 0x80, 0x00}; err != nil || !bytes.Equal(got, want) {
		t.Errorf("%x, %v; want %x", got, err, want)
	}
}
