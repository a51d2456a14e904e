package codec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
)

func fetchFrame(t *testing.T, version int16) []byte {
	t.Helper()
	resp := codec.NewFetchResponse()
	resp.Responses = []codec.FetchResponseFetchableTopicResponse{{Topic: "events", Partitions: []codec.FetchResponsePartitionData{{PartitionIndex: 3}}}}
	h := codec.NewResponseHeader()
	frame, err := codec.EncodeResponseFrame(nil, h, version, resp)
	if err != nil {
		t.Fatal(err)
	}
	return frame
}

// A response decoded at a wrong version names the one version that decodes it.
func TestResponseVersionHint(t *testing.T) {
	frame := fetchFrame(t, 12)
	_, err := codec.DecodeResponseFrame(frame, 1, 11)
	var de *codec.DecodeError
	if !errors.As(err, &de) || de.Hint == nil || de.Hint.Version != 12 || de.Hint.Message != "FetchResponse" ||
		!strings.HasSuffix(err.Error(), "; the bytes decode as FetchResponse v12: was the request v12?") {
		t.Fatalf("%v (hint %+v)", err, de)
	}
	if _, err := codec.DecodeResponseFrame(frame, 1, 12); err != nil {
		t.Fatal(err)
	}
	// Garbage decodes at no version: no hint.
	_, err = codec.DecodeResponseFrame([]byte{0, 0, 0, 6, 0, 0, 0, 1, 0xff, 0xff}, 1, 4)
	if !errors.As(err, &de) || de.Hint != nil {
		t.Fatalf("%v (hint %+v)", err, de)
	}
}

// An unsupported version is a *DecodeError too.
func TestDecodeResponseFrameBadVersion(t *testing.T) {
	_, err := codec.DecodeResponseFrame(fetchFrame(t, 12), 1, 99)
	var de *codec.DecodeError
	if !errors.As(err, &de) || !errors.Is(err, codec.ErrVersion) || de.Message != "FetchResponse" || de.Version != 99 {
		t.Fatalf("%T %v", err, err)
	}
}

func TestPointerHelpers(t *testing.T) {
	s := codec.StringPtr("events")
	n := codec.Ptr(int32(7))
	if s == nil || *s != "events" || n == nil || *n != 7 {
		t.Fatalf("%v %v", s, n)
	}
	// Each call makes its own value.
	if codec.StringPtr("a") == codec.StringPtr("a") {
		t.Fatal("shared pointer")
	}
}
