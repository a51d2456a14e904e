// Command capi is kwire's C library: the kw_ functions of kwire.h as cgo exports over
// package abi. Build it with
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

// input turns a (pointer, length) pair into a Go view of C memory, valid during the call.
func input(p unsafe.Pointer, n C.int32_t, what string) ([]byte, *abi.Error) {
	if n < 0 {
		return nil, argError("%s: negative length %d", what, n)
	}
	if n == 0 {
		return nil, nil
	}
	if p == nil {
		return nil, argError("%s: NULL pointer with length %d", what, n)
	}
	return unsafe.Slice((*byte)(p), int(n)), nil
}

// finish copies a result into malloc'ed memory and stores it in the out-params.
func finish(out **C.uint8_t, outLen *C.int32_t, res []byte, err error) C.int32_t {
	if err != nil {
		return setErr(abi.AsError(err))
	}
	if len(res) > abi.MaxAlloc {
		return setErr(&abi.Error{Status: abi.StatusTooLarge, Text: fmt.Sprintf("kwire: output of %d bytes exceeds the limit", len(res)), Version: -1, Offset: -1})
	}
	n := len(res)
	p := C.malloc(C.size_t(max(n, 1)))
	if p == nil {
		return setErr(&abi.Error{Status: abi.StatusNoMem, Text: fmt.Sprintf("kwire: malloc(%d) failed", n), Version: -1, Offset: -1})
	}
	copy(unsafe.Slice((*byte)(p), n), res)
	register(p, n)
	*out = (*C.uint8_t)(p)
	*outLen = C.int32_t(n)
	C.kw_clear_error()
	return 0
}

// begin checks and clears the out-params.
func begin(out **C.uint8_t, outLen *C.int32_t) *abi.Error {
	if out == nil || outLen == nil {
		return argError("NULL out-param")
	}
	*out = nil
	*outLen = 0
	return nil
}

func getScratch() *[]byte { return scratch.Get().(*[]byte) }

func putScratch(b *[]byte, res []byte) {
	if cap(res) <= 1<<20 {
		*b = res[:0]
		scratch.Put(b)
	}
}

//export kw_abi_version
func kw_abi_version() C.int32_t { return C.int32_t(abi.Version()) }

//export kw_alloc
func kw_alloc(size C.int32_t) (p *C.uint8_t) {
	defer func() {
		if r := recover(); r != nil {
			setErr(abi.Recovered(r))
			p = nil
		}
	}()
	if size < 0 {
		setErr(argError("kw_alloc: negative size %d", size))
		return nil
	}
	if size > abi.MaxAlloc {
		setErr(&abi.Error{Status: abi.StatusTooLarge, Text: fmt.Sprintf("kwire: kw_alloc: %d bytes exceeds KW_MAX_ALLOC", size), Version: -1, Offset: -1})
		return nil
	}
	m := C.calloc(C.size_t(max(size, 1)), 1)
	if m == nil {
		setErr(&abi.Error{Status: abi.StatusNoMem, Text: fmt.Sprintf("kwire: kw_alloc: calloc(%d) failed", size), Version: -1, Offset: -1})
		return nil
	}
	register(m, int(size))
	C.kw_clear_error()
	return (*C.uint8_t)(m)
}

//export kw_free
func kw_free(p unsafe.Pointer) (st C.int32_t) {
	defer recovered(&st)
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

//export kw_last_error
func kw_last_error(out **C.uint8_t, outLen *C.int32_t) C.int32_t {
	if out == nil || outLen == nil {
		return C.int32_t(abi.StatusArg)
	}
	C.kw_get_error(0, out, outLen)
	return 0
}

//export kw_last_error_json
func kw_last_error_json(out **C.uint8_t, outLen *C.int32_t) C.int32_t {
	if out == nil || outLen == nil {
		return C.int32_t(abi.StatusArg)
	}
	C.kw_get_error(1, out, outLen)
	return 0
}

//export kw_api_catalogue
func kw_api_catalogue(out **C.uint8_t, outLen *C.int32_t) (st C.int32_t) {
	defer recovered(&st)
	if e := begin(out, outLen); e != nil {
		return setErr(e)
	}
	b := getScratch()
	res, err := abi.Catalogue((*b)[:0])
	st = finish(out, outLen, res, err)
	putScratch(b, res)
	return st
}

//export kw_header_versions
func kw_header_versions(apiKey, version C.int32_t, reqOut, respOut *C.int32_t) (st C.int32_t) {
	defer recovered(&st)
	req, resp, err := abi.HeaderVersions(int32(apiKey), int32(version))
	if err != nil {
		return setErr(abi.AsError(err))
	}
	if reqOut != nil {
		*reqOut = C.int32_t(req)
	}
	if respOut != nil {
		*respOut = C.int32_t(resp)
	}
	C.kw_clear_error()
	return 0
}

//export kw_decode_message
func kw_decode_message(name *C.char, nameLen, version C.int32_t, in *C.uint8_t, inLen C.int32_t, out **C.uint8_t, outLen *C.int32_t) (st C.int32_t) {
	defer recovered(&st)
	if e := begin(out, outLen); e != nil {
		return setErr(e)
	}
	n, e := input(unsafe.Pointer(name), nameLen, "name")
	if e != nil {
		return setErr(e)
	}
	src, e := input(unsafe.Pointer(in), inLen, "input")
	if e != nil {
		return setErr(e)
	}
	b := getScratch()
	res, err := abi.DecodeMessage((*b)[:0], string(n), int32(version), src)
	st = finish(out, outLen, res, err)
	putScratch(b, res)
	return st
}

//export kw_encode_message
func kw_encode_message(name *C.char, nameLen, version C.int32_t, json *C.uint8_t, jsonLen C.int32_t, out **C.uint8_t, outLen *C.int32_t) (st C.int32_t) {
	defer recovered(&st)
	if e := begin(out, outLen); e != nil {
		return setErr(e)
	}
	n, e := input(unsafe.Pointer(name), nameLen, "name")
	if e != nil {
		return setErr(e)
	}
	src, e := input(unsafe.Pointer(json), jsonLen, "json")
	if e != nil {
		return setErr(e)
	}
	b := getScratch()
	res, err := abi.EncodeMessage((*b)[:0], string(n), int32(version), src)
	st = finish(out, outLen, res, err)
	putScratch(b, res)
	return st
}

// call1 is the common shape f(in, in_len, ..., out, out_len).
func call1(in *C.uint8_t, inLen C.int32_t, what string, out **C.uint8_t, outLen *C.int32_t,
	fn func(dst, src []byte) ([]byte, error)) (st C.int32_t) {
	defer recovered(&st)
	if e := begin(out, outLen); e != nil {
		return setErr(e)
	}
	src, e := input(unsafe.Pointer(in), inLen, what)
	if e != nil {
		return setErr(e)
	}
	b := getScratch()
	res, err := fn((*b)[:0], src)
	st = finish(out, outLen, res, err)
	putScratch(b, res)
	return st
}

//export kw_decode_request_frame
func kw_decode_request_frame(in *C.uint8_t, inLen C.int32_t, out **C.uint8_t, outLen *C.int32_t) C.int32_t {
	return call1(in, inLen, "frame", out, outLen, abi.DecodeRequestFrame)
}

//export kw_encode_request_frame
func kw_encode_request_frame(json *C.uint8_t, jsonLen C.int32_t, out **C.uint8_t, outLen *C.int32_t) C.int32_t {
	return call1(json, jsonLen, "json", out, outLen, abi.EncodeRequestFrame)
}

//export kw_decode_response_frame
func kw_decode_response_frame(in *C.uint8_t, inLen C.int32_t, apiKey, version C.int32_t, out **C.uint8_t, outLen *C.int32_t) C.int32_t {
	return call1(in, inLen, "frame", out, outLen, func(dst, src []byte) ([]byte, error) {
		return abi.DecodeResponseFrame(dst, src, int32(apiKey), int32(version))
	})
}

//export kw_encode_response_frame
func kw_encode_response_frame(json *C.uint8_t, jsonLen C.int32_t, apiKey, version C.int32_t, out **C.uint8_t, outLen *C.int32_t) C.int32_t {
	return call1(json, jsonLen, "json", out, outLen, func(dst, src []byte) ([]byte, error) {
		return abi.EncodeResponseFrame(dst, src, int32(apiKey), int32(version))
	})
}

//export kw_peek_request_header
func kw_peek_request_header(in *C.uint8_t, inLen C.int32_t, out unsafe.Pointer) (st C.int32_t) {
	defer recovered(&st)
	if out == nil {
		return setErr(argError("NULL out-param"))
	}
	src, e := input(unsafe.Pointer(in), inLen, "frame")
	if e != nil {
		return setErr(e)
	}
	p, err := abi.PeekRequestHeader(src)
	if err != nil {
		return setErr(abi.AsError(err))
	}
	o := (*[8]C.int32_t)(out)
	*o = [8]C.int32_t{C.int32_t(p.FrameSize), C.int32_t(p.APIKey), C.int32_t(p.APIVersion), C.int32_t(p.CorrelationID),
		C.int32_t(p.HeaderVersion), C.int32_t(p.ClientIDOffset), C.int32_t(p.ClientIDLength), 0}
	C.kw_clear_error()
	return 0
}

//export kw_records_decode_json
func kw_records_decode_json(in *C.uint8_t, inLen C.int32_t, flags, maxDecompressed C.int32_t, out **C.uint8_t, outLen *C.int32_t) C.int32_t {
	return call1(in, inLen, "records", out, outLen, func(dst, src []byte) ([]byte, error) {
		return abi.RecordsDecodeJSON(dst, src, int32(flags), int32(maxDecompressed))
	})
}

//export kw_records_decode_table
func kw_records_decode_table(in *C.uint8_t, inLen C.int32_t, flags, maxDecompressed C.int32_t, out **C.uint8_t, outLen *C.int32_t) C.int32_t {
	return call1(in, inLen, "records", out, outLen, func(dst, src []byte) ([]byte, error) {
		return abi.RecordsDecodeTable(dst, src, int32(flags), int32(maxDecompressed))
	})
}

//export kw_records_encode
func kw_records_encode(json *C.uint8_t, jsonLen C.int32_t, compression C.int32_t, out **C.uint8_t, outLen *C.int32_t) C.int32_t {
	return call1(json, jsonLen, "json", out, outLen, func(dst, src []byte) ([]byte, error) {
		return abi.RecordsEncode(dst, src, int32(compression))
	})
}

//export kw_decode_request_frame_records
func kw_decode_request_frame_records(in *C.uint8_t, inLen C.int32_t, flags, maxDecompressed C.int32_t, out **C.uint8_t, outLen *C.int32_t) C.int32_t {
	return call1(in, inLen, "frame", out, outLen, func(dst, src []byte) ([]byte, error) {
		return abi.DecodeRequestFrameRecords(dst, src, int32(flags), int32(maxDecompressed))
	})
}

//export kw_decode_response_frame_records
func kw_decode_response_frame_records(in *C.uint8_t, inLen C.int32_t, apiKey, version, flags, maxDecompressed C.int32_t, out **C.uint8_t, outLen *C.int32_t) C.int32_t {
	return call1(in, inLen, "frame", out, outLen, func(dst, src []byte) ([]byte, error) {
		return abi.DecodeResponseFrameRecords(dst, src, int32(apiKey), int32(version), int32(flags), int32(maxDecompressed))
	})
}

//export kw_encode_request_frame_records
func kw_encode_request_frame_records(json *C.uint8_t, jsonLen C.int32_t, table *C.uint8_t, tableLen C.int32_t, out **C.uint8_t, outLen *C.int32_t) (st C.int32_t) {
	defer recovered(&st)
	if e := begin(out, outLen); e != nil {
		return setErr(e)
	}
	tb, e := input(unsafe.Pointer(table), tableLen, "table")
	if e != nil {
		return setErr(e)
	}
	return call1(json, jsonLen, "json", out, outLen, func(dst, src []byte) ([]byte, error) {
		return abi.EncodeRequestFrameRecords(dst, src, tb)
	})
}

func doneC(err error) C.int32_t {
	if err != nil {
		return setErr(abi.AsError(err))
	}
	C.kw_clear_error()
	return 0
}

//export kw_session_new
func kw_session_new(cfg *C.uint8_t, cfgLen C.int32_t, outHandle *C.int32_t) (st C.int32_t) {
	defer recovered(&st)
	if outHandle == nil {
		return setErr(argError("NULL out_handle"))
	}
	*outHandle = 0
	in, e := input(unsafe.Pointer(cfg), cfgLen, "config")
	if e != nil {
		return setErr(e)
	}
	h, err := abi.SessionNew(in)
	if err == nil {
		*outHandle = C.int32_t(h)
	}
	return doneC(err)
}

//export kw_session_free
func kw_session_free(h C.int32_t) (st C.int32_t) {
	defer recovered(&st)
	return doneC(abi.SessionFree(int32(h)))
}

//export kw_session_begin_negotiation
func kw_session_begin_negotiation(h C.int32_t, out **C.uint8_t, outLen *C.int32_t) C.int32_t {
	return call1(nil, 0, "none", out, outLen, func(dst, _ []byte) ([]byte, error) {
		return abi.SessionBeginNegotiation(dst, int32(h))
	})
}

//export kw_session_request
func kw_session_request(h, apiKey, version C.int32_t, body *C.uint8_t, bodyLen, flags C.int32_t, out **C.uint8_t, outLen *C.int32_t, outCorr *C.int32_t) (st C.int32_t) {
	defer recovered(&st)
	if outCorr == nil {
		if e := begin(out, outLen); e != nil {
			return setErr(e)
		}
		return setErr(argError("NULL out_correlation_id"))
	}
	*outCorr = 0
	return call1(body, bodyLen, "body", out, outLen, func(dst, src []byte) ([]byte, error) {
		frame, corr, err := abi.SessionRequest(dst, int32(h), int32(apiKey), int32(version), src, int32(flags))
		if err == nil {
			*outCorr = C.int32_t(corr)
		}
		return frame, err
	})
}

//export kw_session_feed
func kw_session_feed(h C.int32_t, in *C.uint8_t, inLen C.int32_t) (st C.int32_t) {
	defer recovered(&st)
	b, e := input(unsafe.Pointer(in), inLen, "input")
	if e != nil {
		return setErr(e)
	}
	return doneC(abi.SessionFeed(int32(h), b))
}

//export kw_session_next
func kw_session_next(h C.int32_t, out **C.uint8_t, outLen *C.int32_t) C.int32_t {
	return call1(nil, 0, "none", out, outLen, func(dst, _ []byte) ([]byte, error) {
		return abi.SessionNext(dst, int32(h))
	})
}

//export kw_session_counters
func kw_session_counters(h C.int32_t, out **C.uint8_t, outLen *C.int32_t) C.int32_t {
	return call1(nil, 0, "none", out, outLen, func(dst, _ []byte) ([]byte, error) {
		return abi.SessionCounters(dst, int32(h))
	})
}

//export kw_session_version_for
func kw_session_version_for(h, apiKey C.int32_t, outVersion *C.int32_t) (st C.int32_t) {
	defer recovered(&st)
	if outVersion == nil {
		return setErr(argError("NULL out_version"))
	}
	*outVersion = 0
	v, err := abi.SessionVersionFor(int32(h), int32(apiKey))
	if err == nil {
		*outVersion = C.int32_t(v)
	}
	return doneC(err)
}

//export kw_runtime_stats
func kw_runtime_stats(out **C.uint8_t, outLen *C.int32_t) C.int32_t {
	live.Lock()
	n, bytes := len(live.m), 0
	for _, size := range live.m {
		bytes += size
	}
	live.Unlock()
	return call1(nil, 0, "none", out, outLen, func(dst, _ []byte) ([]byte, error) {
		return abi.RuntimeStats(dst, n, bytes), nil
	})
}

// argError is a KW_ERR_ARG error whose text is "kwire: " and format rendered by
// package fmt (which the C library may link; kwire.wasm's shims do without it).
func argError(format string, args ...any) *abi.Error {
	return abi.ArgText(fmt.Sprintf(format, args...))
}
