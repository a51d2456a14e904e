//go:build wasm && !kwire_purego

package records

import (
	"math/rand"
	"testing"
)

// TestScanKernelReadsCommonRecords: the kernel alone reads a whole section of records
// with short varints (it must not leave them all to the twin), writing what the twin
// writes.
func TestScanKernelReadsCommonRecords(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for round := 0; round < 200; round++ {
		recs := make([]Record, 1+r.Intn(50))
		for i := range recs {
			recs[i] = Record{OffsetDelta: int32(i), TimestampDelta: int64(r.Intn(8000)) - 4000, Key: []byte("key"), Value: make([]byte, r.Intn(3000))}
			if r.Intn(3) == 0 {
				recs[i].Key = nil
			}
			for h := r.Intn(3); h > 0; h-- {
				recs[i].Headers = append(recs[i].Headers, Header{Key: []byte("trace"), Value: make([]byte, r.Intn(100))})
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
