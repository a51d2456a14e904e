package kwwasmtime

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kwire/kwire/abi/abiconf"
)

const vectorDir = "../../vectors"

func wasmPath() string {
	if p := os.Getenv("KWIRE_WASM"); p != "" {
		return p
	}
	return "../../../build/kwire.wasm"
}

func cachePath() string { return filepath.Join(filepath.Dir(wasmPath()), "kwire.wasmtime.cwasm") }

var (
	rtOnce sync.Once
	rt     *Runtime
	rtErr  error
)

func runtime(t testing.TB) *Runtime {
	t.Helper()
	rtOnce.Do(func() { rt, rtErr = NewRuntime(wasmPath(), cachePath()) })
	if rtErr != nil {
		t.Fatalf("loading %s: %v", wasmPath(), rtErr)
	}
	return rt
}

func instance(t testing.TB) *Instance {
	t.Helper()
	in, err := runtime(t).Instantiate()
	if err != nil {
		t.Fatal(err)
	}
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

// TestVectors runs every Kafka-written vector through kwire.wasm in wasmtime.
func TestVectors(t *testing.T) {
	in := instance(t)
	if v := in.Version(); v != 1<<16|1 {
		t.Errorf("kw_abi_version = %#x", v)
	}
	reps, err := abiconf.Run("wasm in wasmtime-go", in, releases(t))
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
	t.Logf("%d vectors through kwire.wasm in wasmtime-go", total)
}

// TestFrames runs every request and response vector as a frame.
func TestFrames(t *testing.T) {
	n, err := abiconf.CheckFrames(instance(t), releases(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d frames checked", n)
}

// TestRecordVectors runs the record vectors through the records functions.
func TestRecordVectors(t *testing.T) {
	n, err := abiconf.CheckRecords(instance(t), vectorDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d record vectors checked", n)
}

// TestMisuse: bad pointers, lengths, names, versions and a double free each give a
// status and an error text, and the instance keeps working.
func TestMisuse(t *testing.T) {
	in := instance(t)
	v := releases(t)[1].Vectors[0]
	want, err := in.DecodeMessage(v.Name, v.Version, v.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	sc := in.Scratch()
	buf := in.Alloc(64)
	in.Write(buf, []byte(v.Name))
	nl := uint32(len(v.Name))
	size := uint32(in.MemorySize())
	for _, c := range []struct {
		what string
		fn   string
		args []uint32
		want int32
	}{
		{"NULL input with a length", "kw_decode_message", []uint32{buf, nl, uint32(v.Version), 0, 4, sc, sc + 4}, -1},
		{"pointer past memory", "kw_decode_message", []uint32{buf, nl, uint32(v.Version), size + 64, 4, sc, sc + 4}, -1},
		{"range past its buffer", "kw_decode_message", []uint32{buf, nl, uint32(v.Version), buf + 60, 8, sc, sc + 4}, -1},
		{"NULL out-param", "kw_decode_message", []uint32{buf, nl, uint32(v.Version), buf, 0, 0, sc + 4}, -1},
		{"unknown name", "kw_decode_message", []uint32{buf, 3, 0, buf, 0, sc, sc + 4}, -5},
		{"bad version", "kw_decode_message", []uint32{buf, nl, 4000, buf, 0, sc, sc + 4}, -6},
		{"bad api key", "kw_decode_response_frame", []uint32{buf, 8, 4000, 0, sc, sc + 4}, -5},
		{"garbage JSON", "kw_encode_message", []uint32{buf, nl, uint32(v.Version), buf, nl, sc, sc + 4}, -4},
		{"stray free", "kw_free", []uint32{buf + 3}, -1},
	} {
		st, err := in.Call(c.fn, c.args...)
		if err != nil {
			t.Fatalf("%s: trapped: %v", c.what, err)
		}
		if st != c.want || in.LastError() == "" {
			t.Fatalf("%s: status %d (want %d), error %q", c.what, st, c.want, in.LastError())
		}
		t.Logf("%-26s -> %d %s", c.what, st, in.LastError())
		got, err := in.DecodeMessage(v.Name, v.Version, v.Bytes)
		if err != nil || string(got) != string(want) {
			t.Fatalf("after %s: valid call: %v", c.what, err)
		}
	}
	p := in.Alloc(8)
	if in.Free(p) != 0 {
		t.Fatal("free")
	}
	if st := in.Free(p); st != -1 || in.LastError() == "" {
		t.Fatalf("double free: %d %q", st, in.LastError())
	}
	if _, err := in.DecodeMessage(v.Name, v.Version, v.Bytes); err != nil {
		t.Fatalf("after double free: %v", err)
	}
}
