// Command kmsgtable runs kwire and franz-go's kmsg side by side on the same messages in
// one process and prints kwire/kmsg ratios of ns/op and allocs/op (lower is better for
// kwire; the target is at most 0.8).
package main

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/kwire/kwire/codec/bench"
)

func ratio(a, b float64) string {
	if b == 0 {
		if a == 0 {
			return "1.00 (0/0)"
		}
		return "inf"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func main() {
	rounds := flag.Int("rounds", 3, "alternating rounds per benchmark; the best of each is kept")
	flag.Parse()
	fmt.Printf("%-32s %-7s %12s %12s %8s %10s %10s %8s\n", "message", "op", "kwire ns/op", "kmsg ns/op", "ratio", "kwire allc", "kmsg allc", "ratio")
	worst := 0.0
	for _, c := range bench.Cases() {
		if err := c.CheckSame(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, op := range []struct {
			name   string
			kw, km func(*testing.B)
		}{{"decode", c.DecodeKwire, c.DecodeKmsg}, {"encode", c.EncodeKwire, c.EncodeKmsg}} {
			var kw, km testing.BenchmarkResult
			for i := 0; i < *rounds; i++ {
				// Alternate so that machine noise hits both sides alike; keep the best.
				if r := testing.Benchmark(op.kw); i == 0 || r.NsPerOp() < kw.NsPerOp() {
					kw = r
				}
				if r := testing.Benchmark(op.km); i == 0 || r.NsPerOp() < km.NsPerOp() {
					km = r
				}
			}
			nsr := float64(kw.NsPerOp()) / float64(km.NsPerOp())
			if nsr > worst {
				worst = nsr
			}
			fmt.Printf("%-32s %-7s %12d %12d %8s %10d %10d %8s\n", c.Name, op.name, kw.NsPerOp(), km.NsPerOp(),
				ratio(float64(kw.NsPerOp()), float64(km.NsPerOp())), kw.AllocsPerOp(), km.AllocsPerOp(),
				ratio(float64(kw.AllocsPerOp()), float64(km.AllocsPerOp())))
		}
	}
	fmt.Printf("worst ns/op ratio: %.2f (target <= 0.80)\n", worst)
}
