//go:build wasm && !kwire_purego

package recordscan

import (
	"math/rand"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/internal/kerneltest"
)

// TestScanKernelReadsCommonRecords: the kernel alone reads a whole section of records
// with short varints (it must not leave them all to the twin), writing what the twin
// writes.
func TestScanKernelReadsCommonRecords(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for round := 0; round < 200; round++ {
		recs := make([]records.Record, 1+r.Intn(50))
		for i := range recs {
			recs[i] = records.Record{OffsetDelta: int32(i), TimestampDelta: int64(r.Intn(8000)) - 4000, Key: []byte("key"), Value: make([]byte, r.Intn(3000))}
			if r.Intn(3) == 0 {
				recs[i].Key = nil
			}
			for h := r.Intn(3); h > 0; h-- {
				recs[i].Headers = append(recs[i].Headers, records.Header{Key: []byte("trace"), Value: make([]byte, r.Intn(100))})
			}
		}
		data := scanSection(t, recs)
		a, b := make([]int32, len(recs)*SpanRecordWords), make([]int32, len(recs)*SpanRecordWords)
		ha, hb := make([]int32, 400), make([]int32, 400)
		n1, r1, h1, done := scanRecordsKernel(data, 0, a, ha)
		n2, r2, h2, ok := scanRecordsGeneric(data, 0, b, hb)
		if !done || !ok || n1 != len(data) || r1 != len(recs) || n1 != n2 || r1 != r2 || h1 != h2 {
			t.Fatalf("round %d: kernel (%d, %d, %d, %v), twin (%d, %d, %d, %v) of %d records in %d bytes", round, n1, r1, h1, done, n2, r2, h2, ok, len(recs), len(data))
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("round %d: span word %d: kernel %d, twin %d", round, i, a[i], b[i])
			}
		}
		for i := 0; i < h1*SpanHeaderWords; i++ {
			if ha[i] != hb[i] {
				t.Fatalf("round %d: header word %d: kernel %d, twin %d", round, i, ha[i], hb[i])
			}
		}
	}
}

// TestScanKernelFuzz is the kernel's differential fuzzing inside the WebAssembly build
// (Go's coverage-guided fuzzer does not run WebAssembly): random record sections, spoilt
// by random byte flips, insertions, cuts and long varints, go through checkScan (the
// kernel's Scan and the twin against the reader) until KWIRE_KERNEL_FUZZTIME
// (a Go duration; 2s by default) is over. The seed of a failure is printed.
func TestScanKernelFuzz(t *testing.T) {
	d := kerneltest.FuzzTime(t, 2*time.Second)
	seed := time.Now().UnixNano()
	r := rand.New(rand.NewSource(seed))
	deadline := time.Now().Add(d)
	n := 0
	for ; time.Now().Before(deadline); n++ {
		if n%64 == 0 {
			// WebAssembly has one thread and no preemption: the collector's workers run
			// only when this goroutine yields, or the heap grows without bound.
			runtime.Gosched()
		}
		recs := randomRecords(r, 1+r.Intn(6))
		data := scanSection(t, recs)
		for m := r.Intn(4); m > 0 && len(data) > 0; m-- {
			at := r.Intn(len(data))
			switch r.Intn(4) {
			case 0:
				data[at] ^= byte(1 << r.Intn(8))
			case 1:
				data[at] = byte(r.Intn(256))
			case 2:
				data = data[:at]
			case 3:
				data = append(data[:at], append([]byte{0x80 | byte(r.Intn(128)), 0x80, 0x01}, data[at:]...)...)
			}
		}
		count := len(recs)
		if r.Intn(4) == 0 {
			count = r.Intn(len(recs) + 2)
		}
		checkScan(t, "fuzz case "+strconv.Itoa(n)+" of seed "+strconv.FormatInt(seed, 10), data, count)
	}
	t.Logf("%d cases in %v (seed %d)", n, d, seed)
}
