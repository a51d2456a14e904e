package kwwasmtime

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kwire/kwire/abi"
	"github.com/kwire/kwire/abi/abiconf"
	"github.com/kwire/kwire/codec"
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
	if v := in.Version(); v != abi.Version() {
		t.Errorf("kw_abi_version = %#x, want %#x", v, abi.Version())
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

// tableFlags are the flag sets the frame-records tests run: layout 2 and layout 3
// (abi.FlagInputSpans), each with and without CRC checks.
var tableFlags = []int32{0, abi.FlagSkipCRC, abi.FlagInputSpans, abi.FlagInputSpans | abi.FlagSkipCRC}

// sameAsNative decodes frame with the frame-records call through kwire.wasm and natively
// with every flag set, and reports the first difference: status, or the table's bytes.
func sameAsNative(t *testing.T, in *Instance, frame []byte, request bool, key, version int16) (layout3 []byte, ok bool) {
	t.Helper()
	for _, fl := range tableFlags {
		var want, got []byte
		var werr, gerr error
		if request {
			want, werr = abi.DecodeRequestFrameRecords(nil, frame, fl, 0)
			got, gerr = in.DecodeRequestFrameRecords(frame, fl, 0)
		} else {
			want, werr = abi.DecodeResponseFrameRecords(nil, frame, int32(key), int32(version), fl, 0)
			got, gerr = in.DecodeResponseFrameRecords(frame, key, version, fl, 0)
		}
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Errorf("flags %d: kwire.wasm and native differ (%v / %v)", fl, gerr, werr)
			return nil, false
		}
		if werr != nil {
			var ce *abiconf.CallError
			var ae *abi.Error
			if !errors.As(gerr, &ce) || !errors.As(werr, &ae) || ce.Status != ae.Status || ce.Text != ae.Error() {
				t.Errorf("flags %d: kwire.wasm and native fail differently (%v / %v)", fl, gerr, werr)
				return nil, false
			}
			continue
		}
		layout := int32(binary.LittleEndian.Uint32(got[4:]))
		if want := map[bool]int32{false: abi.TableLayoutFrame, true: abi.TableLayoutInput}[fl&abi.FlagInputSpans != 0]; layout != want {
			t.Errorf("flags %d: layout %d, want %d", fl, layout, want)
			return nil, false
		}
		if fl == abi.FlagInputSpans {
			layout3 = got
		}
	}
	return layout3, true
}

// TestFrameRecords: the frame-records calls through kwire.wasm give the tables the abi
// package writes natively, byte for byte, layout 2 and layout 3 (spans into the input),
// for every record vector inside a Produce v9 request and Fetch v4, v12 and v16
// responses, and for every Produce request and Fetch response conformance vector in a
// frame. The Produce tables encode again through kwire.wasm as natively, the layout-3 one
// refused when a record points into the frame.
func TestFrameRecords(t *testing.T) {
	in := instance(t)
	vecs, err := abiconf.ReadRecordVectors(vectorDir)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	n, fromInput := 0, 0
	for _, v := range vecs {
		p := codec.NewProduceRequest()
		p.Acks = -1
		p.TopicData = []codec.ProduceRequestTopicProduceData{{Name: "t", PartitionData: []codec.ProduceRequestPartitionProduceData{
			{Index: 0, Records: v.Bytes}, {Index: 1}, {Index: 2, Records: v.Bytes}}}}
		frame, err := codec.EncodeRequestFrame(nil, codec.NewRequestHeaderFor(p, 9, 1, "c"), p)
		if err != nil {
			t.Fatal(err)
		}
		l3, ok := sameAsNative(t, in, frame, true, 0, 9)
		if !ok {
			t.Fatalf("%s: Produce v9", v.Name)
		}
		for _, version := range []int16{4, 12, 16} {
			fr := codec.NewFetchResponse()
			parts := make([]codec.FetchResponsePartitionData, 3)
			for i := range parts {
				parts[i] = *codec.NewFetchResponsePartitionData()
				parts[i].PartitionIndex = int32(i)
			}
			parts[0].Records, parts[2].Records = v.Bytes, v.Bytes
			topic := codec.FetchResponseFetchableTopicResponse{Partitions: parts}
			if version >= 13 {
				topic.TopicID = codec.UUID{15: 1}
			} else {
				topic.Topic = "t"
			}
			fr.Responses = []codec.FetchResponseFetchableTopicResponse{topic}
			fetch, err := codec.EncodeResponseFrame(nil, &codec.ResponseHeader{CorrelationID: 1}, version, fr)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := sameAsNative(t, in, fetch, false, 1, version); !ok {
				t.Fatalf("%s: Fetch v%d", v.Name, version)
			}
		}
		if l3 == nil {
			continue
		}
		// Both tables and their JSON build the request again, as natively; the layout-3
		// table only when no record points into the frame.
		l2, err := abi.DecodeRequestFrameRecords(nil, frame, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		input := false
		for i, stride, at := 0, int(le.Uint32(l3[12:])), int(le.Uint32(l3[16:])); i < int(le.Uint32(l3[8:])); i++ {
			input = input || le.Uint32(l3[at+i*stride+abi.TableRecSource:]) == abi.TableSourceInput
		}
		if input {
			fromInput++
		}
		for _, tab := range [][]byte{l2, l3} {
			jo, jl := le.Uint32(tab[40:]), le.Uint32(tab[44:])
			got, gerr := in.EncodeRequestFrameRecords(tab[jo:jo+jl], tab)
			want, werr := abi.EncodeRequestFrameRecords(nil, tab[jo:jo+jl], tab)
			if (gerr == nil) != (werr == nil) || !bytes.Equal(got, want) {
				t.Fatalf("%s: encode from the layout-%d table: kwire.wasm and native differ (%v / %v)", v.Name, le.Uint32(tab[4:]), gerr, werr)
			}
			refused := le.Uint32(tab[4:]) == abi.TableLayoutInput && input
			var ce *abiconf.CallError
			if refused != (gerr != nil) || (refused && (!errors.As(gerr, &ce) || ce.Status != abi.StatusJSON)) {
				t.Fatalf("%s: encode from the layout-%d table (records from the input: %v): %v", v.Name, le.Uint32(tab[4:]), input, gerr)
			}
		}
		n++
	}
	if n < 20 || fromInput == 0 {
		t.Fatalf("only %d record vectors, %d with records from the input", n, fromInput)
	}
	frames := 0
	for _, rel := range releases(t) {
		for _, v := range rel.Vectors {
			request := v.Kind == "request"
			if !(v.APIKey == 0 && request) && !(v.APIKey == 1 && v.Kind == "response") {
				continue
			}
			var hdr []byte
			if request {
				rh := codec.NewRequestHeader()
				c := "c"
				rh.RequestAPIKey, rh.RequestAPIVersion, rh.CorrelationID, rh.ClientID = v.APIKey, v.Version, 3, &c
				hdr, err = rh.Encode(nil, codec.RequestHeaderVersion(v.APIKey, v.Version))
			} else {
				rh := codec.NewResponseHeader()
				rh.CorrelationID = 3
				hdr, err = rh.Encode(nil, codec.ResponseHeaderVersion(v.APIKey, v.Version))
			}
			if err != nil {
				t.Fatalf("%s: header: %v", v.ID, err)
			}
			frame := binary.BigEndian.AppendUint32(nil, uint32(len(hdr)+len(v.Bytes)))
			frame = append(append(frame, hdr...), v.Bytes...)
			if _, ok := sameAsNative(t, in, frame, request, v.APIKey, v.Version); !ok {
				t.Fatalf("%s", v.ID)
			}
			frames++
		}
	}
	if frames < 200 {
		t.Fatalf("only %d Produce/Fetch vectors", frames)
	}
	t.Logf("%d record vectors in Produce v9 and Fetch v4/v12/v16 frames (%d with records from the input), %d Produce/Fetch vectors framed: "+
		"layouts 2 and 3 byte for byte as natively", n, fromInput, frames)
}

// TestRuntimeStats: kw_runtime_stats gives the figures kwire.h lists, and liveBuffers
// counts a kw_alloc buffer until it is freed.
func TestRuntimeStats(t *testing.T) {
	in := instance(t)
	stats := func() map[string]int64 {
		js, err := in.RuntimeStats()
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]int64
		if err := json.Unmarshal(js, &m); err != nil {
			t.Fatalf("kw_runtime_stats: %v: %s", err, js)
		}
		return m
	}
	before := stats()
	for _, k := range []string{"gcCycles", "heapAllocs", "heapAllocBytes", "heapLiveBytes", "runtimeBytes", "liveBuffers", "liveBufferBytes"} {
		if v, ok := before[k]; !ok || v < 0 {
			t.Errorf("kw_runtime_stats: %q is %d (present: %v)", k, v, ok)
		}
	}
	p := in.Alloc(100)
	during := stats()
	in.Free(p)
	after := stats()
	if p == 0 || during["liveBuffers"] != before["liveBuffers"]+1 || after["liveBuffers"] != before["liveBuffers"] {
		t.Errorf("liveBuffers %d, with a kw_alloc buffer %d, freed %d", before["liveBuffers"], during["liveBuffers"], after["liveBuffers"])
	}
	t.Logf("%v", after)
}
