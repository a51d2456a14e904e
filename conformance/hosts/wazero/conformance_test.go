package kwwazero

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/kwire/kwire/abi"
	"github.com/kwire/kwire/abi/abiconf"
	"github.com/kwire/kwire/codec"
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
	if v := in.Version(); v != abi.Version() {
		t.Errorf("kw_abi_version = %#x, want %#x (abi.Major.Minor)", v, abi.Version())
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

// TestRequestTrailingBytes: a request frame followed by bytes Kafka's broker ignores (an
// all-topics MetadataRequest v13 with 3 bytes after the body, as librdkafka 2.16 sends
// it) decodes through kwire.wasm, shows the bytes and re-encodes byte for byte.
func TestRequestTrailingBytes(t *testing.T) {
	in := instance(t)
	body := codec.NewMetadataRequest()
	body.Topics = nil
	frame, err := codec.EncodeRequestFrame(nil, codec.NewRequestHeaderFor(body, 13, 9, "rdkafka"), body)
	if err != nil {
		t.Fatal(err)
	}
	frame = append(frame, 0, 1, 2)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	js, err := in.DecodeRequestFrame(frame)
	if err != nil {
		t.Fatalf("kwire.wasm refuses the frame: %v", err)
	}
	if !bytes.HasSuffix(js, []byte(`,"_trailingBytes":"AAEC"}}`)) {
		t.Fatalf("trailing bytes not shown: %s", js)
	}
	back, err := in.EncodeRequestFrame(js)
	if err != nil || !bytes.Equal(back, frame) {
		t.Fatalf("re-encode: %v\n got %x\nwant %x", err, back, frame)
	}
	// A response with an extra byte is still refused.
	resp := codec.NewMetadataResponse()
	rf, _ := codec.EncodeResponseFrame(nil, codec.NewResponseHeader(), 13, resp)
	rf = append(rf, 0)
	binary.BigEndian.PutUint32(rf, uint32(len(rf)-4))
	if _, err := in.DecodeResponseFrame(rf, 3, 13); err == nil || !strings.Contains(err.Error(), "trailing bytes") {
		t.Fatalf("response with an extra byte: %v", err)
	}
}

// TestFrameRecords: the frame-records calls through kwire.wasm agree with the library's
// own, natively.
func TestFrameRecords(t *testing.T) {
	in := instance(t)
	vecs, err := abiconf.ReadRecordVectors(vectorDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range vecs {
		p := codec.NewProduceRequest()
		p.Acks = -1
		p.TopicData = []codec.ProduceRequestTopicProduceData{{Name: "t", PartitionData: []codec.ProduceRequestPartitionProduceData{{Index: 3, Records: v.Bytes}}}}
		frame, err := codec.EncodeRequestFrame(nil, codec.NewRequestHeaderFor(p, 9, 1, "c"), p)
		if err != nil {
			t.Fatal(err)
		}
		want, werr := abi.DecodeRequestFrameRecords(nil, frame, 0, 0)
		got, gerr := in.DecodeRequestFrameRecords(frame, 0, 0)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("%s: kwire.wasm and native differ (%v / %v)", v.Name, gerr, werr)
		}
		// Layout 3 (spans into the input) and a Fetch response carrying the same
		// records, in both layouts: byte for byte what the library writes natively.
		fr := codec.NewFetchResponse()
		part := codec.NewFetchResponsePartitionData()
		part.Records = v.Bytes
		fr.Responses = []codec.FetchResponseFetchableTopicResponse{{Topic: "t", Partitions: []codec.FetchResponsePartitionData{*part}}}
		fetch, err := codec.EncodeResponseFrame(nil, &codec.ResponseHeader{CorrelationID: 1}, 12, fr)
		if err != nil {
			t.Fatal(err)
		}
		for _, flags := range []int32{abi.FlagInputSpans, abi.FlagInputSpans | abi.FlagSkipCRC} {
			w3, e3 := abi.DecodeRequestFrameRecords(nil, frame, flags, 0)
			g3, f3 := in.DecodeRequestFrameRecords(frame, flags, 0)
			if (e3 == nil) != (f3 == nil) || !bytes.Equal(g3, w3) {
				t.Fatalf("%s: layout 3: kwire.wasm and native differ (%v / %v)", v.Name, f3, e3)
			}
			for _, fl := range []int32{flags, flags &^ abi.FlagInputSpans} {
				wf, ef := abi.DecodeResponseFrameRecords(nil, fetch, 1, 12, fl, 0)
				gf, ff := in.DecodeResponseFrameRecords(fetch, 1, 12, fl, 0)
				if (ef == nil) != (ff == nil) || !bytes.Equal(gf, wf) {
					t.Fatalf("%s: Fetch v12 (flags %d): kwire.wasm and native differ (%v / %v)", v.Name, fl, ff, ef)
				}
			}
		}
		if werr != nil {
			continue
		}
		// The table and its JSON build the request again.
		le := binary.LittleEndian
		jo, jl := le.Uint32(got[40:]), le.Uint32(got[44:])
		out, err := in.EncodeRequestFrameRecords(got[jo:jo+jl], got)
		nat, nerr := abi.EncodeRequestFrameRecords(nil, got[jo:jo+jl], got)
		if err != nil || nerr != nil || !bytes.Equal(out, nat) {
			t.Fatalf("%s: encode from the table: %v / %v", v.Name, err, nerr)
		}
		n++
	}
	if n < 20 {
		t.Fatalf("only %d record vectors", n)
	}
}
