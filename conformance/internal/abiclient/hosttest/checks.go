package hosttest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kwire/kwire/abi"
	"github.com/kwire/kwire/abi/abiconf"
	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/conformance/internal/abiclient"
)

// version: kw_abi_version is the abi package's Major.Minor.
func (s *Suite) version(t *testing.T) {
	if v := s.Instance(t).Version(); v != abi.Version() {
		t.Errorf("kw_abi_version = %#x, want %#x (abi.Major.Minor)", v, abi.Version())
	}
}

// vectors runs every Kafka-written vector through the module: decode, encode and
// round trip, printing the coverage table of the native runner.
func (s *Suite) vectors(t *testing.T) {
	in := s.Instance(t)
	reps, err := abiconf.Run(s.Label, in, s.Releases(t))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, r := range reps {
		t.Logf("\n%s", r.Table())
		total += r.Vectors
		if r.Vectors != len(s.Releases(t)[i].Vectors) || r.Vectors == 0 {
			t.Errorf("%s: ran %d of %d vectors", r.Release, r.Vectors, len(s.Releases(t)[i].Vectors))
		}
		if len(r.Failures) > 0 {
			t.Errorf("%s: %d of %d vectors failed:\n%s", r.Release, r.FailedVectors(), r.Vectors, r.FailureText(40))
		}
	}
	t.Logf("%d vectors through kwire.wasm, %s", total, s.Label)
}

// frames wraps every request and response vector in a frame and runs it through
// the frame functions and the header peek, against the body functions.
func (s *Suite) frames(t *testing.T) {
	in := s.Instance(t)
	n, err := abiconf.CheckFrames(in, s.Releases(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d frames checked", n)
}

// recordVectors decodes every batch kafka-clients built through the records
// functions and compares with what Kafka's reader saw.
func (s *Suite) recordVectors(t *testing.T) {
	in := s.Instance(t)
	n, err := abiconf.CheckRecords(in, VectorDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d record vectors checked", n)
}

// requestTrailingBytes: a request frame followed by bytes Kafka's broker ignores (an
// all-topics MetadataRequest v13 with 3 bytes after the body, as librdkafka 2.16 sends
// it) decodes through kwire.wasm, shows the bytes and re-encodes byte for byte.
func (s *Suite) requestTrailingBytes(t *testing.T) {
	in := s.Instance(t)
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

// tableFlags are the flag sets the frame-records tests run: layout 2 and layout 3
// (abi.FlagInputSpans), each with and without CRC checks.
var tableFlags = []int32{0, abi.FlagSkipCRC, abi.FlagInputSpans, abi.FlagInputSpans | abi.FlagSkipCRC}

// sameAsNative decodes frame with the frame-records call through kwire.wasm and natively
// with every flag set, and reports the first difference: status, or the table's bytes.
func sameAsNative(t *testing.T, in *abiclient.Client, frame []byte, request bool, key, version int16) (layout3 []byte, ok bool) {
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

// frameRecords: the frame-records calls through kwire.wasm give the tables the abi
// package writes natively, byte for byte, layout 2 and layout 3 (spans into the input),
// for every record vector inside a Produce v9 request and Fetch v4, v12 and v16
// responses, and for every Produce request and Fetch response conformance vector in a
// frame. The Produce tables encode again through kwire.wasm as natively, the layout-3 one
// refused when a record points into the frame.
func (s *Suite) frameRecords(t *testing.T) {
	in := s.Instance(t)
	vecs, err := abiconf.ReadRecordVectors(VectorDir)
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
	for _, rel := range s.Releases(t) {
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

// runtimeStats: kw_runtime_stats gives the figures kwire.h lists, and liveBuffers
// counts a kw_alloc buffer until it is freed.
func (s *Suite) runtimeStats(t *testing.T) {
	in := s.Instance(t)
	before := readStats(t, in)
	for _, k := range []string{"gcCycles", "heapAllocs", "heapAllocBytes", "heapLiveBytes", "runtimeBytes", "liveBuffers", "liveBufferBytes"} {
		if v, ok := before[k]; !ok || v < 0 {
			t.Errorf("kw_runtime_stats: %q is %d (present: %v)", k, v, ok)
		}
	}
	p := in.Alloc(100)
	during := readStats(t, in)
	in.Free(p)
	after := readStats(t, in)
	if p == 0 || during["liveBuffers"] != before["liveBuffers"]+1 || after["liveBuffers"] != before["liveBuffers"] {
		t.Errorf("liveBuffers %d, with a kw_alloc buffer %d, freed %d", before["liveBuffers"], during["liveBuffers"], after["liveBuffers"])
	}
	t.Logf("%v", after)
}

// rulesCheck: kwire.wasm as built by default leaves the rule engine out (its size
// budget), and kw_rules_check says so with KW_ERR_UNSUPPORTED and where the export is;
// a module built with -tags kwire_rules answers a request that breaks a rule.
func (s *Suite) rulesCheck(t *testing.T) {
	in := s.Instance(t)
	frame, err := in.EncodeRequestFrame([]byte(`{"header":{"requestApiKey":19,"requestApiVersion":7,"correlationId":5,"clientId":"app"},` +
		`"body":{"topics":[{"name":"orders","numPartitions":3,"replicationFactor":1,"assignments":[],"configs":[]}],"timeoutMs":1000,"validateOnly":false}}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := in.RulesCheck([]byte(`[{"api":"CreateTopics","field":"topics[].replicationFactor","min":3}]`), frame, 44)
	var ce *abiconf.CallError
	switch {
	case errors.As(err, &ce) && ce.Status == abi.StatusUnsupported:
		if !strings.Contains(ce.Text, "kwire_rules") || !strings.Contains(ce.Text, "libkwire") {
			t.Errorf("kw_rules_check unsupported, without saying where it is: %s", ce.Text)
		}
		t.Logf("kw_rules_check: %s", ce.Text)
	case err != nil:
		t.Fatalf("kw_rules_check: %v", err)
	default:
		var v struct {
			Allowed bool
			Path    string
		}
		if json.Unmarshal(out, &v) != nil || v.Allowed || v.Path != "topics[0].replicationFactor" {
			t.Errorf("kw_rules_check of a frame that breaks the rule: %s", out)
		}
	}
}

// readStats reads kw_runtime_stats.
func readStats(t testing.TB, in *abiclient.Client) map[string]int64 {
	t.Helper()
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

// sample is one real vector the tests use as the valid call after each misuse.
type sample struct {
	name    string
	version int16
	bytes   []byte
	json    []byte // what the ABI decodes it to
}

func (s *Suite) pickSample(t *testing.T, in *abiclient.Client) sample {
	t.Helper()
	for _, v := range s.Releases(t)[len(s.Releases(t))-1].Vectors {
		if v.Name == "ProduceRequest" && strings.HasSuffix(v.ID, "random-4") {
			js, err := in.DecodeMessage(v.Name, v.Version, v.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			return sample{v.Name, v.Version, v.Bytes, js}
		}
	}
	t.Fatal("no ProduceRequest random-4 vector")
	return sample{}
}

// checkUsable makes a valid call and checks its result.
func checkUsable(t *testing.T, in *abiclient.Client, smp sample, after string) {
	t.Helper()
	js, err := in.DecodeMessage(smp.name, smp.version, smp.bytes)
	if err != nil || !bytes.Equal(js, smp.json) {
		t.Fatalf("after %s: the valid call fails or differs: %v", after, err)
	}
	if in.LastError() != "" {
		t.Fatalf("after %s: a successful call left the error text %q", after, in.LastError())
	}
}

// expect checks a status and that an error text and error JSON explain it.
func expect(t *testing.T, in *abiclient.Client, what string, got int32, err error, want int32) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: trapped: %v", what, err)
	}
	if got != want {
		t.Fatalf("%s: status %d, want %d (%s)", what, got, want, in.LastError())
	}
	text := in.LastError()
	if text == "" {
		t.Fatalf("%s: status %d with no error text", what, got)
	}
	var ej struct {
		Status   int32  `json:"status"`
		Category string `json:"category"`
		Text     string `json:"text"`
	}
	if e := json.Unmarshal(in.LastErrorJSON(), &ej); e != nil || ej.Status != want || ej.Text != text || ej.Category == "" {
		t.Fatalf("%s: kw_last_error_json %s does not match status %d / text %q (%v)", what, in.LastErrorJSON(), want, text, e)
	}
	t.Logf("%-48s -> %d %s", what, got, text)
}

// misuse performs each kind of boundary misuse and then a valid call on the same
// instance.
func (s *Suite) misuse(t *testing.T) {
	in := s.Instance(t)
	smp := s.pickSample(t, in)
	sc := in.Scratch()
	buf := in.Alloc(256)
	if buf == 0 {
		t.Fatal("kw_alloc(256) failed")
	}
	name := []byte(smp.name)
	in.Write(buf, name)
	nl := uint32(len(name))
	// At buf+128: a magic 2 batch entry of 40 bytes whose contents (and CRC) are garbage.
	batch := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 40, 0, 0, 0, 0, 2}
	batch = append(batch, bytes.Repeat([]byte{0xab}, 35)...)
	in.Write(buf+128, batch)
	// At buf+192: a frame whose size prefix is 8 and whose api key is Produce, then garbage.
	in.Write(buf+192, []byte{0, 0, 0, 8, 0, 0, 0, 3, 0xff, 0xff, 0xff, 0xff})
	memSize := in.MemorySize()

	type call struct {
		what string
		fn   string
		args []uint32
		want int32
	}
	neg := func(v int32) uint32 { return uint32(v) }
	calls := []call{
		{"NULL input with a length", "kw_decode_message", []uint32{buf, nl, 3, 0, 10, sc, sc + 4}, abi.StatusArg},
		{"negative input length", "kw_decode_message", []uint32{buf, nl, 3, buf, neg(-5), sc, sc + 4}, abi.StatusArg},
		{"input pointer past memory", "kw_decode_message", []uint32{buf, nl, 3, memSize + 1024, 10, sc, sc + 4}, abi.StatusArg},
		{"input pointer at 0xfffffff0", "kw_decode_message", []uint32{buf, nl, 3, 0xfffffff0, 64, sc, sc + 4}, abi.StatusArg},
		{"input range running past its buffer", "kw_decode_message", []uint32{buf, nl, 3, buf + 200, 100, sc, sc + 4}, abi.StatusArg},
		{"stray pointer (not a kw_alloc buffer)", "kw_decode_message", []uint32{buf, nl, 3, 16, 8, sc, sc + 4}, abi.StatusArg},
		{"name pointer out of range", "kw_decode_message", []uint32{memSize + 8, nl, 3, buf, 0, sc, sc + 4}, abi.StatusArg},
		{"NULL out-param", "kw_decode_message", []uint32{buf, nl, 3, buf, 0, 0, sc + 4}, abi.StatusArg},
		{"NULL out_len-param", "kw_decode_message", []uint32{buf, nl, 3, buf, 0, sc, 0}, abi.StatusArg},
		{"out-param outside memory", "kw_decode_message", []uint32{buf, nl, 3, buf, 0, memSize + 64, sc + 4}, abi.StatusArg},
		{"unknown message name", "kw_decode_message", []uint32{buf, 4, 3, buf, 0, sc, sc + 4}, abi.StatusUnknownAPI},
		{"bad version", "kw_decode_message", []uint32{buf, nl, 999, buf, 0, sc, sc + 4}, abi.StatusVersion},
		{"version outside int16", "kw_decode_message", []uint32{buf, nl, 70000, buf, 0, sc, sc + 4}, abi.StatusVersion},
		{"garbage body (the name's bytes)", "kw_decode_message", []uint32{buf, nl, 3, buf, nl, sc, sc + 4}, abi.StatusDecode},
		{"garbage JSON", "kw_encode_message", []uint32{buf, nl, 3, buf, nl, sc, sc + 4}, abi.StatusJSON},
		{"bad api key (response frame)", "kw_decode_response_frame", []uint32{buf, 8, 9999, 0, sc, sc + 4}, abi.StatusUnknownAPI},
		{"bad version (response frame)", "kw_decode_response_frame", []uint32{buf, 8, 0, 999, sc, sc + 4}, abi.StatusVersion},
		{"bad api key (header versions)", "kw_header_versions", []uint32{neg(-3), 0, sc, sc + 4}, abi.StatusUnknownAPI},
		{"frame size prefix above 100 MiB", "kw_decode_request_frame", []uint32{buf, nl, sc, sc + 4}, abi.StatusTooLarge},
		{"garbage frame", "kw_decode_request_frame", []uint32{buf + 192, 12, sc, sc + 4}, abi.StatusDecode},
		{"frame shorter than its size prefix", "kw_decode_request_frame", []uint32{buf + 192, 10, sc, sc + 4}, abi.StatusDecode},
		{"garbage record batch", "kw_records_decode_json", []uint32{buf + 128, uint32(len(batch)), 0, 0, sc, sc + 4}, abi.StatusDecode},
		{"unknown record flags", "kw_records_decode_table", []uint32{buf, 0, 0x80, 0, sc, sc + 4}, abi.StatusArg},
		{"unknown compression", "kw_records_encode", []uint32{buf, nl, 9, sc, sc + 4}, abi.StatusArg},
		{"peek into a stray pointer", "kw_peek_request_header", []uint32{buf, 12, 8}, abi.StatusArg},
		{"free of a stray pointer", "kw_free", []uint32{12345}, abi.StatusArg},
		{"free of an interior pointer", "kw_free", []uint32{buf + 1}, abi.StatusArg},
	}
	for _, c := range calls {
		st, err := in.Call(c.fn, c.args...)
		expect(t, in, c.what, st, err, c.want)
		checkUsable(t, in, smp, c.what)
	}

	// kw_alloc: negative and oversized requests return NULL with a status in the error.
	for _, c := range []struct {
		size int32
		want int32
	}{{-1, abi.StatusArg}, {0x7fffffff, abi.StatusTooLarge}, {512<<20 + 1, abi.StatusTooLarge}} {
		p, err := in.Call("kw_alloc", uint32(c.size))
		if err != nil || p != 0 {
			t.Fatalf("kw_alloc(%d) = %d, %v; want NULL", c.size, p, err)
		}
		var ej struct{ Status int32 }
		json.Unmarshal(in.LastErrorJSON(), &ej)
		if ej.Status != c.want || in.LastError() == "" {
			t.Fatalf("kw_alloc(%d): error %s, want status %d", c.size, in.LastErrorJSON(), c.want)
		}
		checkUsable(t, in, smp, "kw_alloc misuse")
	}

	// Double free.
	p := in.Alloc(64)
	if st := in.Free(p); st != abi.StatusOK {
		t.Fatalf("first free: %d", st)
	}
	st, err := in.Call("kw_free", p)
	expect(t, in, "double free", st, err, abi.StatusArg)
	checkUsable(t, in, smp, "double free")

	// A freed buffer is no longer a valid input.
	st, err = in.Call("kw_decode_message", buf, nl, 3, p, 8, sc, sc+4)
	expect(t, in, "input in a freed buffer", st, err, abi.StatusArg)
	checkUsable(t, in, smp, "use after free")

	// kw_free(NULL) is fine.
	if st := in.Free(0); st != abi.StatusOK {
		t.Fatalf("kw_free(NULL) = %d", st)
	}
}

// garbage feeds random and mutated bytes to every decoding function: each call gets
// a status (never a trap) and the instance keeps answering valid calls.
func (s *Suite) garbage(t *testing.T) {
	in := s.Instance(t)
	smp := s.pickSample(t, in)
	rng := rand.New(rand.NewPCG(1, 2))
	vs := s.Releases(t)[0].Vectors
	counts := map[int32]int{}
	internal := 0
	for i := 0; i < 3000; i++ {
		v := vs[rng.IntN(len(vs))]
		b := bytes.Clone(v.Bytes)
		switch i % 3 {
		case 0:
			for j := 0; j < 1+rng.IntN(4) && len(b) > 0; j++ {
				b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
			}
		case 1:
			if len(b) > 0 {
				b = b[:rng.IntN(len(b))]
			}
		case 2:
			b = make([]byte, rng.IntN(64))
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
		}
		_, err := in.DecodeMessage(v.Name, v.Version, b)
		counts[status(t, err)]++
		frame := append([]byte{0, 0, 0, byte(len(b))}, b...)
		_, err = in.DecodeRequestFrame(frame)
		counts[status(t, err)]++
		_, err = in.DecodeResponseFrame(frame, v.APIKey, v.Version)
		counts[status(t, err)]++
		_, err = in.RecordsDecodeTable(b, 0, 0)
		counts[status(t, err)]++
		_, err = in.PeekRequestHeader(b)
		counts[status(t, err)]++
		js := bytes.Clone(v.JSON)
		if len(js) > 2 {
			const junk = "{}[]\",:0a-"
			js[1+rng.IntN(len(js)-2)] = junk[rng.IntN(len(junk))]
		}
		_, err = in.EncodeMessage(v.Name, v.Version, js)
		if st := status(t, err); st == abi.StatusInternal && internal == 0 {
			internal++
			t.Errorf("mutated JSON %q: %v", js, err)
		} else {
			counts[st]++
		}
	}
	if counts[abi.StatusInternal] > 0 {
		t.Errorf("%d garbage inputs made the library panic (KW_ERR_INTERNAL)", counts[abi.StatusInternal])
	}
	t.Logf("statuses over 18000 garbage calls: %v", counts)
	checkUsable(t, in, smp, "garbage")
	if counts[abi.StatusDecode] == 0 {
		t.Errorf("no garbage input was reported as a decode error")
	}
}

func status(t *testing.T, err error) int32 {
	t.Helper()
	if err == nil {
		return abi.StatusOK
	}
	ce, ok := err.(*abiconf.CallError)
	if !ok {
		t.Fatalf("not a status: %v", err)
	}
	if ce.Text == "" {
		t.Fatalf("status %d without error text", ce.Status)
	}
	return ce.Status
}
