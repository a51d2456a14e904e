//go:build wasip1

// A proxy-wasm module that does nothing: every callback returns at once, and data
// callbacks let the bytes through. The proxy benchmark runs it as the floor of any
// Go-built filter: what a module costs in the harness before it reads a byte.
package main

import (
	_ "github.com/kwire/kwire/conformance/hosts/proxywasm/testdata/floorstubs" // the callbacks that return at once

	"github.com/kwire/kwire/internal/pinned"
)

var held pinned.Set[uint32]

//go:wasmexport proxy_on_memory_allocate
func onMemoryAllocate(size int32) int32 {
	if size <= 0 {
		return 0
	}
	return int32(held.Pin(make([]byte, size)))
}

//go:wasmexport proxy_on_configure
func onConfigure(ctx, size int32) int32 { return 1 }

//go:wasmexport proxy_on_downstream_data
func onDownstreamData(ctx, size, end int32) int32 { return 0 }

//go:wasmexport proxy_on_upstream_data
func onUpstreamData(ctx, size, end int32) int32 { return 0 }

func main() {}
