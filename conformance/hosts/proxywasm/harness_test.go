package proxywasm

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/envoy/kafkatest"
)

var (
	moduleOnce  sync.Once
	moduleBytes []byte
	moduleErr   error
	cache       = wazero.NewCompilationCache()
)

// module returns build/kwire-envoy.wasm (built by `make envoy`).
func module(t testing.TB) []byte {
	t.Helper()
	moduleOnce.Do(func() {
		moduleBytes, moduleErr = os.ReadFile(filepath.Join("..", "..", "..", "build", "kwire-envoy.wasm"))
	})
	if moduleErr != nil {
		t.Fatalf("%v (run `make envoy` first)", moduleErr)
	}
	return moduleBytes
}

func newPlugin(t testing.TB, config string) *Plugin {
	t.Helper()
	p, err := NewPlugin(context.Background(), Config{Module: module(t), PluginConfiguration: []byte(config), Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// Signatures from the proxy-wasm ABI 0.2.1 specification: params and results.
type sig struct{ params, results string }

var specExports = map[string]sig{
	"proxy_abi_version_0_2_1":                 {"", ""},
	"_initialize":                             {"", ""},
	"main":                                    {"ii", "i"},
	"_start":                                  {"", ""},
	"proxy_on_memory_allocate":                {"i", "i"},
	"malloc":                                  {"i", "i"},
	"proxy_on_context_create":                 {"ii", ""},
	"proxy_on_done":                           {"i", "i"},
	"proxy_on_log":                            {"i", ""},
	"proxy_on_delete":                         {"i", ""},
	"proxy_on_vm_start":                       {"ii", "i"},
	"proxy_on_configure":                      {"ii", "i"},
	"proxy_on_tick":                           {"i", ""},
	"proxy_on_new_connection":                 {"i", "i"},
	"proxy_on_downstream_data":                {"iii", "i"},
	"proxy_on_downstream_connection_close":    {"ii", ""},
	"proxy_on_upstream_data":                  {"iii", "i"},
	"proxy_on_upstream_connection_close":      {"ii", ""},
	"proxy_on_request_headers":                {"iii", "i"},
	"proxy_on_request_body":                   {"iii", "i"},
	"proxy_on_request_trailers":               {"ii", "i"},
	"proxy_on_response_headers":               {"iii", "i"},
	"proxy_on_response_body":                  {"iii", "i"},
	"proxy_on_response_trailers":              {"ii", "i"},
	"proxy_on_http_call_response":             {"iiiii", ""},
	"proxy_on_grpc_receive_initial_metadata":  {"iii", ""},
	"proxy_on_grpc_receive":                   {"iii", ""},
	"proxy_on_grpc_receive_trailing_metadata": {"iii", ""},
	"proxy_on_grpc_close":                     {"iii", ""},
	"proxy_on_queue_ready":                    {"ii", ""},
	"proxy_on_foreign_function":               {"iii", ""},
}

var specImports = map[string]sig{
	"proxy_log":                          {"iii", "i"},
	"proxy_get_log_level":                {"i", "i"},
	"proxy_get_current_time_nanoseconds": {"i", "i"},
	"proxy_set_tick_period_milliseconds": {"i", "i"},
	"proxy_get_buffer_bytes":             {"iiiii", "i"},
	"proxy_set_buffer_bytes":             {"iiiii", "i"},
	"proxy_get_buffer_status":            {"iii", "i"},
	"proxy_get_header_map_size":          {"ii", "i"},
	"proxy_get_header_map_pairs":         {"iii", "i"},
	"proxy_set_header_map_pairs":         {"iii", "i"},
	"proxy_get_header_map_value":         {"iiiii", "i"},
	"proxy_add_header_map_value":         {"iiiii", "i"},
	"proxy_replace_header_map_value":     {"iiiii", "i"},
	"proxy_remove_header_map_value":      {"iii", "i"},
	"proxy_continue_stream":              {"i", "i"},
	"proxy_close_stream":                 {"i", "i"},
	"proxy_get_status":                   {"iii", "i"},
	"proxy_send_local_response":          {"iiiiiiii", "i"},
	"proxy_http_call":                    {"iiiiiiiiii", "i"},
	"proxy_grpc_call":                    {"iiiiiiiiiiii", "i"},
	"proxy_grpc_stream":                  {"iiiiiiiii", "i"},
	"proxy_grpc_send":                    {"iiii", "i"},
	"proxy_grpc_cancel":                  {"i", "i"},
	"proxy_grpc_close":                   {"i", "i"},
	"proxy_set_shared_data":              {"iiiii", "i"},
	"proxy_get_shared_data":              {"iiiii", "i"},
	"proxy_register_shared_queue":        {"iii", "i"},
	"proxy_resolve_shared_queue":         {"iiiii", "i"},
	"proxy_enqueue_shared_queue":         {"iii", "i"},
	"proxy_dequeue_shared_queue":         {"iii", "i"},
	"proxy_define_metric":                {"iiii", "i"},
	"proxy_record_metric":                {"iI", "i"},
	"proxy_increment_metric":             {"iI", "i"},
	"proxy_get_metric":                   {"ii", "i"},
	"proxy_get_property":                 {"iiii", "i"},
	"proxy_set_property":                 {"iiii", "i"},
	"proxy_done":                         {"", "i"},
	"proxy_set_effective_context":        {"i", "i"},
	"proxy_call_foreign_function":        {"iiiiii", "i"},
}

// The WASI functions the specification names, plus those Go's wasip1 runtime
// imports (documented in examples/envoy/README.md).
var specWASI = map[string]bool{
	"fd_write": true, "clock_time_get": true, "random_get": true, "environ_sizes_get": true,
	"environ_get": true, "args_sizes_get": true, "args_get": true, "proc_exit": true,
}
var goRuntimeWASI = map[string]bool{
	"sched_yield": true, "poll_oneoff": true, "fd_close": true, "fd_read": true, "fd_fdstat_get": true,
	"fd_fdstat_set_flags": true, "fd_prestat_get": true, "fd_prestat_dir_name": true,
}

func sigOf(params, results []api.ValueType) sig {
	enc := func(ts []api.ValueType) string {
		var b strings.Builder
		for _, t := range ts {
			switch t {
			case api.ValueTypeI32:
				b.WriteByte('i')
			case api.ValueTypeI64:
				b.WriteByte('I')
			default:
				b.WriteByte('?')
			}
		}
		return b.String()
	}
	return sig{enc(params), enc(results)}
}

func TestModuleImportsAndExports(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache))
	defer rt.Close(ctx)
	cm, err := rt.CompileModule(ctx, module(t))
	if err != nil {
		t.Fatal(err)
	}
	var wasi []string
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		got := sigOf(f.ParamTypes(), f.ResultTypes())
		switch mod {
		case "env":
			want, ok := specImports[name]
			if !ok {
				t.Errorf("imports env.%s, which proxy-wasm 0.2.1 does not define", name)
			} else if got != want {
				t.Errorf("env.%s: signature %v, the spec says %v", name, got, want)
			}
		case "wasi_snapshot_preview1":
			if !specWASI[name] && !goRuntimeWASI[name] {
				t.Errorf("imports wasi_snapshot_preview1.%s, not in the documented list", name)
			}
			wasi = append(wasi, name)
		default:
			t.Errorf("imports from module %q (%s)", mod, name)
		}
	}
	exports := cm.ExportedFunctions()
	for name, f := range exports {
		want, ok := specExports[name]
		if !ok {
			t.Errorf("exports %s, which is not a proxy-wasm 0.2.1 callback", name)
			continue
		}
		if got := sigOf(f.ParamTypes(), f.ResultTypes()); got != want {
			t.Errorf("export %s: signature %v, the spec says %v", name, got, want)
		}
	}
	for _, name := range []string{"proxy_abi_version_0_2_1", "_initialize", "proxy_on_memory_allocate", "proxy_on_context_create",
		"proxy_on_vm_start", "proxy_on_configure", "proxy_on_new_connection", "proxy_on_downstream_data", "proxy_on_upstream_data",
		"proxy_on_downstream_connection_close", "proxy_on_upstream_connection_close", "proxy_on_log", "proxy_on_done",
		"proxy_on_delete", "proxy_on_tick"} {
		if _, ok := exports[name]; !ok {
			t.Errorf("missing export %s", name)
		}
	}
	// The harness itself provides every host function of the spec, with its signature.
	host := HostFunctionSignatures()
	for name, want := range specImports {
		h, ok := host[name]
		if !ok {
			t.Errorf("harness lacks env.%s", name)
			continue
		}
		if got := sigOf(h[0], h[1]); got != want {
			t.Errorf("harness env.%s: %v, spec %v", name, got, want)
		}
	}
	sort.Strings(wasi)
	t.Logf("WASI imports: %s", strings.Join(wasi, ", "))
}

func TestConfigureRefusesBadConfig(t *testing.T) {
	_, err := NewPlugin(context.Background(), Config{Module: module(t), PluginConfiguration: []byte(`{"schema":{"default":"block"}}`), Cache: cache})
	if err == nil || !strings.Contains(err.Error(), "proxy_on_configure refused") || !strings.Contains(err.Error(), `unknown mode \"block\"`) && !strings.Contains(err.Error(), `unknown mode "block"`) {
		t.Fatalf("got %v", err)
	}
	if !errors.Is(err, ErrConfigureRefused) || errors.Is(err, ErrVMStartRefused) {
		t.Errorf("the refusal does not wrap ErrConfigureRefused alone: %v", err)
	}
	// A module that does not load is another error.
	_, err = NewPlugin(context.Background(), Config{Module: []byte("\x00asm\x01\x00\x00\x00"), Cache: cache})
	if err == nil || errors.Is(err, ErrConfigureRefused) {
		t.Errorf("an empty module: %v", err)
	}
}

func TestMetricsLogsTicks(t *testing.T) {
	p := newPlugin(t, `{"tick_ms":5,"stat_prefix":"k"}`)
	if p.TickPeriod() != 5*time.Millisecond {
		t.Errorf("tick period %v", p.TickPeriod())
	}
	if err := p.Tick(); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range p.Logs() {
		found = found || strings.Contains(l.Message, "topic ids known")
	}
	if !found {
		t.Errorf("no tick log: %v", p.Logs())
	}
	if m, ok := p.Metric("k.connections.active"); !ok || m.Type != Gauge {
		t.Errorf("gauge: %+v %v", m, ok)
	}
	s, err := p.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := p.Metric("k.connections.active"); m.Value != 1 {
		t.Errorf("active %d", m.Value)
	}
	if err := s.Close(PeerRemote); err != nil {
		t.Fatal(err)
	}
	if m, _ := p.Metric("k.connections.active"); m.Value != 0 {
		t.Errorf("active after close %d", m.Value)
	}
	if m, _ := p.Metric("k.connections.total"); m.Value != 1 || m.Type != Counter {
		t.Errorf("total %+v", m)
	}
}

// TestPauseBuffersData checks Envoy's StopIteration semantics: a partial request
// is kept by the host, and the next callback sees the whole accumulated buffer.
func TestPauseBuffersData(t *testing.T) {
	p := newPlugin(t, `{"schema":{"default":"warn"}}`)
	s, err := p.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(PeerRemote)
	frame := kafkatest.MustRequest(1, 12, codec.NewMetadataRequest())
	prod, _ := kafkatest.Produce(9, -1, records.CompressionNone, []records.Message{{Topic: "t", Value: []byte("v")}})
	pf := kafkatest.MustRequest(2, 9, prod)
	// A Produce is needed whole: 5 bytes, then the rest but one, are held.
	out, err := s.Downstream(pf[:5], false)
	if err != nil || len(out) != 0 {
		t.Fatalf("out %d err %v", len(out), err)
	}
	if d, _ := s.Buffered(); d != 5 {
		t.Fatalf("buffered %d, want 5", d)
	}
	out, _ = s.Downstream(pf[5:len(pf)-1], false)
	if d, _ := s.Buffered(); len(out) != 0 || d != len(pf)-1 {
		t.Fatalf("out %d buffered %d, want 0 and %d", len(out), d, len(pf)-1)
	}
	out, _ = s.Downstream(append(pf[len(pf)-1:], frame...), false)
	if !bytes.Equal(out, append(append([]byte(nil), pf...), frame...)) {
		t.Fatalf("forwarded %d bytes, want the Produce and Metadata frames (%d)", len(out), len(pf)+len(frame))
	}
	if d, _ := s.Buffered(); d != 0 {
		t.Fatalf("buffered %d after Continue", d)
	}
}

// runFilter drives one stream of the wasm filter against the fake broker, as a
// proxy does, delivering every byte stream in the chunks chunk makes.
func runFilter(t testing.TB, p *Plugin, br *kafkatest.Broker, chunk func([]byte) [][]byte, frames [][]byte) (up, down [][]byte, closed bool) {
	s, err := p.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(PeerRemote)
	var all []byte
	for _, f := range frames {
		all = append(all, f...)
	}
	var us, ds kafkatest.Splitter
	for _, piece := range chunk(all) {
		out, err := s.Downstream(piece, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range us.Push(out) {
			up = append(up, f)
			resp, err := br.Handle(f)
			if err != nil {
				t.Fatalf("fake broker: %v", err)
			}
			for _, rp := range chunk(resp) {
				o, err := s.Upstream(rp, false)
				if err != nil {
					t.Fatal(err)
				}
				down = append(down, ds.Push(o)...)
			}
		}
		if s.CloseRequested() {
			return up, down, true
		}
	}
	return up, down, false
}

func chunkers() map[string]func([]byte) [][]byte {
	r := rand.New(rand.NewSource(11))
	return map[string]func([]byte) [][]byte{
		"whole": func(b []byte) [][]byte { return [][]byte{b} },
		"1-byte": func(b []byte) [][]byte {
			var out [][]byte
			for i := range b {
				out = append(out, b[i:i+1])
			}
			return out
		},
		"random": func(b []byte) [][]byte {
			var out [][]byte
			for len(b) > 0 {
				n := 1 + r.Intn(min(len(b), 3000))
				out = append(out, b[:n])
				b = b[n:]
			}
			return out
		},
	}
}

const testConfig = `{"schema":{"default":"none","rules":[
	{"topic":"orders","policy":"enforce","schema_ids":[1]},
	{"prefix":"audit.","policy":"warn"}]},
	"api_keys":{"deny":[19]},
	"brokers":{"1":"127.0.0.1:19092"}}`

func schemaValue(id uint32, payload string) []byte {
	b := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], id)
	return append(b, payload...)
}

func testFrames(t testing.TB) [][]byte {
	md := codec.NewMetadataRequest()
	name := "orders"
	md.Topics = []codec.MetadataRequestTopic{{Name: &name}}
	prod, err := kafkatest.Produce(9, -1, records.CompressionLZ4, []records.Message{
		{Topic: "orders", Partition: 0, Value: schemaValue(1, "good")},
		{Topic: "orders", Partition: 1, Value: []byte("no schema")},
		{Topic: "audit.x", Partition: 0, Value: []byte("warned")},
		{Topic: "free", Partition: 0, Value: []byte("free")},
	})
	if err != nil {
		t.Fatal(err)
	}
	ct := codec.NewCreateTopicsRequest()
	ct.Topics = []codec.CreateTopicsRequestCreatableTopic{{Name: "x", NumPartitions: 1, ReplicationFactor: 1}}
	return [][]byte{
		kafkatest.MustRequest(1, 3, codec.NewAPIVersionsRequest()),
		kafkatest.MustRequest(2, 12, md),
		kafkatest.MustRequest(3, 9, prod),
		kafkatest.MustRequest(4, 7, ct),
		kafkatest.MustRequest(5, 12, md),
	}
}

func TestFilterInHarnessChunkings(t *testing.T) {
	var refUp, refDown [][]byte
	var refMetrics map[string]int64
	names := []string{"whole", "1-byte", "random"}
	ch := chunkers()
	for _, name := range names {
		p := newPlugin(t, testConfig)
		br := kafkatest.NewBroker()
		up, down, closed := runFilter(t, p, br, ch[name], testFrames(t))
		if closed {
			t.Fatalf("%s: closed; logs %v", name, p.Logs())
		}
		if len(down) != 5 {
			t.Fatalf("%s: %d responses, want 5", name, len(down))
		}
		for i, f := range down {
			if c := int32(binary.BigEndian.Uint32(f[4:])); c != int32(i+1) {
				t.Fatalf("%s: response %d has correlation id %d", name, i, c)
			}
		}
		rf, err := codec.DecodeResponseFrame(down[2], 0, 9)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tr := range rf.Body.(*codec.ProduceResponse).Responses {
			for _, pr := range tr.PartitionResponses {
				got = append(got, tr.Name+"/"+string(rune('0'+pr.Index))+"="+itoa(int(pr.ErrorCode)))
			}
		}
		if strings.Join(got, " ") != "orders/0=0 orders/1=87 audit.x/0=0 free/0=0" {
			t.Errorf("%s: produce response %v", name, got)
		}
		if _, err := codec.DecodeResponseFrame(down[3], 19, 7); err != nil {
			t.Errorf("%s: denied CreateTopics answer: %v", name, err)
		}
		mr, _ := codec.DecodeResponseFrame(down[4], 3, 12)
		if b := mr.Body.(*codec.MetadataResponse).Brokers[0]; b.Host != "127.0.0.1" || b.Port != 19092 {
			t.Errorf("%s: metadata broker %s:%d", name, b.Host, b.Port)
		}
		ms := map[string]int64{}
		p.Tick() // the filter's counters reach the host on a tick
		for _, m := range p.Metrics() {
			if m.Type != Histogram {
				ms[m.Name] = m.Value
			} else {
				ms[m.Name+".count"] = int64(len(m.Samples))
			}
		}
		for k, want := range map[string]int64{
			"kafka.kwire.request.produce": 1, "kafka.kwire.response.produce": 1, "kafka.kwire.request.create_topics": 1,
			"kafka.kwire.request.denied": 1, "kafka.kwire.policy.partitions_rejected": 1, "kafka.kwire.policy.records_warned": 1,
			"kafka.kwire.response.metadata_duration_ms.count": 2, "kafka.kwire.request.api_versions": 1,
		} {
			if ms[k] != want {
				t.Errorf("%s: %s = %d, want %d", name, k, ms[k], want)
			}
		}
		if r := br.Requests(); r[19] != 0 || r[0] != 1 {
			t.Errorf("%s: broker saw %v", name, r)
		}
		if refUp == nil {
			refUp, refDown, refMetrics = up, down, ms
			continue
		}
		if !sameFrames(up, refUp) || !sameFrames(down, refDown) {
			t.Errorf("%s: bytes differ from whole-frame delivery", name)
		}
		for k, v := range refMetrics {
			if ms[k] != v {
				t.Errorf("%s: metric %s = %d, whole frames gave %d", name, k, ms[k], v)
			}
		}
	}
}

func itoa(v int) string {
	if v < 0 {
		return "-" + itoa(-v)
	}
	if v < 10 {
		return string(rune('0' + v))
	}
	return itoa(v/10) + string(rune('0'+v%10))
}

func sameFrames(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestProxyWithFakeBroker runs the TCP proxy in front of the fake broker.
func TestProxyWithFakeBroker(t *testing.T) {
	br := kafkatest.NewBroker()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- br.Serve(ln) }()
	defer func() { ln.Close(); <-done }()
	p := newPlugin(t, testConfig)
	px, err := NewProxy(p, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	c, err := net.Dial("tcp", px.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	frames := testFrames(t)
	for _, f := range frames {
		if _, err := c.Write(f); err != nil {
			t.Fatal(err)
		}
	}
	var sp kafkatest.Splitter
	var got [][]byte
	buf := make([]byte, 4096)
	for len(got) < len(frames) {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("after %d responses: %v", len(got), err)
		}
		got = append(got, sp.Push(buf[:n])...)
	}
	for i, f := range got {
		if cid := binary.BigEndian.Uint32(f[4:]); cid != uint32(i+1) {
			t.Errorf("response %d correlation %d", i, cid)
		}
	}
	if px.VMErrors() != 0 {
		t.Errorf("VM errors %d", px.VMErrors())
	}
}

// FuzzModuleData feeds arbitrary client and broker bytes through the wasm module:
// it must never trap.
func FuzzModuleData(f *testing.F) {
	for _, fr := range testFrames(f) {
		f.Add(fr, uint16(7))
	}
	f.Add([]byte{0, 0, 0, 4, 0, 0, 0, 0}, uint16(1))
	// The fuzzer's coordinator and each of its worker processes compile the module, which
	// takes seconds: a worker would spend them before its first input, and a worker
	// starts again after every crash. With the compiled code cached on disk (beside the
	// module, in build/), only the first process compiles.
	dc, err := wazero.NewCompilationCacheWithDir(filepath.Join("..", "..", "..", "build", "wazero-cache"))
	if err != nil {
		f.Fatal(err)
	}
	p, err := NewPlugin(context.Background(), Config{Module: module(f), PluginConfiguration: []byte(testConfig), Cache: dc})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { p.Close(); dc.Close(context.Background()) })
	f.Fuzz(func(t *testing.T, data []byte, step uint16) {
		s, err := p.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		n := int(step)%512 + 1
		for i := 0; i < len(data) && !s.CloseRequested(); i += n {
			piece := data[i:min(i+n, len(data))]
			if _, err := s.Downstream(piece, false); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Upstream(piece, false); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(PeerRemote); err != nil {
			t.Fatal(err)
		}
	})
}

// TestGarbageNeverTraps is the fuzz target's fixed-seed run in `make test`.
func TestGarbageNeverTraps(t *testing.T) {
	p := newPlugin(t, testConfig)
	r := rand.New(rand.NewSource(5))
	frames := testFrames(t)
	for i := 0; i < 300; i++ {
		var data []byte
		switch i % 3 {
		case 0:
			data = make([]byte, r.Intn(4096))
			r.Read(data)
		case 1: // a valid frame with bytes flipped
			data = append([]byte(nil), frames[r.Intn(len(frames))]...)
			for j := 0; j < 1+r.Intn(8); j++ {
				data[r.Intn(len(data))] ^= byte(1 + r.Intn(255))
			}
		default: // a valid frame cut short, then garbage
			f := frames[r.Intn(len(frames))]
			data = append(append([]byte(nil), f[:r.Intn(len(f))]...), byte(r.Intn(256)))
		}
		s, err := p.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		step := 1 + r.Intn(600)
		for j := 0; j < len(data) && !s.CloseRequested(); j += step {
			piece := data[j:min(j+step, len(data))]
			if _, err := s.Downstream(piece, false); err != nil {
				t.Fatalf("case %d: %v", i, err)
			}
			if _, err := s.Upstream(piece, false); err != nil {
				t.Fatalf("case %d: %v", i, err)
			}
		}
		if err := s.Close(PeerRemote); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Broken(); err != nil {
		t.Fatal(err)
	}
	// The plugin still works afterwards.
	up, down, _ := runFilter(t, p, kafkatest.NewBroker(), chunkers()["whole"], testFrames(t))
	if len(up) == 0 || len(down) != 5 {
		t.Fatalf("after garbage: %d up, %d down", len(up), len(down))
	}
}

// answerInPairs is an upstream that answers each two requests, with the broker of
// kafkatest, in one write: the proxy reads both responses at once.
func answerInPairs(t *testing.T) (addr string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := kafkatest.NewBroker()
		var sp kafkatest.Splitter
		var got [][]byte
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			if got = append(got, sp.Push(buf[:n])...); len(got) >= 2 {
				var out []byte
				for _, f := range got {
					r, herr := br.Handle(f)
					if herr != nil {
						return
					}
					out = append(out, r...)
				}
				if _, err := c.Write(out); err != nil {
					return
				}
				got = nil
			}
			if err != nil {
				return
			}
		}
	}()
	return ln.Addr().String()
}

// A refused acks=0 Produce closes the connection after the response before it. When
// that response and the answer the close waits for come in one read, the module
// forwards the response and, the client sending nothing more, closes the connection
// from proxy_on_tick (proxy_set_effective_context, then proxy_close_stream).
func TestAcksZeroClosesOnTick(t *testing.T) {
	p, err := NewPlugin(context.Background(), Config{Module: module(t), Cache: cache,
		PluginConfiguration: []byte(`{"metrics_flush_ms":20,"rules":[{"api":"Produce","field":"acks","in":[-1]}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	px, err := NewProxy(p, answerInPairs(t))
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	k := dialKafka(t, px.Addr())
	topic := "t"
	md := codec.NewMetadataRequest()
	md.Topics = []codec.MetadataRequestTopic{{Name: &topic}}
	before := k.send(12, md)
	bad, err := kafkatest.Produce(9, 0, records.CompressionNone, []records.Message{{Topic: topic, Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	k.send(9, bad)
	if got, _ := k.read(3, 12); got != before {
		t.Fatalf("the response before the close answers %d, want %d", got, before)
	}
	k.c.SetDeadline(time.Now().Add(20 * time.Second)) // ticks come every 20 ms
	if got := k.untilClosed(); len(got) != 0 {
		t.Errorf("%d responses after the refused acks=0 Produce, want none", len(got))
	}
	var logs []string
	for _, l := range p.Logs() {
		logs = append(logs, l.Message)
	}
	if !strings.Contains(strings.Join(logs, "\n"), "closing the connection: produce v9 with acks=0 refused by a rule") {
		t.Errorf("no log line says why the connection closed: %q", logs)
	}
}
