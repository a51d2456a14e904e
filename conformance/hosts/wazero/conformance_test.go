package kwwazero

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kwire/kwire/conformance/internal/abiclient/hosttest"
)

var compiled hosttest.Lazy[*Runtime]

// runtime compiles the module once per test binary, with wazero's compilation cache
// next to the module.
func runtime(t testing.TB) *Runtime {
	return compiled.Get(t, func() (*Runtime, error) {
		cache := filepath.Join(filepath.Dir(hosttest.WasmPath()), "wazero-cache")
		return NewRuntime(context.Background(), hosttest.WasmPath(), Options{CacheDir: cache})
	})
}

var suite = &hosttest.Suite{
	Label: "wasm in wazero",
	New:   func(t testing.TB) (hosttest.Instance, error) { return runtime(t).Instantiate(context.Background()) },
}

// TestABI runs the checks every host shares (hosttest.Suite.Run).
func TestABI(t *testing.T) { suite.Run(t) }

// TestMemory runs the memory and steady-state checks (hosttest.Suite.RunMemory).
func TestMemory(t *testing.T) { suite.RunMemory(t) }

// TestImportsAndExports: the module imports only WASI functions (the ones Go's runtime
// needs) and exports memory, _initialize and every kw_ function of kwire.h.
func TestImportsAndExports(t *testing.T) {
	c := runtime(t).Compiled()
	var imports []string
	for _, f := range c.ImportedFunctions() {
		mod, name, _ := f.Import()
		if mod != "wasi_snapshot_preview1" {
			t.Errorf("imports %s.%s: only wasi_snapshot_preview1 is allowed", mod, name)
		}
		imports = append(imports, name)
	}
	if len(c.ImportedMemories()) != 0 {
		t.Errorf("imports a memory")
	}
	sort.Strings(imports)
	t.Logf("imports (wasi_snapshot_preview1): %s", strings.Join(imports, " "))
	exp := c.ExportedFunctions()
	for _, name := range append(Exports(), "_initialize") {
		if _, ok := exp[name]; !ok {
			t.Errorf("does not export %s", name)
		}
	}
	for name := range exp {
		if name != "_initialize" && !strings.HasPrefix(name, "kw_") {
			t.Errorf("exports %s, which kwire.h does not define", name)
		}
	}
	if _, ok := c.ExportedMemories()["memory"]; !ok {
		t.Errorf("does not export memory")
	}
}
