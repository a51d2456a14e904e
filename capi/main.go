// Command capi is kwire's C library: the kw_ functions of kwire.h as cgo exports over
// package abi. The exports themselves are generated (exports_gen.go, from
// internal/abitable); this file is their transport: C memory, the live table, the
// thread's last error. Build it with
//
//	go build -buildmode=c-shared  -o build/libkwire.so ./capi
//	go build -buildmode=c-archive -o build/libkwire.a  ./capi
//
// Every output is copied into malloc'ed memory (never Go memory) and recorded in the
// table of live buffers that kw_free checks, so a double free or a stray pointer is
// KW_ERR_ARG instead of heap corruption. The last error lives in C thread-local storage:
// a cgo export runs on the calling C thread, so each thread sees its own. Every export
// recovers panics into KW_ERR_INTERNAL.
package main

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The last error of the calling thread: its text and its JSON form.
static __thread uint8_t *kw_err_text;
static __thread int32_t kw_err_text_len, kw_err_text_cap;
static __thread uint8_t *kw_err_json;
static __thread int32_t kw_err_json_len, kw_err_json_cap;
static __thread int kw_err_set;

static const uint8_t kw_ok_json[] = "{\"status\":0}";

static int kw_store(uint8_t **buf, int32_t *len, int32_t *cap, const void *src, int32_t n) {
	if (n + 1 > *cap) {
		uint8_t *p = (uint8_t *)realloc(*buf, (size_t)n + 1);
		if (p == NULL) {
			*len = 0;
			return -1;
		}
		*buf = p;
		*cap = n + 1;
	}
	if (n > 0) memcpy(*buf, src, (size_t)n);
	(*buf)[n] = 0;
	*len = n;
	return 0;
}

static void kw_set_error(const void *text, int32_t text_len, const void *json, int32_t json_len) {
	kw_store(&kw_err_text, &kw_err_text_len, &kw_err_text_cap, text, text_len);
	kw_store(&kw_err_json, &kw_err_json_len, &kw_err_json_cap, json, json_len);
	kw_err_set = 1;
}

static void kw_clear_error(void) {
	if (kw_err_set) {
		kw_err_text_len = 0;
		kw_err_json_len = 0;
		kw_err_set = 0;
	}
}

static void kw_get_error(int json, const uint8_t **out, int32_t *out_len) {
	if (json) {
		if (kw_err_set && kw_err_json != NULL) {
			*out = kw_err_json;
			*out_len = kw_err_json_len;
		} else {
			*out = kw_ok_json;
			*out_len = (int32_t)(sizeof(kw_ok_json) - 1);
		}
	} else {
		*out = kw_err_text;
		*out_len = kw_err_set ? kw_err_text_len : 0;
	}
}
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/kwire/kwire/abi"
)

func main() {}

// live is the table of buffers handed to C: address -> size.
var live struct {
	sync.Mutex
	m map[uintptr]int
}

func init() { live.m = map[uintptr]int{} }

func register(p unsafe.Pointer, n int) {
	live.Lock()
	live.m[uintptr(p)] = n
	live.Unlock()
}

func unregister(p unsafe.Pointer) bool {
	live.Lock()
	_, ok := live.m[uintptr(p)]
	if ok {
		delete(live.m, uintptr(p))
	}
	live.Unlock()
	return ok
}

// scratch buffers the abi functions append to before the result is copied out.
var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func setErr(e *abi.Error) C.int32_t {
	text := e.Text
	js := e.AppendJSON(nil)
	var tp, jp unsafe.Pointer
	if len(text) > 0 {
		tp = unsafe.Pointer(unsafe.StringData(text))
	}
	if len(js) > 0 {
		jp = unsafe.Pointer(&js[0])
	}
	C.kw_set_error(tp, C.int32_t(len(text)), jp, C.int32_t(len(js)))
	return C.int32_t(e.Status)
}

func recovered(st *C.int32_t) {
	if p := recover(); p != nil {
		*st = setErr(abi.Recovered(p))
	}
}

// The transport of the generated shims (exports_gen.go).

func abiVersion() C.int32_t { return C.int32_t(abi.Version()) }

func recoveredPointer(p **C.uint8_t) {
	if r := recover(); r != nil {
		setErr(abi.Recovered(r))
		*p = nil
	}
}

// recoveredQuiet is the recovery of kw_last_error(_json): the last error is what they
// read, so a panic there leaves it alone.
func recoveredQuiet(st *C.int32_t) {
	if recover() != nil {
		*st = C.int32_t(abi.StatusInternal)
	}
}

func alloc(size C.int32_t) *C.uint8_t {
	if e := abi.CheckAlloc(int32(size)); e != nil {
		setErr(e)
		return nil
	}
	m := C.calloc(C.size_t(max(size, 1)), 1)
	if m == nil {
		setErr(abi.AllocFailed(int32(size)))
		return nil
	}
	register(m, int(size))
	C.kw_clear_error()
	return (*C.uint8_t)(m)
}

func free(p unsafe.Pointer) C.int32_t {
	if p == nil {
		C.kw_clear_error()
		return 0
	}
	if !unregister(p) {
		return setErr(argError("kw_free: %p is not a live buffer (double free or stray pointer)", p))
	}
	C.free(p)
	C.kw_clear_error()
	return 0
}

func lastErrorText(out **C.uint8_t, outLen *C.int32_t) C.int32_t { return lastErrorOut(out, outLen, 0) }
func lastErrorJSON(out **C.uint8_t, outLen *C.int32_t) C.int32_t { return lastErrorOut(out, outLen, 1) }

func lastErrorOut(out **C.uint8_t, outLen *C.int32_t, json C.int) C.int32_t {
	if out == nil || outLen == nil {
		return C.int32_t(abi.StatusArg)
	}
	C.kw_get_error(json, out, outLen)
	return 0
}

// outBuf is a checked (out, out_len) pair and the scratch buffer its result is built in.
type outBuf struct {
	out     **C.uint8_t
	outLen  *C.int32_t
	scratch *[]byte
}

// openOut checks the out-params of a call and clears them.
func openOut(out **C.uint8_t, outLen *C.int32_t) (*outBuf, *abi.Error) {
	if out == nil || outLen == nil {
		return nil, argError("NULL out-param")
	}
	*out = nil
	*outLen = 0
	return &outBuf{out: out, outLen: outLen}, nil
}

// dst is the buffer a result is appended to: a pooled scratch buffer.
func (b *outBuf) dst() []byte {
	b.scratch = scratch.Get().(*[]byte)
	return (*b.scratch)[:0]
}

// finish copies a result into malloc'ed memory and stores it in the out-params.
func (b *outBuf) finish(res []byte, err error) C.int32_t {
	defer b.putScratch(res)
	if err != nil {
		return setErr(abi.AsError(err))
	}
	if e := abi.CheckOutput(len(res)); e != nil {
		return setErr(e)
	}
	n := len(res)
	p := C.malloc(C.size_t(max(n, 1)))
	if p == nil {
		return setErr(abi.OutputFailed(n))
	}
	copy(unsafe.Slice((*byte)(p), n), res)
	register(p, n)
	*b.out = (*C.uint8_t)(p)
	*b.outLen = C.int32_t(n)
	C.kw_clear_error()
	return 0
}

func (b *outBuf) putScratch(res []byte) {
	if b.scratch != nil && cap(res) <= 1<<20 {
		*b.scratch = res[:0]
		scratch.Put(b.scratch)
	}
}

// i32Slot is an int32_t * out-param (nil: none was given).
type i32Slot struct{ p *C.int32_t }

func (s i32Slot) set(v int32) {
	if s.p != nil {
		*s.p = C.int32_t(v)
	}
}

// argOutI32 checks a required int32_t * out-param and clears it.
func argOutI32(p *C.int32_t, what string) (i32Slot, *abi.Error) {
	if p == nil {
		return i32Slot{}, argError("NULL %s", what)
	}
	*p = 0
	return i32Slot{p}, nil
}

// argOptI32 takes an int32_t * out-param that may be NULL.
func argOptI32(p *C.int32_t, _ string) (i32Slot, *abi.Error) { return i32Slot{p}, nil }

// argPeek is the kw_peek_header a call fills in, as its 32 bytes.
func argPeek(p unsafe.Pointer) ([]byte, *abi.Error) {
	if p == nil {
		return nil, argError("NULL out-param")
	}
	return unsafe.Slice((*byte)(p), abi.PeekSize), nil
}

// argBytes turns a (pointer, length) pair into a Go view of C memory, valid during the call.
func argBytes(p *C.uint8_t, n C.int32_t, what string) ([]byte, *abi.Error) {
	if n < 0 {
		return nil, argError("%s: negative length %d", what, n)
	}
	if n == 0 {
		return nil, nil
	}
	if p == nil {
		return nil, argError("%s: NULL pointer with length %d", what, n)
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n)), nil
}

// argText is an input taken as a string.
func argText(p *C.uint8_t, n C.int32_t, what string) (string, *abi.Error) {
	b, e := argBytes(p, n, what)
	return string(b), e
}

func argName(p *C.char, n C.int32_t) (string, *abi.Error) {
	b, e := argBytes((*C.uint8_t)(unsafe.Pointer(p)), n, "name")
	return string(b), e
}

func done(err error) C.int32_t {
	if err != nil {
		return setErr(abi.AsError(err))
	}
	C.kw_clear_error()
	return 0
}

// runtimeStats is kw_runtime_stats over the live table.
func runtimeStats(dst []byte) ([]byte, error) {
	live.Lock()
	n, bytes := len(live.m), 0
	for _, size := range live.m {
		bytes += size
	}
	live.Unlock()
	return abi.RuntimeStats(dst, n, bytes), nil
}

// argError is a KW_ERR_ARG error whose text is "kwire: " and format rendered by
// package fmt (which the C library may link; kwire.wasm's shims do without it).
func argError(format string, args ...any) *abi.Error {
	return abi.ArgText(fmt.Sprintf(format, args...))
}

// callOut is the common shim, recovering a panic: check and clear the out-params, check the input (none
// when in is NULL and inLen 0), run fn, hand its result to the caller.
func callOut(out **C.uint8_t, outLen *C.int32_t, in *C.uint8_t, inLen C.int32_t, what string, fn func(dst, src []byte) ([]byte, error)) (st C.int32_t) {
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

// nilPtr is the NULL input of a shim that takes none.
var nilPtr *C.uint8_t

// guarded runs the body of a shim that does not fit callOut, recovering a panic.
func guarded(body func() C.int32_t) (st C.int32_t) {
	defer recovered(&st)
	return body()
}
