// Package kwwasmtime loads kwire's WebAssembly module (build/kwire.wasm) in wasmtime,
// through wasmtime-go, and calls its kw_ functions (capi/kwire.h). It lives in a Go
// module of its own because wasmtime-go needs cgo and ships a static library.
package kwwasmtime

import (
	"encoding/binary"
	"fmt"
	"github.com/kwire/kwire/internal/abitable"
	"os"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/kwire/kwire/abi/abiconf"
)

// Runtime is an engine with kwire.wasm compiled in it.
type Runtime struct {
	engine *wasmtime.Engine
	module *wasmtime.Module
}

// NewRuntime compiles the module at path. When cachePath is set, the compiled code is
// kept there (wasmtime's serialized module) and reused while it deserializes.
func NewRuntime(path, cachePath string) (*Runtime, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w (build it with `make wasm`)", err)
	}
	engine := wasmtime.NewEngine()
	var mod *wasmtime.Module
	if cachePath != "" {
		// The cache is used only when it is newer than the module it was compiled from.
		cst, err1 := os.Stat(cachePath)
		wst, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && cst.ModTime().After(wst.ModTime()) {
			mod, _ = wasmtime.NewModuleDeserializeFile(engine, cachePath)
		}
	}
	if mod == nil {
		if mod, err = wasmtime.NewModule(engine, wasm); err != nil {
			return nil, err
		}
		if cachePath != "" {
			if b, err := mod.Serialize(); err == nil {
				os.WriteFile(cachePath, b, 0o644)
			}
		}
	}
	return &Runtime{engine: engine, module: mod}, nil
}

// Module is the compiled module.
func (r *Runtime) Module() *wasmtime.Module { return r.module }

// Instance is one instantiated module with its store. Not safe for concurrent use.
type Instance struct {
	store *wasmtime.Store
	inst  *wasmtime.Instance
	mem   *wasmtime.Memory
	fns   map[string]*wasmtime.Func

	scratch uint32
	in      uint32
	inCap   uint32
}

// exports is every kw_ function of the ABI, from its one table.
var exports = abitable.ExportNames()

// Instantiate creates an instance (WASI with stderr inherited) and runs _initialize.
func (r *Runtime) Instantiate() (*Instance, error) {
	store := wasmtime.NewStore(r.engine)
	wc := wasmtime.NewWasiConfig()
	wc.InheritStderr()
	store.SetWasi(wc)
	linker := wasmtime.NewLinker(r.engine)
	if err := linker.DefineWasi(); err != nil {
		return nil, err
	}
	inst, err := linker.Instantiate(store, r.module)
	if err != nil {
		return nil, err
	}
	in := &Instance{store: store, inst: inst, fns: map[string]*wasmtime.Func{}}
	initFn := inst.GetFunc(store, "_initialize")
	if initFn == nil {
		return nil, fmt.Errorf("kwire.wasm has no _initialize")
	}
	if _, err := initFn.Call(store); err != nil {
		return nil, fmt.Errorf("_initialize: %w", err)
	}
	ext := inst.GetExport(store, "memory")
	if ext == nil || ext.Memory() == nil {
		return nil, fmt.Errorf("kwire.wasm exports no memory")
	}
	in.mem = ext.Memory()
	for _, name := range exports {
		f := inst.GetFunc(store, name)
		if f == nil {
			return nil, fmt.Errorf("kwire.wasm does not export %s", name)
		}
		in.fns[name] = f
	}
	if in.scratch = in.Alloc(40); in.scratch == 0 {
		return nil, fmt.Errorf("kw_alloc(40) failed: %s", in.LastError())
	}
	return in, nil
}

// Call calls a kw_ function with i32 arguments; a trap is an error.
func (in *Instance) Call(name string, args ...uint32) (int32, error) {
	f := in.fns[name]
	if f == nil {
		return 0, fmt.Errorf("no export %s", name)
	}
	a := make([]interface{}, len(args))
	for i, v := range args {
		a[i] = int32(v)
	}
	r, err := f.Call(in.store, a...)
	if err != nil {
		return 0, err
	}
	v, _ := r.(int32)
	return v, nil
}

func (in *Instance) must(name string, args ...uint32) int32 {
	r, err := in.Call(name, args...)
	if err != nil {
		panic(fmt.Sprintf("%s trapped: %v", name, err))
	}
	return r
}

// MemorySize is the size of linear memory in bytes.
func (in *Instance) MemorySize() uint64 { return uint64(in.mem.DataSize(in.store)) }

// data is a view of linear memory, valid until the next call.
func (in *Instance) data() []byte { return in.mem.UnsafeData(in.store) }

func (in *Instance) u32(at uint32) uint32 {
	d := in.data()
	if uint64(at)+4 > uint64(len(d)) {
		panic(fmt.Sprintf("read outside memory at %d", at))
	}
	return binary.LittleEndian.Uint32(d[at:])
}

func (in *Instance) read(p, n uint32) ([]byte, bool) {
	d := in.data()
	if uint64(p)+uint64(n) > uint64(len(d)) {
		return nil, false
	}
	return append([]byte(nil), d[p:p+n]...), true
}

// Version is kw_abi_version.
func (in *Instance) Version() int32 { return in.must("kw_abi_version") }

// Alloc is kw_alloc.
func (in *Instance) Alloc(n int32) uint32 { return uint32(in.must("kw_alloc", uint32(n))) }

// Free is kw_free.
func (in *Instance) Free(p uint32) int32 { return in.must("kw_free", p) }

// Scratch is the 40-byte scratch buffer (out slots at 0 and 4, peek struct at 8).
func (in *Instance) Scratch() uint32 { return in.scratch }

// Write copies b into linear memory at p.
func (in *Instance) Write(p uint32, b []byte) bool {
	d := in.data()
	if uint64(p)+uint64(len(b)) > uint64(len(d)) {
		return false
	}
	copy(d[p:], b)
	return true
}

func (in *Instance) lastErr(fn string) []byte {
	in.must(fn, in.scratch, in.scratch+4)
	p, n := in.u32(in.scratch), in.u32(in.scratch+4)
	if n == 0 {
		return nil
	}
	b, _ := in.read(p, n)
	return b
}

// LastError is kw_last_error.
func (in *Instance) LastError() string { return string(in.lastErr("kw_last_error")) }

// LastErrorJSON is kw_last_error_json.
func (in *Instance) LastErrorJSON() []byte { return in.lastErr("kw_last_error_json") }

// Put copies parts into the instance's input buffer and returns its address.
func (in *Instance) Put(parts ...[]byte) (uint32, error) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if uint32(n) > in.inCap || in.in == 0 {
		if in.in != 0 {
			in.Free(in.in)
		}
		c := max(uint32(n), 4096)
		if in.in = in.Alloc(int32(c)); in.in == 0 {
			in.inCap = 0
			return 0, in.err(-8)
		}
		in.inCap = c
	}
	at := in.in
	for _, p := range parts {
		if !in.Write(at, p) {
			return 0, fmt.Errorf("write outside memory")
		}
		at += uint32(len(p))
	}
	return in.in, nil
}

func (in *Instance) err(st int32) error {
	return &abiconf.CallError{Status: st, Text: in.LastError(), JSON: in.LastErrorJSON()}
}

func (in *Instance) takeOut(st int32) ([]byte, error) {
	if st != 0 {
		return nil, in.err(st)
	}
	p, n := in.u32(in.scratch), in.u32(in.scratch+4)
	out, ok := in.read(p, n)
	if !ok {
		return nil, fmt.Errorf("output [%d,+%d) outside memory", p, n)
	}
	if st := in.Free(p); st != 0 {
		return nil, fmt.Errorf("kw_free of an output: status %d: %s", st, in.LastError())
	}
	return out, nil
}

// DecodeMessage is kw_decode_message.
func (in *Instance) DecodeMessage(name string, version int16, b []byte) ([]byte, error) {
	p, err := in.Put([]byte(name), b)
	if err != nil {
		return nil, err
	}
	nl := uint32(len(name))
	return in.takeOut(in.must("kw_decode_message", p, nl, uint32(int32(version)), p+nl, uint32(len(b)), in.scratch, in.scratch+4))
}

// EncodeMessage is kw_encode_message.
func (in *Instance) EncodeMessage(name string, version int16, json []byte) ([]byte, error) {
	p, err := in.Put([]byte(name), json)
	if err != nil {
		return nil, err
	}
	nl := uint32(len(name))
	return in.takeOut(in.must("kw_encode_message", p, nl, uint32(int32(version)), p+nl, uint32(len(json)), in.scratch, in.scratch+4))
}

// Catalogue is kw_api_catalogue.
func (in *Instance) Catalogue() ([]byte, error) {
	return in.takeOut(in.must("kw_api_catalogue", in.scratch, in.scratch+4))
}

func (in *Instance) call1(fn string, b []byte, extra ...uint32) ([]byte, error) {
	p, err := in.Put(b)
	if err != nil {
		return nil, err
	}
	args := append([]uint32{p, uint32(len(b))}, extra...)
	args = append(args, in.scratch, in.scratch+4)
	return in.takeOut(in.must(fn, args...))
}

// DecodeRequestFrame is kw_decode_request_frame.
func (in *Instance) DecodeRequestFrame(frame []byte) ([]byte, error) {
	return in.call1("kw_decode_request_frame", frame)
}

// EncodeRequestFrame is kw_encode_request_frame.
func (in *Instance) EncodeRequestFrame(json []byte) ([]byte, error) {
	return in.call1("kw_encode_request_frame", json)
}

// DecodeResponseFrame is kw_decode_response_frame.
func (in *Instance) DecodeResponseFrame(frame []byte, key, version int16) ([]byte, error) {
	return in.call1("kw_decode_response_frame", frame, uint32(int32(key)), uint32(int32(version)))
}

// EncodeResponseFrame is kw_encode_response_frame.
func (in *Instance) EncodeResponseFrame(json []byte, key, version int16) ([]byte, error) {
	return in.call1("kw_encode_response_frame", json, uint32(int32(key)), uint32(int32(version)))
}

// RecordsDecodeJSON is kw_records_decode_json.
func (in *Instance) RecordsDecodeJSON(b []byte, flags, maxDecompressed int32) ([]byte, error) {
	return in.call1("kw_records_decode_json", b, uint32(flags), uint32(maxDecompressed))
}

// RecordsDecodeTable is kw_records_decode_table.
func (in *Instance) RecordsDecodeTable(b []byte, flags, maxDecompressed int32) ([]byte, error) {
	return in.call1("kw_records_decode_table", b, uint32(flags), uint32(maxDecompressed))
}

// RecordsEncode is kw_records_encode.
func (in *Instance) RecordsEncode(json []byte, compression int32) ([]byte, error) {
	return in.call1("kw_records_encode", json, uint32(compression))
}

// DecodeRequestFrameRecords is kw_decode_request_frame_records: a layout-2 record table,
// or layout 3 with abi.FlagInputSpans.
func (in *Instance) DecodeRequestFrameRecords(frame []byte, flags, maxDecompressed int32) ([]byte, error) {
	return in.call1("kw_decode_request_frame_records", frame, uint32(flags), uint32(maxDecompressed))
}

// DecodeResponseFrameRecords is kw_decode_response_frame_records.
func (in *Instance) DecodeResponseFrameRecords(frame []byte, key, version int16, flags, maxDecompressed int32) ([]byte, error) {
	return in.call1("kw_decode_response_frame_records", frame, uint32(int32(key)), uint32(int32(version)), uint32(flags), uint32(maxDecompressed))
}

// EncodeRequestFrameRecords is kw_encode_request_frame_records.
func (in *Instance) EncodeRequestFrameRecords(json, table []byte) ([]byte, error) {
	// Put fills the one input buffer: the JSON, then the table.
	p, err := in.Put(json, table)
	if err != nil {
		return nil, err
	}
	jl := uint32(len(json))
	return in.takeOut(in.must("kw_encode_request_frame_records", p, jl, p+jl, uint32(len(table)), in.scratch, in.scratch+4))
}

// RuntimeStats is kw_runtime_stats: the module's runtime figures as JSON.
func (in *Instance) RuntimeStats() ([]byte, error) {
	return in.takeOut(in.must("kw_runtime_stats", in.scratch, in.scratch+4))
}

// PeekRequestHeader is kw_peek_request_header.
func (in *Instance) PeekRequestHeader(frame []byte) ([8]int32, error) {
	var out [8]int32
	p, err := in.Put(frame)
	if err != nil {
		return out, err
	}
	if st := in.must("kw_peek_request_header", p, uint32(len(frame)), in.scratch+8); st != 0 {
		return out, in.err(st)
	}
	b, _ := in.read(in.scratch+8, 32)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}
