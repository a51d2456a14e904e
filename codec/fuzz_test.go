package codec_test

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/codectest"
)

// seedFrames yields request and response frames of random messages, two versions per api.
func seedFrames(t testing.TB, each func(key, version int16, req, resp []byte)) {
	r := rand.New(rand.NewSource(1))
	for _, api := range codec.APIs() {
		for _, v := range []int16{api.Request.MinVersion, api.Request.MaxVersion} {
			req := codec.NewRequest(api.Key)
			codectest.Fill(req, r, v)
			reqFrame, err := codec.EncodeRequestFrame(nil, codec.NewRequestHeaderFor(req, v, r.Int31(), "fuzz"), req)
			if err != nil {
				t.Fatal(err)
			}
			resp := codec.NewResponse(api.Key)
			codectest.Fill(resp, r, v)
			h := codec.NewResponseHeader()
			h.CorrelationID = r.Int31()
			respFrame, err := codec.EncodeResponseFrame(nil, h, v, resp)
			if err != nil {
				t.Fatal(err)
			}
			each(api.Key, v, reqFrame, respFrame)
		}
	}
}

// FuzzDecodeRequestFrame: no input may panic; whatever decodes must re-encode, and the
// re-encoding must be a fixed point (decode(encode(m)) encodes to the same bytes).
func FuzzDecodeRequestFrame(f *testing.F) {
	seedFrames(f, func(_, _ int16, req, _ []byte) { f.Add(req) })
	f.Fuzz(func(t *testing.T, frame []byte) {
		got, err := codec.DecodeRequestFrame(frame)
		if err != nil {
			return
		}
		again, err := codec.EncodeRequestFrame(nil, &got.Header, got.Body)
		if err != nil {
			t.Fatalf("decoded but cannot re-encode: %v", err)
		}
		got2, err := codec.DecodeRequestFrame(again)
		if err != nil {
			t.Fatalf("re-encoding does not decode: %v", err)
		}
		third, err := codec.EncodeRequestFrame(nil, &got2.Header, got2.Body)
		if err != nil || !bytes.Equal(third, again) {
			t.Fatalf("re-encoding is not stable (%v)", err)
		}
		if _, err := codec.PeekRequestHeader(frame); err != nil {
			t.Fatalf("decodes but does not peek: %v", err)
		}
	})
}

// FuzzDecodeResponseFrame: as above for responses of any api key and version.
func FuzzDecodeResponseFrame(f *testing.F) {
	seedFrames(f, func(key, v int16, _, resp []byte) { f.Add(key, v, resp) })
	f.Fuzz(func(t *testing.T, key, v int16, frame []byte) {
		got, err := codec.DecodeResponseFrame(frame, key, v)
		if err != nil {
			return
		}
		again, err := codec.EncodeResponseFrame(nil, &got.Header, v, got.Body)
		if err != nil {
			t.Fatalf("decoded but cannot re-encode: %v", err)
		}
		got2, err := codec.DecodeResponseFrame(again, key, v)
		if err != nil {
			t.Fatalf("re-encoding does not decode: %v", err)
		}
		third, err := codec.EncodeResponseFrame(nil, &got2.Header, v, got2.Body)
		if err != nil || !bytes.Equal(third, again) {
			t.Fatalf("re-encoding is not stable (%v)", err)
		}
	})
}

// TestSeedFramesRoundTripExactly: for frames kwire writes, decoding and re-encoding gives
// back the very same bytes (the lossless property on canonical input).
func TestSeedFramesRoundTripExactly(t *testing.T) {
	n := 0
	seedFrames(t, func(key, v int16, req, resp []byte) {
		got, err := codec.DecodeRequestFrame(req)
		if err != nil {
			t.Fatalf("api %d v%d request: %v", key, v, err)
		}
		again, err := codec.EncodeRequestFrame(nil, &got.Header, got.Body)
		if err != nil || !bytes.Equal(again, req) {
			t.Fatalf("api %d v%d request frame did not round trip (%v)", key, v, err)
		}
		gr, err := codec.DecodeResponseFrame(resp, key, v)
		if err != nil {
			t.Fatalf("api %d v%d response: %v", key, v, err)
		}
		again, err = codec.EncodeResponseFrame(nil, &gr.Header, v, gr.Body)
		if err != nil || !bytes.Equal(again, resp) {
			t.Fatalf("api %d v%d response frame did not round trip (%v)", key, v, err)
		}
		n++
	})
	t.Logf("%d request/response frame pairs", n)
}

// FuzzDecodeJSON: no JSON input may panic the strict reader; what it accepts must
// either encode or fail with an error, and its JSON output must read back to the same
// bytes.
func FuzzDecodeJSON(f *testing.F) {
	r := rand.New(rand.NewSource(2))
	names := []string{}
	for _, info := range codec.Messages() {
		names = append(names, info.Name)
	}
	for i, info := range codec.Messages() {
		m := codec.NewMessage(info.Name)
		codectest.Fill(m, r, info.MaxVersion)
		js, err := m.AppendJSON(nil, info.MaxVersion)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint16(i), info.MaxVersion, js)
	}
	f.Add(uint16(0), int16(0), []byte(`{"_unknownTaggedFields":[{"tag":127,"data-:""}]}`))
	f.Fuzz(func(t *testing.T, which uint16, v int16, js []byte) {
		m := codec.NewMessage(names[int(which)%len(names)])
		if err := m.DecodeJSON(js, v); err != nil {
			return
		}
		b, err := m.Encode(nil, v)
		if err != nil {
			return
		}
		out, err := m.AppendJSON(nil, v)
		if err != nil {
			t.Fatalf("encodes but has no JSON: %v", err)
		}
		m2 := codec.NewMessage(m.MessageName())
		if err := m2.DecodeJSON(out, v); err != nil {
			t.Fatalf("own JSON does not read back: %v\n%s", err, out)
		}
		b2, err := m2.Encode(nil, v)
		if err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("JSON round trip changed the bytes (%v)\n%s", err, out)
		}
	})
}
