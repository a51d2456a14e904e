// Package kwwazero loads kwire's WebAssembly module (build/kwire.wasm) in wazero and
// calls its kw_ functions (capi/kwire.h). It is the host the wazero conformance run,
// the misuse and memory tests and the wasm benchmarks use.
package kwwazero

import (
	"context"
	"encoding/binary"
	"fmt"
	"github.com/kwire/kwire/internal/abitable"
	"os"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/kwire/kwire/abi/abiconf"
)

// Runtime is a wazero runtime (compiler engine) with kwire.wasm compiled in it.
type Runtime struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	n        int
}

// Options of NewRuntime.
type Options struct {
	// CacheDir, when set, keeps compiled code there (wazero's compilation cache).
	CacheDir string
	// Interpreter selects wazero's interpreter instead of the compiler.
	Interpreter bool
}

// NewRuntime compiles the module at path.
func NewRuntime(ctx context.Context, path string, o Options) (*Runtime, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w (build it with `make wasm`)", err)
	}
	return NewRuntimeFrom(ctx, wasm, o)
}

// NewRuntimeFrom compiles the module bytes.
func NewRuntimeFrom(ctx context.Context, wasm []byte, o Options) (*Runtime, error) {
	cfg := wazero.NewRuntimeConfigCompiler()
	if o.Interpreter {
		cfg = wazero.NewRuntimeConfigInterpreter()
	}
	if o.CacheDir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(o.CacheDir)
		if err != nil {
			return nil, err
		}
		cfg = cfg.WithCompilationCache(cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		rt.Close(ctx)
		return nil, err
	}
	return &Runtime{rt: rt, compiled: compiled}, nil
}

// Compiled is the compiled module (its imports and exports can be listed).
func (r *Runtime) Compiled() wazero.CompiledModule { return r.compiled }

// Close releases the runtime and every instance.
func (r *Runtime) Close(ctx context.Context) error { return r.rt.Close(ctx) }

// Instance is one instantiated module. Not safe for concurrent use.
type Instance struct {
	ctx   context.Context
	mod   api.Module
	mem   api.Memory
	fns   map[string]api.Function
	stack []uint64

	scratch uint32 // 40 bytes: out slot (0), length slot (4), peek struct (8..40)
	in      uint32 // input buffer
	inCap   uint32
}

// exports is every kw_ function of the ABI, from its one table.
var exports = abitable.ExportNames()

// Exports lists the kw_ functions every build of the module exports.
func Exports() []string { return append([]string(nil), exports...) }

// Instantiate creates an instance and runs its _initialize.
func (r *Runtime) Instantiate(ctx context.Context) (*Instance, error) {
	r.n++
	cfg := wazero.NewModuleConfig().WithName(fmt.Sprintf("kwire-%d", r.n)).WithStartFunctions("_initialize").
		WithStderr(os.Stderr)
	mod, err := r.rt.InstantiateModule(ctx, r.compiled, cfg)
	if err != nil {
		return nil, err
	}
	in := &Instance{ctx: ctx, mod: mod, mem: mod.Memory(), fns: map[string]api.Function{}, stack: make([]uint64, 8)}
	for _, name := range exports {
		f := mod.ExportedFunction(name)
		if f == nil {
			mod.Close(ctx)
			return nil, fmt.Errorf("kwire.wasm does not export %s", name)
		}
		in.fns[name] = f
	}
	if in.scratch = in.Alloc(40); in.scratch == 0 {
		mod.Close(ctx)
		return nil, fmt.Errorf("kw_alloc(40) failed: %s", in.LastError())
	}
	return in, nil
}

// Close closes the instance.
func (in *Instance) Close() error { return in.mod.Close(in.ctx) }

// Module is the wazero module (its memory, for tests).
func (in *Instance) Module() api.Module { return in.mod }

// Call calls a kw_ function with raw i32 arguments and returns its i32 result. A trap
// is returned as an error.
func (in *Instance) Call(name string, args ...uint32) (int32, error) {
	f := in.fns[name]
	if f == nil {
		return 0, fmt.Errorf("no export %s", name)
	}
	st := in.stack[:max(len(args), 1)]
	for i, a := range args {
		st[i] = uint64(a)
	}
	if err := f.CallWithStack(in.ctx, st); err != nil {
		return 0, err
	}
	return int32(uint32(st[0])), nil
}

func (in *Instance) must(name string, args ...uint32) int32 {
	r, err := in.Call(name, args...)
	if err != nil {
		panic(fmt.Sprintf("%s trapped: %v", name, err))
	}
	return r
}

// Version is kw_abi_version.
func (in *Instance) Version() int32 { return in.must("kw_abi_version") }

// Alloc is kw_alloc.
func (in *Instance) Alloc(n int32) uint32 { return uint32(in.must("kw_alloc", uint32(n))) }

// Free is kw_free.
func (in *Instance) Free(p uint32) int32 { return in.must("kw_free", p) }

// Memory is the module's memory.
func (in *Instance) Memory() api.Memory { return in.mem }

func (in *Instance) u32(at uint32) uint32 {
	v, ok := in.mem.ReadUint32Le(at)
	if !ok {
		panic(fmt.Sprintf("read outside memory at %d", at))
	}
	return v
}

func (in *Instance) lastErr(fn string) []byte {
	in.must(fn, in.scratch, in.scratch+4)
	p, n := in.u32(in.scratch), in.u32(in.scratch+4)
	if n == 0 {
		return nil
	}
	b, _ := in.mem.Read(p, n)
	return append([]byte(nil), b...)
}

// LastError is kw_last_error.
func (in *Instance) LastError() string { return string(in.lastErr("kw_last_error")) }

// LastErrorJSON is kw_last_error_json.
func (in *Instance) LastErrorJSON() []byte { return in.lastErr("kw_last_error_json") }

// Scratch is the address of the instance's 40-byte scratch buffer (out slots at 0 and 4,
// a kw_peek_header at 8).
func (in *Instance) Scratch() uint32 { return in.scratch }

// Put copies b into the instance's input buffer (grown with kw_alloc as needed) and
// returns its address.
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
		in.in = in.Alloc(int32(c))
		if in.in == 0 {
			in.inCap = 0
			return 0, in.err(abiStatusNoMem())
		}
		in.inCap = c
	}
	at := in.in
	for _, p := range parts {
		if !in.mem.Write(at, p) {
			return 0, fmt.Errorf("write outside memory")
		}
		at += uint32(len(p))
	}
	return in.in, nil
}

func abiStatusNoMem() int32 { return -8 }

func (in *Instance) err(st int32) error {
	return &abiconf.CallError{Status: st, Text: in.LastError(), JSON: in.LastErrorJSON()}
}

// takeOut copies the result of a call out of the instance and frees it.
func (in *Instance) takeOut(st int32) ([]byte, error) {
	if st != 0 {
		return nil, in.err(st)
	}
	p, n := in.u32(in.scratch), in.u32(in.scratch+4)
	b, ok := in.mem.Read(p, n)
	if !ok {
		return nil, fmt.Errorf("output [%d,+%d) outside memory", p, n)
	}
	out := append([]byte(nil), b...)
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

// call1 runs a kw_ function of the form f(in, in_len, extra..., out, out_len).
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

// PeekRequestHeader is kw_peek_request_header; it returns the 8 int32 of kw_peek_header.
func (in *Instance) PeekRequestHeader(frame []byte) ([8]int32, error) {
	var out [8]int32
	p, err := in.Put(frame)
	if err != nil {
		return out, err
	}
	if st := in.must("kw_peek_request_header", p, uint32(len(frame)), in.scratch+8); st != 0 {
		return out, in.err(st)
	}
	b, _ := in.mem.Read(in.scratch+8, 32)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

// HeaderVersions is kw_header_versions.
func (in *Instance) HeaderVersions(key, version int16) (int32, int32, error) {
	if st := in.must("kw_header_versions", uint32(int32(key)), uint32(int32(version)), in.scratch, in.scratch+4); st != 0 {
		return 0, 0, in.err(st)
	}
	return int32(in.u32(in.scratch)), int32(in.u32(in.scratch + 4)), nil
}

// DecodeRequestFrameRecords is kw_decode_request_frame_records: a layout-2 record table.
func (in *Instance) DecodeRequestFrameRecords(frame []byte, flags, maxDecompressed int32) ([]byte, error) {
	return in.call1("kw_decode_request_frame_records", frame, uint32(flags), uint32(maxDecompressed))
}

// DecodeResponseFrameRecords is kw_decode_response_frame_records.
func (in *Instance) DecodeResponseFrameRecords(frame []byte, key, version int16, flags, maxDecompressed int32) ([]byte, error) {
	return in.call1("kw_decode_response_frame_records", frame, uint32(int32(key)), uint32(int32(version)), uint32(flags), uint32(maxDecompressed))
}

// RuntimeStats is kw_runtime_stats: the module's runtime figures as JSON.
func (in *Instance) RuntimeStats() ([]byte, error) {
	return in.takeOut(in.must("kw_runtime_stats", in.scratch, in.scratch+4))
}

// EncodeRequestFrameRecords is kw_encode_request_frame_records.
func (in *Instance) EncodeRequestFrameRecords(json, table []byte) ([]byte, error) {
	// Put reuses one input buffer: both go in it, one after the other.
	p, err := in.Put(json, table)
	if err != nil {
		return nil, err
	}
	jl := uint32(len(json))
	return in.takeOut(in.must("kw_encode_request_frame_records", p, jl, p+jl, uint32(len(table)), in.scratch, in.scratch+4))
}
