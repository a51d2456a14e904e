package kwwasmtime

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/kwire/kwire/abi"
	"github.com/kwire/kwire/abi/abiconf"
	kwwazero "github.com/kwire/kwire/conformance/hosts/wazero"
	"github.com/kwire/kwire/conformance/internal/abiclient/hosttest"
)

// codecHost is what the throughput rows call: the ABI's body functions.
type codecHost interface {
	DecodeMessage(name string, version int16, in []byte) ([]byte, error)
	EncodeMessage(name string, version int16, json []byte) ([]byte, error)
}

type workItem struct {
	name    string
	version int16
	bytes   []byte
	json    []byte
}

// work returns the vectors of the named messages (all when names is nil) that the ABI
// decodes, with their JSON as the ABI writes it.
func work(t *testing.T, names map[string]bool) ([]workItem, int) {
	cat, err := abiconf.LoadCatalogue(abiconf.Native{})
	if err != nil {
		t.Fatal(err)
	}
	var out []workItem
	size := 0
	for _, rel := range suite.Releases(t) {
		for _, v := range rel.Vectors {
			if names != nil && !names[v.Name] {
				continue
			}
			m, _ := cat.Lookup(v.Name, v.APIKey, v.Kind)
			if m == nil {
				continue
			}
			js, err := abiconf.Native{}.DecodeMessage(m.Name, v.Version, v.Bytes)
			if err != nil {
				continue
			}
			out = append(out, workItem{m.Name, v.Version, v.Bytes, js})
			size += len(v.Bytes)
		}
	}
	return out, size
}

// measure runs fn over the whole set repeatedly for at least d of CPU time and returns
// the CPU time (user + system, all threads of this process: the collector's too) per
// pass. CPU time, not wall time: on a shared machine wall time mostly measures the
// other tenants, and the side-by-side ratios would swing with them.
func measure(d time.Duration, fn func() error) (time.Duration, error) {
	if err := fn(); err != nil { // warm-up
		return 0, err
	}
	n := 0
	start := cpuTime()
	for cpuTime()-start < d || n < 2 {
		if err := fn(); err != nil {
			return 0, err
		}
		n++
	}
	return (cpuTime() - start) / time.Duration(n), nil
}

func decodeAll(h codecHost, items []workItem) func() error {
	return func() error {
		for _, it := range items {
			if _, err := h.DecodeMessage(it.name, it.version, it.bytes); err != nil {
				return fmt.Errorf("%s v%d: %w", it.name, it.version, err)
			}
		}
		return nil
	}
}

func encodeAll(h codecHost, items []workItem) func() error {
	return func() error {
		for _, it := range items {
			if _, err := h.EncodeMessage(it.name, it.version, it.json); err != nil {
				return fmt.Errorf("%s v%d: %w", it.name, it.version, err)
			}
		}
		return nil
	}
}

func mbps(bytes int, d time.Duration) float64 { return float64(bytes) / d.Seconds() / 1e6 }

// TestWasmBenchTable prints the wasm table of `make abi-bench`: ABI call overhead,
// decode/encode throughput in wazero and wasmtime-go against the abi package in
// process, the module size, compile times with and without the compilation caches and
// instantiate times. It runs only with KWIRE_BENCH=1 (a measurement, not a test).
func TestWasmBenchTable(t *testing.T) {
	if os.Getenv("KWIRE_BENCH") == "" {
		t.Skip("a benchmark: run with KWIRE_BENCH=1 (make abi-bench)")
	}
	ctx := context.Background()
	dur := 2 * time.Second
	var b strings.Builder
	fmt.Fprintf(&b, "kwire flat ABI: wasm hosts against native Go (same run)\n")
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(&b, "load average at start: %s", la)
	}

	// Module size.
	wasm, err := os.ReadFile(hosttest.WasmPath())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "kwire.wasm: %d bytes (%.1f MiB)\n\n", len(wasm), float64(len(wasm))/(1<<20))

	// Compile and instantiate: wazero.
	// Startup is timed in CPU time of this process as well as wall time: on a shared
	// machine the wall time of a single-threaded compile says more about the load.
	tmp := t.TempDir()
	t0, c0 := time.Now(), cpuTime()
	wz, err := kwwazero.NewRuntimeFrom(ctx, wasm, kwwazero.Options{CacheDir: filepath.Join(tmp, "wazero")})
	if err != nil {
		t.Fatal(err)
	}
	wzCold, wzColdCPU := time.Since(t0), cpuTime()-c0
	wz.Close(ctx)
	t0, c0 = time.Now(), cpuTime()
	wz, err = kwwazero.NewRuntimeFrom(ctx, wasm, kwwazero.Options{CacheDir: filepath.Join(tmp, "wazero")})
	if err != nil {
		t.Fatal(err)
	}
	wzWarm, wzWarmCPU := time.Since(t0), cpuTime()-c0
	t0, c0 = time.Now(), cpuTime()
	wzi, err := wz.Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wzInst, wzInstCPU := time.Since(t0), cpuTime()-c0
	defer wz.Close(ctx)

	// Compile and instantiate: wasmtime (cache = its serialized module).
	cache := filepath.Join(tmp, "kwire.cwasm")
	wasmFile := filepath.Join(tmp, "kwire.wasm")
	if err := os.WriteFile(wasmFile, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	if _, err := NewRuntime(wasmFile, ""); err != nil {
		t.Fatal(err)
	}
	wtCold := time.Since(t0)
	if _, err := NewRuntime(wasmFile, cache); err != nil { // writes the cache
		t.Fatal(err)
	}
	t0 = time.Now()
	wt, err := NewRuntime(wasmFile, cache)
	if err != nil {
		t.Fatal(err)
	}
	wtWarm := time.Since(t0)
	t0 = time.Now()
	wti, err := wt.Instantiate()
	if err != nil {
		t.Fatal(err)
	}
	wtInst := time.Since(t0)

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "startup\twazero (compiler)\twasmtime-go\t\n")
	fmt.Fprintf(tw, "compile, no cache\t%v\t%v\t\n", wzCold.Round(time.Millisecond), wtCold.Round(time.Millisecond))
	fmt.Fprintf(tw, "compile, from cache\t%v\t%v\t\n", wzWarm.Round(time.Millisecond), wtWarm.Round(time.Millisecond))
	fmt.Fprintf(tw, "instantiate (+ _initialize)\t%v\t%v\t\n", wzInst.Round(time.Microsecond), wtInst.Round(time.Microsecond))
	fmt.Fprintf(tw, "from cache to first call\t%v\t%v\t\n", (wzWarm + wzInst).Round(time.Millisecond), (wtWarm + wtInst).Round(time.Millisecond))
	fmt.Fprintf(tw, "wazero CPU time: compile %v, from cache %v, instantiate %v\t\t\t\n", wzColdCPU.Round(time.Millisecond), wzWarmCPU.Round(time.Millisecond), wzInstCPU.Round(time.Microsecond))
	tw.Flush()
	b.WriteString("\n")

	// Call overhead: kw_abi_version, and a tiny decode.
	callCost := func(call func()) time.Duration {
		const n = 200000
		call()
		t0 := time.Now()
		for i := 0; i < n; i++ {
			call()
		}
		return time.Since(t0) / n
	}
	nativeCall := callCost(func() { _ = abi.Version() })
	wzCall := callCost(func() { wzi.Call("kw_abi_version") })
	wtCall := callCost(func() { wti.Call("kw_abi_version") })
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "call overhead (kw_abi_version)\tnative Go\twazero\twasmtime-go\t\n")
	fmt.Fprintf(tw, "per call\t%v\t%v\t%v\t\n", nativeCall, wzCall, wtCall)
	tw.Flush()
	b.WriteString("\n")

	// Throughput.
	hosts := []struct {
		name string
		h    codecHost
	}{{"native Go (abi)", abiconf.Native{}}, {"wazero", wzi}, {"wasmtime-go", wti}}
	sets := []struct {
		name  string
		names map[string]bool
	}{
		{"Produce/Fetch", map[string]bool{"ProduceRequest": true, "ProduceResponse": true, "FetchRequest": true, "FetchResponse": true}},
		{"all vectors", nil},
	}
	ratios := map[string]map[string]float64{}
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "vectors\top\thost\tCPU/pass\tMB/s (wire)\tns/message\tx native\t\n")
	for _, s := range sets {
		items, size := work(t, s.names)
		for _, op := range []string{"decode", "encode"} {
			var native time.Duration
			for _, h := range hosts {
				fn := decodeAll(h.h, items)
				if op == "encode" {
					fn = encodeAll(h.h, items)
				}
				d, err := measure(dur, fn)
				if err != nil {
					t.Fatalf("%s %s on %s: %v", op, s.name, h.name, err)
				}
				if native == 0 {
					native = d
				}
				if ratios[s.name] == nil {
					ratios[s.name] = map[string]float64{}
				}
				ratios[s.name][op+"/"+h.name] = float64(d) / float64(native)
				fmt.Fprintf(tw, "%s (%d, %d KB)\t%s\t%s\t%v\t%.1f\t%.0f\t%.2f\t\n", s.name, len(items), size/1000, op, h.name,
					d.Round(time.Microsecond), mbps(size, d), float64(d.Nanoseconds())/float64(len(items)), float64(d)/float64(native))
			}
		}
	}
	tw.Flush()
	b.WriteString("(decode: wire bytes -> JSON; encode: JSON -> wire bytes; each through the ABI's copy in, call, copy out, kw_free)\n\n")

	// The transcoder against the typed codec, natively.
	b.WriteString(engineTable(t, dur))

	// Summary against the targets.
	summary := &summaryTable{}
	gz := gzipSize(wasm)
	summary.add("build/kwire.wasm raw / gzip -9", fmt.Sprintf("%.1f MB / %.2f MB", mb(len(wasm)), mb(gz)), "<= 4.0 MB / <= 1.1 MB", len(wasm) <= 4e6 && gz <= 1.1e6)
	summary.add("wazero: compile without cache (CPU; wall)", cpuWall(wzColdCPU, wzCold), "<= 2 s", wzColdCPU <= 2*time.Second)
	summary.add("wazero: load from cache + instantiate (CPU; wall)", cpuWall(wzWarmCPU+wzInstCPU, wzWarm+wzInst), "<= 50 ms", wzWarmCPU+wzInstCPU <= 50*time.Millisecond)
	if cpu, wall, err := pythonFirstCall(); err != nil {
		summary.add("Python (wasmtime): first call, empty cache", "not measured: "+err.Error(), "<= 0.7 s", false)
	} else {
		summary.add("Python (wasmtime): first call, empty cache (CPU; wall)", cpuWall(cpu, wall), "<= 0.7 s (wall)", wall <= 700*time.Millisecond)
	}
	if ms, err := nodeInit(); err != nil {
		summary.add("JS `await init()` in Node", "not measured: "+err.Error(), "<= 50 ms", false)
	} else {
		summary.add("JS `await init()` in Node (median of 3 fresh processes)", fmt.Sprintf("%.0f ms", ms), "<= 50 ms", ms <= 50)
	}
	pf := ratios["Produce/Fetch"]
	summary.add("wazero vs native (abi), Produce/Fetch, decode", fmt.Sprintf("%.1fx", pf["decode/wazero"]), "<= 5x", pf["decode/wazero"] <= 5)
	summary.add("same, encode", fmt.Sprintf("%.1fx", pf["encode/wazero"]), "<= 5x", pf["encode/wazero"] <= 5)
	summary.add("wasmtime-go, decode / encode", fmt.Sprintf("%.1fx / %.1fx", pf["decode/wasmtime-go"], pf["encode/wasmtime-go"]), "<= 3x",
		pf["decode/wasmtime-go"] <= 3 && pf["encode/wasmtime-go"] <= 3)
	if fi, err := os.Stat(filepath.Join(filepath.Dir(hosttest.WasmPath()), "libkwire.so")); err == nil {
		summary.add("libkwire.so", fmt.Sprintf("%.1f MB", mb(int(fi.Size()))), "<= 8 MB", fi.Size() <= 8e6)
	} else {
		summary.add("libkwire.so", "not built (make capi)", "<= 8 MB", false)
	}
	for _, r := range engineRatios {
		summary.add(r.what, fmt.Sprintf("%.2fx", r.ratio), "<= 1.0x", r.ratio <= 1.0)
	}
	b.WriteString(summary.String())
	fmt.Print(b.String())
}

// nodeInit times `await init()` of the JS binding (compile and instantiate
// kwire.wasm) in a fresh Node process, three times, and returns the median in ms.
func nodeInit() (float64, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return 0, fmt.Errorf("no node")
	}
	index, err := filepath.Abs(filepath.Join(repoRoot(), "bindings", "js", "index.js"))
	if err != nil {
		return 0, err
	}
	wasm, err := filepath.Abs(hosttest.WasmPath())
	if err != nil {
		return 0, err
	}
	code := fmt.Sprintf(`const { init } = await import(%q); const t0 = performance.now(); await init(%q); console.log(performance.now() - t0);`,
		"file://"+index, wasm)
	var ms []float64
	for i := 0; i < 3; i++ {
		cmd := exec.Command(node, "--input-type=module", "-e", code)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return 0, fmt.Errorf("node: %v: %s", err, strings.TrimSpace(stderr.String()))
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		if err != nil {
			return 0, fmt.Errorf("node printed %q", out)
		}
		ms = append(ms, v)
	}
	sort.Float64s(ms)
	return ms[1], nil
}
