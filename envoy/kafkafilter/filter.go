package kafkafilter

import (
	"strconv"
	"strings"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/policy"
	"github.com/kwire/kwire/internal/transcode"
)

// Level is a log level, numbered as proxy-wasm's proxy_log_level_t.
type Level int32

// Log levels.
const (
	LevelTrace    Level = 0
	LevelDebug    Level = 1
	LevelInfo     Level = 2
	LevelWarn     Level = 3
	LevelError    Level = 4
	LevelCritical Level = 5
)

// MetricKind is a metric type, numbered as proxy-wasm's proxy_metric_type_t.
type MetricKind int32

// Metric kinds.
const (
	Counter   MetricKind = 0
	Gauge     MetricKind = 1
	Histogram MetricKind = 2
)

// Host is what the filter needs from its proxy: logs, metrics and a clock.
type Host interface {
	Log(level Level, msg string)
	// DefineMetric returns the id of a metric; ok is false when the host refused.
	DefineMetric(kind MetricKind, name string) (id uint32, ok bool)
	IncrementMetric(id uint32, delta int64)
	RecordMetric(id uint32, value uint64)
	// NowNanos is the host's current time in nanoseconds.
	NowNanos() int64
	// SetTickPeriod asks for OnTick calls every ms milliseconds (0: none).
	SetTickPeriod(ms uint32)
}

// Filter is one configured filter: its settings, metrics and what it has learned
// from Metadata responses (topic ids). All its connections share it; it is not safe
// for concurrent use (a proxy-wasm VM is single-threaded).
type Filter struct {
	host Host
	s    *settings
	chk  *policy.Checker

	doc        transcode.Doc // reused by every request and response the filter reads
	metricIDs  map[string]uint32
	counterIDs map[string]counter
	apiIDs     [256]*apiMetrics // by api key (the keys Kafka defines are below 256)
	apiIDsRest map[int16]*apiMetrics
	topicNames map[codec.UUID]string

	// the fixed counters, and the connections.active gauge's host id
	mReqUnknown, mReqFailure, mRespUnknown, mRespFailure, mDenied       counter
	mChecked, mFailed, mRejected, mWarned, mPartRejected, mPartAccepted counter
	mReqRefused, mRewritten, mUnmapped, mConnTotal, mSubstitu           counter
	mUnruled, mInPlace, mEndpointsDropped, mRuleRefused, mRuleClosed    counter
	mTenantReq, mTenantResp, mTenantHidden, mTenantRefused              counter
	mConnActive                                                         uint32

	// counters holds each counter's host id and the count it has not sent yet; dirty
	// lists the counters with such a count. They go to the host on the first response
	// flushEvery nanoseconds after the last time they went (flushedAt), on a tick, and
	// when a connection ends (FlushMetrics).
	counters              []counterSlot
	dirty                 []counter
	flushEvery, flushedAt int64
	summaryAt             int64 // when OnTick last logged its summary

	// the frames the filter writes of a request or response it changes or checks (a
	// tenant's mapping, a Produce skeleton); reused, valid until the next one
	frameBuf []byte

	// quickProduce is the mode of a Produce request run's quick path starts
	// (modeDecide or modeRulesHead), or modeHead when it has none; produceReq is the
	// request's metadata (its versions).
	quickProduce int
	produceReq   *codec.MessageInfo
	noQuick      bool // tests: run's quick paths off, to compare them with the full one

	// the last topic the schema policy was asked about, and its answer (ruled)
	lastTopic              string
	lastRuled, lastTopicOK bool

	// rewriting a response's tag section in place (stream.go)
	syn, synOut []byte
	empty       map[int32][]byte
}

// New configures a filter from the plugin configuration. A bad configuration is an
// error naming the field; nothing is defined on the host then.
func New(host Host, config []byte) (*Filter, error) {
	c, err := ParseConfig(config)
	if err != nil {
		return nil, err
	}
	s, err := c.settings()
	if err != nil {
		return nil, err
	}
	f := &Filter{host: host, s: s, metricIDs: map[string]uint32{}, counterIDs: map[string]counter{}, apiIDsRest: map[int16]*apiMetrics{},
		topicNames: map[codec.UUID]string{}, flushEvery: int64(s.flushMs) * 1e6}
	if s.pol != nil {
		f.chk = s.pol.NewChecker()
	}
	c0 := f.counter
	f.mReqUnknown = c0("request.unknown")
	f.mReqFailure = c0("request.failure")
	f.mRespUnknown = c0("response.unknown")
	f.mRespFailure = c0("response.failure")
	f.mDenied = c0("request.denied")
	f.mReqRefused = c0("request.refused")
	f.mSubstitu = c0("request.answered_locally")
	f.mChecked = c0("policy.records_checked")
	f.mFailed = c0("policy.records_failed")
	f.mRejected = c0("policy.records_rejected")
	f.mWarned = c0("policy.records_warned")
	f.mPartRejected = c0("policy.partitions_rejected")
	f.mPartAccepted = c0("policy.partitions_accepted")
	f.mRewritten = c0("rewrite.broker_addresses")
	f.mUnmapped = c0("rewrite.unmapped_nodes")
	f.mConnTotal = c0("connections.total")
	f.mConnActive = f.metric(Gauge, "connections.active")
	f.mUnruled = c0("policy.requests_streamed")
	f.mInPlace = c0("rewrite.endpoints_in_place")
	f.mEndpointsDropped = c0("rewrite.endpoints_dropped")
	f.mRuleRefused = c0("rules.requests_refused")
	f.mRuleClosed = c0("rules.connections_closed")
	f.mTenantReq = c0("tenant.requests_renamed")
	f.mTenantResp = c0("tenant.responses_renamed")
	f.mTenantHidden = c0("tenant.entities_hidden")
	f.mTenantRefused = c0("tenant.refused")
	api, _ := codec.LookupAPI(apiProduce)
	f.produceReq = api.Request
	switch {
	case s.held(apiProduce):
		if s.produceMode == modeRulesHead {
			f.quickProduce = modeRulesHead
		}
	case s.tenant == nil && s.pol != nil:
		f.quickProduce = modeDecide
	}
	if tick := s.tickPeriod(); tick > 0 {
		host.SetTickPeriod(uint32(tick))
	}
	mode := "no schema policy"
	if s.pol != nil {
		mode = "schema policy active"
		if s.pol.Enforces() {
			mode = "schema policy enforcing"
		}
	}
	if s.rules != nil {
		mode += ", " + strconv.Itoa(s.rules.Len()) + " request rules"
	}
	if s.tenant != nil {
		mode += ", tenant prefix " + strconv.Quote(s.tenant.Prefix())
	}
	host.Log(LevelInfo, "kwire kafka filter configured: "+mode+", "+strconv.Itoa(len(s.brokers))+" broker address rewrites, "+denySummary(s))
	return f, nil
}

func denySummary(s *settings) string {
	out := strconv.Itoa(len(s.denied)) + " api keys denied"
	if s.allowList {
		out = strconv.Itoa(len(s.allowed)) + " api keys allowed"
	}
	if s.tenant != nil {
		out += ", and every api a tenant may not use"
	}
	return out
}

// metric returns the id of the metric prefix.name, defining it on first use.
// Metrics the host refuses get id 0 and their updates are dropped by the host.
func (f *Filter) metric(kind MetricKind, name string) uint32 {
	full := f.s.prefix + "." + name
	if id, ok := f.metricIDs[full]; ok {
		return id
	}
	id, ok := f.host.DefineMetric(kind, full)
	if !ok {
		f.host.Log(LevelWarn, "kwire: the host refused metric "+full)
	}
	f.metricIDs[full] = id
	return id
}

// counter is one of the filter's counters: an index into Filter.counters.
type counter uint32

type counterSlot struct {
	host uint32 // the host's id of the counter
	n    int64  // the count not sent to the host yet
}

// counter returns the counter prefix.name, defining it on first use.
func (f *Filter) counter(name string) counter {
	if c, ok := f.counterIDs[name]; ok {
		return c
	}
	c := counter(len(f.counters))
	f.counters = append(f.counters, counterSlot{host: f.metric(Counter, name)})
	f.counterIDs[name] = c
	return c
}

// inc adds n to a counter: in the filter, or at the host when the filter sends every
// count at once (metrics_flush_ms 0).
func (f *Filter) inc(c counter, n int) {
	if n == 0 {
		return
	}
	s := &f.counters[c]
	if f.flushEvery == 0 {
		f.host.IncrementMetric(s.host, int64(n))
		return
	}
	if s.n == 0 {
		f.dirty = append(f.dirty, c)
	}
	s.n += int64(n)
}

// bump is inc for the counters every request touches: it inlines (a call costs in a
// VM) where the counter has a count waiting already. n is never negative.
func (f *Filter) bump(c counter, n int) {
	if s := &f.counters[c]; s.n > 0 {
		s.n += int64(n)
		return
	}
	f.inc(c, n)
}

// FlushMetrics sends the counts the filter's counters hold to the host. The filter
// calls it itself (every metrics_flush_ms while responses flow, on ticks, when a
// connection ends); a host that reads its counters at a moment of its own choosing
// calls it first.
func (f *Filter) FlushMetrics() {
	for _, c := range f.dirty {
		s := &f.counters[c]
		if s.n != 0 {
			f.host.IncrementMetric(s.host, s.n)
			s.n = 0
		}
	}
	f.dirty = f.dirty[:0]
}

// flushAt is FlushMetrics at time t, on a response (countResponse) or a tick.
func (f *Filter) flushAt(t int64) {
	f.FlushMetrics()
	f.flushedAt = t
}

// apiMetricName is the api's name in snake case, as Envoy's kafka filter spells
// request metrics ("produce", "find_coordinator"); unknown keys get "api_<key>".
func apiMetricName(key int16) string {
	api, ok := codec.LookupAPI(key)
	if !ok {
		return "api_" + strconv.Itoa(int(key))
	}
	var b strings.Builder
	for i, r := range api.Name {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// apiVersionName names an api and version in a message ("produce v9").
func apiVersionName(key, ver int16) string {
	return apiMetricName(key) + " v" + strconv.Itoa(int(ver))
}

// apiMetrics are the metric ids of one api key, defined on its first request:
// request.<api>, response.<api> and response.<api>_duration_ms. Each api is counted
// once: Envoy files every metric a Wasm module defines under its "wasmcustom"
// namespace, so copies under the names of Envoy's kafka_broker filter would never
// show as that filter's metrics (examples/envoy/README.md, "Metrics").
type apiMetrics struct {
	request, response counter
	duration          uint32 // a histogram's host id
}

func (f *Filter) api(key int16) *apiMetrics {
	if uint16(key) < uint16(len(f.apiIDs)) {
		if m := f.apiIDs[key]; m != nil {
			return m // the common case, inlined
		}
	}
	return f.apiRest(key)
}

// apiRest is api past its common case: it defines an api's metrics on first use.
func (f *Filter) apiRest(key int16) *apiMetrics {
	inArray := key >= 0 && int(key) < len(f.apiIDs)
	if inArray && f.apiIDs[key] != nil {
		return f.apiIDs[key]
	}
	if m := f.apiIDsRest[key]; !inArray && m != nil {
		return m
	}
	name := apiMetricName(key)
	m := &apiMetrics{
		request:  f.counter("request." + name),
		response: f.counter("response." + name),
		duration: f.metric(Histogram, "response."+name+"_duration_ms"),
	}
	if inArray {
		f.apiIDs[key] = m
	} else {
		f.apiIDsRest[key] = m
	}
	return m
}

func (f *Filter) countRequest(key int16) {
	f.bump(f.api(key).request, 1)
}

func (f *Filter) countResponse(key int16, startNanos int64) {
	m := f.api(key)
	f.bump(m.response, 1)
	t := f.host.NowNanos()
	if len(f.dirty) != 0 && t-f.flushedAt >= f.flushEvery {
		// A response is when the counters' counts go to the host, once flushEvery has
		// passed since they last went: it reads the clock already.
		f.flushAt(t)
	}
	ms := (t - startNanos) / 1e6
	if ms < 0 {
		ms = 0
	}
	f.host.RecordMetric(m.duration, uint64(ms))
}

// OnTick sends the counters' counts to the host and, every tick_ms, logs a
// one-line summary (debug level).
func (f *Filter) OnTick() {
	t := f.host.NowNanos()
	f.flushAt(t)
	// Ticks come every tick_ms, or more often for the counters: a millisecond's
	// slack keeps a late tick from skipping a summary.
	if f.s.tickMs > 0 && (f.summaryAt == 0 || t-f.summaryAt >= int64(f.s.tickMs-1)*1e6) {
		f.summaryAt = t
		f.host.Log(LevelDebug, "kwire kafka filter: "+strconv.Itoa(len(f.topicNames))+" topic ids known")
	}
}

// NewConn starts following one connection.
func (f *Filter) NewConn() *Conn {
	f.inc(f.mConnTotal, 1)
	f.host.IncrementMetric(f.mConnActive, 1)
	return &Conn{f: f}
}
