//go:build wasip1

// Command wasm is kwire's WebAssembly module: the kw_ functions of capi/kwire.h as
// //go:wasmexport functions over package abi. The exports themselves are generated
// (exports_gen.go, from internal/abitable); this file is their transport: linear-memory
// pointers, the live table, the last error. Build it as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o build/kwire.wasm ./wasm
//
// Pointers are i32 offsets into linear memory. Every buffer handed to the host (kw_alloc
// and every out buffer) stays referenced from the live table until kw_free, so Go's
// collector never reclaims memory the host still uses; every pointer the host passes in
// is checked against that table, so a stray pointer is KW_ERR_ARG rather than a trap.
// Exports start no goroutines, use no channels and never sleep.
package main

import (
	"encoding/binary"
	"strconv"

	"github.com/kwire/kwire/abi"
	"github.com/kwire/kwire/internal/pinned"
)

func main() {}

// gc yields to the collector's background workers (see pinned.Yielder) every
// 64 calls that allocate, or once 4 MiB were handed out since the last yield.
var gc = pinned.Yielder{Calls: 64, Bytes: 4 << 20}

// live holds every buffer handed to the host, by address, until kw_free.
var live pinned.Set[uint32]

// The last error of this instance (kw_last_error); empty after a success.
var (
	lastText []byte
	lastJSON = []byte(abi.OKJSON)
	hadError bool
)

// hand registers a buffer for the host and returns its address (an empty one gets an
// array of its own, so that every live buffer has a distinct address).
func hand(b []byte) (uint32, int32) { return live.Pin(b), int32(len(b)) }

// spare holds buffers the host freed, for the next outputs and kw_alloc calls: a host
// that decodes, frees and decodes again gets the same memory back, so steady-state
// calls allocate nothing and never start a GC cycle. At most spareMax buffers and
// spareBytes bytes are kept; the newest is reused first.
var spare [][]byte

const (
	spareMax   = 8
	spareBytes = 64 << 20
)

// release keeps a freed buffer in spare when there is room.
func release(b []byte) {
	if cap(b) < 64 {
		return
	}
	total := cap(b)
	for _, s := range spare {
		total += cap(s)
	}
	if len(spare) < spareMax && total <= spareBytes {
		spare = append(spare, b[:0])
	}
}

// takeSpare returns the newest spare buffer (empty, with its capacity) or nil.
func takeSpare() []byte {
	if len(spare) == 0 {
		return nil
	}
	b := spare[len(spare)-1]
	spare[len(spare)-1] = nil
	spare = spare[:len(spare)-1]
	return b
}

// takeSpareFor returns a spare buffer of at least n bytes (len n, zeroed) or nil.
func takeSpareFor(n int) []byte {
	for i := len(spare) - 1; i >= 0; i-- {
		if b := spare[i]; cap(b) >= n && cap(b) <= 2*n+4096 {
			copy(spare[i:], spare[i+1:])
			spare[len(spare)-1] = nil
			spare = spare[:len(spare)-1]
			b = b[:n]
			clear(b)
			return b
		}
	}
	return nil
}

// region returns the bytes [p, p+n) when they lie inside one live buffer.
func region(p, n uint32) ([]byte, bool) { return live.Region(p, n) }

func setErr(e *abi.Error) int32 {
	lastText = append(lastText[:0], e.Text...)
	lastJSON = e.AppendJSON(lastJSON[:0])
	hadError = true
	gc.Note(len(lastJSON))
	return e.Status
}

func clearErr() {
	if hadError {
		lastText = lastText[:0]
		lastJSON = append(lastJSON[:0], abi.OKJSON...)
		hadError = false
	}
}

func recovered(st *int32) {
	if p := recover(); p != nil {
		*st = setErr(abi.Recovered(p))
	}
}

func abiVersion() int32 { return abi.Version() }

func recoveredPointer(p *uint32) {
	if r := recover(); r != nil {
		setErr(abi.Recovered(r))
		*p = 0
	}
}

// recoveredQuiet is the recovery of kw_last_error(_json): the last error is what they
// read, so a panic there leaves it alone.
func recoveredQuiet(st *int32) {
	if recover() != nil {
		*st = abi.StatusInternal
	}
}

// linearMax is the memory wasm32 addresses: 4 GiB.
const linearMax = 4 << 30

func alloc(size int32) uint32 {
	if e := abi.CheckAlloc(size); e != nil {
		setErr(e)
		return 0
	}
	b := takeSpareFor(int(size))
	if b == nil {
		if size >= bigAlloc && !fits(int(size)) {
			setErr(abi.AllocFailed(size))
			return 0
		}
		b = make([]byte, size)
		gc.Note(int(size))
	}
	p, _ := hand(b)
	clearErr()
	return p
}

// bigAlloc is the size from which kw_alloc checks that linear memory can still hold it:
// Go's runtime does not return a failed allocation, it aborts the instance.
const bigAlloc = 64 << 20

// fits reports whether n more bytes, with the buffers the host holds, twice over (the
// collector's headroom), stay inside the memory wasm32 can address.
func fits(n int) bool { return 2*(uint64(live.Size())+uint64(n)) <= linearMax }

func free(p uint32) int32 {
	if p == 0 {
		clearErr()
		return abi.StatusOK
	}
	b, ok := live.Unpin(p)
	if !ok {
		return setErr(abi.ArgText("kw_free: " + strconv.FormatUint(uint64(p), 10) + " is not a live buffer (double free or stray pointer)"))
	}
	release(b)
	clearErr()
	return abi.StatusOK
}

func lastErrorText(out, outLen uint32) int32 { return lastErrorOut(out, outLen, lastText) }
func lastErrorJSON(out, outLen uint32) int32 { return lastErrorOut(out, outLen, lastJSON) }

func lastErrorOut(out, outLen uint32, text []byte) int32 {
	if out == 0 || outLen == 0 {
		return abi.StatusArg
	}
	o, ok1 := region(out, 4)
	l, ok2 := region(outLen, 4)
	if !ok1 || !ok2 {
		return abi.StatusArg
	}
	var p uint32
	if cap(text) > 0 {
		p = uint32(pinned.Addr(text))
	}
	binary.LittleEndian.PutUint32(o, p)
	binary.LittleEndian.PutUint32(l, uint32(len(text)))
	return abi.StatusOK
}

// outBuf is a checked (out, out_len) pair.
type outBuf struct{ o, l []byte }

// openOut checks the out-param slots of a call and clears them.
func openOut(out, outLen uint32) (outBuf, *abi.Error) {
	if out == 0 || outLen == 0 {
		return outBuf{}, abi.ArgText("NULL out-param")
	}
	o, ok1 := region(out, 4)
	l, ok2 := region(outLen, 4)
	if !ok1 || !ok2 {
		return outBuf{}, abi.ArgText("out-param slot is not inside a live kw_alloc buffer")
	}
	binary.LittleEndian.PutUint32(o, 0)
	binary.LittleEndian.PutUint32(l, 0)
	return outBuf{o, l}, nil
}

// dst is the buffer a result is appended to: a spare one when there is one.
func (b outBuf) dst() []byte { return takeSpare() }

// finish hands a result to the host through its slots.
func (b outBuf) finish(res []byte, err error) int32 {
	if err != nil {
		release(res) // dst, unused: never handed out
		return setErr(abi.AsError(err))
	}
	if e := abi.CheckOutput(len(res)); e != nil {
		return setErr(e)
	}
	p, n := hand(res)
	gc.Note(len(res))
	binary.LittleEndian.PutUint32(b.o, p)
	binary.LittleEndian.PutUint32(b.l, uint32(n))
	clearErr()
	return abi.StatusOK
}

// i32Slot is a checked int32_t * out-param (nil: none was given).
type i32Slot []byte

func (s i32Slot) set(v int32) {
	if s != nil {
		binary.LittleEndian.PutUint32(s, uint32(v))
	}
}

// argOutI32 checks a required int32_t * out-param and clears it.
func argOutI32(p uint32, what string) (i32Slot, *abi.Error) {
	if p == 0 {
		return nil, abi.ArgText("NULL " + what)
	}
	s, e := argOptI32(p, what)
	if e == nil {
		s.set(0)
	}
	return s, e
}

// argOptI32 checks an int32_t * out-param that may be NULL.
func argOptI32(p uint32, what string) (i32Slot, *abi.Error) {
	if p == 0 {
		return nil, nil
	}
	b, ok := region(p, 4)
	if !ok {
		return nil, abi.ArgText(what + " slot is not inside a live kw_alloc buffer")
	}
	return b, nil
}

// argPeek checks the kw_peek_header a call fills in.
func argPeek(p uint32) ([]byte, *abi.Error) {
	if p == 0 {
		return nil, abi.ArgText("NULL out-param")
	}
	b, ok := region(p, abi.PeekSize)
	if !ok {
		return nil, abi.ArgText("kw_peek_header at " + strconv.FormatUint(uint64(p), 10) + " is not inside a live kw_alloc buffer")
	}
	return b, nil
}

// argBytes checks an input (pointer, length) pair.
func argBytes(p uint32, n int32, what string) ([]byte, *abi.Error) {
	if n < 0 {
		return nil, abi.ArgText(what + ": negative length " + strconv.Itoa(int(n)))
	}
	if p == 0 && n > 0 {
		return nil, abi.ArgText(what + ": NULL pointer with length " + strconv.Itoa(int(n)))
	}
	b, ok := region(p, uint32(n))
	if !ok {
		return nil, abi.ArgText(what + ": [" + strconv.FormatUint(uint64(p), 10) + ", " +
			strconv.FormatUint(uint64(p)+uint64(n), 10) + ") is not inside a live kw_alloc buffer")
	}
	return b, nil
}

// argText is an input taken as a string.
func argText(p uint32, n int32, what string) (string, *abi.Error) {
	b, e := argBytes(p, n, what)
	return string(b), e
}

// names holds the message names hosts have passed, so that a repeated name costs no
// allocation (a lookup by string(b) does not allocate); at most maxNames are kept.
var names = map[string]string{}

const maxNames = 1024

func argName(p uint32, n int32) (string, *abi.Error) {
	b, e := argBytes(p, n, "name")
	if e != nil {
		return "", e
	}
	if s, ok := names[string(b)]; ok {
		return s, nil
	}
	s := string(b)
	if len(names) < maxNames {
		names[s] = s
	}
	return s, nil
}

func done(err error) int32 {
	if err != nil {
		return setErr(abi.AsError(err))
	}
	clearErr()
	return abi.StatusOK
}

// runtimeStats is kw_runtime_stats over the live table.
func runtimeStats(dst []byte) ([]byte, error) {
	return abi.RuntimeStats(dst, live.Len(), live.Size()), nil
}

// nilPtr is the NULL input of a shim that takes none.
const nilPtr = 0

// callOut is the common shim, recovering a panic: check and clear the out-params, check the input (none
// when in is 0 and inLen 0), run fn, hand its result to the host.
func callOut(out, outLen, in uint32, inLen int32, what string, fn func(dst, src []byte) ([]byte, error)) (st int32) {
	defer recovered(&st)
	o, e := openOut(out, outLen)
	if e != nil {
		return setErr(e)
	}
	src, e := argBytes(in, inLen, what)
	if e != nil {
		return setErr(e)
	}
	res, err := fn(o.dst(), src)
	return o.finish(res, err)
}

// guarded runs the body of a shim that does not fit callOut, recovering a panic.
func guarded(body func() int32) (st int32) {
	defer recovered(&st)
	return body()
}
