//go:build wasm && !kwire_purego

package zstd

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"

	kzstd "github.com/klauspost/compress/zstd"
	"github.com/kwire/kwire/internal/kerneltest"
)

// TestZstdKernelFuzz is the kernels' differential fuzzing inside the
// WebAssembly build, where they are: random well-formed frames (from this
// package's Encoder and from klauspost/compress at several levels and
// settings), some of them then spoilt by byte flips and cuts, are decoded with
// the kernels and again with kernelsOff; the output bytes and the error text
// must be the same. Meanwhile the hooks of kernel_wasm_test.go check each
// block and literal stream against the plain-Go twin. It runs until
// KWIRE_KERNEL_FUZZTIME (a Go duration; 2s by default) is over.
func TestZstdKernelFuzz(t *testing.T) {
	d := kerneltest.FuzzTime(t, 2*time.Second)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 11))
	encs := kernelFuzzEncoders(t)
	var own Encoder
	var dk, dp Decoder
	seq0, huff0 := seqHookChecks.Load(), huffHookChecks.Load()
	seqRefused0, huffRefused0 := seqHookRefused.Load(), huffHookRefused.Load()
	deadline := time.Now().Add(d)
	frames, spoilt, accepted, handBuilt, handBuiltAccepted := 0, 0, 0, 0, 0
	for ; time.Now().Before(deadline); frames++ {
		if frames%4 == 0 {
			runtime.Gosched() // one thread, no preemption: let the collector's workers run
		}
		data := kernelFuzzData(r)
		var frame []byte
		switch k := r.IntN(len(encs) + 3); {
		case k < len(encs):
			frame = encs[k].EncodeAll(data, nil)
		case k == len(encs):
			frame = own.EncodeAll(nil, data)
		case k == len(encs)+1:
			frame = streamFrame(t, r, data)
		default:
			// The expected output is not known: compared between the
			// builds only.
			frame, data = rleLiteralsFrame(r), nil
			handBuilt++
		}
		size, limit, clean := len(data), len(data), data != nil
		if !clean {
			size, limit = r.IntN(200<<10), 1<<20
		}
		if r.IntN(2) == 0 {
			clean = false
			frame = spoil(r, frame)
			limit = r.IntN(2 * (size + 100))
			spoilt++
		}
		// dst with or without earlier bytes, and more or less spare room,
		// so that blocks meet the room's end and dst grows.
		prefix := 0
		if r.IntN(4) == 0 {
			prefix = r.IntN(300)
		}
		room := 0
		switch r.IntN(3) {
		case 1:
			room = r.IntN(size + 1)
		case 2:
			room = size + r.IntN(64)
		}
		dst := make([]byte, prefix, prefix+room)
		for i := range dst {
			dst[i] = byte(r.Uint32())
		}
		dst2 := append(make([]byte, 0, cap(dst)), dst...)

		kernelsOff = false
		got, err := dk.DecodeAll(dst, frame, limit)
		kernelsOff = true
		want, werr := dp.DecodeAll(dst2, frame, limit)
		kernelsOff = false
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("frame %d (%d bytes): kernel build says %v, plain Go says %v", frames, len(frame), err, werr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("frame %d (%d bytes): outputs differ: %d bytes and %d bytes", frames, len(frame), len(got), len(want))
		}
		if err == nil {
			accepted++
			if data == nil {
				handBuiltAccepted++
			}
		}
		if clean && (err != nil || !bytes.Equal(got[prefix:], data)) {
			t.Fatalf("frame %d: unchanged frame of %d bytes does not decode to its input: %v", frames, len(data), err)
		}
	}
	t.Logf("%d frames (%d spoilt, %d decoded without error; %d hand-built with RLE literals, %d of them decoded) in %v (seed %s); checked against the twin: %d blocks' sequences (%d refused by the kernel), %d literal streams (%d refused)",
		frames, spoilt, accepted, handBuilt, handBuiltAccepted, d, strconv.FormatUint(seed, 10),
		seqHookChecks.Load()-seq0, seqHookRefused.Load()-seqRefused0, huffHookChecks.Load()-huff0, huffHookRefused.Load()-huffRefused0)
}

// kernelFuzzEncoders are klauspost/compress's encoders at several levels and
// settings: no entropy coding (raw literals), Huffman-coding of all literals,
// small windows, frames with and without a checksum.
func kernelFuzzEncoders(t *testing.T) []*kzstd.Encoder {
	var encs []*kzstd.Encoder
	for _, o := range [][]kzstd.EOption{
		{kzstd.WithEncoderLevel(kzstd.SpeedFastest)},
		{kzstd.WithEncoderLevel(kzstd.SpeedDefault), kzstd.WithEncoderCRC(false)},
		{kzstd.WithEncoderLevel(kzstd.SpeedDefault), kzstd.WithWindowSize(1 << 10), kzstd.WithSingleSegment(false)},
		{kzstd.WithEncoderLevel(kzstd.SpeedBetterCompression), kzstd.WithSingleSegment(false)},
		{kzstd.WithEncoderLevel(kzstd.SpeedBestCompression), kzstd.WithAllLitEntropyCompression(true)},
		{kzstd.WithEncoderLevel(kzstd.SpeedFastest), kzstd.WithNoEntropyCompression(true)},
	} {
		e, err := kzstd.NewWriter(nil, append(o, kzstd.WithEncoderConcurrency(1))...)
		if err != nil {
			t.Fatal(err)
		}
		encs = append(encs, e)
	}
	return encs
}

// streamFrame is data compressed by klauspost/compress's streaming writer:
// no content size in the header, so that the decoder grows dst.
func streamFrame(t *testing.T, r *rand.Rand, data []byte) []byte {
	var buf bytes.Buffer
	lvl := []kzstd.EncoderLevel{kzstd.SpeedFastest, kzstd.SpeedDefault}[r.IntN(2)]
	w, err := kzstd.NewWriter(&buf, kzstd.WithEncoderLevel(lvl), kzstd.WithEncoderConcurrency(1), kzstd.WithWindowSize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	for p := 0; p < len(data); {
		n := min(1+r.IntN(100000), len(data)-p)
		if _, err := w.Write(data[p : p+n]); err != nil {
			t.Fatal(err)
		}
		p += n
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// kernelFuzzData is 0 to a few hundred KiB of pieces of varied
// compressibility: random bytes, bytes of a small alphabet, words, runs of one
// byte, short-period patterns (offsets below 8) and repeats of earlier
// content near and far.
func kernelFuzzData(r *rand.Rand) []byte {
	var n int
	switch r.IntN(8) {
	case 0:
		n = r.IntN(64)
	case 1, 2, 3:
		n = r.IntN(4 << 10)
	case 4, 5, 6:
		n = r.IntN(64 << 10)
	default:
		n = r.IntN(300 << 10)
	}
	words := []string{"kafka", "record", "batch", "offset", "{\"id\":", "topic", "\n", " ", "the", "zstd"}
	b := make([]byte, 0, n+64)
	for len(b) < n {
		k := 1 + r.IntN(1+r.IntN(2000))
		switch r.IntN(6) {
		case 0:
			for i := 0; i < k; i++ {
				b = append(b, byte(r.Uint32()))
			}
		case 1:
			a := 2 + r.IntN(30)
			for i := 0; i < k; i++ {
				b = append(b, byte('a'+r.IntN(a)))
			}
		case 2:
			for len(b) < n && k > 0 {
				b = append(b, words[r.IntN(len(words))]...)
				k -= 5
			}
		case 3:
			c := byte(r.Uint32())
			for i := 0; i < k; i++ {
				b = append(b, c)
			}
		case 4:
			p := 1 + r.IntN(7)
			for i := 0; i < p; i++ {
				b = append(b, byte(r.Uint32()))
			}
			for i := p; i < k; i++ {
				b = append(b, b[len(b)-p])
			}
		default:
			if len(b) == 0 {
				continue
			}
			off := 1 + r.IntN(min(len(b), []int{8, 64, 1 << 20}[r.IntN(3)]))
			for i := 0; i < k; i++ {
				b = append(b, b[len(b)-off])
			}
		}
	}
	return b[:n]
}

// rleLiteralsFrame is a hand-built frame without a content size: a raw block
// of random history, then a compressed block with RLE literals and sequences
// coded with RLE tables (every sequence the same literal length, offset code
// and match length code; the offsets' and match lengths' extra bits random).
// Most are well-formed; some use too few literals, reach past the window or
// the history, or decode to more than 128 KiB.
func rleLiteralsFrame(r *rand.Rand) []byte {
	hist := make([]byte, 1+r.IntN(3000))
	for i := range hist {
		hist[i] = byte(r.Uint32())
	}
	nseq := 1 + r.IntN(3000)
	llCode, ofCode, mlCode := r.IntN(8), r.IntN(12), r.IntN(36)
	if r.IntN(8) == 0 {
		llCode, mlCode = r.IntN(36), r.IntN(53)
	}
	nlit := nseq*int(llBase[llCode]) + r.IntN(40) - 4
	nlit = max(0, min(nlit, maxBlockSize))
	nbits := nseq * (ofCode + int(mlExtra[mlCode]) + int(llExtra[llCode]))
	bs := make([]byte, nbits/8+1)
	for i := range bs {
		bs[i] = byte(r.Uint32())
	}
	bs[len(bs)-1] &= byte(1<<(nbits%8) - 1)
	bs[len(bs)-1] |= byte(1 << (nbits % 8))

	var c []byte
	switch {
	case nlit < 32:
		c = append(c, byte(1|nlit<<3))
	case nlit < 4096:
		c = append(c, byte(1|1<<2|(nlit&15)<<4), byte(nlit>>4))
	default:
		c = append(c, byte(1|3<<2|(nlit&15)<<4), byte(nlit>>4), byte(nlit>>12))
	}
	c = append(c, byte(r.Uint32()))
	switch {
	case nseq < 128:
		c = append(c, byte(nseq))
	default:
		c = append(c, byte(nseq>>8)+128, byte(nseq))
	}
	c = append(c, 0x54, byte(llCode), byte(ofCode), byte(mlCode))
	c = append(c, bs...)
	f := frameHeader(0x00, byte(r.IntN(8))<<3, 0, 0) // windows of 1 to 128 KiB
	f = block(f, false, 0, -1, hist)
	return block(f, true, 2, -1, c)
}

// spoil changes a frame by flipping up to three bits and perhaps cutting it
// short or appending to it.
func spoil(r *rand.Rand, frame []byte) []byte {
	for m := 1 + r.IntN(3); m > 0 && len(frame) > 0; m-- {
		frame[r.IntN(len(frame))] ^= byte(1 << r.IntN(8))
	}
	switch r.IntN(6) {
	case 0:
		frame = frame[:r.IntN(len(frame)+1)]
	case 1:
		frame = append(frame, byte(r.Uint32()))
	}
	return frame
}
