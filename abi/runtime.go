package abi

import (
	"runtime"
	"strconv"
)

// memStats is reused by RuntimeStats so that reading the figures allocates nothing.
var memStats runtime.MemStats

// RuntimeStats is kw_runtime_stats: the library's Go runtime figures as one JSON object,
// appended to dst. buffers and bufferBytes are the host-held buffers the caller counts
// (live kw_alloc and output buffers). The figures are runtime.ReadMemStats', which are
// exact (every cache flushed); reading them stops the world for a moment and allocates
// nothing.
func RuntimeStats(dst []byte, buffers, bufferBytes int) []byte {
	runtime.ReadMemStats(&memStats)
	m := &memStats
	for i, v := range [...]uint64{uint64(m.NumGC), m.Mallocs, m.TotalAlloc, m.HeapAlloc, m.Sys, uint64(buffers), uint64(bufferBytes)} {
		if i == 0 {
			dst = append(dst, '{')
		} else {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, runtimeKeys[i]...)
		dst = append(dst, `":`...)
		dst = strconv.AppendUint(dst, v, 10)
	}
	return append(dst, '}')
}

var runtimeKeys = [...]string{"gcCycles", "heapAllocs", "heapAllocBytes", "heapLiveBytes", "runtimeBytes", "liveBuffers", "liveBufferBytes"}
