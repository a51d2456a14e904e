package crc32c

import (
	"hash/crc32"
	"math/rand"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// TestUpdateKernelFuzz is the kernel's differential fuzzing where the kernel runs, in the
// WebAssembly build (Go's coverage-guided fuzzer does not run WebAssembly; natively it
// compares the twin with hash/crc32): random buffers of random lengths and alignments and
// random starting values go through Update (the kernel), updateGeneric and hash/crc32, and
// likewise for the IEEE polynomial (updateIEEE, updateTables over its tables),
// until KWIRE_KERNEL_FUZZTIME (a Go duration; 1s by default) is over.
func TestUpdateKernelFuzz(t *testing.T) {
	d := time.Second
	if s := os.Getenv("KWIRE_KERNEL_FUZZTIME"); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			t.Fatal(err)
		}
	}
	seed := time.Now().UnixNano()
	r := rand.New(rand.NewSource(seed))
	buf := make([]byte, 1<<16+8)
	deadline := time.Now().Add(d)
	n := 0
	for ; time.Now().Before(deadline); n++ {
		if n%256 == 0 {
			runtime.Gosched() // let the collector's workers run (one thread in WebAssembly)
			r.Read(buf)
		}
		off := r.Intn(8)
		size := r.Intn(64)
		if r.Intn(4) == 0 {
			size = r.Intn(1 << 16)
		}
		b := buf[off : off+size]
		crc := r.Uint32()
		if got, want, gen := Update(crc, b), ref(crc, b), updateGeneric(crc, b); got != want || gen != want {
			t.Fatalf("seed %d case %d: %d bytes at offset %d from %#x: Update %#x, generic %#x, hash/crc32 %#x", seed, n, size, off, crc, got, gen, want)
		}
		if got, want, gen := updateIEEE(crc, b), crc32.Update(crc, crc32.IEEETable, b), updateTables(crc, b, ieeeTables()); got != want || gen != want {
			t.Fatalf("seed %d case %d: %d bytes at offset %d from %#x: IEEE: kernel %#x, generic %#x, hash/crc32 %#x", seed, n, size, off, crc, got, gen, want)
		}
	}
	t.Logf("%d cases in %v (seed %s)", n, d, strconv.FormatInt(seed, 10))
}
