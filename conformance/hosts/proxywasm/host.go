// Package proxywasm is a proxy-wasm host for tests, benchmarks and the kwire
// command's `kwire envoy check` and `kwire envoy proxy`: it runs a proxy-wasm 0.2.1
// network-filter module in wazero with Envoy's semantics for the parts a network (L4)
// filter uses, and (proxy.go) serves it as a TCP proxy in front of an upstream.
//
// Emulated, as Envoy's wasm network filter does:
//
//   - one VM per Plugin, every call into it serialized (an Envoy worker thread);
//     the plugin (root) context is created, then proxy_on_vm_start with the VM
//     configuration and proxy_on_configure with the plugin configuration (false
//     from either fails NewPlugin, as Envoy refuses the listener);
//   - one stream context per connection: proxy_on_context_create(id, root),
//     proxy_on_new_connection, proxy_on_downstream_data / proxy_on_upstream_data for
//     every chunk read, the close callbacks, then proxy_on_done, proxy_on_log and
//     proxy_on_delete;
//   - data buffering: a callback that returns Pause keeps its data buffered and the
//     next callback of that direction sees the accumulated buffer (data_size grows);
//     Continue forwards the buffer (as modified) and empties it;
//   - proxy_get_buffer_bytes (memory obtained through proxy_on_memory_allocate)
//     (any start and length within the buffer) and proxy_set_buffer_bytes with
//     Envoy's rules for network buffers (its Buffer::copyFrom): start 0 drains size
//     bytes (all of them when size >= length) and prepends the data, start >= length
//     appends, anything else is BAD_ARGUMENT; DOWNSTREAM_DATA and UPSTREAM_DATA exist
//     only during their callbacks, the configurations only during
//     proxy_on_vm_start and proxy_on_configure;
//   - proxy_close_stream closes the connection (both sides) after what was
//     already forwarded, and at once when it comes outside the stream's callbacks
//     (after proxy_set_effective_context, which lasts one VM call);
//     proxy_continue_stream(DOWNSTREAM) re-delivers the buffered downstream data;
//   - logs, metrics (counter, gauge, histogram; a name defined twice returns the
//     same id), time, tick period and proxy_on_tick, a few properties.
//
// The other host functions of the specification (HTTP, gRPC, header maps, shared
// data and queues, foreign functions) are present so that a module importing them
// links, and return UNIMPLEMENTED. wasi_snapshot_preview1 comes from wazero.
package proxywasm

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// proxy_status_t
const (
	StatusOK                  = 0
	StatusNotFound            = 1
	StatusBadArgument         = 2
	StatusInvalidMemoryAccess = 6
	StatusEmpty               = 7
	StatusUnimplemented       = 12
)

// proxy_action_t
const (
	ActionContinue = 0
	ActionPause    = 1
)

// proxy_buffer_type_t values of a network filter.
const (
	BufferDownstreamData      = 2
	BufferUpstreamData        = 3
	BufferVMConfiguration     = 6
	BufferPluginConfiguration = 7
)

// proxy_stream_type_t values of a network filter.
const (
	StreamDownstream = 2
	StreamUpstream   = 3
)

// proxy_peer_type_t
const (
	PeerUnknown = 0
	PeerLocal   = 1
	PeerRemote  = 2
)

// MetricType is proxy_metric_type_t.
type MetricType int32

// Metric types.
const (
	Counter   MetricType = 0
	Gauge     MetricType = 1
	Histogram MetricType = 2
)

var metricTypeNames = [...]string{Counter: "counter", Gauge: "gauge", Histogram: "histogram"}

// String is the type's name.
func (t MetricType) String() string {
	if t >= 0 && int(t) < len(metricTypeNames) {
		return metricTypeNames[t]
	}
	return fmt.Sprintf("MetricType(%d)", int32(t))
}

// LogEntry is one proxy_log call (or a line the module wrote to stdout/stderr is
// not captured here; wazero's WASI discards them unless Config.Stdout is set).
type LogEntry struct {
	Level   int32
	Message string
}

// Metric is a snapshot of one metric.
type Metric struct {
	Name  string
	Type  MetricType
	Value int64 // counter and gauge
	// Samples are a histogram's recorded values, in order.
	Samples []uint64
}

// Config configures a Plugin.
type Config struct {
	// Module is the compiled .wasm.
	Module []byte
	// VMConfiguration and PluginConfiguration are handed to proxy_on_vm_start and
	// proxy_on_configure.
	VMConfiguration, PluginConfiguration []byte
	// Name is the plugin name (property plugin_name); default "kwire".
	Name string
	// LogLevel is what proxy_get_log_level reports (default 0, trace).
	LogLevel int32
	// OnLog, when set, sees every log line as it is written.
	OnLog func(LogEntry)
	// Now replaces the clock (default time.Now).
	Now func() time.Time
	// Cache, when set, shares compiled code between plugins of the same module.
	Cache wazero.CompilationCache
}

// Plugin is one instantiated module with its plugin context.
type Plugin struct {
	mu    sync.Mutex
	cfg   Config
	ctx   context.Context
	rt    wazero.Runtime
	ownRT bool
	mod   api.Module
	fns   map[string]api.Function
	// callCtx is the context of every call into the module (one, made once: the host
	// functions find the plugin in it); stack holds a call's parameters and results,
	// and allocStack those of proxy_on_memory_allocate, which a host function calls
	// while a callback runs. A proxy's per-callback cost is the VM's, not the harness's.
	callCtx    context.Context
	stack      [8]uint64
	alloc      api.Function
	allocStack [1]uint64
	rootID     uint32
	nextID     uint32

	streams map[uint32]*Stream
	// set while a callback runs
	active     *Stream
	activeBuf  int32 // the data buffer readable in this callback (-1: none)
	configBuf  int32
	effective  uint32
	broken     error
	metrics    []*metric
	metricByNm map[string]uint32
	logs       []LogEntry
	props      map[string][]byte
	copiedIn   int64         // data-buffer bytes handed to the module by proxy_get_buffer_bytes
	vmTime     time.Duration // time spent in the module's callbacks
	vmCalls    int64         // callbacks run

	tickStop chan struct{}
	tickWG   sync.WaitGroup
	tick     time.Duration
	closed   bool
}

type metric struct {
	name    string
	typ     MetricType
	value   int64
	samples []uint64
}

// snapshot is m as a Metric, with its own copy of the samples.
func (m *metric) snapshot() Metric {
	return Metric{Name: m.name, Type: m.typ, Value: m.value, Samples: append([]uint64(nil), m.samples...)}
}

// locked reads *v, a field of p or of one of its streams, under p's lock.
func locked[T any](p *Plugin, v *T) T {
	p.mu.Lock()
	defer p.mu.Unlock()
	return *v
}

// ErrVMStartRefused and ErrConfigureRefused are what NewPlugin's error wraps
// (errors.Is) when proxy_on_vm_start or proxy_on_configure returned false: the
// module refused its VM or plugin configuration, as Envoy would report it and
// refuse the listener. Any other NewPlugin error is a module that does not load.
var (
	ErrVMStartRefused   = errors.New("proxywasm: proxy_on_vm_start returned false")
	ErrConfigureRefused = errors.New("proxywasm: proxy_on_configure refused the plugin configuration")
)

// NewPlugin instantiates the module, creates the plugin context and runs
// proxy_on_vm_start and proxy_on_configure. Their failure is an error carrying
// the module's last log lines (wrapping ErrVMStartRefused or ErrConfigureRefused
// when the module returned false).
func NewPlugin(ctx context.Context, cfg Config) (*Plugin, error) {
	if cfg.Name == "" {
		cfg.Name = "kwire"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	p := &Plugin{cfg: cfg, ctx: ctx, fns: map[string]api.Function{}, streams: map[uint32]*Stream{},
		metricByNm: map[string]uint32{}, props: map[string][]byte{}, activeBuf: -1, configBuf: -1}
	rc := wazero.NewRuntimeConfig()
	if cfg.Cache != nil {
		rc = rc.WithCompilationCache(cfg.Cache)
	}
	p.rt = wazero.NewRuntimeWithConfig(ctx, rc)
	p.ownRT = true
	fail := func(err error) (*Plugin, error) {
		p.Close()
		return nil, err
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, p.rt); err != nil {
		return fail(fmt.Errorf("proxywasm: WASI: %w", err))
	}
	if err := p.instantiateHost(ctx); err != nil {
		return fail(fmt.Errorf("proxywasm: host module: %w", err))
	}
	compiled, err := p.rt.CompileModule(ctx, cfg.Module)
	if err != nil {
		return fail(fmt.Errorf("proxywasm: compiling the module: %w", err))
	}
	if _, ok := compiled.ExportedFunctions()["proxy_abi_version_0_2_1"]; !ok {
		return fail(errors.New("proxywasm: the module does not export proxy_abi_version_0_2_1"))
	}
	mc := wazero.NewModuleConfig().WithName("").WithStartFunctions() // _initialize is called below
	mod, err := p.rt.InstantiateModule(withPlugin(ctx, p), compiled, mc)
	if err != nil {
		return fail(fmt.Errorf("proxywasm: instantiating the module: %w", err))
	}
	p.mod = mod
	for name := range compiled.ExportedFunctions() {
		p.fns[name] = mod.ExportedFunction(name)
	}
	p.callCtx = withPlugin(ctx, p)
	if p.alloc = p.fns["proxy_on_memory_allocate"]; p.alloc == nil {
		p.alloc = p.fns["malloc"]
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if f := p.fns["_initialize"]; f != nil {
		if _, err := p.call("_initialize"); err != nil {
			return p.failLocked(err)
		}
	}
	p.nextID = 1
	p.rootID = p.newID()
	if _, err := p.call("proxy_on_context_create", uint64(p.rootID), 0); err != nil {
		return p.failLocked(err)
	}
	p.configBuf = BufferVMConfiguration
	r, err := p.call("proxy_on_vm_start", uint64(p.rootID), uint64(len(cfg.VMConfiguration)))
	p.configBuf = -1
	if err != nil {
		return p.failLocked(err)
	}
	if r != nil && r[0] == 0 {
		return p.failLocked(fmt.Errorf("%w%s", ErrVMStartRefused, p.lastLogs()))
	}
	p.configBuf = BufferPluginConfiguration
	r, err = p.call("proxy_on_configure", uint64(p.rootID), uint64(len(cfg.PluginConfiguration)))
	p.configBuf = -1
	if err != nil {
		return p.failLocked(err)
	}
	if r != nil && r[0] == 0 {
		return p.failLocked(fmt.Errorf("%w%s", ErrConfigureRefused, p.lastLogs()))
	}
	return p, nil
}

func (p *Plugin) failLocked(err error) (*Plugin, error) {
	p.mu.Unlock()
	p.Close()
	p.mu.Lock()
	return nil, err
}

func (p *Plugin) lastLogs() string {
	var b strings.Builder
	for i := max(0, len(p.logs)-3); i < len(p.logs); i++ {
		b.WriteString("; log: ")
		b.WriteString(p.logs[i].Message)
	}
	return b.String()
}

func (p *Plugin) newID() uint32 {
	id := p.nextID
	p.nextID++
	return id
}

// call runs an export if the module has it; a missing optional callback returns
// nil results. A trap marks the plugin broken: every later call fails. The results
// are valid until the next call.
func (p *Plugin) call(name string, args ...uint64) ([]uint64, error) {
	if p.broken != nil {
		return nil, p.broken
	}
	f := p.fns[name]
	if f == nil {
		return nil, nil
	}
	st := p.stack[:max(len(args), 1)]
	copy(st, args)
	start := time.Now()
	err := f.CallWithStack(p.callCtx, st)
	p.vmTime += time.Since(start)
	p.effective = 0 // proxy_set_effective_context lasts one VM call
	p.vmCalls++
	if err != nil {
		p.broken = fmt.Errorf("proxywasm: %s trapped; the VM is unusable: %w", name, err)
		return nil, p.broken
	}
	return st[:len(f.Definition().ResultTypes())], nil
}

// Broken returns the trap that made the VM unusable, or nil.
func (p *Plugin) Broken() error { return locked(p, &p.broken) }

// Close stops ticks, deletes the plugin context and closes the module (and the
// runtime, when the plugin made it).
func (p *Plugin) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	if p.tickStop != nil {
		close(p.tickStop)
		p.tickStop = nil
	}
	if p.mod != nil && p.broken == nil && p.rootID != 0 {
		if r, _ := p.call("proxy_on_done", uint64(p.rootID)); r == nil || r[0] != 0 {
			p.call("proxy_on_log", uint64(p.rootID))
			p.call("proxy_on_delete", uint64(p.rootID))
		}
	}
	p.mu.Unlock()
	p.tickWG.Wait()
	var err error
	if p.mod != nil {
		err = p.mod.Close(p.ctx)
	}
	if p.ownRT && p.rt != nil {
		if e := p.rt.Close(p.ctx); err == nil {
			err = e
		}
	}
	return err
}

// Logs returns every log line so far.
func (p *Plugin) Logs() []LogEntry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]LogEntry(nil), p.logs...)
}

// BytesCopiedIn is the number of data-buffer bytes (downstream and upstream) the
// module has had copied into its memory through proxy_get_buffer_bytes.
func (p *Plugin) BytesCopiedIn() int64 { return locked(p, &p.copiedIn) }

// VMTime is the time spent in the module's callbacks so far (host functions they
// call included): what the filter adds to the proxy's work.
func (p *Plugin) VMTime() time.Duration { return locked(p, &p.vmTime) }

// Callbacks is the number of the module's callbacks run so far.
func (p *Plugin) Callbacks() int64 { return locked(p, &p.vmCalls) }

// Metrics returns a snapshot of every defined metric, sorted by name.
func (p *Plugin) Metrics() []Metric {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Metric, 0, len(p.metrics))
	for _, m := range p.metrics {
		out = append(out, m.snapshot())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Metric returns one metric by name.
func (p *Plugin) Metric(name string) (Metric, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id, ok := p.metricByNm[name]
	if !ok {
		return Metric{}, false
	}
	return p.metrics[id-1].snapshot(), true
}

// TickPeriod is the period the module last set (0: none).
func (p *Plugin) TickPeriod() time.Duration { return locked(p, &p.tick) }

// Tick calls proxy_on_tick once, as the timer does.
func (p *Plugin) Tick() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := p.call("proxy_on_tick", uint64(p.rootID))
	return err
}

func (p *Plugin) setTick(d time.Duration) {
	if p.tickStop != nil {
		close(p.tickStop)
		p.tickStop = nil
	}
	p.tick = d
	if d <= 0 || p.closed {
		return
	}
	stop := make(chan struct{})
	p.tickStop = stop
	p.tickWG.Add(1)
	go func() {
		defer p.tickWG.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				p.mu.Lock()
				if p.tickStop == stop {
					p.call("proxy_on_tick", uint64(p.rootID))
				}
				p.mu.Unlock()
			}
		}
	}()
}

// Stream is one connection's stream context.
type Stream struct {
	p        *Plugin
	id       uint32
	down, up []byte // data buffered by Pause
	// spareDown and spareUp are the other buffer of each direction: buffered data the
	// module lets go is returned in its own buffer, and buffering goes on in the
	// spare (the one returned by the call before, which the caller has written out).
	spareDown, spareUp []byte
	// edit holds what proxy_set_buffer_bytes makes of a borrowed buffer (the callback's
	// view of the caller's bytes, which are not written): two, so that a second edit in
	// one callback reads the first's result from the other. editLast is the one the
	// last edit wrote (-1: none in this callback). Envoy prepends and drains its buffer
	// slices in place; a fresh 64 KiB buffer per edit would be the harness's cost.
	edit     [2][]byte
	editLast int
	// cur is the buffer of the running callback, which the module reads and writes.
	cur       *[]byte
	closeReq  bool
	onClose   func() // the proxy's close, for proxy_close_stream outside the stream's callbacks
	continueD bool
	// borrowed is set while a callback reads the caller's bytes in place.
	borrowed bool
	deleted  bool
	// Source and Destination are reported as the source.address and
	// destination.address properties.
	Source, Destination string
}

// NewStream creates a stream context and calls proxy_on_new_connection. It reports
// whether the module paused the connection (proxy_on_new_connection returned Pause).
func (p *Plugin) NewStream() (*Stream, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("proxywasm: plugin closed")
	}
	s := &Stream{p: p, id: p.newID()}
	p.streams[s.id] = s
	if _, err := p.call("proxy_on_context_create", uint64(s.id), uint64(p.rootID)); err != nil {
		return nil, err
	}
	p.active = s
	_, err := p.call("proxy_on_new_connection", uint64(s.id))
	p.active = nil
	return s, err
}

// ID is the stream context id.
func (s *Stream) ID() uint32 { return s.id }

// CloseRequested reports whether the module asked to close the connection.
func (s *Stream) CloseRequested() bool { return locked(s.p, &s.closeReq) }

// OnCloseRequest sets what the module's proxy_close_stream for this stream does when
// it comes outside the stream's callbacks (from proxy_on_tick, through
// proxy_set_effective_context): fn runs on a goroutine of its own. Within a callback,
// CloseRequested reports it after the callback.
func (s *Stream) OnCloseRequest(fn func()) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	s.onClose = fn
}

// Buffered returns how many bytes each direction holds because of Pause.
func (s *Stream) Buffered() (downstream, upstream int) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	return len(s.down), len(s.up)
}

// Downstream delivers bytes read from the client and returns what to send
// upstream. The result may alias data or a buffer of the stream: it is valid until
// the caller reuses data or calls the stream again (a proxy writes it out before its
// next read). data itself is not modified.
func (s *Stream) Downstream(data []byte, endOfStream bool) ([]byte, error) {
	return s.deliver(&s.down, BufferDownstreamData, "proxy_on_downstream_data", data, endOfStream)
}

// Upstream delivers bytes read from the upstream and returns what to send to the
// client.
func (s *Stream) Upstream(data []byte, endOfStream bool) ([]byte, error) {
	return s.deliver(&s.up, BufferUpstreamData, "proxy_on_upstream_data", data, endOfStream)
}

func (s *Stream) deliver(buf *[]byte, bufID int32, callback string, data []byte, eos bool) ([]byte, error) {
	p := s.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.deleted {
		return nil, errors.New("proxywasm: stream deleted")
	}
	var out []byte
	if len(*buf) == 0 && len(data) > 0 {
		// Nothing is buffered: the callback reads the caller's bytes where they are
		// (as Envoy hands a filter its own buffer), and they are copied only when it
		// pauses. set_buffer_bytes never writes into a borrowed buffer (borrowed).
		view := data[:len(data):len(data)]
		s.borrowed, s.editLast = true, -1
		p.active, p.activeBuf, s.cur = s, bufID, &view
		r, err := p.call(callback, uint64(s.id), uint64(len(view)), b2u(eos))
		p.active, p.activeBuf, s.cur = nil, -1, nil
		s.borrowed = false
		if err != nil {
			return nil, err
		}
		if r == nil || r[0] == ActionContinue {
			out = view
		} else {
			*buf = append(*buf, view...)
		}
		if s.closeReq || !(bufID == BufferDownstreamData && s.continueD) {
			return out, nil
		}
		s.continueD = false
	} else {
		*buf = append(*buf, data...)
	}
	for {
		if len(*buf) == 0 && !eos {
			return out, nil
		}
		p.active, p.activeBuf, s.cur = s, bufID, buf
		r, err := p.call(callback, uint64(s.id), uint64(len(*buf)), b2u(eos))
		p.active, p.activeBuf, s.cur = nil, -1, nil
		if err != nil {
			return out, err
		}
		if r == nil || r[0] == ActionContinue {
			spare := &s.spareDown
			if bufID == BufferUpstreamData {
				spare = &s.spareUp
			}
			if len(out) == 0 {
				out, *buf, *spare = *buf, (*spare)[:0], (*buf)[:0]
			} else {
				out = append(out, *buf...)
				*buf = (*buf)[:0]
			}
		}
		if s.closeReq {
			return out, nil
		}
		if bufID == BufferDownstreamData && s.continueD {
			s.continueD = false
			continue
		}
		return out, nil
	}
}

// Close runs the close callbacks (peer is PeerLocal or PeerRemote, as proxy_peer_type_t)
// and then proxy_on_done, proxy_on_log and proxy_on_delete.
func (s *Stream) Close(peer int32) error {
	p := s.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.deleted {
		return nil
	}
	s.deleted = true
	defer delete(p.streams, s.id)
	p.active = s
	defer func() { p.active = nil }()
	if _, err := p.call("proxy_on_downstream_connection_close", uint64(s.id), uint64(peer)); err != nil {
		return err
	}
	if _, err := p.call("proxy_on_upstream_connection_close", uint64(s.id), uint64(peer)); err != nil {
		return err
	}
	r, err := p.call("proxy_on_done", uint64(s.id))
	if err != nil {
		return err
	}
	if r != nil && r[0] == 0 {
		// The module finishes later with proxy_done; a proxy would wait. The harness
		// does not: it finalizes now.
	}
	if _, err := p.call("proxy_on_log", uint64(s.id)); err != nil {
		return err
	}
	_, err = p.call("proxy_on_delete", uint64(s.id))
	return err
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// ---- host functions ----

type pluginKey struct{}

func withPlugin(ctx context.Context, p *Plugin) context.Context {
	return context.WithValue(ctx, pluginKey{}, p)
}

func pluginOf(ctx context.Context) *Plugin {
	p, _ := ctx.Value(pluginKey{}).(*Plugin)
	return p
}

func (p *Plugin) memRead(m api.Module, ptr, n uint32) ([]byte, bool) {
	return m.Memory().Read(ptr, n)
}

// writeOut hands data to the module: memory from proxy_on_memory_allocate, then
// the pointer and size at retPtr and retSize.
func (p *Plugin) writeOut(ctx context.Context, m api.Module, data []byte, retPtr, retSize uint32) int32 {
	var addr uint32
	if len(data) > 0 {
		if p.alloc == nil {
			return StatusInvalidMemoryAccess
		}
		p.allocStack[0] = uint64(len(data))
		if err := p.alloc.CallWithStack(ctx, p.allocStack[:]); err != nil || p.allocStack[0] == 0 {
			return StatusInvalidMemoryAccess
		}
		addr = uint32(p.allocStack[0])
		if !m.Memory().Write(addr, data) {
			return StatusInvalidMemoryAccess
		}
	}
	if !m.Memory().WriteUint32Le(retPtr, addr) || !m.Memory().WriteUint32Le(retSize, uint32(len(data))) {
		return StatusInvalidMemoryAccess
	}
	return StatusOK
}

// buffer returns the buffer bufID of the running callback.
func (p *Plugin) buffer(bufID int32) (*[]byte, []byte, int32) {
	switch bufID {
	case BufferVMConfiguration, BufferPluginConfiguration:
		if p.configBuf != bufID {
			return nil, nil, StatusNotFound
		}
		if bufID == BufferVMConfiguration {
			return nil, p.cfg.VMConfiguration, StatusOK
		}
		return nil, p.cfg.PluginConfiguration, StatusOK
	case BufferDownstreamData, BufferUpstreamData:
		if p.active == nil || p.activeBuf != bufID || p.active.cur == nil {
			return nil, nil, StatusNotFound
		}
		return p.active.cur, *p.active.cur, StatusOK
	case 0, 1, 4, 5, 8:
		return nil, nil, StatusNotFound
	}
	return nil, nil, StatusBadArgument
}

type hostFn struct {
	name    string
	params  []api.ValueType
	results []api.ValueType
	fn      func(ctx context.Context, m api.Module, stack []uint64)
}

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

func rep(n int) []api.ValueType {
	out := make([]api.ValueType, n)
	for i := range out {
		out[i] = i32
	}
	return out
}

func unimplemented(name string, n int) hostFn {
	return hostFn{name, rep(n), rep(1), func(_ context.Context, _ api.Module, st []uint64) { st[0] = StatusUnimplemented }}
}

// hostFunctions is the "env" module: every host function of proxy-wasm 0.2.1.
func hostFunctions() []hostFn {
	fns := []hostFn{
		{"proxy_log", rep(3), rep(1), func(ctx context.Context, m api.Module, st []uint64) {
			p := pluginOf(ctx)
			level := int32(st[0])
			msg, ok := p.memRead(m, uint32(st[1]), uint32(st[2]))
			switch {
			case level < 0 || level > 5:
				st[0] = StatusBadArgument
			case !ok:
				st[0] = StatusInvalidMemoryAccess
			default:
				e := LogEntry{Level: level, Message: string(msg)}
				p.logs = append(p.logs, e)
				if p.cfg.OnLog != nil {
					p.cfg.OnLog(e)
				}
				st[0] = StatusOK
			}
		}},
		{"proxy_get_log_level", rep(1), rep(1), func(ctx context.Context, m api.Module, st []uint64) {
			st[0] = okOrFault(m.Memory().WriteUint32Le(uint32(st[0]), uint32(pluginOf(ctx).cfg.LogLevel)))
		}},
		{"proxy_get_current_time_nanoseconds", rep(1), rep(1), func(ctx context.Context, m api.Module, st []uint64) {
			st[0] = okOrFault(m.Memory().WriteUint64Le(uint32(st[0]), uint64(pluginOf(ctx).cfg.Now().UnixNano())))
		}},
		{"proxy_set_tick_period_milliseconds", rep(1), rep(1), func(ctx context.Context, m api.Module, st []uint64) {
			pluginOf(ctx).setTick(time.Duration(uint32(st[0])) * time.Millisecond)
			st[0] = StatusOK
		}},
		{"proxy_get_buffer_bytes", rep(5), rep(1), func(ctx context.Context, m api.Module, st []uint64) {
			p := pluginOf(ctx)
			_, data, status := p.buffer(int32(st[0]))
			if status != StatusOK {
				st[0] = uint64(status)
				return
			}
			start, max := uint64(uint32(st[1])), uint64(uint32(st[2]))
			if start > uint64(len(data)) {
				st[0] = StatusBadArgument
				return
			}
			end := min(start+max, uint64(len(data)))
			if b := int32(st[0]); b == BufferDownstreamData || b == BufferUpstreamData {
				p.copiedIn += int64(end - start)
			}
			st[0] = uint64(p.writeOut(ctx, m, data[start:end], uint32(st[3]), uint32(st[4])))
		}},
		{"proxy_get_buffer_status", rep(3), rep(1), func(ctx context.Context, m api.Module, st []uint64) {
			_, data, status := pluginOf(ctx).buffer(int32(st[0]))
			if status != StatusOK {
				st[0] = uint64(status)
				return
			}
			st[0] = okOrFault(m.Memory().WriteUint32Le(uint32(st[1]), uint32(len(data))) && m.Memory().WriteUint32Le(uint32(st[2]), 0))
		}},
		{"proxy_set_buffer_bytes", rep(5), rep(1), func(ctx context.Context, m api.Module, st []uint64) {
			p := pluginOf(ctx)
			buf, data, status := p.buffer(int32(st[0]))
			if status != StatusOK || buf == nil {
				if status == StatusOK {
					status = StatusBadArgument // configurations are read-only
				}
				st[0] = uint64(status)
				return
			}
			start, size := uint64(uint32(st[1])), uint64(uint32(st[2]))
			val, ok := p.memRead(m, uint32(st[3]), uint32(st[4]))
			if !ok {
				st[0] = StatusInvalidMemoryAccess
				return
			}
			switch {
			case start == 0:
				// Envoy's Buffer::copyFrom: drain size bytes (at most all), then prepend.
				size = min(size, uint64(len(data)))
				s := p.active
				if s == nil || !s.borrowed {
					*buf = append(append(make([]byte, 0, len(val)+len(data)-int(size)), val...), data[size:]...)
					break
				}
				k := 0
				if s.editLast == 0 {
					k = 1 // data is edit[0]
				}
				s.edit[k] = append(append(s.edit[k][:0], val...), data[size:]...)
				s.editLast = k
				*buf = s.edit[k]
			case start >= uint64(len(data)):
				*buf = append(*buf, val...)
			default:
				st[0] = StatusBadArgument
				return
			}
			st[0] = StatusOK
		}},
		{"proxy_define_metric", rep(4), rep(1), func(ctx context.Context, m api.Module, st []uint64) {
			p := pluginOf(ctx)
			typ := MetricType(int32(st[0]))
			name, ok := p.memRead(m, uint32(st[1]), uint32(st[2]))
			if typ < Counter || typ > Histogram {
				st[0] = StatusBadArgument
				return
			}
			if !ok {
				st[0] = StatusInvalidMemoryAccess
				return
			}
			id, exists := p.metricByNm[string(name)]
			if !exists {
				p.metrics = append(p.metrics, &metric{name: string(name), typ: typ})
				id = uint32(len(p.metrics))
				p.metricByNm[string(name)] = id
			} else if p.metrics[id-1].typ != typ {
				st[0] = StatusBadArgument
				return
			}
			st[0] = okOrFault(m.Memory().WriteUint32Le(uint32(st[3]), id))
		}},
		{"proxy_increment_metric", []api.ValueType{i32, i64}, rep(1), func(ctx context.Context, m api.Module, st []uint64) {
			mt := pluginOf(ctx).metricAt(uint32(st[0]))
			delta := int64(st[1])
			switch {
			case mt == nil:
				st[0] = StatusNotFound
			case mt.typ == Histogram, mt.typ == Counter && delta < 0:
				st[0] = StatusBadArgument
			default:
				mt.value += delta
				st[0] = StatusOK
			}
		}},
		{"proxy_record_metric", []api.ValueType{i32, i64}, rep(1), func(ctx context.Context, m api.Module, st []uint64) {
			mt := pluginOf(ctx).metricAt(uint32(st[0]))
			switch {
			case mt == nil:
				st[0] = StatusNotFound
			case mt.typ == Histogram:
				mt.samples = append(mt.samples, st[1])
				st[0] = StatusOK
			default:
				mt.value = int64(st[1])
				st[0] = StatusOK
			}
		}},
		{"proxy_get_metric", rep(2), rep(1), func(ctx context.Context, m api.Module, st []uint64) {
			mt := pluginOf(ctx).metricAt(uint32(st[0]))
			switch {
			case mt == nil:
				st[0] = StatusNotFound
			case mt.typ == Histogram:
				st[0] = StatusBadArgument
			default:
				st[0] = okOrFault(m.Memory().WriteUint64Le(uint32(st[1]), uint64(mt.value)))
			}
		}},
		{"proxy_get_property", rep(4), rep(1), func(ctx context.Context, m api.Module, st []uint64) {
			p := pluginOf(ctx)
			path, ok := p.memRead(m, uint32(st[0]), uint32(st[1]))
			if !ok {
				st[0] = StatusInvalidMemoryAccess
				return
			}
			v, found := p.property(strings.TrimRight(string(path), "\x00"))
			if !found {
				st[0] = StatusNotFound
				return
			}
			st[0] = uint64(p.writeOut(ctx, m, v, uint32(st[2]), uint32(st[3])))
		}},
		{"proxy_set_property", rep(4), rep(1), func(ctx context.Context, m api.Module, st []uint64) {
			p := pluginOf(ctx)
			path, ok1 := p.memRead(m, uint32(st[0]), uint32(st[1]))
			val, ok2 := p.memRead(m, uint32(st[2]), uint32(st[3]))
			if !ok1 || !ok2 {
				st[0] = StatusInvalidMemoryAccess
				return
			}
			p.props[strings.TrimRight(string(path), "\x00")] = append([]byte(nil), val...)
			st[0] = StatusOK
		}},
		{"proxy_continue_stream", rep(1), rep(1), func(ctx context.Context, m api.Module, st []uint64) {
			p := pluginOf(ctx)
			s := p.streams[p.effectiveOrActive()]
			switch {
			case s == nil:
				st[0] = StatusNotFound
			case st[0] == StreamDownstream:
				s.continueD = true
				st[0] = StatusOK
			case st[0] == StreamUpstream:
				st[0] = StatusUnimplemented
			default:
				st[0] = StatusBadArgument
			}
		}},
		{"proxy_close_stream", rep(1), rep(1), func(ctx context.Context, m api.Module, st []uint64) {
			p := pluginOf(ctx)
			s := p.streams[p.effectiveOrActive()]
			switch {
			case st[0] != StreamDownstream && st[0] != StreamUpstream:
				st[0] = StatusBadArgument
			case s == nil:
				st[0] = StatusNotFound
			default:
				s.closeReq = true
				if p.active != s && s.onClose != nil {
					go s.onClose() // outside the stream's callbacks: the proxy closes it now
				}
				st[0] = StatusOK
			}
		}},
		{"proxy_done", nil, rep(1), func(ctx context.Context, m api.Module, st []uint64) {
			st[0] = StatusNotFound
		}},
		{"proxy_set_effective_context", rep(1), rep(1), func(ctx context.Context, m api.Module, st []uint64) {
			p := pluginOf(ctx)
			id := uint32(st[0])
			if _, ok := p.streams[id]; !ok && id != p.rootID {
				st[0] = StatusBadArgument
				return
			}
			p.effective = id
			st[0] = StatusOK
		}},
		{"proxy_get_status", rep(3), rep(1), func(_ context.Context, _ api.Module, st []uint64) { st[0] = StatusNotFound }},
		unimplemented("proxy_get_header_map_size", 2),
		unimplemented("proxy_get_header_map_pairs", 3),
		unimplemented("proxy_set_header_map_pairs", 3),
		unimplemented("proxy_get_header_map_value", 5),
		unimplemented("proxy_add_header_map_value", 5),
		unimplemented("proxy_replace_header_map_value", 5),
		unimplemented("proxy_remove_header_map_value", 3),
		unimplemented("proxy_send_local_response", 8),
		unimplemented("proxy_http_call", 10),
		unimplemented("proxy_grpc_call", 12),
		unimplemented("proxy_grpc_stream", 9),
		unimplemented("proxy_grpc_send", 4),
		unimplemented("proxy_grpc_cancel", 1),
		unimplemented("proxy_grpc_close", 1),
		unimplemented("proxy_set_shared_data", 5),
		unimplemented("proxy_get_shared_data", 5),
		unimplemented("proxy_register_shared_queue", 3),
		unimplemented("proxy_resolve_shared_queue", 5),
		unimplemented("proxy_enqueue_shared_queue", 3),
		unimplemented("proxy_dequeue_shared_queue", 3),
		unimplemented("proxy_call_foreign_function", 6),
	}
	return fns
}

func okOrFault(ok bool) uint64 {
	if ok {
		return StatusOK
	}
	return StatusInvalidMemoryAccess
}

func (p *Plugin) metricAt(id uint32) *metric {
	if id == 0 || int(id) > len(p.metrics) {
		return nil
	}
	return p.metrics[id-1]
}

func (p *Plugin) effectiveOrActive() uint32 {
	if p.active != nil {
		return p.active.id
	}
	return p.effective
}

// property answers proxy_get_property for the few paths the harness knows.
func (p *Plugin) property(path string) ([]byte, bool) {
	if v, ok := p.props[path]; ok {
		return v, true
	}
	s := p.streams[p.effectiveOrActive()]
	switch path {
	case "plugin_name":
		return []byte(p.cfg.Name), true
	case "plugin_root_id":
		return []byte(p.cfg.Name), true
	case "plugin_vm_id":
		return []byte(""), true
	case "connection_id":
		if s != nil {
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], uint64(s.id))
			return b[:], true
		}
	case "source\x00address":
		if s != nil && s.Source != "" {
			return []byte(s.Source), true
		}
	case "destination\x00address":
		if s != nil && s.Destination != "" {
			return []byte(s.Destination), true
		}
	}
	return nil, false
}

func (p *Plugin) instantiateHost(ctx context.Context) error {
	b := p.rt.NewHostModuleBuilder("env")
	for _, h := range hostFunctions() {
		fn := h.fn
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(fn), h.params, h.results).Export(h.name)
	}
	_, err := b.Instantiate(ctx)
	return err
}

// HostFunctionSignatures lists the "env" functions the harness provides with their
// parameter and result counts and types, for tests.
func HostFunctionSignatures() map[string][2][]api.ValueType {
	out := map[string][2][]api.ValueType{}
	for _, h := range hostFunctions() {
		out[h.name] = [2][]api.ValueType{h.params, h.results}
	}
	return out
}
