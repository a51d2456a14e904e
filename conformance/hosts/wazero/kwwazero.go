// Package kwwazero loads kwire's WebAssembly module (build/kwire.wasm) in wazero and
// calls its kw_ functions (capi/kwire.h) through the shared ABI client
// (conformance/internal/abiclient): this package only runs the module and gives the
// client its exports and memory. It is the host the wazero conformance run, the memory
// tests and the wasm benchmarks use.
package kwwazero

import (
	"context"
	"fmt"
	"os"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/kwire/kwire/conformance/internal/abiclient"
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

// Instance is one instantiated module: the ABI client over it. Not safe for concurrent
// use.
type Instance struct {
	*abiclient.Client
	m *machine
}

// machine is the abiclient.Machine of one wazero module.
type machine struct {
	ctx   context.Context
	mod   api.Module
	mem   api.Memory
	fns   map[string]api.Function
	stack []uint64
}

// Exports lists the kw_ functions every build of the module exports.
func Exports() []string { return abiclient.Exports() }

// Instantiate creates an instance and runs its _initialize.
func (r *Runtime) Instantiate(ctx context.Context) (*Instance, error) {
	r.n++
	cfg := wazero.NewModuleConfig().WithName(fmt.Sprintf("kwire-%d", r.n)).WithStartFunctions("_initialize").
		WithStderr(os.Stderr)
	mod, err := r.rt.InstantiateModule(ctx, r.compiled, cfg)
	if err != nil {
		return nil, err
	}
	m := &machine{ctx: ctx, mod: mod, mem: mod.Memory(), fns: map[string]api.Function{}, stack: make([]uint64, 8)}
	for _, name := range abiclient.Exports() {
		if m.fns[name] = mod.ExportedFunction(name); m.fns[name] == nil {
			mod.Close(ctx)
			return nil, fmt.Errorf("kwire.wasm does not export %s", name)
		}
	}
	c, err := abiclient.New(m)
	if err != nil {
		mod.Close(ctx)
		return nil, err
	}
	return &Instance{Client: c, m: m}, nil
}

// Close closes the instance.
func (in *Instance) Close() error { return in.m.mod.Close(in.m.ctx) }

// Module is the wazero module (its memory, for tests).
func (in *Instance) Module() api.Module { return in.m.mod }

// Memory is the module's memory.
func (in *Instance) Memory() api.Memory { return in.m.mem }

func (m *machine) Call(name string, args ...uint32) (int32, error) {
	f := m.fns[name]
	if f == nil {
		return 0, fmt.Errorf("no export %s", name)
	}
	st := m.stack[:max(len(args), 1)]
	for i, a := range args {
		st[i] = uint64(a)
	}
	if err := f.CallWithStack(m.ctx, st); err != nil {
		return 0, err
	}
	return int32(uint32(st[0])), nil
}

func (m *machine) Read(p, n uint32) ([]byte, bool) {
	b, ok := m.mem.Read(p, n)
	return append([]byte(nil), b...), ok
}

func (m *machine) Write(p uint32, b []byte) bool { return m.mem.Write(p, b) }

func (m *machine) Size() uint32 { return m.mem.Size() }
