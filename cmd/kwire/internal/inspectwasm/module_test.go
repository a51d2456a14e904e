//go:build !wasip1

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/kwire/kwire/cmd/kwire/internal/inspect"
)

// TestModule builds the inspector's module and runs it as the browser does: the
// committed capture and a frame, each written into the buffer inspect_alloc hands out,
// read back at inspect_out_ptr, equal to what package inspect writes natively. The
// buffers handed to the host stay put across calls and collections.
func TestModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm module")
	}
	capture, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "examples", "data", "sample.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	frame, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "examples", "data", "produce-request.bin"))
	if err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(t.TempDir(), "inspect.wasm")
	build := exec.Command("go", "build", "-buildmode=c-shared", "-o", mod, ".")
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	code, err := os.ReadFile(mod)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	m, err := rt.InstantiateWithConfig(ctx, code, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, args ...uint64) uint64 {
		t.Helper()
		r, err := m.ExportedFunction(name).Call(ctx, args...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(r) == 0 {
			return 0
		}
		return r[0]
	}
	put := func(b []byte) {
		t.Helper()
		p := uint32(call("inspect_alloc", uint64(len(b))))
		if p == 0 || !m.Memory().Write(p, b) {
			t.Fatalf("inspect_alloc(%d) = %d", len(b), p)
		}
	}
	output := func() []byte {
		t.Helper()
		p, n := uint32(call("inspect_out_ptr")), uint32(call("inspect_out_len"))
		b, ok := m.Memory().Read(p, n)
		if !ok {
			t.Fatalf("output [%d, +%d) outside memory", p, n)
		}
		return bytes.Clone(b)
	}
	wantPcap, err := inspect.Pcap(nil, capture, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantFrame := inspect.Frame(nil, frame, -1, 0)
	for i := range 20 {
		put(capture)
		if st := call("inspect_pcap", 0); st != 0 {
			t.Fatalf("round %d: inspect_pcap = %d: %s", i, st, output())
		}
		if got := output(); !bytes.Equal(got, wantPcap) {
			t.Fatalf("round %d: the capture's lines differ from package inspect's:\n%s\nwant\n%s", i, got, wantPcap)
		}
		put(frame)
		call("inspect_frame", api.EncodeI32(-1), 0)
		first := output()
		runtime.GC()
		if got := output(); !bytes.Equal(got, wantFrame) || !bytes.Equal(first, got) {
			t.Fatalf("round %d: the frame's line %q, want %q", i, got, wantFrame)
		}
	}
	put(nil) // an empty input has an address too
	call("inspect_frame", api.EncodeI32(-1), 0)
	if len(output()) == 0 {
		t.Fatal("no line for an empty frame")
	}
}
