package abi

import (
	"runtime/metrics"
	"strconv"
)

// The runtime figures kw_runtime_stats reports, read with runtime/metrics.
var runtimeSamples = []metrics.Sample{
	{Name: "/gc/cycles/total:gc-cycles"},
	{Name: "/gc/heap/allocs:objects"},
	{Name: "/gc/heap/allocs:bytes"},
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/total:bytes"},
}

var runtimeKeys = [...]string{"gcCycles", "heapAllocs", "heapAllocBytes", "heapLiveBytes", "runtimeBytes"}

// RuntimeStats is kw_runtime_stats: the library's Go runtime figures as one JSON object,
// appended to dst. buffers and bufferBytes are the host-held buffers the caller counts
// (live kw_alloc and output buffers). Reading them allocates nothing.
func RuntimeStats(dst []byte, buffers, bufferBytes int) []byte {
	metrics.Read(runtimeSamples)
	dst = append(dst, '{')
	for i, s := range runtimeSamples {
		dst = append(dst, '"')
		dst = append(dst, runtimeKeys[i]...)
		dst = append(dst, `":`...)
		var v uint64
		if s.Value.Kind() == metrics.KindUint64 {
			v = s.Value.Uint64()
		}
		dst = strconv.AppendUint(dst, v, 10)
		dst = append(dst, ',')
	}
	dst = append(dst, `"liveBuffers":`...)
	dst = strconv.AppendInt(dst, int64(buffers), 10)
	dst = append(dst, `,"liveBufferBytes":`...)
	dst = strconv.AppendInt(dst, int64(bufferBytes), 10)
	return append(dst, '}')
}
