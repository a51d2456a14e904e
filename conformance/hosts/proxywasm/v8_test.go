package proxywasm

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestV8ManyInstances runs 20 instances of the module, one after another with four
// alive at a time, in one Node process on the V8 host (v8/many.mjs over v8/host.mjs),
// each holding 20 Fetch responses of about 1 MiB whole (fetch_endpoints "hold": the
// module's heap grows and its Go runtime collects and waits, calling WASI's
// poll_oneoff), while the process churns ArrayBuffers. With node:wasi as the WASI layer
// this process crashed on Node 20 and 22 (a garbage collection started inside a
// node:wasi fast call: host.mjs says more); the host uses the JavaScript binding's own
// WASI functions, and the process must exit 0 having made every callback.
func TestV8ManyInstances(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	dir := t.TempDir()
	modPath := filepath.Join(dir, "kwire-envoy.wasm")
	reqPath, respPath := filepath.Join(dir, "fetch.req"), filepath.Join(dir, "fetch.resp")
	req, resp := fetchRequestFrame(t, 18), fetchResponseFrame(t, 18)
	copy(resp[4:8], req[8:12])
	for path, b := range map[string][]byte{modPath: module(t), reqPath: req, respPath: resp} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const instances, ops = 20, 20
	cfg := `{"brokers":{"1":"127.0.0.1:19092"},"fetch_endpoints":"hold"}`
	cmd := exec.Command(node, "--no-warnings", filepath.Join("v8", "many.mjs"), modPath, cfg, reqPath, respPath, strconv.Itoa(instances), strconv.Itoa(ops))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node v8/many.mjs: %v (node:wasi crashed such a process with SIGTRAP, SIGABRT or SIGSEGV)\n%s%s", err, out, stderr.Bytes())
	}
	var got struct{ Instances, Ops, Callbacks int }
	if err := json.Unmarshal(bytes.TrimSpace(out), &got); err != nil {
		t.Fatalf("node printed %q: %v", out, err)
	}
	// Every op delivers the request and the response in 64 KiB reads, one callback per
	// read.
	reads := (len(req)+(64<<10)-1)/(64<<10) + (len(resp)+(64<<10)-1)/(64<<10)
	if got.Instances != instances || got.Ops != ops || got.Callbacks != instances*ops*reads {
		t.Fatalf("node ran %+v, want %d instances of %d ops with %d callbacks each", got, instances, ops, reads)
	}
}
