//go:build !kwire_nocompress

package records

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/snappy"
)

// kwire's snappy encoder writes blocks the reference decoder reads back
// exactly, as does kwire's decoder; it stays within snappyMaxEncodedLen and
// compresses repetitive input about as well as the reference encoder.
func TestSnappyEncoder(t *testing.T) {
	for name, in := range testInputs() {
		enc := snappyEncode(nil, in)
		if len(enc) > snappyMaxEncodedLen(len(in)) {
			t.Fatalf("%s: %d encoded bytes, bound %d", name, len(enc), snappyMaxEncodedLen(len(in)))
		}
		ref, err := snappy.Decode(nil, enc)
		if err != nil || !bytes.Equal(ref, in) {
			t.Fatalf("%s: the reference decoder: %v", name, err)
		}
		if _, err := snappy.DecodeStrict(nil, enc); err != nil {
			t.Fatalf("%s: the reference strict decoder: %v", name, err)
		}
		out, err := unsnappyBlock(nil, enc, DefaultMaxDecompressedSize)
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("%s: kwire's decoder: %v", name, err)
		}
		refEnc := snappy.Encode(nil, in)
		t.Logf("%-14s %8d bytes -> kwire %8d, reference %8d", name, len(in), len(enc), len(refEnc))
		// Within a tenth of the reference's size, plus a little for tiny inputs.
		if len(enc) > len(refEnc)+len(refEnc)/10+16 {
			t.Errorf("%s: kwire %d bytes, reference %d", name, len(enc), len(refEnc))
		}
	}
}

// Copies of every length and both offset ranges are written in valid forms
// (copy-1 for 4-11 bytes under 2 KiB back, copy-2 otherwise, long copies
// split so no piece is under 4 bytes).
func TestSnappyCopyForms(t *testing.T) {
	for _, offset := range []int{1, 3, 2047, 2048, 40000, 65535} {
		for n := 4; n <= 300; n++ {
			// A literal of offset bytes, then one copy of n.
			var blk []byte
			blk = appendSnappyLiteral(blk, bytes.Repeat([]byte{'q'}, offset))
			blk = appendSnappyCopy(blk, offset, n)
			full := append(snappyVarint(offset+n), blk...)
			out, err := unsnappyBlock(nil, full, DefaultMaxDecompressedSize)
			ref, rerr := snappy.DecodeStrict(nil, full)
			if err != nil || rerr != nil || !bytes.Equal(out, ref) || len(out) != offset+n {
				t.Fatalf("offset %d length %d: kwire %v, reference %v", offset, n, err, rerr)
			}
		}
	}
}

func snappyVarint(n int) []byte {
	var b []byte
	for n >= 0x80 {
		b = append(b, byte(n)|0x80)
		n >>= 7
	}
	return append(b, byte(n))
}

func init() { snappyRoundTrip = checkSnappyRoundTrip }

// checkSnappyRoundTrip: data encoded by kwire stays within the bound and
// decodes back with kwire's decoder and the reference strict decoder.
func checkSnappyRoundTrip(t *testing.T, data []byte) {
	enc := snappyEncode(nil, data)
	if len(enc) > snappyMaxEncodedLen(len(data)) {
		t.Fatalf("%d bytes encode to %d", len(data), len(enc))
	}
	back, err := unsnappyBlock(nil, enc, max(len(data), 1))
	if err != nil || !bytes.Equal(back, data) {
		t.Fatalf("round trip through kwire's encoder: %v", err)
	}
	if ref, err := snappy.DecodeStrict(nil, enc); err != nil || !bytes.Equal(ref, data) {
		t.Fatalf("the reference decoder on kwire's encoding: %v", err)
	}
}
