package zstd

import (
	"bytes"
	"math/rand"
	"testing"

	kzstd "github.com/klauspost/compress/zstd"
)

// encInputs are the decoder's test inputs and a few shapes that exercise the
// encoder's choices: binary literals (over 128 symbols: FSE-coded Huffman
// weights), few symbols, a frame over 8 MiB (window descriptor, offsets capped).
func encInputs() []input {
	in := inputs()
	r := rand.New(rand.NewSource(5))
	bin := make([]byte, 200000)
	for i := range bin {
		bin[i] = byte(r.NormFloat64()*30 + 128)
	}
	in = append(in,
		input{"gaussian bytes", bin},
		input{"two symbols", bytes.Repeat([]byte("abbbabaabbbbbbab"), 300)},
		input{"255 bytes", text(3, 255)},
		input{"65791 bytes", text(4, 65791)},
		input{"65792 bytes", records(4, 70, 1000)[:65792]},
		input{"9 MiB", append(records(6, 5000, 1024), mixed(7, 4<<20)...)},
	)
	return in
}

var kdec, _ = kzstd.NewReader(nil, kzstd.WithDecoderConcurrency(1), kzstd.WithDecoderMaxMemory(1<<30))

// TestEncodeReference: what the encoder writes decodes back to its input with
// klauspost/compress's decoder and with this package's, one Encoder reused
// across all inputs.
func TestEncodeReference(t *testing.T) {
	var e Encoder
	var d Decoder
	for _, in := range encInputs() {
		enc := e.EncodeAll([]byte("pre"), in.data)
		if string(enc[:3]) != "pre" {
			t.Fatalf("%s: dst's bytes were overwritten", in.name)
		}
		enc = enc[3:]
		got, err := kdec.DecodeAll(enc, nil)
		if err != nil {
			t.Fatalf("%s: klauspost/compress rejects the frame: %v", in.name, err)
		}
		if !bytes.Equal(got, in.data) {
			t.Fatalf("%s: klauspost/compress decodes %d bytes that differ from the %d input bytes", in.name, len(got), len(in.data))
		}
		got, err = d.DecodeAll(nil, enc, len(in.data)+1)
		if err != nil || !bytes.Equal(got, in.data) {
			t.Fatalf("%s: own decoder: %v (%d bytes, want %d)", in.name, err, len(got), len(in.data))
		}
		if len(in.data) > 1000 && len(enc) > len(in.data)+len(in.data)/1000+64 {
			t.Errorf("%s: %d bytes from %d", in.name, len(enc), len(in.data))
		}
	}
}

// TestEncodeRatio: within 10% of klauspost/compress at its default level on
// compressible inputs.
func TestEncodeRatio(t *testing.T) {
	var e Encoder
	kenc, err := kzstd.NewWriter(nil, kzstd.WithEncoderConcurrency(1), kzstd.WithLowerEncoderMem(true))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range encInputs() {
		if len(in.data) < 1000 || len(in.data) > 2<<20 {
			continue
		}
		ours, ref := len(e.EncodeAll(nil, in.data)), len(kenc.EncodeAll(in.data, nil))
		t.Logf("%-20s %8d bytes: ours %8d, klauspost %8d (%+.1f%%)", in.name, len(in.data), ours, ref, 100*(float64(ours)/float64(ref)-1))
		if float64(ours) > 1.10*float64(ref)+32 {
			t.Errorf("%s: %d bytes, klauspost/compress %d: more than 10%% larger", in.name, ours, ref)
		}
	}
}

// FuzzEncode: whatever the input, klauspost/compress's decoder gives it back.
func FuzzEncode(f *testing.F) {
	for _, in := range encInputs() {
		if len(in.data) < 4000 {
			f.Add(in.data)
		}
	}
	f.Add(text(9, 3000))
	f.Add(records(10, 3, 500))
	var e Encoder
	f.Fuzz(func(t *testing.T, in []byte) {
		enc := e.EncodeAll(nil, in)
		got, err := kdec.DecodeAll(enc, nil)
		if err != nil {
			t.Fatalf("klauspost/compress rejects the frame: %v", err)
		}
		if !bytes.Equal(got, in) {
			t.Fatalf("decoded %d bytes differ from the %d input bytes", len(got), len(in))
		}
	})
}
