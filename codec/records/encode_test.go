//go:build !kwire_nocompress

package records

import (
	"bytes"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// kwire writes snappy-java's xerial header (version 1, compatible 1, big-endian).
func TestSnappyWritesXerialHeader(t *testing.T) {
	in := bytes.Repeat([]byte("snappy variant "), 5000)
	framed, err := Compress(nil, CompressionSnappy, in, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !isXerial(framed) || !bytes.Equal(framed[8:16], []byte{0, 0, 0, 1, 0, 0, 0, 1}) {
		t.Fatalf("kwire does not write snappy-java's header: %x", framed[:16])
	}
}

// kwire writes magic 0 LZ4 frames with Kafka's old header checksum (over the
// magic bytes too) and the standard one otherwise; both read back, and
// pierrec/lz4's own reader accepts the standard frame. So for both writers:
// the build's (compress) and kwire's own.
func TestLZ4LegacyHeaderChecksum(t *testing.T) {
	in := bytes.Repeat([]byte("lz4 legacy "), 1000)
	writers := map[string]func(legacy bool) []byte{
		"build's": func(legacy bool) []byte {
			magic := int8(1)
			if legacy {
				magic = 0
			}
			out, err := compress(nil, CompressionLZ4, in, 0, magic, false)
			if err != nil {
				t.Fatal(err)
			}
			return out
		},
		"own": func(legacy bool) []byte { return appendLZ4FrameOwn(nil, in, legacy) },
	}
	for name, write := range writers {
		v0, v1 := write(true), write(false)
		if want := byte(xxh32(v0[:6]) >> 8); v0[6] != want {
			t.Fatalf("%s: magic 0 checksum %#x, want Kafka's %#x", name, v0[6], want)
		}
		if want := byte(xxh32(v1[4:6]) >> 8); v1[6] != want {
			t.Fatalf("%s: checksum %#x, want %#x", name, v1[6], want)
		}
		r := lz4.NewReader(bytes.NewReader(v1))
		var got bytes.Buffer
		if _, err := got.ReadFrom(r); err != nil || !bytes.Equal(got.Bytes(), in) {
			t.Fatalf("%s: pierrec reader: %v", name, err)
		}
		for _, tc := range []struct {
			frame  []byte
			legacy bool
		}{{v0, true}, {v1, false}, {v1, true}} {
			if out, err := unlz4(nil, tc.frame, 1<<20, tc.legacy); err != nil || !bytes.Equal(out, in) {
				t.Fatalf("%s: legacy=%v: %v", name, tc.legacy, err)
			}
		}
	}
}
