// Package kwwasmtime loads kwire's WebAssembly module (build/kwire.wasm) in wasmtime,
// through wasmtime-go, and calls its kw_ functions (capi/kwire.h). It lives in a Go
// module of its own because wasmtime-go needs cgo and ships a static library.
package kwwasmtime

import (
	"fmt"
	"os"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/kwire/kwire/conformance/internal/abiclient"
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

// Instance is one instantiated module with its store: the ABI client over it. Not safe
// for concurrent use.
type Instance struct {
	*abiclient.Client
	m *machine
}

// machine is the abiclient.Machine of one wasmtime instance.
type machine struct {
	store *wasmtime.Store
	mem   *wasmtime.Memory
	fns   map[string]*wasmtime.Func
}

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
	m := &machine{store: store, mem: ext.Memory(), fns: map[string]*wasmtime.Func{}}
	for _, name := range abiclient.Exports() {
		if m.fns[name] = inst.GetFunc(store, name); m.fns[name] == nil {
			return nil, fmt.Errorf("kwire.wasm does not export %s", name)
		}
	}
	c, err := abiclient.New(m)
	if err != nil {
		return nil, err
	}
	return &Instance{c, m}, nil
}

// Close releases the store.
func (in *Instance) Close() error {
	in.m.store.Close()
	return nil
}

func (m *machine) Call(name string, args ...uint32) (int32, error) {
	f := m.fns[name]
	if f == nil {
		return 0, fmt.Errorf("no export %s", name)
	}
	a := make([]interface{}, len(args))
	for i, v := range args {
		a[i] = int32(v)
	}
	r, err := f.Call(m.store, a...)
	if err != nil {
		return 0, err
	}
	v, _ := r.(int32)
	return v, nil
}

// data is a view of linear memory, valid until the next call.
func (m *machine) data() []byte { return m.mem.UnsafeData(m.store) }

func (m *machine) Read(p, n uint32) ([]byte, bool) {
	d := m.data()
	if uint64(p)+uint64(n) > uint64(len(d)) {
		return nil, false
	}
	return append([]byte(nil), d[p:p+n]...), true
}

func (m *machine) Write(p uint32, b []byte) bool {
	d := m.data()
	if uint64(p)+uint64(len(b)) > uint64(len(d)) {
		return false
	}
	copy(d[p:], b)
	return true
}

func (m *machine) Size() uint32 { return uint32(m.mem.DataSize(m.store)) }
