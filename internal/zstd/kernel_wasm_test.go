//go:build wasm && !kwire_purego

package zstd

import (
	"bytes"
	"strconv"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/kwire/kwire/internal/kerneltest"
)

// Blocks and literal streams the hooks checked.
var seqHookChecks, huffHookChecks atomic.Int64

// Of those, the ones the kernels refused.
var seqHookRefused, huffHookRefused atomic.Int64

// huffScratch is where the Huffman hook's twin decodes.
var huffScratch [maxBlockSize]byte

// hookScratch is where the hook's twin decodes, reused so that the hook does
// not allocate (TestNoAllocsSteadyState runs with it).
var hookScratch []byte

// Every block a test of this package decodes through the sequences kernel is
// decoded again by sequencesGeneric, from the same state, and must come out
// the same: the kernel accepts what the twin accepts (unless the output does
// not fit in the room the kernel was given, where the twin grows dst), with
// the same bytes and repeat offsets. So is every literal stream through the
// Huffman kernel, by huffStreamGeneric. A mismatch panics, which fails the test
// that decoded the block. Benchmarks run without the hook.
func init() {
	if kerneltest.Benchmarking() {
		return
	}
	seqKernelHook = func(d *Decoder, dst, lits, src []byte, nseq, n int, reps [3]int) {
		room := cap(dst)
		if d.end < room {
			room = d.end
		}
		var kout []byte
		if n >= 0 {
			kout = dst[:n]
		}
		kreps := d.reps
		d.reps = reps
		if cap(hookScratch) < room {
			hookScratch = make([]byte, 0, room)
		}
		g := append(hookScratch[:0], dst...)
		gout, gerr := d.sequencesGeneric(g, lits, src, nseq, 0)
		greps := d.reps
		d.reps = kreps
		switch {
		case n >= 0 && gerr != nil:
			panic("sequences kernel accepts " + seqBlockName(nseq, src) + " the twin refuses: " + gerr.Error())
		case n >= 0 && (!bytes.Equal(gout, kout) || greps != kreps):
			panic("sequences kernel and twin decode " + seqBlockName(nseq, src) + " differently")
		case n < 0 && gerr == nil && len(gout) <= room:
			panic("sequences kernel refuses " + seqBlockName(nseq, src) + " the twin accepts")
		}
		seqHookChecks.Add(1)
		if n < 0 {
			seqHookRefused.Add(1)
		}
	}
	huffKernelHook = func(d *Decoder, out, src []byte, ok bool) {
		g := huffScratch[:len(out)]
		gok := d.huffStreamGeneric(g, src)
		switch {
		case ok && !gok:
			panic("Huffman kernel accepts a stream of " + strconv.Itoa(len(src)) + " bytes the twin refuses")
		case ok && !bytes.Equal(g, out):
			panic("Huffman kernel and twin decode a stream of " + strconv.Itoa(len(src)) + " bytes differently")
		case !ok && gok:
			panic("Huffman kernel refuses a stream of " + strconv.Itoa(len(src)) + " bytes the twin accepts")
		}
		huffHookChecks.Add(1)
		if !ok {
			huffHookRefused.Add(1)
		}
	}
}

// seqBlockName names a block's sequences for a panic message.
func seqBlockName(nseq int, src []byte) string {
	return strconv.Itoa(nseq) + " sequences (" + strconv.Itoa(len(src)) + " bytes)"
}

// TestKernelLayout checks the offsets kernel_wasm.s reads the tables at.
func TestKernelLayout(t *testing.T) {
	var e fseEntry
	var ft fseTable
	var d Decoder
	if unsafe.Sizeof(e) != 8 || unsafe.Offsetof(e.base) != 0 || unsafe.Offsetof(e.next) != 4 ||
		unsafe.Offsetof(e.extra) != 6 || unsafe.Offsetof(e.nb) != 7 {
		t.Fatal("fseEntry is not laid out as kernel_wasm.s reads it")
	}
	if unsafe.Offsetof(ft.log) != 4096 || len(ft.e) != 512 {
		t.Fatal("fseTable is not laid out as kernel_wasm.s reads it")
	}
	if len(d.huff) != 1<<maxHuffBits || unsafe.Sizeof(d.huff[0]) != 2 {
		t.Fatal("the Huffman table is not laid out as kernel_wasm.s reads it")
	}
}
