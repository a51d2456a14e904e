//go:build wasm && !kwire_purego

package records

import (
	"bytes"
	"strconv"
	"sync/atomic"

	"github.com/kwire/kwire/internal/kerneltest"
)

// The kernels under test in this build.
var (
	asmLZ4    = lz4DecodeKernel
	asmSnappy = snappyDecodeKernel
)

// Blocks the hooks checked.
var lz4HookChecks, snappyHookChecks atomic.Int64

// Every block a test of this package decodes through lz4Decode or
// snappyDecode (record vectors, frames, batches, fuzz seeds) is decoded again
// by the plain-Go decoder and must come out the same: the kernel accepts
// exactly what the twin accepts, with the same bytes. A mismatch panics, which
// fails the test that decoded the block. Benchmarks run without the hooks.
func init() {
	if kerneltest.Benchmarking() {
		return
	}
	lz4KernelHook = func(buf []byte, base, start int, src []byte, n int) {
		g := append([]byte(nil), buf[base:]...)
		gn, gerr := lz4DecodeGeneric(g, 0, start-base, src)
		switch {
		case n >= 0 && gerr != nil:
			panic("lz4 kernel accepts a block of " + strconv.Itoa(len(src)) + " bytes the twin refuses: " + gerr.Error())
		case n >= 0 && (gn != n || !bytes.Equal(g[start-base:start-base+n], buf[start:start+n])):
			panic("lz4 kernel and twin decode a block of " + strconv.Itoa(len(src)) + " bytes differently")
		case n < 0 && gerr == nil:
			panic("lz4 kernel refuses a block of " + strconv.Itoa(len(src)) + " bytes the twin accepts")
		}
		lz4HookChecks.Add(1)
	}
	snappyKernelHook = func(dst, src []byte, s int, ok bool) {
		g := make([]byte, len(dst), cap(dst))
		gerr := snappyDecodeGeneric(g, src, s)
		switch {
		case ok && gerr != nil:
			panic("snappy kernel accepts a block of " + strconv.Itoa(len(src)) + " bytes the twin refuses: " + gerr.Error())
		case ok && !bytes.Equal(g, dst):
			panic("snappy kernel and twin decode a block of " + strconv.Itoa(len(src)) + " bytes differently")
		case !ok && gerr == nil:
			panic("snappy kernel refuses a block of " + strconv.Itoa(len(src)) + " bytes the twin accepts")
		}
		snappyHookChecks.Add(1)
	}
}
