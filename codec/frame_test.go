package codec_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
)

func TestHeaderVersions(t *testing.T) {
	tests := []struct {
		name          string
		key, version  int16
		request, resp int16
	}{
		{"Produce v8 is classic", 0, 8, 1, 0},
		{"Produce v9 is flexible", 0, 9, 2, 1},
		{"Fetch v12 is flexible", 1, 12, 2, 1},
		{"ControlledShutdown v0 uses request header v0", 7, 0, 0, 0},
		{"ControlledShutdown v1 uses request header v1", 7, 1, 1, 0},
		{"ControlledShutdown v3 is flexible", 7, 3, 2, 1},
		{"ApiVersions v2 is classic", 18, 2, 1, 0},
		{"ApiVersions v3 request is flexible, response header stays v0", 18, 3, 2, 0},
		{"ApiVersions v4 response header stays v0", 18, 4, 2, 0},
		{"unknown api key", 30000, 0, -1, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := codec.RequestHeaderVersion(tc.key, tc.version); got != tc.request {
				t.Errorf("RequestHeaderVersion(%d, %d) = %d, want %d", tc.key, tc.version, got, tc.request)
			}
			if got := codec.ResponseHeaderVersion(tc.key, tc.version); got != tc.resp {
				t.Errorf("ResponseHeaderVersion(%d, %d) = %d, want %d", tc.key, tc.version, got, tc.resp)
			}
		})
	}
}

// TestApiVersionsResponseHeaderOnWire checks the exact bytes: a v3 ApiVersions response
// frame carries a v0 header (correlation id, no tagged-field byte) before a flexible body.
func TestApiVersionsResponseHeaderOnWire(t *testing.T) {
	body := codec.NewAPIVersionsResponse()
	h := codec.NewResponseHeader()
	h.CorrelationID = 0x01020304
	frame, err := codec.EncodeResponseFrame(nil, h, 3, body)
	if err != nil {
		t.Fatal(err)
	}
	// size(4) correlation(4) then the body: error code int16 0, compact array len 1 (empty),
	// throttle int32 0, tag count 0.
	want := []byte{0, 0, 0, 12, 1, 2, 3, 4, 0, 0, 1, 0, 0, 0, 0, 0}
	if !bytes.Equal(frame, want) {
		t.Fatalf("frame %x, want %x", frame, want)
	}
	got, err := codec.DecodeResponseFrame(frame, 18, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got.HeaderVersion != 0 || got.Header.CorrelationID != 0x01020304 {
		t.Fatalf("header %+v (v%d)", got.Header, got.HeaderVersion)
	}
}

func TestControlledShutdownV0RequestHeader(t *testing.T) {
	body := codec.NewControlledShutdownRequest()
	body.BrokerID = 7
	h := codec.NewRequestHeaderFor(body, 0, 42, "ignored at header v0")
	frame, err := codec.EncodeRequestFrame(nil, h, body)
	if err != nil {
		t.Fatal(err)
	}
	// Header v0: api key, version, correlation id and nothing else; body: broker id.
	want := []byte{0, 0, 0, 12, 0, 7, 0, 0, 0, 0, 0, 42, 0, 0, 0, 7}
	if !bytes.Equal(frame, want) {
		t.Fatalf("frame %x, want %x", frame, want)
	}
	got, err := codec.DecodeRequestFrame(frame)
	if err != nil {
		t.Fatal(err)
	}
	if got.HeaderVersion != 0 || got.Body.(*codec.ControlledShutdownRequest).BrokerID != 7 {
		t.Fatalf("decoded %+v", got)
	}
}

func produceFrame(t *testing.T, version int16) []byte {
	t.Helper()
	body := codec.NewProduceRequest()
	body.Acks = -1
	body.TimeoutMs = 1500
	tp := codec.ProduceRequestTopicProduceData{Name: "orders"}
	tp.PartitionData = []codec.ProduceRequestPartitionProduceData{{Index: 3, Records: []byte{1, 2, 3, 4}}}
	body.TopicData = []codec.ProduceRequestTopicProduceData{tp}
	frame, err := codec.EncodeRequestFrame(nil, codec.NewRequestHeaderFor(body, version, 99, "client-a"), body)
	if err != nil {
		t.Fatal(err)
	}
	return frame
}

func TestRequestFrameRoundTripAndPeek(t *testing.T) {
	for _, v := range []int16{3, 8, 9, 12} {
		frame := produceFrame(t, v)
		p, err := codec.PeekRequestHeader(frame)
		if err != nil {
			t.Fatal(err)
		}
		if p.APIKey != 0 || p.APIVersion != v || p.CorrelationID != 99 || p.ClientID == nil || *p.ClientID != "client-a" {
			t.Fatalf("v%d peek %+v", v, p)
		}
		// Peek needs only the header: cut the body off.
		if _, err := codec.PeekRequestHeader(frame[:24]); err != nil {
			t.Fatalf("v%d peek of a partial frame: %v", v, err)
		}
		got, err := codec.DecodeRequestFrame(frame)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		again, err := codec.EncodeRequestFrame(nil, &got.Header, got.Body)
		if err != nil || !bytes.Equal(again, frame) {
			t.Fatalf("v%d: re-encode %x (%v), want %x", v, again, err, frame)
		}
	}
}

func TestFrameErrors(t *testing.T) {
	good := produceFrame(t, 9)
	withSize := func(b []byte, size int32) []byte {
		c := append([]byte(nil), b...)
		binary.BigEndian.PutUint32(c, uint32(size))
		return c
	}
	tests := []struct {
		name    string
		frame   []byte
		framer  codec.Framer
		cause   error
		message []string // substrings the error text must hold
	}{
		{"empty", nil, codec.Framer{}, codec.ErrTruncated, []string{"request frame", "offset 0"}},
		{"size larger than frame", good[:len(good)-3], codec.Framer{}, codec.ErrTruncated, []string{"size field says"}},
		{"bytes after frame", append(append([]byte(nil), good...), 0), codec.Framer{}, codec.ErrTrailing, []string{"frame holds"}},
		{"oversized against default limit", withSize(good, 200<<20), codec.Framer{}, codec.ErrTooLarge, []string{"limit 104857600"}},
		{"oversized against configured limit", good, codec.Framer{MaxFrameSize: 16}, codec.ErrTooLarge, []string{"limit 16"}},
		{"negative size", withSize(good, -5), codec.Framer{}, codec.ErrTooLarge, []string{"frame size -5"}},
		{"unknown api key", func() []byte { c := append([]byte(nil), good...); c[4], c[5] = 0x7f, 0x00; return c }(), codec.Framer{}, codec.ErrUnknownAPI, []string{"requestApiKey", "offset 4"}},
		{"unsupported version", func() []byte { c := append([]byte(nil), good...); c[6], c[7] = 0x00, 0x63; return c }(), codec.Framer{}, codec.ErrVersion, []string{"ProduceRequest v99", "offset 6"}},
		{"truncated body", withSize(good[:len(good)-6], int32(len(good)-10)), codec.Framer{}, codec.ErrTruncated, []string{"ProduceRequest v9", "topicData[0]"}},
		{"string length beyond input", func() []byte {
			c := append([]byte(nil), good...)
			// The client id length (int16) sits right after the correlation id.
			c[12], c[13] = 0x7f, 0xff
			return c
		}(), codec.Framer{}, codec.ErrTruncated, []string{"RequestHeader v2", "clientId", "offset 12"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.framer.DecodeRequest(tc.frame)
			if err == nil {
				t.Fatal("decode succeeded")
			}
			if !errors.Is(err, tc.cause) {
				t.Fatalf("error %q does not wrap %v", err, tc.cause)
			}
			var de *codec.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError", err)
			}
			for _, s := range tc.message {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
}

func TestEveryTruncationFailsCleanly(t *testing.T) {
	frame := produceFrame(t, 9)
	for n := 0; n < len(frame); n++ {
		cut := append([]byte(nil), frame[:n]...)
		if len(cut) >= 4 {
			binary.BigEndian.PutUint32(cut, uint32(len(cut)-4))
		}
		if _, err := codec.DecodeRequestFrame(cut); err == nil {
			t.Fatalf("a frame cut to %d bytes decoded", n)
		}
	}
}

func TestHugeCountFailsBeforeAllocating(t *testing.T) {
	// A Produce v9 body whose topic array claims 2^28 elements in a few bytes.
	body := []byte{0, 0xff, 0xff, 0, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x01}
	m := codec.NewProduceRequest()
	allocs := testing.AllocsPerRun(10, func() {
		if err := m.Decode(body, 9); !errors.Is(err, codec.ErrTruncated) {
			t.Fatalf("err = %v", err)
		}
	})
	if allocs > 10 {
		t.Fatalf("%v allocations for a rejected count", allocs)
	}
}

// TestDenseCountDoesNotPreallocate: a count that the input could only satisfy with
// one-byte elements must not make the decoder allocate count*sizeof(element) up front.
func TestDenseCountDoesNotPreallocate(t *testing.T) {
	// ProduceRequest v9 (flexible) whose topic array claims 100000 elements, followed by
	// 100000 bytes that are not a valid topic: decoding fails at the first element.
	body := []byte{0, 0xff, 0xff, 0, 0, 0, 0}
	body = append(body, 0xa1, 0x8d, 0x06) // uvarint 100001 = 100000 elements
	body = append(body, make([]byte, 100000)...)
	m := codec.NewProduceRequest()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := m.Decode(body, 9); err == nil {
		t.Fatal("decoded")
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16*uint64(len(body))+1<<20 {
		t.Fatalf("allocated %d bytes for a %d-byte input", grew, len(body))
	}
}

// TestHeaderLen holds RequestHeaderLen and ResponseHeaderLen to the encoder: on every
// api key and version, with a client id and an unknown tagged field in the flexible
// headers, the body starts where they say, and every shorter prefix of the header is
// ErrTruncated.
func TestHeaderLen(t *testing.T) {
	tags := []codec.TaggedField{{Tag: 7, Data: []byte("abc")}, {Tag: 300, Data: make([]byte, 200)}}
	for _, api := range codec.APIs() {
		for v := api.Request.MinVersion; v <= api.Request.MaxVersion; v++ {
			req := codec.NewRequest(api.Key)
			body, err := req.Encode(nil, v)
			if err != nil {
				t.Fatalf("%s v%d: %v", api.Name, v, err)
			}
			h := codec.NewRequestHeaderFor(req, v, 17, "client-x")
			if codec.RequestHeaderVersion(api.Key, v) >= 2 {
				h.UnknownTaggedFields = tags
			}
			frame, err := codec.EncodeRequestFrame(nil, h, req)
			if err != nil {
				t.Fatalf("%s v%d: %v", api.Name, v, err)
			}
			want := len(frame) - len(body)
			if got, err := codec.RequestHeaderLen(frame); got != want || err != nil {
				t.Errorf("RequestHeaderLen(%s v%d) = %d, %v; want %d", api.Name, v, got, err, want)
			}
			for n := 0; n < want; n++ {
				if _, err := codec.RequestHeaderLen(frame[:n]); !errors.Is(err, codec.ErrTruncated) {
					t.Fatalf("RequestHeaderLen(%s v%d, first %d of %d header bytes) = %v, want ErrTruncated", api.Name, v, n, want, err)
				}
			}

			resp := req.NewResponse()
			rbody, err := resp.Encode(nil, v)
			if err != nil {
				t.Fatalf("%s response v%d: %v", api.Name, v, err)
			}
			rh := &codec.ResponseHeader{CorrelationID: 17}
			if codec.ResponseHeaderVersion(api.Key, v) == 1 {
				rh.UnknownTaggedFields = tags
			}
			rframe, err := codec.EncodeResponseFrame(nil, rh, v, resp)
			if err != nil {
				t.Fatalf("%s response v%d: %v", api.Name, v, err)
			}
			want = len(rframe) - len(rbody)
			if got, err := codec.ResponseHeaderLen(rframe, api.Key, v); got != want || err != nil {
				t.Errorf("ResponseHeaderLen(%s v%d) = %d, %v; want %d", api.Name, v, got, err, want)
			}
			for n := 0; n < want; n++ {
				if _, err := codec.ResponseHeaderLen(rframe[:n], api.Key, v); !errors.Is(err, codec.ErrTruncated) {
					t.Fatalf("ResponseHeaderLen(%s v%d, first %d of %d header bytes) = %v, want ErrTruncated", api.Name, v, n, want, err)
				}
			}
		}
	}
}

func TestHeaderLenErrors(t *testing.T) {
	frame := func(b ...byte) []byte { return append([]byte{0, 0, 0, 100}, b...) }
	tests := []struct {
		name  string
		frame []byte
		resp  bool
		want  error
	}{
		{"unknown api key", frame(0x75, 0x30, 0, 0, 0, 0, 0, 1), false, codec.ErrUnknownAPI},
		{"client id length -2", frame(0, 0, 0, 8, 0, 0, 0, 1, 0xff, 0xfe), false, codec.ErrLength},
		{"tag count varint of six bytes", frame(0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01), false, codec.ErrVarint},
		{"tag count over int32", frame(0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f), false, codec.ErrVarint},
		{"response tag size varint of six bytes", frame(0, 0, 0, 1, 1, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01), true, codec.ErrVarint},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.resp {
				_, err = codec.ResponseHeaderLen(tc.frame, 0, 9)
			} else {
				_, err = codec.RequestHeaderLen(tc.frame)
			}
			var de *codec.DecodeError
			if !errors.Is(err, tc.want) || !errors.As(err, &de) {
				t.Errorf("got %v, want a DecodeError wrapping %v", err, tc.want)
			}
		})
	}
}
