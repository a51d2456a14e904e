package transcode_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/codectest"
	"github.com/kwire/kwire/internal/transcode"
)

// typedRequestEnvelope is the reference frame JSON: the typed codec's frame decode and
// AppendJSON of header and body in the envelope.
func typedRequestEnvelope(frame []byte) ([]byte, error) {
	f, err := codec.DecodeRequestFrame(frame)
	if err != nil {
		return nil, err
	}
	return envelope(f.Header.RequestAPIKey, f.Header.RequestAPIVersion, f.HeaderVersion, &f.Header, f.Body)
}

func typedResponseEnvelope(frame []byte, key, v int16) ([]byte, error) {
	f, err := codec.DecodeResponseFrame(frame, key, v)
	if err != nil {
		return nil, err
	}
	return envelope(key, v, f.HeaderVersion, &f.Header, f.Body)
}

func envelope(key, v, hv int16, h, body codec.Message) ([]byte, error) {
	b := []byte(`{"apiKey":` + strconv.Itoa(int(key)) + `,"apiVersion":` + strconv.Itoa(int(v)) + `,"headerVersion":` + strconv.Itoa(int(hv)) + `,"header":`)
	b, err := h.AppendJSON(b, hv)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"body":`...)
	if b, err = body.AppendJSON(b, v); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

func randomRequestFrame(r *rand.Rand, api codec.APIInfo, v int16) []byte {
	body := codec.NewRequest(api.Key)
	codectest.Fill(body, r, v)
	h := codec.NewRequestHeaderFor(body, v, r.Int31(), "kwire-test")
	frame, err := codec.EncodeRequestFrame(nil, h, body)
	if err != nil {
		panic(err)
	}
	return frame
}

func TestFramesBothEngines(t *testing.T) {
	var f transcode.Framer
	r := rand.New(rand.NewSource(3))
	n := 0
	for _, api := range codec.APIs() {
		for v := api.Request.MinVersion; v <= api.Request.MaxVersion; v++ {
			for seed := 0; seed < 3; seed++ {
				n++
				what := fmt.Sprintf("%s v%d seed %d", api.Name, v, seed)
				frame := randomRequestFrame(r, api, v)
				want, werr := typedRequestEnvelope(frame)
				got, gerr := f.AppendRequestFrameJSON(nil, frame)
				if !sameError(t, what, gerr, werr) || !bytes.Equal(got, want) {
					t.Fatalf("%s: request frame JSON differs\n%s\n%s", what, got, want)
				}
				back, err := f.AppendRequestFrame(nil, got)
				if err != nil || !bytes.Equal(back, frame) {
					t.Fatalf("%s: request frame round trip: %v\n got %x\nwant %x", what, err, back, frame)
				}
				// Truncated and corrupted frames fail alike in both engines.
				for i := 0; i < 4; i++ {
					mut := append([]byte(nil), frame...)
					if i%2 == 0 {
						mut = mut[:r.Intn(len(mut))]
						if len(mut) >= 4 {
							binary.BigEndian.PutUint32(mut, uint32(len(mut)-4))
						}
					} else if len(mut) > 4 {
						mut[4+r.Intn(len(mut)-4)] ^= byte(1 + r.Intn(255))
					}
					want, werr := typedRequestEnvelope(mut)
					got, gerr := f.AppendRequestFrameJSON(nil, mut)
					if !sameError(t, what+" mutated", gerr, werr) || !bytes.Equal(got, want) {
						t.Fatalf("%s: mutated frame %x\n%s\n%s", what, mut, got, want)
					}
				}

				resp := codec.NewResponse(api.Key)
				codectest.Fill(resp, r, v)
				rh := codec.NewResponseHeader()
				rh.CorrelationID = r.Int31()
				rframe, err := codec.EncodeResponseFrame(nil, rh, v, resp)
				if err != nil {
					t.Fatal(err)
				}
				want, werr = typedResponseEnvelope(rframe, api.Key, v)
				got, gerr = f.AppendResponseFrameJSON(nil, rframe, api.Key, v)
				if !sameError(t, what+" response", gerr, werr) || !bytes.Equal(got, want) {
					t.Fatalf("%s: response frame JSON differs\n%s\n%s", what, got, want)
				}
				back, err = f.AppendResponseFrame(nil, got, api.Key, v)
				if err != nil || !bytes.Equal(back, rframe) {
					t.Fatalf("%s: response frame round trip: %v", what, err)
				}
				// The response frame read at the wrong version fails alike.
				if w := v + 1; w <= api.Response.MaxVersion {
					want, werr = typedResponseEnvelope(rframe, api.Key, w)
					got, gerr = f.AppendResponseFrameJSON(nil, rframe, api.Key, w)
					if !sameError(t, what+" response at v+1", gerr, werr) || !bytes.Equal(got, want) {
						t.Fatalf("%s: response frame at the wrong version differs\n%s\n%s", what, got, want)
					}
				}
			}
		}
	}
	t.Logf("%d request and response frames", n)
}

// A request followed by bytes Kafka's broker ignores: librdkafka sends an all-topics
// MetadataRequest v13 with 3 bytes after the body. Both engines accept it, show the
// bytes and re-encode the frame byte for byte.
func TestRequestTrailingBytes(t *testing.T) {
	body := codec.NewMetadataRequest()
	body.Topics = nil // all topics
	h := codec.NewRequestHeaderFor(body, 13, 7, "rdkafka")
	frame, err := codec.EncodeRequestFrame(nil, h, body)
	if err != nil {
		t.Fatal(err)
	}
	frame = append(frame, 0x00, 0x01, 0x02)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))

	typed, err := codec.DecodeRequestFrame(frame)
	if err != nil {
		t.Fatalf("typed codec refuses the frame: %v", err)
	}
	md := typed.Body.(*codec.MetadataRequest)
	if !bytes.Equal(md.TrailingBytes, []byte{0, 1, 2}) {
		t.Fatalf("typed codec trailing bytes %x", md.TrailingBytes)
	}
	again, err := codec.EncodeRequestFrame(nil, &typed.Header, typed.Body)
	if err != nil || !bytes.Equal(again, frame) {
		t.Fatalf("typed re-encode: %v\n got %x\nwant %x", err, again, frame)
	}

	var f transcode.Framer
	js, err := f.AppendRequestFrameJSON(nil, frame)
	if err != nil {
		t.Fatalf("transcoder refuses the frame: %v", err)
	}
	if !bytes.Contains(js, []byte(`"_trailingBytes":"AAEC"`)) {
		t.Fatalf("trailing bytes not shown: %s", js)
	}
	back, err := f.AppendRequestFrame(nil, js)
	if err != nil || !bytes.Equal(back, frame) {
		t.Fatalf("transcoder re-encode: %v\n got %x\nwant %x", err, back, frame)
	}
	// The body alone, through the message calls of both engines.
	bodyBytes := frame[4+len(mustHeader(t, h)):]
	checkDecode(t, "metadata body with trailing bytes", "MetadataRequest", 13, bodyBytes)

	// Responses are not lenient: Kafka's clients refuse extra bytes after a response.
	resp := codec.NewMetadataResponse()
	rh := codec.NewResponseHeader()
	rframe, _ := codec.EncodeResponseFrame(nil, rh, 13, resp)
	rframe = append(rframe, 9)
	binary.BigEndian.PutUint32(rframe, uint32(len(rframe)-4))
	_, werr := codec.DecodeResponseFrame(rframe, 3, 13)
	_, gerr := f.AppendResponseFrameJSON(nil, rframe, 3, 13)
	if !errors.Is(werr, codec.ErrTrailing) || !sameError(t, "response with trailing bytes", gerr, werr) {
		t.Fatalf("response with trailing bytes: %v / %v", werr, gerr)
	}
}

func mustHeader(t *testing.T, h *codec.RequestHeader) []byte {
	b, err := h.Encode(nil, codec.RequestHeaderVersion(h.RequestAPIKey, h.RequestAPIVersion))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestConsumerProtocolTrailingBytes: Kafka reads subscriptions and assignments
// leniently so that newer versions may append fields.
func TestConsumerProtocolTrailingBytes(t *testing.T) {
	for _, name := range []string{"ConsumerProtocolSubscription", "ConsumerProtocolAssignment"} {
		m := codec.NewMessage(name)
		b, err := m.Encode(nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, 1, 2, 3, 4)
		checkDecode(t, name, name, 1, b)
		js, err := transcode.AppendJSON(nil, name, 1, b, nil)
		if err != nil || !bytes.Contains(js, []byte(`"_trailingBytes":"AQIDBA=="`)) {
			t.Fatalf("%s: %v %s", name, err, js)
		}
		back, err := transcode.AppendWire(nil, name, 1, js)
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("%s: re-encode %v", name, err)
		}
	}
	// Other data types stay strict.
	checkDecode(t, "LeaderChangeMessage", "LeaderChangeMessage", 0, append(mustEncode(t, "LeaderChangeMessage", 0), 1))
}

func mustEncode(t *testing.T, name string, v int16) []byte {
	b, err := codec.NewMessage(name).Encode(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
