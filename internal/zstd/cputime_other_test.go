//go:build !linux && !js

package zstd

// cpuNanos is not measured on this system: benchmarks report no CPU time.
func cpuNanos() int64 { return 0 }
