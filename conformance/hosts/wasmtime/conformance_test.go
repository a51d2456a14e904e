package kwwasmtime

import (
	"path/filepath"
	"testing"

	"github.com/kwire/kwire/conformance/internal/abiclient/hosttest"
)

var compiled hosttest.Lazy[*Runtime]

// runtime compiles the module once per test binary; its serialized form is cached next
// to the module.
func runtime(t testing.TB) *Runtime {
	cache := filepath.Join(filepath.Dir(hosttest.WasmPath()), "kwire.wasmtime.cwasm")
	return compiled.Get(t, func() (*Runtime, error) { return NewRuntime(hosttest.WasmPath(), cache) })
}

var suite = &hosttest.Suite{Label: "wasm in wasmtime-go", New: func(t testing.TB) (hosttest.Instance, error) {
	return runtime(t).Instantiate()
}}

// TestABI runs the checks every host shares (hosttest.Suite.Run).
func TestABI(t *testing.T) { suite.Run(t) }
