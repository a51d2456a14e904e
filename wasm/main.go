//go:build wasip1

// Command wasm is kwire's WebAssembly module: the kw_ functions of capi/kwire.h as
// //go:wasmexport functions over package abi. Build it as a WASI reactor:
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
	"runtime"
	"strconv"
	"unsafe"

	"github.com/kwire/kwire/abi"
)

func main() {}

// yieldToGC lets the Go scheduler run the garbage collector's background workers.
// A reactor's goroutines run only while an export is running; an export that never
// yields leaves a started GC cycle unfinished, and the heap (so linear memory) grows
// without bound. Exports that allocate call it with what they handed out: every
// yieldCalls calls, or once yieldBytes were handed out since the last yield, the export
// yields once (runtime.Gosched), which lets a pending GC cycle finish. Yielding on every
// call costs a goroutine switch each time (an unwind and rewind of the wasm stack).
func yieldToGC(n int) {
	calls++
	handed += n
	if calls >= yieldCalls || handed >= yieldBytes {
		calls, handed = 0, 0
		runtime.Gosched()
	}
}

const (
	yieldCalls = 64
	yieldBytes = 4 << 20
)

var calls, handed int

// live maps the address of every buffer handed to the host to the buffer.
var live = map[uint32][]byte{}

// The last error of this instance (kw_last_error); empty after a success.
var (
	lastText []byte
	lastJSON = []byte(abi.OKJSON)
	hadError bool
)

func addr(b []byte) uint32 { return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }

// hand registers a buffer for the host and returns its address. An empty result gets a
// one-byte backing array so that every live buffer has a distinct address.
func hand(b []byte) (uint32, int32) {
	n := len(b)
	if cap(b) == 0 {
		b = make([]byte, 0, 1)
	}
	b = b[:n:cap(b)]
	p := addr(b)
	live[p] = b[:n] // the host may address its n bytes; the slice keeps the array (and its capacity) alive
	return p, int32(n)
}

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
func region(p, n uint32) ([]byte, bool) {
	if n == 0 {
		return nil, true
	}
	if b, ok := live[p]; ok {
		if uint64(n) <= uint64(len(b)) {
			return b[:n:n], true
		}
		return nil, false
	}
	end := uint64(p) + uint64(n)
	for base, b := range live {
		if p > base && end <= uint64(base)+uint64(len(b)) {
			o := p - base
			return b[o : o+n : o+n], true
		}
	}
	return nil, false
}

func setErr(e *abi.Error) int32 {
	lastText = append(lastText[:0], e.Text...)
	lastJSON = e.AppendJSON(lastJSON[:0])
	hadError = true
	yieldToGC(len(lastJSON))
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

// input checks an input (pointer, length) pair.
func input(p uint32, n int32, what string) ([]byte, *abi.Error) {
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

// slots checks the out-param slots of a call and clears them.
func slots(out, outLen uint32) ([]byte, []byte, *abi.Error) {
	if out == 0 || outLen == 0 {
		return nil, nil, abi.ArgText("NULL out-param")
	}
	o, ok1 := region(out, 4)
	l, ok2 := region(outLen, 4)
	if !ok1 || !ok2 {
		return nil, nil, abi.ArgText("out-param slot is not inside a live kw_alloc buffer")
	}
	binary.LittleEndian.PutUint32(o, 0)
	binary.LittleEndian.PutUint32(l, 0)
	return o, l, nil
}

// finish hands a result to the host through its slots.
// call1 is the common shape f(in, in_len, ..., out, out_len): check the out-params and
// the input, run fn, hand its result to the host.
func call1(in uint32, inLen int32, what string, out, outLen uint32, fn func(dst, src []byte) ([]byte, error)) int32 {
	o, l, e := slots(out, outLen)
	if e != nil {
		return setErr(e)
	}
	src, e := input(in, inLen, what)
	if e != nil {
		return setErr(e)
	}
	res, err := fn(takeSpare(), src)
	return finish(o, l, res, err)
}

func finish(o, l []byte, res []byte, err error) int32 {
	if err != nil {
		release(res) // dst, unused: never handed out
		return setErr(abi.AsError(err))
	}
	if len(res) > abi.MaxAlloc {
		return setErr(&abi.Error{Status: abi.StatusTooLarge, Text: "kwire: output of " + strconv.Itoa(len(res)) + " bytes exceeds the limit", Version: -1, Offset: -1})
	}
	p, n := hand(res)
	yieldToGC(len(res))
	binary.LittleEndian.PutUint32(o, p)
	binary.LittleEndian.PutUint32(l, uint32(n))
	clearErr()
	return abi.StatusOK
}

// names holds the message names hosts have passed, so that a repeated name costs no
// allocation (a lookup by string(b) does not allocate); at most maxNames are kept.
var names = map[string]string{}

const maxNames = 1024

func name(p uint32, n int32) (string, *abi.Error) {
	b, e := input(p, n, "name")
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

//go:wasmexport kw_abi_version
func kwABIVersion() int32 { return abi.Version() }

//go:wasmexport kw_alloc
func kwAlloc(size int32) (p uint32) {
	defer func() {
		if r := recover(); r != nil {
			setErr(abi.Recovered(r))
			p = 0
		}
	}()
	if size < 0 {
		setErr(abi.ArgText("kw_alloc: negative size " + strconv.Itoa(int(size))))
		return 0
	}
	if size > abi.MaxAlloc {
		setErr(&abi.Error{Status: abi.StatusTooLarge, Text: "kwire: kw_alloc: " + strconv.Itoa(int(size)) + " bytes exceeds KW_MAX_ALLOC", Version: -1, Offset: -1})
		return 0
	}
	b := takeSpareFor(int(size))
	if b == nil {
		b = make([]byte, size)
		yieldToGC(int(size))
	}
	p, _ = hand(b)
	clearErr()
	return p
}

//go:wasmexport kw_free
func kwFree(p uint32) (st int32) {
	defer recovered(&st)
	if p == 0 {
		clearErr()
		return abi.StatusOK
	}
	b, ok := live[p]
	if !ok {
		return setErr(abi.ArgText("kw_free: " + strconv.FormatUint(uint64(p), 10) + " is not a live buffer (double free or stray pointer)"))
	}
	delete(live, p)
	release(b)
	clearErr()
	return abi.StatusOK
}

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
		p = addr(text[:cap(text)])
	}
	binary.LittleEndian.PutUint32(o, p)
	binary.LittleEndian.PutUint32(l, uint32(len(text)))
	return abi.StatusOK
}

//go:wasmexport kw_last_error
func kwLastError(out, outLen uint32) (st int32) {
	defer func() {
		if recover() != nil {
			st = abi.StatusInternal
		}
	}()
	return lastErrorOut(out, outLen, lastText)
}

//go:wasmexport kw_last_error_json
func kwLastErrorJSON(out, outLen uint32) (st int32) {
	defer func() {
		if recover() != nil {
			st = abi.StatusInternal
		}
	}()
	return lastErrorOut(out, outLen, lastJSON)
}

//go:wasmexport kw_api_catalogue
func kwAPICatalogue(out, outLen uint32) (st int32) {
	defer recovered(&st)
	o, l, e := slots(out, outLen)
	if e != nil {
		return setErr(e)
	}
	res, err := abi.Catalogue(nil)
	return finish(o, l, res, err)
}

//go:wasmexport kw_header_versions
func kwHeaderVersions(apiKey, version int32, reqOut, respOut uint32) (st int32) {
	defer recovered(&st)
	var rq, rs []byte
	var ok bool
	if reqOut != 0 {
		if rq, ok = region(reqOut, 4); !ok {
			return setErr(abi.ArgText("request_header_version slot is not inside a live kw_alloc buffer"))
		}
	}
	if respOut != 0 {
		if rs, ok = region(respOut, 4); !ok {
			return setErr(abi.ArgText("response_header_version slot is not inside a live kw_alloc buffer"))
		}
	}
	req, resp, err := abi.HeaderVersions(apiKey, version)
	if err != nil {
		return setErr(abi.AsError(err))
	}
	if rq != nil {
		binary.LittleEndian.PutUint32(rq, uint32(req))
	}
	if rs != nil {
		binary.LittleEndian.PutUint32(rs, uint32(resp))
	}
	clearErr()
	return abi.StatusOK
}

//go:wasmexport kw_decode_message
func kwDecodeMessage(np uint32, nl int32, version int32, in uint32, inLen int32, out, outLen uint32) (st int32) {
	defer recovered(&st)
	o, l, e := slots(out, outLen)
	if e != nil {
		return setErr(e)
	}
	n, e := name(np, nl)
	if e != nil {
		return setErr(e)
	}
	src, e := input(in, inLen, "input")
	if e != nil {
		return setErr(e)
	}
	res, err := abi.DecodeMessage(takeSpare(), n, version, src)
	return finish(o, l, res, err)
}

//go:wasmexport kw_encode_message
func kwEncodeMessage(np uint32, nl int32, version int32, in uint32, inLen int32, out, outLen uint32) (st int32) {
	defer recovered(&st)
	o, l, e := slots(out, outLen)
	if e != nil {
		return setErr(e)
	}
	n, e := name(np, nl)
	if e != nil {
		return setErr(e)
	}
	src, e := input(in, inLen, "json")
	if e != nil {
		return setErr(e)
	}
	res, err := abi.EncodeMessage(takeSpare(), n, version, src)
	return finish(o, l, res, err)
}

//go:wasmexport kw_decode_request_frame
func kwDecodeRequestFrame(in uint32, inLen int32, out, outLen uint32) (st int32) {
	defer recovered(&st)
	return call1(in, inLen, "frame", out, outLen, func(dst, src []byte) ([]byte, error) { return abi.DecodeRequestFrame(dst, src) })
}

//go:wasmexport kw_encode_request_frame
func kwEncodeRequestFrame(in uint32, inLen int32, out, outLen uint32) (st int32) {
	defer recovered(&st)
	return call1(in, inLen, "json", out, outLen, func(dst, src []byte) ([]byte, error) { return abi.EncodeRequestFrame(dst, src) })
}

//go:wasmexport kw_decode_response_frame
func kwDecodeResponseFrame(in uint32, inLen int32, apiKey, version int32, out, outLen uint32) (st int32) {
	defer recovered(&st)
	return call1(in, inLen, "frame", out, outLen, func(dst, src []byte) ([]byte, error) { return abi.DecodeResponseFrame(dst, src, apiKey, version) })
}

//go:wasmexport kw_encode_response_frame
func kwEncodeResponseFrame(in uint32, inLen int32, apiKey, version int32, out, outLen uint32) (st int32) {
	defer recovered(&st)
	return call1(in, inLen, "json", out, outLen, func(dst, src []byte) ([]byte, error) { return abi.EncodeResponseFrame(dst, src, apiKey, version) })
}

//go:wasmexport kw_peek_request_header
func kwPeekRequestHeader(in uint32, inLen int32, out uint32) (st int32) {
	defer recovered(&st)
	if out == 0 {
		return setErr(abi.ArgText("NULL out-param"))
	}
	dst, ok := region(out, abi.PeekSize)
	if !ok {
		return setErr(abi.ArgText("kw_peek_header at " + strconv.FormatUint(uint64(out), 10) + " is not inside a live kw_alloc buffer"))
	}
	src, e := input(in, inLen, "frame")
	if e != nil {
		return setErr(e)
	}
	p, err := abi.PeekRequestHeader(src)
	if err != nil {
		return setErr(abi.AsError(err))
	}
	p.Put(dst)
	clearErr()
	return abi.StatusOK
}

//go:wasmexport kw_records_decode_json
func kwRecordsDecodeJSON(in uint32, inLen int32, flags, maxDecompressed int32, out, outLen uint32) (st int32) {
	defer recovered(&st)
	return call1(in, inLen, "records", out, outLen, func(dst, src []byte) ([]byte, error) { return abi.RecordsDecodeJSON(dst, src, flags, maxDecompressed) })
}

//go:wasmexport kw_records_decode_table
func kwRecordsDecodeTable(in uint32, inLen int32, flags, maxDecompressed int32, out, outLen uint32) (st int32) {
	defer recovered(&st)
	return call1(in, inLen, "records", out, outLen, func(dst, src []byte) ([]byte, error) { return abi.RecordsDecodeTable(dst, src, flags, maxDecompressed) })
}

//go:wasmexport kw_records_encode
func kwRecordsEncode(in uint32, inLen int32, compression int32, out, outLen uint32) (st int32) {
	defer recovered(&st)
	return call1(in, inLen, "json", out, outLen, func(dst, src []byte) ([]byte, error) { return abi.RecordsEncode(dst, src, compression) })
}

//go:wasmexport kw_decode_request_frame_records
func kwDecodeRequestFrameRecords(in uint32, inLen int32, flags, maxDecompressed int32, out, outLen uint32) (st int32) {
	defer recovered(&st)
	return call1(in, inLen, "frame", out, outLen, func(dst, src []byte) ([]byte, error) {
		return abi.DecodeRequestFrameRecords(dst, src, flags, maxDecompressed)
	})
}

//go:wasmexport kw_decode_response_frame_records
func kwDecodeResponseFrameRecords(in uint32, inLen int32, apiKey, version, flags, maxDecompressed int32, out, outLen uint32) (st int32) {
	defer recovered(&st)
	return call1(in, inLen, "frame", out, outLen, func(dst, src []byte) ([]byte, error) {
		return abi.DecodeResponseFrameRecords(dst, src, apiKey, version, flags, maxDecompressed)
	})
}

//go:wasmexport kw_encode_request_frame_records
func kwEncodeRequestFrameRecords(in uint32, inLen int32, table uint32, tableLen int32, out, outLen uint32) (st int32) {
	defer recovered(&st)
	tb, e := input(table, tableLen, "table")
	if e != nil {
		if _, _, e2 := slots(out, outLen); e2 != nil {
			return setErr(e2)
		}
		return setErr(e)
	}
	return call1(in, inLen, "json", out, outLen, func(dst, src []byte) ([]byte, error) {
		return abi.EncodeRequestFrameRecords(dst, src, tb)
	})
}

//go:wasmexport kw_runtime_stats
func kwRuntimeStats(out, outLen uint32) (st int32) {
	defer recovered(&st)
	o, l, e := slots(out, outLen)
	if e != nil {
		return setErr(e)
	}
	n := 0
	for _, b := range live {
		n += cap(b)
	}
	return finish(o, l, abi.RuntimeStats(takeSpare(), len(live), n), nil)
}
