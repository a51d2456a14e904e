package records

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/pierrec/lz4/v4"
)

// snappyRoundTrip checks data through kwire's snappy encoder and back where
// the build has the encoder (set by snappy_encode_test.go); nil in a
// kwire_nocompress build.
var snappyRoundTrip func(t *testing.T, data []byte)

// FuzzSnappyBlock: kwire's snappy block decoder against the reference strict
// decoder (both accept or both refuse, the same bytes when both accept), and
// any input through kwire's encoder back through both decoders.
func FuzzSnappyBlock(f *testing.F) {
	for _, in := range testInputs() {
		if len(in) <= 4<<10 {
			f.Add(snappy.Encode(nil, in))
			f.Add(in)
		}
	}
	f.Add(snappy.Encode(nil, value1K(3000)))
	f.Add(snappyBlock(12, []byte{3 << 2, 'a', 'b', 'c', 'd'}, []byte{4<<2 | 1, 4}))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := unsnappyBlock(nil, data, fuzzLimit)
		n, lerr := snappy.DecodedLen(data)
		if lerr == nil && n <= fuzzLimit {
			ref, rerr := snappy.DecodeStrict(nil, data)
			switch {
			case err == nil && rerr != nil:
				t.Fatalf("kwire accepts (%d bytes), the reference refuses: %v", len(out), rerr)
			case err != nil && rerr == nil:
				t.Fatalf("kwire refuses (%v), the reference accepts %d bytes", err, len(ref))
			case err == nil && !bytes.Equal(out, ref):
				t.Fatalf("kwire and the reference decode differently")
			}
		}
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("error is neither ErrCorrupt nor ErrTooLarge: %v", err)
		}
		if snappyRoundTrip != nil {
			snappyRoundTrip(t, data)
		}
	})
}

// FuzzLZ4Block: kwire's LZ4 block decoder against the reference decoder, with
// the first dictLen bytes of data as the dictionary (the frame's earlier
// output) and the rest as the block, into 64 KiB of room. Both accept or both
// refuse, with the same bytes when both accept; kwire alone refuses an empty
// block and a block that ends in a match (the format ends blocks with
// literals). And data compressed by the reference decodes back.
func FuzzLZ4Block(f *testing.F) {
	for _, in := range testInputs() {
		if len(in) > 0 && len(in) <= 4<<10 {
			for _, b := range lz4Blocks(f, in) {
				f.Add(b, uint16(0))
				f.Add(append(append([]byte{}, in...), b...), uint16(len(in)))
			}
		}
	}
	f.Add([]byte{0x44, 'a', 'b', 'c', 'd', 4, 0, 0x10, 'e'}, uint16(0))
	f.Add([]byte("hist\x00\x04\x00\x10z"), uint16(4))
	const room = 64 << 10
	out := make([]byte, room+64<<10)
	buf := make([]byte, room)
	f.Fuzz(func(t *testing.T, data []byte, dictLen uint16) {
		ref := buf
		k := int(dictLen) % (len(data) + 1)
		dict, block := data[:k], data[k:]
		copy(out, dict)
		n, err := lz4Decode(out[:k+room], 0, k, block)
		var rn int
		var rerr error
		if k > 0 {
			rn, rerr = lz4.UncompressBlockWithDict(block, ref, dict)
		} else {
			rn, rerr = lz4.UncompressBlock(block, ref)
		}
		if err == nil && rerr != nil {
			// The reference copies literals and matches 16 bytes at a time
			// and so refuses blocks that end within 16 bytes of its room:
			// give it more room and it must accept the same bytes.
			big := make([]byte, room+32)
			if k > 0 {
				rn, rerr = lz4.UncompressBlockWithDict(block, big, dict)
			} else {
				rn, rerr = lz4.UncompressBlock(block, big)
			}
			if rerr == nil && rn > room {
				t.Fatalf("kwire accepts %d bytes, the reference decodes %d", n, rn)
			}
			ref = big
		}
		switch {
		case err == nil && rerr != nil:
			t.Fatalf("kwire accepts (%d bytes), the reference refuses: %v", n, rerr)
		case err == nil && (n != rn || !bytes.Equal(out[k:k+n], ref[:rn])):
			t.Fatalf("kwire and the reference decode differently (%d vs %d bytes)", n, rn)
		case err != nil && rerr == nil:
			stricter := len(block) == 0 || strings.Contains(err.Error(), "block ends inside")
			if !stricter {
				t.Fatalf("kwire refuses (%v), the reference accepts %d bytes", err, rn)
			}
		}
		if err != nil && !errors.Is(err, errLZ4) && !errors.Is(err, errLZ4Short) {
			t.Fatalf("unexpected error %v", err)
		}
		// Round trip: data through the reference compressor.
		if len(data) == 0 || len(data) > room {
			return
		}
		var c lz4.Compressor
		comp := make([]byte, lz4.CompressBlockBound(len(data)))
		cn, err := c.CompressBlock(data, comp)
		if err != nil || cn == 0 {
			return // incompressible: the reference stores such blocks
		}
		if n, err := lz4Decode(out[:len(data)], 0, 0, comp[:cn]); err != nil || n != len(data) || !bytes.Equal(out[:n], data) {
			t.Fatalf("reference-compressed block: %d bytes, %v", n, err)
		}
	})
}
