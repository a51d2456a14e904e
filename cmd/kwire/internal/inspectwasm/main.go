//go:build wasip1

// Command inspectwasm is the browser inspector's WebAssembly module: kwire pcap's
// capture reader and kwire decode's line writer (package inspect) behind three
// //go:wasmexport functions. Build it as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o kwire-inspect.wasm ./internal/inspectwasm
//
// The host calls inspect_alloc(n) for an input buffer, writes the bytes, calls
// inspect_pcap or inspect_frame, then reads inspect_out_len() bytes at inspect_out_ptr():
// JSON lines. The input buffer stays valid until the next inspect_alloc; the output
// until the next call.
package main

import (
	"runtime"

	"github.com/kwire/kwire/cmd/kwire/internal/inspect"
	"github.com/kwire/kwire/internal/pinned"
)

func main() {}

// in is the input buffer the host writes, out the JSON lines it reads: each held until
// the next one replaces it.
var in, out pinned.Slot

//go:wasmexport inspect_alloc
func inspectAlloc(n int32) uint32 {
	if n < 0 {
		return 0
	}
	out.Put(nil)
	in.Put(nil)
	runtime.GC()
	return uint32(in.Put(make([]byte, n)))
}

// inspect_pcap reads the input as a capture; port, when not 0, is the only server
// port. It returns 0, or 1 when the capture could not be read (the last line says
// why).
//
//go:wasmexport inspect_pcap
func inspectPcap(port int32) int32 {
	var ports []uint16
	if port > 0 && port < 65536 {
		ports = []uint16{uint16(port)}
	}
	b, err := inspect.Pcap(out.Bytes()[:0], in.Bytes(), ports)
	if err != nil {
		b = inspect.ErrorLine(b, err)
	}
	out.Put(b)
	if err != nil {
		return 1
	}
	return 0
}

// inspect_frame decodes the input as one frame: a request when apiKey < 0, else a
// response to apiKey and version.
//
//go:wasmexport inspect_frame
func inspectFrame(apiKey, version int32) int32 {
	out.Put(inspect.Frame(out.Bytes()[:0], in.Bytes(), int16(apiKey), int16(version)))
	return 0
}

//go:wasmexport inspect_out_ptr
func inspectOutPtr() uint32 { return uint32(out.Put(out.Bytes())) }

//go:wasmexport inspect_out_len
func inspectOutLen() int32 { return int32(len(out.Bytes())) }
