package zstd

import (
	"testing"

	kzstd "github.com/klauspost/compress/zstd"
)

// BenchmarkDecode compares this decoder with klauspost/compress's (one
// goroutine) on the same frames; run both in one go and compare ns/op, or
// cpu-ns/op (the process's CPU time per operation, steadier than wall time on
// a shared machine).
func BenchmarkDecode(b *testing.B) {
	ins := []input{
		{"records-1KiBx1000", records(61, 1000, 1024)},
		{"text-1MiB", text(62, 1<<20)},
	}
	kdec, err := kzstd.NewReader(nil, kzstd.WithDecoderConcurrency(1))
	if err != nil {
		b.Fatal(err)
	}
	defer kdec.Close()
	for _, in := range ins {
		comp := encode(b, encoding{"default", false, []kzstd.EOption{kzstd.WithEncoderLevel(kzstd.SpeedDefault)}}, in.data)
		out := make([]byte, 0, len(in.data))
		b.Run(in.name+"/kwire", func(b *testing.B) {
			var d Decoder
			b.SetBytes(int64(len(in.data)))
			defer reportCPU(b)()
			for b.Loop() {
				if _, err := d.DecodeAll(out[:0], comp, len(in.data)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(in.name+"/klauspost", func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			defer reportCPU(b)()
			for b.Loop() {
				if _, err := kdec.DecodeAll(comp, out[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// reportCPU starts measuring CPU time; the function it returns reports it per
// operation.
func reportCPU(b *testing.B) func() {
	start := cpuNanos()
	return func() {
		if used := cpuNanos() - start; used > 0 && b.N > 0 {
			b.ReportMetric(float64(used)/float64(b.N), "cpu-ns/op")
		}
	}
}
