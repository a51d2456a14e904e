//go:build wasip1

package main

import (
	"strconv"
	"unsafe"

	"github.com/kwire/kwire/envoy/kafkafilter"
	"github.com/kwire/kwire/internal/pinned"
)

// proxy-wasm 0.2.1 constants.
const (
	statusOK = 0

	actionContinue = 0
	actionPause    = 1

	bufDownstream   = 2
	bufUpstream     = 3
	bufVMConfig     = 6
	bufPluginConfig = 7

	streamDownstream = 2
	streamUpstream   = 3
)

// Host functions ("env" module), as the specification defines them.

//go:wasmimport env proxy_log
func proxyLog(level int32, msg unsafe.Pointer, size int32) int32

//go:wasmimport env proxy_get_buffer_bytes
func proxyGetBufferBytes(buffer int32, start int32, maxSize int32, retData unsafe.Pointer, retSize unsafe.Pointer) int32

//go:wasmimport env proxy_set_buffer_bytes
func proxySetBufferBytes(buffer int32, start int32, size int32, data unsafe.Pointer, dataSize int32) int32

//go:wasmimport env proxy_define_metric
func proxyDefineMetric(kind int32, name unsafe.Pointer, nameSize int32, retID unsafe.Pointer) int32

//go:wasmimport env proxy_increment_metric
func proxyIncrementMetric(id int32, delta int64) int32

//go:wasmimport env proxy_record_metric
func proxyRecordMetric(id int32, value int64) int32

//go:wasmimport env proxy_get_current_time_nanoseconds
func proxyGetCurrentTimeNanoseconds(retTime unsafe.Pointer) int32

//go:wasmimport env proxy_set_tick_period_milliseconds
func proxySetTickPeriodMilliseconds(period int32) int32

//go:wasmimport env proxy_close_stream
func proxyCloseStream(stream int32) int32

//go:wasmimport env proxy_set_effective_context
func proxySetEffectiveContext(ctx int32) int32

// allocs holds the buffers proxy_on_memory_allocate handed to the host until the
// guest takes them over (Go's collector must not reclaim them meanwhile).
var allocs pinned.Set[uint32]

// target receives the bytes of a data buffer the guest reads with
// proxy_get_buffer_bytes: while it is set, proxy_on_memory_allocate hands it out
// instead of a fresh allocation, so the host copies straight into the filter's
// buffer.
var target []byte

// out receives the host's out-parameters. A local whose address goes to the host
// escapes to the heap: an allocation per host call. The module runs one callback at
// a time, so one static set serves every call.
var out struct {
	ptr, size uint32
	time      uint64
}

func addrOf(b []byte) uint32 { return uint32(pinned.Addr(b)) }

//go:wasmexport proxy_abi_version_0_2_1
func proxyABIVersion() {}

//go:wasmexport proxy_on_memory_allocate
func proxyOnMemoryAllocate(size int32) int32 {
	if size < 0 {
		return 0
	}
	if target != nil && int(size) <= len(target) {
		return int32(addrOf(target))
	}
	return int32(allocs.Pin(make([]byte, size)))
}

// take claims a buffer the host filled through proxy_on_memory_allocate; ok is
// false when ptr is not one (a host must allocate returned data that way).
func take(ptr, size uint32) ([]byte, bool) {
	b, ok := allocs.Unpin(ptr)
	if ptr == 0 || size == 0 {
		return nil, true
	}
	if !ok || int(size) > len(b) {
		return nil, false
	}
	return b[:size], true
}

// getBuffer reads the first size bytes of a configuration buffer.
func getBuffer(buffer int32, size int32) ([]byte, bool) {
	if size <= 0 {
		return nil, true
	}
	st := proxyGetBufferBytes(buffer, 0, size, unsafe.Pointer(&out.ptr), unsafe.Pointer(&out.size))
	ptr, n := out.ptr, out.size
	b, ok := take(ptr, n)
	if st != statusOK {
		return nil, false
	}
	return b, ok
}

// dataBuffer is a data buffer (downstream or upstream) during its callback.
type dataBuffer struct {
	id int32
	n  int
}

// dataBuf is the buffer of the running data callback.
var dataBuf dataBuffer

func (b *dataBuffer) Len() int { return b.n }

// ReadAt has the host copy len(p) bytes at off straight into p.
func (b *dataBuffer) ReadAt(p []byte, off int) bool {
	if len(p) == 0 {
		return true
	}
	target = p
	st := proxyGetBufferBytes(b.id, int32(off), int32(len(p)), unsafe.Pointer(&out.ptr), unsafe.Pointer(&out.size))
	ptr, n := out.ptr, out.size
	target = nil
	if st != statusOK || int(n) != len(p) {
		return false
	}
	if ptr == addrOf(p) {
		return true
	}
	got, ok := take(ptr, n)
	if ok {
		copy(p, got)
	}
	return ok
}

// host implements kafkafilter.Host over the imports.
type host struct{}

func (host) Log(level kafkafilter.Level, msg string) {
	proxyLog(int32(level), unsafe.Pointer(unsafe.StringData(msg)), int32(len(msg)))
}

func (host) DefineMetric(kind kafkafilter.MetricKind, name string) (uint32, bool) {
	st := proxyDefineMetric(int32(kind), unsafe.Pointer(unsafe.StringData(name)), int32(len(name)), unsafe.Pointer(&out.ptr))
	return out.ptr, st == statusOK
}

func (host) IncrementMetric(id uint32, delta int64) { proxyIncrementMetric(int32(id), delta) }

func (host) RecordMetric(id uint32, value uint64) { proxyRecordMetric(int32(id), int64(value)) }

func (host) NowNanos() int64 {
	proxyGetCurrentTimeNanoseconds(unsafe.Pointer(&out.time))
	return int64(out.time)
}

func (host) SetTickPeriod(ms uint32) { proxySetTickPeriodMilliseconds(int32(ms)) }

// Contexts: plugin (root) contexts hold a configured filter; stream contexts one
// connection.
var (
	roots   = map[uint32]*kafkafilter.Filter{}
	streams = map[uint32]*stream{}
)

type stream struct {
	root uint32
	conn *kafkafilter.Conn
}

func logf(level kafkafilter.Level, msg string) { host{}.Log(level, msg) }

// guard turns a panic inside a callback into a log line (and, for a stream, a
// closed connection): no panic escapes to the host.
func guard(ctx uint32, what string) {
	if p := recover(); p != nil {
		panicked(ctx, what, p)
	}
}

// panicked is guard's answer to a panic p.
func panicked(ctx uint32, what string, p any) {
	logf(kafkafilter.LevelCritical, "kwire: internal error in "+what+" (context "+strconv.FormatUint(uint64(ctx), 10)+"): "+panicText(p))
	if _, ok := streams[ctx]; ok {
		proxyCloseStream(streamDownstream)
	}
}

func panicText(p any) string {
	switch v := p.(type) {
	case error:
		return v.Error()
	case string:
		return v
	}
	return "panic"
}

//go:wasmexport proxy_on_context_create
func proxyOnContextCreate(ctx, parent int32) {
	defer guard(uint32(ctx), "proxy_on_context_create")
	if parent == 0 {
		roots[uint32(ctx)] = nil
		return
	}
	s := &stream{root: uint32(parent)}
	if f := roots[uint32(parent)]; f != nil {
		s.conn = f.NewConn()
	}
	streams[uint32(ctx)] = s
	if lastStream.ctx == ctx {
		lastStream.ctx, lastStream.s = 0, nil
	}
}

//go:wasmexport proxy_on_vm_start
func proxyOnVMStart(ctx, size int32) int32 {
	defer guard(uint32(ctx), "proxy_on_vm_start")
	return 1
}

//go:wasmexport proxy_on_configure
func proxyOnConfigure(ctx, size int32) (ok int32) {
	defer guard(uint32(ctx), "proxy_on_configure")
	cfg, good := getBuffer(bufPluginConfig, size)
	if !good {
		logf(kafkafilter.LevelError, "kwire: cannot read the plugin configuration")
		return 0
	}
	f, err := kafkafilter.New(host{}, cfg)
	if err != nil {
		logf(kafkafilter.LevelError, "kwire: plugin configuration refused: "+err.Error())
		return 0
	}
	roots[uint32(ctx)] = f
	return 1
}

//go:wasmexport proxy_on_new_connection
func proxyOnNewConnection(ctx int32) int32 {
	defer guard(uint32(ctx), "proxy_on_new_connection")
	s := streams[uint32(ctx)]
	if s == nil || s.conn == nil {
		// No configured filter: fail closed.
		logf(kafkafilter.LevelError, "kwire: connection without a configured filter; closing it")
		proxyCloseStream(streamDownstream)
	}
	return actionContinue
}

// onData runs one direction's callback after PassThrough declined it: first the
// filter's second cheap look (Conn.Through: a Produce request that streams, the next
// part of a response the filter walks, the head of a response it only counts), then
// its full path, which reads the buffer and says whether to forward it (as is, or
// with a prefix replaced), or to keep it (downstream only).
func onData(ctx, size, eos int32, downstream bool) (action int32) {
	s := lastStream.s
	if lastStream.ctx != ctx || s == nil {
		s = streams[uint32(ctx)]
	}
	if s == nil || s.conn == nil {
		return actionPause
	}
	lastStream.ctx, lastStream.s = ctx, s
	c := s.conn
	buf := &dataBuf // a pointer in the interface: no allocation per callback
	*buf = dataBuffer{id: bufUpstream, n: int(size)}
	if downstream {
		buf.id = bufDownstream
	}
	copiedBefore := c.Copied()
	if eos == 0 && c.Through(downstream, buf) {
		if gc.Due(int(c.Copied() - copiedBefore)) {
			gc.Yield()
		}
		return actionContinue
	}
	var act kafkafilter.Action
	if downstream {
		act = c.OnDownstream(buf, eos != 0)
	} else {
		act = c.OnUpstream(buf, eos != 0)
	}
	if act.Edit {
		proxySetBufferBytes(buf.id, 0, int32(act.Drain), unsafe.Pointer(unsafe.SliceData(act.Prefix)), int32(len(act.Prefix)))
	}
	if act.Close {
		proxyCloseStream(streamDownstream)
		proxyCloseStream(streamUpstream)
	}
	if gc.Due(int(c.Copied() - copiedBefore)) {
		gc.Yield()
	}
	if act.Pause {
		return actionPause
	}
	return actionContinue
}

// lastStream caches the stream of the last data callback: the next one is most
// often for the same connection.
var lastStream struct {
	ctx int32
	s   *stream
}

// The data callbacks' cheap path comes first (Conn.PassThrough): the bytes all belong
// to a frame already streaming through, so the buffer goes on as it is. Inside the
// VM most of a callback's cost is the code it runs, and each call is part of it: this
// runs inline, before the panic guard is set up. Then the guard (a closure that
// recovers itself: one call fewer than a deferred guard(...)), then onData.

//go:wasmexport proxy_on_downstream_data
func proxyOnDownstreamData(ctx, size, eos int32) int32 {
	if s := lastStream.s; eos == 0 && lastStream.ctx == ctx && s != nil && s.conn != nil && s.conn.PassThrough(true, int(size)) {
		return actionContinue
	}
	defer func() {
		if p := recover(); p != nil {
			panicked(uint32(ctx), "proxy_on_downstream_data", p)
		}
	}()
	return onData(ctx, size, eos, true)
}

//go:wasmexport proxy_on_upstream_data
func proxyOnUpstreamData(ctx, size, eos int32) int32 {
	if s := lastStream.s; eos == 0 && lastStream.ctx == ctx && s != nil && s.conn != nil && s.conn.PassThrough(false, int(size)) {
		return actionContinue
	}
	defer func() {
		if p := recover(); p != nil {
			panicked(uint32(ctx), "proxy_on_upstream_data", p)
		}
	}()
	return onData(ctx, size, eos, false)
}

//go:wasmexport proxy_on_downstream_connection_close
func proxyOnDownstreamConnectionClose(ctx, peer int32) {}

//go:wasmexport proxy_on_upstream_connection_close
func proxyOnUpstreamConnectionClose(ctx, peer int32) {}

//go:wasmexport proxy_on_done
func proxyOnDone(ctx int32) int32 { return 1 }

//go:wasmexport proxy_on_log
func proxyOnLog(ctx int32) {}

//go:wasmexport proxy_on_delete
func proxyOnDelete(ctx int32) {
	defer guard(uint32(ctx), "proxy_on_delete")
	if s, ok := streams[uint32(ctx)]; ok {
		if s.conn != nil {
			s.conn.Done()
		}
		delete(streams, uint32(ctx))
		if lastStream.s == s {
			lastStream.ctx, lastStream.s = 0, nil
		}
		return
	}
	delete(roots, uint32(ctx))
}

//go:wasmexport proxy_on_tick
func proxyOnTick(ctx int32) {
	defer guard(uint32(ctx), "proxy_on_tick")
	if f := roots[uint32(ctx)]; f != nil {
		f.OnTick()
	}
	// Connections whose close waits for a callback that an idle client never brings.
	for id, s := range streams {
		if s.conn != nil && s.conn.CloseIfDue() {
			proxySetEffectiveContext(int32(id))
			proxyCloseStream(streamDownstream)
			proxyCloseStream(streamUpstream)
		}
	}
}

// gc yields to the collector's background workers (see pinned.Yielder) every 256
// data callbacks, or after 4 MiB copied into the filter (what it allocates follows
// what it copies).
var gc = pinned.Yielder{Calls: 256, Bytes: 4 << 20}
