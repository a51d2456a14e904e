//go:build wasip1

// A proxy-wasm module that does the least a Kafka filter that counts and times requests
// can do: it reads each frame's head (a host read, which allocates in the module), reads
// the clock for each request and response, records each response's duration, and lets
// every byte through.
package main

import (
	"encoding/binary"
	"unsafe"

	_ "github.com/kwire/kwire/conformance/hosts/proxywasm/testdata/floorstubs" // the callbacks that return at once
)

//go:wasmimport env proxy_get_buffer_bytes
func getBufferBytes(buffer int32, start int32, maxSize int32, retData unsafe.Pointer, retSize unsafe.Pointer) int32

//go:wasmimport env proxy_get_current_time_nanoseconds
func currentTime(ret unsafe.Pointer) int32

//go:wasmimport env proxy_record_metric
func recordMetric(id int32, value int64) int32

//go:wasmimport env proxy_define_metric
func defineMetric(kind int32, name unsafe.Pointer, nameSize int32, retID unsafe.Pointer) int32

var (
	head [64]byte
	out  struct {
		ptr, size uint32
		t         uint64
	}
	left    [2]int // bytes of the current frame still to come, per direction
	start   int64
	metric  uint32
	defined bool
)

//go:wasmexport proxy_on_memory_allocate
func onMemoryAllocate(size int32) int32 {
	if size <= 0 || int(size) > len(head) {
		return 0
	}
	return int32(uintptr(unsafe.Pointer(&head[0])))
}

//go:wasmexport proxy_on_configure
func onConfigure(ctx, size int32) int32 {
	name := "floorio.duration"
	defineMetric(2, unsafe.Pointer(unsafe.StringData(name)), int32(len(name)), unsafe.Pointer(&out.ptr))
	metric = out.ptr
	return 1
}

func data(dir int, buffer, size int32) {
	if left[dir] >= int(size) {
		left[dir] -= int(size)
		return
	}
	n := int32(min(int(size)-left[dir], 8))
	getBufferBytes(buffer, int32(left[dir]), n, unsafe.Pointer(&out.ptr), unsafe.Pointer(&out.size))
	frame := 4 + int(binary.BigEndian.Uint32(head[:4]))
	left[dir] = frame - (int(size) - left[dir])
	currentTime(unsafe.Pointer(&out.t))
	if dir == 0 {
		start = int64(out.t)
	} else {
		recordMetric(int32(metric), (int64(out.t)-start)/1e6)
	}
}

//go:wasmexport proxy_on_downstream_data
func onDownstreamData(ctx, size, end int32) int32 { data(0, 2, size); return 0 }

//go:wasmexport proxy_on_upstream_data
func onUpstreamData(ctx, size, end int32) int32 { data(1, 3, size); return 0 }

func main() {}
