package zstd

import (
	"bytes"
	"errors"
	"sync"
	"testing"

	kzstd "github.com/klauspost/compress/zstd"
)

const fuzzLimit = 1 << 20

var fuzzRef struct {
	once sync.Once
	dec  *kzstd.Decoder
	encs []*kzstd.Encoder
}

func fuzzReference(t testing.TB) (*kzstd.Decoder, []*kzstd.Encoder) {
	fuzzRef.once.Do(func() {
		var err error
		fuzzRef.dec, err = kzstd.NewReader(nil, kzstd.WithDecoderConcurrency(1), kzstd.WithDecoderMaxMemory(fuzzLimit))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range [][]kzstd.EOption{
			{kzstd.WithEncoderLevel(kzstd.SpeedFastest)},
			{kzstd.WithEncoderLevel(kzstd.SpeedDefault), kzstd.WithEncoderCRC(false)},
			{kzstd.WithEncoderLevel(kzstd.SpeedBetterCompression), kzstd.WithSingleSegment(false)},
			{kzstd.WithEncoderLevel(kzstd.SpeedBestCompression), kzstd.WithAllLitEntropyCompression(true)},
		} {
			e, err := kzstd.NewWriter(nil, append(o, kzstd.WithEncoderConcurrency(1))...)
			if err != nil {
				t.Fatal(err)
			}
			fuzzRef.encs = append(fuzzRef.encs, e)
		}
	})
	return fuzzRef.dec, fuzzRef.encs
}

// FuzzDecode checks, for any input: no panic and only this package's errors;
// where klauspost/compress's decoder also accepts the input, the same output;
// and the input itself, compressed by klauspost/compress, decodes back to it.
func FuzzDecode(f *testing.F) {
	for _, in := range []input{
		{"empty", nil}, {"text", text(51, 3000)}, {"records", records(52, 5, 500)},
		{"random", randomBytes(53, 300)}, {"zeros", make([]byte, 5000)}, {"mixed", mixed(54, 40000)},
	} {
		for _, e := range []encoding{
			{"fastest", false, []kzstd.EOption{kzstd.WithEncoderLevel(kzstd.SpeedFastest)}},
			{"default/stream", true, []kzstd.EOption{kzstd.WithEncoderLevel(kzstd.SpeedDefault)}},
			{"best/nocrc", false, []kzstd.EOption{kzstd.WithEncoderLevel(kzstd.SpeedBestCompression), kzstd.WithEncoderCRC(false)}},
		} {
			f.Add(encode(f, e, in.data))
		}
		f.Add(in.data)
	}
	raw8 := []byte("abcdefgh")
	f.Add(block(block(frameHeader(0x00, 0x40, 0, 0), false, 0, 8, raw8), true, 2, -1, rleSeqBlock(300, 0, 0, 0, []byte{1})))
	f.Add(block(frameHeader(0x20, 0, 0, 20), true, 2, 3, []byte{20<<3 | 1, 'z', 0}))
	f.Add([]byte{0x5A, 0x2A, 0x4D, 0x18, 2, 0, 0, 0, 9, 9})

	var d Decoder
	f.Fuzz(func(t *testing.T, data []byte) {
		kdec, encs := fuzzReference(t)
		got, err := d.DecodeAll(nil, data, fuzzLimit)
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("error %v wraps neither ErrCorrupt nor ErrTooLarge", err)
		}
		if err == nil && len(got) > fuzzLimit {
			t.Fatalf("%d bytes of output past the limit", len(got))
		}
		if want, kerr := kdec.DecodeAll(data, nil); kerr == nil && err == nil && !bytes.Equal(got, want) {
			t.Fatalf("both accept the input but outputs differ: %d bytes here, %d there", len(got), len(want))
		}
		// The input compressed by the reference encoder must round-trip.
		e := encs[0]
		if len(data) > 0 {
			e = encs[int(data[0])%len(encs)]
		}
		comp := e.EncodeAll(data, nil)
		back, err := d.DecodeAll(nil, comp, len(data))
		if err != nil {
			t.Fatalf("decoding the encoder's frame of this input: %v", err)
		}
		if !bytes.Equal(back, data) {
			t.Fatalf("round trip changed the input")
		}
	})
}

// FuzzFrames mutates valid frames: the fuzz input is compressed by
// klauspost/compress (with or without checksum), then up to three bytes of the
// frame are changed. Where both decoders accept the result, their outputs must
// be equal; the unchanged frame must decode to the input.
func FuzzFrames(f *testing.F) {
	f.Add(text(81, 2000), uint8(0), uint32(40), uint8(1), uint32(0), uint8(0), uint32(0), uint8(0))
	f.Add(records(82, 3, 400), uint8(1), uint32(17), uint8(0x80), uint32(99), uint8(3), uint32(0), uint8(0))
	f.Add(mixed(83, 30000), uint8(2), uint32(1000), uint8(7), uint32(5), uint8(0xFF), uint32(300), uint8(2))
	f.Add(make([]byte, 5000), uint8(3), uint32(8), uint8(4), uint32(0), uint8(0), uint32(0), uint8(0))
	var d Decoder
	f.Fuzz(func(t *testing.T, data []byte, enc uint8, p1 uint32, x1 uint8, p2 uint32, x2 uint8, p3 uint32, x3 uint8) {
		kdec, encs := fuzzReference(t)
		frame := encs[int(enc)%len(encs)].EncodeAll(data, nil)
		if got, err := d.DecodeAll(nil, frame, len(data)); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("unchanged frame: %v", err)
		}
		frame[int(p1%uint32(len(frame)))] ^= x1
		frame[int(p2%uint32(len(frame)))] ^= x2
		frame[int(p3%uint32(len(frame)))] ^= x3
		got, err := d.DecodeAll(nil, frame, fuzzLimit)
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("error %v wraps neither ErrCorrupt nor ErrTooLarge", err)
		}
		if want, kerr := kdec.DecodeAll(frame, nil); kerr == nil && err == nil && !bytes.Equal(got, want) {
			t.Fatalf("both accept the changed frame but outputs differ: %d bytes here, %d there", len(got), len(want))
		}
	})
}
