//go:build !linux && !wasip1

package crc32c

// cpuNanos is not measured on this system: benchmarks report no CPU time.
func cpuNanos() int64 { return 0 }
