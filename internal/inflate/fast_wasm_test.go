//go:build wasm && !kwire_purego

package inflate

import (
	"bytes"
	"compress/flate"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/kwire/kwire/internal/kerneltest"
)

// TestFastKernelFuzz is the inflate kernel's differential fuzzing inside the
// WebAssembly build, where the kernel is (Go's fuzzer does not run
// WebAssembly): until KWIRE_KERNEL_FUZZTIME (a Go duration; 2s by default) is
// over, it
//   - decodes random deflate streams, well-formed (compress/flate at every
//     level, inputs from random to runs with periods 1 to 9) and then spoilt by
//     byte flips and cuts, with the kernel and with the plain-Go loop, and
//     requires the same output, input used and error text;
//   - runs the kernel and fastCodesGeneric on random tables, bit states and
//     input, and requires the same state, the same output up to the state's
//     position, nothing written before it or past the output's end.
func TestFastKernelFuzz(t *testing.T) {
	d := kerneltest.FuzzTime(t, 2*time.Second)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 11))
	deadline := time.Now().Add(d)
	streams, loops := 0, 0
	for n := 0; time.Now().Before(deadline); n++ {
		if n%16 == 0 {
			runtime.Gosched() // one thread, no preemption: let the collector's workers run
		}
		src := randomStream(r)
		for m := r.IntN(3); m > 0 && len(src) > 0; m-- {
			src[r.IntN(len(src))] ^= byte(1 << r.IntN(8))
		}
		if r.IntN(4) == 0 && len(src) > 0 {
			src = src[:r.IntN(len(src))]
		}
		limit := 1 << 20
		if r.IntN(8) == 0 {
			limit = r.IntN(1 << 16)
		}
		checkStream(t, src, limit)
		streams++
		for k := 0; k < 8; k++ {
			checkLoop(t, r)
			loops++
		}
	}
	t.Logf("%d streams and %d loop calls in %v (seed %d)", streams, loops, d, seed)
}

// randomStream is a raw deflate stream of random data of varied kinds.
func randomStream(r *rand.Rand) []byte {
	n := r.IntN(1 << (4 + r.IntN(14)))
	data := make([]byte, n)
	switch r.IntN(4) {
	case 0: // random bytes
		for i := range data {
			data[i] = byte(r.Uint32())
		}
	case 1: // a few symbols, skewed
		for i := range data {
			data[i] = byte(r.ExpFloat64() * 4)
		}
	case 2: // runs with short periods
		for i := 0; i < n; {
			p := 1 + r.IntN(9)
			pat := make([]byte, p)
			for j := range pat {
				pat[j] = byte(r.IntN(256))
			}
			for k := r.IntN(600); k > 0 && i < n; k-- {
				data[i] = pat[k%p]
				i++
			}
		}
	default: // words
		words := []string{"kafka ", "record ", "value ", "{\"id\":", "12,", "\"payload\":\"", "abc\"}", "\n"}
		for i := 0; i < n; {
			i += copy(data[i:], words[r.IntN(len(words))])
		}
	}
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, r.IntN(11)-2) // -2 (Huffman only) to 9
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// checkStream decodes src with the kernel and with the plain-Go loop.
func checkStream(t *testing.T, src []byte, limit int) {
	t.Helper()
	kernelOff = false
	got, gotN, gotErr := Inflate(nil, src, limit)
	kernelOff = true
	want, wantN, wantErr := Inflate(nil, src, limit)
	kernelOff = false
	if gotN != wantN || !bytes.Equal(got, want) || errText(gotErr) != errText(wantErr) {
		t.Fatalf("a stream of %d bytes (limit %d): kernel %d bytes out, %d in, %v; twin %d out, %d in, %v\nstream %x",
			len(src), limit, len(got), gotN, gotErr, len(want), wantN, wantErr, src)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// checkLoop runs the kernel and the twin on random tables, state and input.
func checkLoop(t *testing.T, r *rand.Rand) {
	t.Helper()
	var lit, dist [1 << fastBits]uint32
	for i := range lit {
		lit[i] = randomEntry(r, tableLit)
		dist[i] = randomEntry(r, tableDist)
	}
	src := make([]byte, r.IntN(64))
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	size := r.IntN(1200)
	const guard = 64
	buf := make([]byte, size+guard)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	o := 0
	if size > 0 {
		o = r.IntN(size)
	}
	start := 0
	if o > 0 {
		start = r.IntN(o + 1)
	}
	nbits := uint64(r.IntN(8))
	st := fastState{bits: r.Uint64() & (1<<nbits - 1), nbits: nbits, pos: r.IntN(len(src) + 1), o: o}
	twin := append([]byte(nil), buf...)
	tst := st
	fastCodesKernel(buf[:size], src, &st, &lit, &dist, start)
	fastCodesGeneric(twin[:size], src, &tst, &lit, &dist, start)
	if st != tst || !bytes.Equal(buf[:st.o], twin[:tst.o]) || !bytes.Equal(buf[size:], twin[size:]) {
		t.Fatalf("kernel state %+v, twin %+v (size %d, start %d, src %x)", st, tst, size, start, src)
	}
}

// randomEntry is a fast-table entry as build makes them, of any symbol, or
// (sometimes) an empty one.
func randomEntry(r *rand.Rand, table int) uint32 {
	if r.IntN(16) == 0 {
		return 0
	}
	var sym int
	if table == tableLit {
		sym = r.IntN(maxLitLen)
		if r.IntN(2) == 0 {
			sym = 257 + r.IntN(31)
		}
	} else {
		sym = r.IntN(maxDist)
	}
	return meaning(table, sym) | uint32(1+r.IntN(fastBits))
}

// BenchmarkFastKernel is Gunzip with the kernel and with the plain-Go loop, on the
// same input in the same run:
//
//	GOOS=js GOARCH=wasm go test -exec="$(go env GOROOT)/lib/wasm/go_js_wasm_exec" -run '^$' -bench FastKernel ./internal/inflate
func BenchmarkFastKernel(b *testing.B) {
	in := inputs()[len(inputs())-2] // 300 KB of text
	z := gz(b, in, 6)
	out := make([]byte, 0, len(in)+1024)
	for _, off := range []bool{false, true} {
		name := "kernel"
		if off {
			name = "twin"
		}
		b.Run(name, func(b *testing.B) {
			kernelOff = off
			defer func() { kernelOff = false }()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				out, _ = Gunzip(out[:0], z, 1<<30)
			}
		})
	}
}
