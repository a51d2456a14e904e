package kwwazero

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/kwire/kwire/abi/abiconf"
)

const vectorDir = "../../vectors"

// wasmPath is build/kwire.wasm of the repository, or $KWIRE_WASM.
func wasmPath() string {
	if p := os.Getenv("KWIRE_WASM"); p != "" {
		return p
	}
	return "../../../build/kwire.wasm"
}

func cacheDir() string { return filepath.Join(filepath.Dir(wasmPath()), "wazero-cache") }

var (
	rtOnce sync.Once
	rt     *Runtime
	rtErr  error
)

// runtime compiles the module once per test binary, with the compilation cache.
func runtime(t testing.TB) *Runtime {
	t.Helper()
	rtOnce.Do(func() { rt, rtErr = NewRuntime(context.Background(), wasmPath(), Options{CacheDir: cacheDir()}) })
	if rtErr != nil {
		t.Fatalf("loading %s: %v", wasmPath(), rtErr)
	}
	return rt
}

func instance(t testing.TB) *Instance {
	t.Helper()
	in, err := runtime(t).Instantiate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	return in
}

var (
	relOnce sync.Once
	rels    []abiconf.Release
	relErr  error
)

func releases(t testing.TB) []abiconf.Release {
	t.Helper()
	relOnce.Do(func() { rels, relErr = abiconf.LoadReleases(vectorDir) })
	if relErr != nil {
		t.Fatalf("loading vectors: %v", relErr)
	}
	return rels
}

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
	in := instance(t)
	if v := in.Version(); v != 1<<16 {
		t.Errorf("kw_abi_version = %#x, want 0x10000", v)
	}
}

// TestVectors runs every Kafka-written vector through the module: decode, encode and
// round trip, printing the coverage table of the native runner.
func TestVectors(t *testing.T) {
	in := instance(t)
	reps, err := abiconf.Run("wasm in wazero", in, releases(t))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, r := range reps {
		t.Logf("\n%s", r.Table())
		total += r.Vectors
		if r.Vectors != len(releases(t)[i].Vectors) || r.Vectors == 0 {
			t.Errorf("%s: ran %d of %d vectors", r.Release, r.Vectors, len(releases(t)[i].Vectors))
		}
		if len(r.Failures) > 0 {
			t.Errorf("%s: %d of %d vectors failed:\n%s", r.Release, r.FailedVectors(), r.Vectors, r.FailureText(40))
		}
	}
	t.Logf("%d vectors through kwire.wasm in wazero", total)
}

// TestFrames wraps every request and response vector in a frame and runs it through
// the frame functions and the header peek, against the body functions.
func TestFrames(t *testing.T) {
	in := instance(t)
	n, err := abiconf.CheckFrames(in, releases(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d frames checked", n)
}

// TestRecordVectors decodes every batch kafka-clients built through the records
// functions and compares with what Kafka's reader saw.
func TestRecordVectors(t *testing.T) {
	in := instance(t)
	n, err := abiconf.CheckRecords(in, vectorDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d record vectors checked", n)
}
