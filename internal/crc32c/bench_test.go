package crc32c

import (
	"testing"
	"time"
)

var benchImpls = []struct {
	name string
	fn   func(uint32, []byte) uint32
}{
	{"kernel", Update}, // the wasm kernel in the wasm build, hash/crc32 otherwise
	{"generic", updateGeneric},
	{"hashcrc32", ref},
}

var benchSizes = []struct {
	name string
	n    int
}{{"64B", 64}, {"1KiB", 1 << 10}, {"64KiB", 64 << 10}, {"1MiB", 1 << 20}}

// BenchmarkUpdate runs Update, updateGeneric and hash/crc32 one after the
// other on the same buffers. cpu-MB/s, from the process's CPU time, is
// steadier than MB/s on a busy machine (under wazero it needs /proc: run
// with -exec "wazero run -mount=/:/ -env-inherit").
// Load that changes during the run still skews the comparison: for ratios,
// see BenchmarkInterleaved.
func BenchmarkUpdate(b *testing.B) {
	for _, size := range benchSizes {
		buf := random(10, size.n)
		for _, impl := range benchImpls {
			b.Run(size.name+"/"+impl.name, func(b *testing.B) {
				b.SetBytes(int64(len(buf)))
				var crc uint32
				cpu := cpuNanos()
				for b.Loop() {
					crc = impl.fn(crc, buf)
				}
				if cpu != 0 {
					if ns := float64(cpuNanos()-cpu) / float64(b.N); ns > 0 {
						b.ReportMetric(ns, "cpu-ns/op")
						b.ReportMetric(float64(len(buf))*1e3/ns, "cpu-MB/s")
					}
				}
				sink = crc
			})
		}
	}
}

// BenchmarkInterleaved takes turns between the three implementations, about
// 4 MiB of input at a time, and times each turn (CPU time where the host
// has it, else wall time), so that all three see the same machine. An op is
// one call of one of them; it reports each one's MB/s and the ratios
// kernel/hashcrc32 and generic/hashcrc32.
func BenchmarkInterleaved(b *testing.B) {
	for _, size := range benchSizes {
		buf := random(11, size.n)
		b.Run(size.name, func(b *testing.B) {
			clock := cpuNanos
			if clock() == 0 {
				clock = func() int64 { return time.Now().UnixNano() }
			}
			turn := max(1, (4<<20)/len(buf))
			var ns [3]int64
			var calls [3]int64
			var crc uint32
			i, k := 0, 0
			t := clock()
			for b.Loop() {
				crc = benchImpls[k].fn(crc, buf)
				calls[k]++
				if i++; i == turn {
					now := clock()
					ns[k] += now - t
					t = now
					i, k = 0, (k+1)%3
				}
			}
			sink = crc
			var mbps [3]float64
			for j := range benchImpls {
				if ns[j] <= 0 {
					return // too short a run to have timed every turn
				}
				mbps[j] = float64(calls[j]) * float64(len(buf)) * 1e3 / float64(ns[j])
				b.ReportMetric(mbps[j], benchImpls[j].name+"-MB/s")
			}
			b.ReportMetric(mbps[0]/mbps[2], "kernel/hashcrc32")
			b.ReportMetric(mbps[1]/mbps[2], "generic/hashcrc32")
		})
	}
}

// BenchmarkFillTable is the work the package does at init (in a WASI
// reactor, in _initialize).
func BenchmarkFillTable(b *testing.B) {
	var t slicing16
	for b.Loop() {
		fillTable(&t, poly)
	}
}

var sink uint32
