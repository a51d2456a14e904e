package kafkafilter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/rules"
	"github.com/kwire/kwire/codec/tenant"
	"github.com/kwire/kwire/internal/transcode"
)

// Buffer is the proxy's data buffer for one direction during one callback: the bytes
// it holds (what arrived since it last forwarded, the paused bytes first) and a way
// to copy a range of them into the filter. The filter reads only what it must:
// frame heads, the fields it decides on, and the frames it changes.
type Buffer interface {
	// Len is the number of bytes in the buffer.
	Len() int
	// ReadAt copies len(p) bytes from offset off into p; false when the proxy refused.
	ReadAt(p []byte, off int) bool
}

// Action is what the proxy does with its buffer when a callback returns.
type Action struct {
	// Pause keeps the whole buffer, unforwarded; the next callback of that direction
	// sees it again with what arrived since (Envoy's StopIteration). Downstream only.
	Pause bool
	// Edit replaces the first Drain bytes of the buffer with Prefix before it is
	// forwarded (proxy_set_buffer_bytes(start 0, size Drain, Prefix)); without Edit the
	// buffer is forwarded as it is.
	Edit   bool
	Drain  int
	Prefix []byte // valid until the next callback
	// Close asks for the connection to be closed after what is forwarded.
	Close bool
}

// Conn follows one Kafka connection. Downstream carries client bytes toward the
// broker, Upstream broker bytes toward the client.
//
// Every frame streams through as its bytes arrive unless the filter may have to
// change it: a request the filter answers itself (a denied api key), a Produce whose
// topics a schema rule covers, and a response it rewrites. Of a streaming frame the
// filter reads the head and, for the few kinds it inspects on the way (a Produce's
// topics under a policy, a Fetch response's fields up to its node endpoints), the
// length prefixes and fields it needs; the rest is stepped over by length and never
// copied into the filter.
//
// A request the filter must see whole is held by the proxy (Pause) when it starts its
// buffer, and in the filter otherwise. A response the filter rewrites is held in the
// filter: proxies do not reliably keep a paused write buffer (Envoy's tcp_proxy
// expects a write to take all it is given). A Fetch response under address
// rewriting is not held: its node endpoints are rewritten in place at the same size
// (see FetchEndpoints), so only its tag section, at the end, is read.
//
// A request the filter answers itself (a denied api key, or a Produce whose every
// partition the policy rejects) is replaced upstream by an ApiVersions v0 request
// with the same correlation id; when the broker's answer to it arrives, the filter
// drops it and sends the client its own response in its place. The client thus
// sees every response in request order, whatever was answered locally, and the
// proxy needs no way to write toward the client outside the upstream data path
// (proxy-wasm network filters have none).
type Conn struct {
	f       *Filter
	req     dir
	resp    dir
	pending []pend
	// session is the tenant's mapping on this connection (nil without a tenant): it
	// remembers which groups use the consumer protocol.
	session *tenant.Session
	// consumerReq is the ConsumerGroup of the request emitRequest mapped last, for its
	// pending entry.
	consumerReq bool
	closed      bool
	done        bool
	out         outBuf
	whole       []byte // action's buffer for a callback's bytes written whole
	win         window
	// winKept: Through read this callback's buffer and declined it; OnDownstream or
	// OnUpstream, called next with the same buffer, reads on from the same window.
	winKept bool
	// Copied counts the bytes the filter has copied out of the proxy's buffers.
	copied int64
	// headKey is the head of the Produce request under head rules being decided, and
	// headPassed the last one the rules passed (rulestream.go).
	headKey, headPassed []byte
	// closeMsg is why the connection closes once the responses before a refused
	// acks=0 Produce are sent (closeAfterAnswers); closeDue, that it closes at its next
	// callback.
	closeMsg string
	closeDue bool
}

// dir is the parsing state of one direction. Offsets named ...At are stream
// offsets: bytes of that direction since the connection began.
type dir struct {
	request bool
	mode    int
	base    int  // stream offset of the buffer's first byte in this callback
	paused  bool // the previous callback paused: the buffer starts with the same bytes
	resume  int  // after a pause: the buffer offset the filter had reached
	discard bool // requests after a refused acks=0 Produce: dropped until the close

	frameAt, frameEnd int    // the current frame
	head              []byte // a head split across callbacks
	headSent          bool   // head's bytes were forwarded already
	stash             []byte // modeHold in the filter: the frame's bytes so far
	inHost            bool   // modeHold / modeDecide: the frame is held by the proxy, from buffer offset 0
	cur               pend   // upstream: the request the current response answers

	// modeDecide (a Produce under a policy) and modeWalk (a response whose tag
	// section the filter may rewrite in place).
	walk     transcode.Walker
	bodyAt   int    // stream offset of the body
	carry    []byte // bytes of a field split across callbacks (already forwarded)
	spare    []byte // the previous carry's array, reused by the next
	carryAt  int
	join     []byte
	topics   int // modeDecide: topics not yet seen
	parts    int // modeDecide: partitions of the topics seen
	acks     int16
	tailAt   int // modeWalk: stream offset of the root tag section, once known
	tail     []byte
	decision int
	fsrc     frameSrc // the walks' sources (kept here: no allocation per call)
	rsrc     respSrc
}

const (
	modeHead      = iota // between frames
	modePass             // forward until frameEnd
	modeDrop             // drop until frameEnd (a broker answer the filter replaces)
	modeHold             // the filter needs the frame whole
	modeDecide           // a Produce: walk its topics until the filter knows whether a rule covers one
	modeWalk             // a response: walk to its tag section, forwarding as it goes
	modeTail             // a response: collect its tag section in the filter
	modeTenant           // a Produce to a tenant's listener: rewrite its names, stream its records
	modeRules            // a Produce under rules: check it without its records (rulestream.go)
	modeRulesHead        // a Produce under rules on its head only: decide from its first bytes
)

const (
	reqHeadLen  = 12 // size, api key, version, correlation id
	respHeadLen = 8  // size, correlation id
)

type pendKind uint8

const (
	kindPass        pendKind = iota // count and time only
	kindMetadata                    // rewrite brokers, learn topic ids
	kindFindCoord                   // rewrite coordinator addresses
	kindDescCluster                 // rewrite brokers
	kindApiVersions                 // cap the Produce version
	kindProduce                     // merge rejected partitions, rewrite node endpoints
	kindReplace                     // drop the broker's answer, send synth instead
	kindAddresses                   // rewrite node endpoints: held whole (fetch_endpoints "hold")
	kindTags                        // rewrite node endpoints in place (Fetch, share groups)
	kindClose                       // drop the broker's answer and close (closeAfterAnswers)
)

// pend is a request forwarded upstream whose response is expected.
type pend struct {
	corr     int32
	key, ver int16
	start    int64
	kind     pendKind
	rejected []rejectedTopic // kindProduce: partitions answered by the filter
	synth    []byte          // kindReplace: the response frame to send
	tenant   bool            // the response carries names the tenant's mapping strips
	consumer bool            // JoinGroup or SyncGroup of a consumer-protocol group (tenant.Counts.ConsumerGroup)
}

// Closed reports whether the filter has asked for the connection to be closed.
func (c *Conn) Closed() bool { return c.closed }

// CloseIfDue reports whether the host should close the connection now, outside its
// callbacks, and if so counts it closed: after a refused acks=0 Produce, the close
// waits for the connection's next callback when the response before it went to the
// client in the callback that found the close's answer (closeAfterAnswers), and a
// client that sends nothing more would wait for it. Hosts ask on their ticks.
func (c *Conn) CloseIfDue() bool {
	if !c.closeDue || c.closed {
		return false
	}
	c.closeWith(c.closeMsg)
	return true
}

// Copied is the number of bytes the filter has copied out of the proxy's buffers on
// this connection (heads, inspected fields and frames it held or changed).
func (c *Conn) Copied() int64 { return c.copied }

// Done releases the connection's state (the proxy closed it).
func (c *Conn) Done() {
	if c.done {
		return
	}
	c.done = true
	c.f.host.IncrementMetric(c.f.mConnActive, -1)
	c.f.FlushMetrics()
	c.pending = nil
	c.req, c.resp = dir{}, dir{}
	c.out = outBuf{}
	c.whole = nil
}

func (c *Conn) closeWith(msg string) {
	if !c.closed {
		c.f.host.Log(LevelWarn, "kwire: closing the connection: "+msg)
	}
	c.closed = true
}

// PassThrough is the cheap first look at a callback's buffer of n bytes: it
// reports whether all of them belong to a frame already streaming through with
// nothing in them the filter reads (a frame it passes; the middle of a response it
// walks, past the walk's next byte), and if so accounts for them, and the proxy
// forwards the buffer as it is. When it
// returns false, call OnDownstream or OnUpstream. It reads nothing and calls
// nothing: inside a VM, where most of a callback's cost is the code it runs, the
// callbacks in the middle of a large frame (16 of the 18 of a 1 MiB Fetch response
// in 64 KiB reads at v12, most of them at v18) cost only this.
func (c *Conn) PassThrough(downstream bool, n int) bool {
	c.winKept = false // a new callback: no window is this buffer's yet
	d := &c.resp
	if downstream {
		d = &c.req
	}
	if c.closed || c.done || d.paused || d.discard || n <= 0 {
		return false
	}
	end := d.base + n
	switch d.mode {
	case modePass:
		if end > d.frameEnd {
			return false
		}
		d.base = end
		if d.base == d.frameEnd {
			d.mode = modeHead
		}
		return true
	case modeWalk:
		// The walk's next byte is past this buffer (it is stepping over a records
		// field), and the frame goes on after it: nothing here to read or keep.
		if d.bodyAt < 0 || d.bodyAt+d.walk.Pos() < end || end >= d.frameEnd {
			return false
		}
		d.carry = d.carry[:0]
		d.base = end
		return true
	case modeTail:
		// Before the tag section the walk found.
		if end > d.tailAt {
			return false
		}
		d.base = end
		return true
	}
	return false
}

// walkThrough is Through's path for a buffer of broker bytes that continues a response
// the filter walks as it streams (a Fetch response whose node endpoints it may
// rewrite in place), when the walk's next bytes start in it and the frame goes on
// past it: it walks the buffer, and the proxy forwards it as it is. These are most of
// the callbacks of such a response that PassThrough leaves (one a partition, where
// the walk reads the partition's fields), and this path runs a fraction of the code
// OnUpstream does. On false, OnUpstream goes on from wherever the walk is.
func (c *Conn) walkThrough(b Buffer) bool {
	d := &c.resp
	n := b.Len()
	if c.closed || c.done || d.paused || d.mode != modeWalk || d.bodyAt < 0 || n <= 0 {
		return false
	}
	end := d.base + n
	if end >= d.frameEnd || d.bodyAt+d.walk.Pos() < d.base {
		// The frame ends here, or the walk's next bytes start in the carry.
		return false
	}
	c.win = window{b: b, n: n, buf: c.win.buf}
	c.winKept = true
	d.rsrc = respSrc{c, d}
	if d.walk.Next(&d.rsrc) != transcode.WalkMore || c.closed {
		return false
	}
	c.keepCarry(d, d.bodyAt+d.walk.Pos(), n)
	if c.closed {
		return false
	}
	d.base = end
	c.winKept = false
	return true
}

// Through is the second cheap look at a callback's buffer, after PassThrough: a buffer
// of client bytes that starts a Produce request the schema policy lets stream
// (produceThrough), or one of broker bytes that continues a response the filter walks
// (walkThrough). It reports true when the proxy forwards the buffer as it is, the
// filter's state having moved on as the full path would move it. On false, call
// OnDownstream or OnUpstream with the same buffer: they go on from where Through
// stopped, reading on from what it read.
func (c *Conn) Through(downstream bool, b Buffer) bool {
	if downstream {
		return c.produceThrough(b)
	}
	if c.resp.mode == modeHead {
		return c.responseThrough(b)
	}
	return c.walkThrough(b)
}

// responseThrough is Through's path for a buffer of broker bytes that starts with the
// head of a response the filter only counts and times (quickResponse, which run
// tries first too: here without run's steps before it).
func (c *Conn) responseThrough(b Buffer) bool {
	d := &c.resp
	n := b.Len()
	if c.closed || c.done || d.paused || len(d.head) != 0 || c.f.noQuick || n <= 0 {
		return false
	}
	c.win = window{b: b, n: n, buf: c.win.buf}
	c.winKept = true
	if !c.quickResponse(d, n) {
		return false
	}
	c.winKept = false
	return true
}

// produceThrough is Through's path for the most common buffer of client bytes under a
// schema policy or rules on a Produce request's head: it starts with a Produce request
// to one topic, whose head the rules passed in the request before (produceRulesHead's
// key) and which no schema rule covers (both read in its first bytes), and that
// request goes on to the buffer's end or past it. It does what OnDownstream's quick
// path does for it (the same read, metrics and state: TestQuickPathsMatchFullPath) in
// a fraction of the code. It reports false, having changed nothing, for any other
// buffer.
func (c *Conn) produceThrough(b Buffer) bool {
	d := &c.req
	f := c.f
	n := b.Len()
	if f.quickProduce == modeHead || f.noQuick || c.closed || c.done || d.paused || d.discard || d.mode != modeHead || len(d.head) != 0 || n < reqHeadLen {
		return false
	}
	c.win = window{b: b, n: n, buf: c.win.buf}
	c.winKept = true
	h, size, ok := c.produceAt0() // h: the window read, up to 1 KiB
	if !ok || size < n {
		return false
	}
	ver := int16(binary.BigEndian.Uint16(h[6:]))
	hl, ok := f.produceHeaderLen(h, ver)
	if !ok {
		return false
	}
	ph, ok := produceHead(h[hl:], ver, size-hl)
	if !ok || f.quickProduce == modeRulesHead && !c.headRepeats(h, hl+ph.headEnd) {
		return false
	}
	if f.s.pol != nil {
		name, known := unsafeString(ph.name), true
		if ver >= 13 {
			name, known = f.topicNames[ph.id]
		}
		if !known || f.ruled(name) {
			return false
		}
	}
	f.countRequest(apiProduce)
	c.streamProduce(h, ph.acks, ph.parts)
	d.frameAt, d.frameEnd = d.base, d.base+size
	d.base += n
	d.mode = modePass
	if d.base == d.frameEnd {
		d.mode = modeHead
	}
	c.winKept = false
	return true
}

// OnDownstream handles the proxy's buffer of client bytes (toward the broker).
func (c *Conn) OnDownstream(b Buffer, endOfStream bool) Action {
	c.req.request = true
	return c.run(&c.req, b, endOfStream)
}

// OnUpstream handles the proxy's buffer of broker bytes (toward the client).
func (c *Conn) OnUpstream(b Buffer, endOfStream bool) Action {
	return c.run(&c.resp, b, endOfStream)
}

// ---- reading the proxy's buffer ----

// window caches the bytes last read from the buffer, so that a walk over small
// fields costs one read per window rather than one per field.
type window struct {
	b     Buffer
	n     int // buffer length
	buf   []byte
	at, w int // buffer offset and length of the cached bytes
}

const windowSize = 1024

// at returns the bytes from buffer offset off on, at least n of them when the
// buffer holds that many (up to its end otherwise); valid until the next read.
func (c *Conn) at(off, n int) []byte {
	w := &c.win
	if off >= w.at && off+n <= w.at+w.w {
		return w.buf[off-w.at : w.w]
	}
	k := min(w.n-off, max(n, windowSize))
	if k <= 0 {
		return nil
	}
	if cap(w.buf) < k {
		w.buf = make([]byte, max(k, 2*cap(w.buf)))
	}
	if !w.b.ReadAt(w.buf[:k], off) {
		c.closeWith("the proxy refused to read its buffer")
		w.w = 0
		return nil
	}
	c.copied += int64(k)
	w.at, w.w = off, k
	return w.buf[:k]
}

// readInto appends n bytes at buffer offset off to dst.
func (c *Conn) readInto(dst []byte, off, n int) ([]byte, bool) {
	if n <= 0 {
		return dst, true
	}
	l := len(dst)
	if cap(dst)-l < n {
		grown := make([]byte, l, max(l+n, 2*cap(dst)))
		copy(grown, dst)
		dst = grown
	}
	dst = dst[:l+n]
	if !c.win.b.ReadAt(dst[l:], off) {
		c.closeWith("the proxy refused to read its buffer")
		return dst[:l], false
	}
	c.copied += int64(n)
	return dst, true
}

// ---- what one callback forwards ----

// outBuf collects what one callback forwards: ranges of the proxy's buffer and bytes
// the filter wrote, in order.
type outBuf struct {
	ops   []outOp
	arena []byte
}

// outOp is a range of the buffer [a, b) or, when own, arena[a:b].
type outOp struct {
	a, b int
	own  bool
}

func (o *outBuf) reset() { o.ops, o.arena = o.ops[:0], o.arena[:0] }

// host forwards buffer bytes [a, b).
func (o *outBuf) host(a, b int) {
	if a >= b {
		return
	}
	if n := len(o.ops); n > 0 && !o.ops[n-1].own && o.ops[n-1].b == a {
		o.ops[n-1].b = b
		return
	}
	o.ops = append(o.ops, outOp{a: a, b: b})
}

// own forwards p (copied).
func (o *outBuf) own(p []byte) {
	if len(p) == 0 {
		return
	}
	a := len(o.arena)
	o.arena = append(o.arena, p...)
	if n := len(o.ops); n > 0 && o.ops[n-1].own && o.ops[n-1].b == a {
		o.ops[n-1].b = len(o.arena)
		return
	}
	o.ops = append(o.ops, outOp{a: a, b: len(o.arena), own: true})
}

// action turns the callback's output into what the proxy does with a buffer of n
// bytes: forward it as is, replace a prefix (the filter's bytes, then the buffer
// from some offset to its end), or, when neither fits, replace all of it.
func (c *Conn) action(n int) Action {
	o := &c.out
	k := len(o.ops)
	if k == 1 && !o.ops[0].own && o.ops[0].a == 0 && o.ops[0].b == n {
		return Action{Close: c.closed}
	}
	// The filter's bytes, then the buffer from some offset to its end.
	prefixEnd := 0
	for prefixEnd < k && o.ops[prefixEnd].own {
		prefixEnd++
	}
	if prefixEnd == k-1 && o.ops[k-1].b == n || prefixEnd == k && n == 0 {
		drain := 0
		if prefixEnd < k {
			drain = o.ops[k-1].a
		}
		var p []byte
		if prefixEnd > 0 {
			p = o.arena[o.ops[0].a:o.ops[prefixEnd-1].b]
		}
		return Action{Edit: true, Drain: drain, Prefix: p, Close: c.closed}
	}
	// Anything else is written whole, in a buffer the next callback reuses.
	all := c.whole[:0]
	for _, op := range o.ops {
		if op.own {
			all = append(all, o.arena[op.a:op.b]...)
			continue
		}
		var ok bool
		if all, ok = c.readInto(all, op.a, op.b-op.a); !ok {
			return Action{Close: true}
		}
	}
	if cap(all) <= 64<<10 {
		c.whole = all[:0] // a held frame's larger buffer is not kept for the connection's life
	}
	return Action{Edit: true, Drain: n, Prefix: all, Close: c.closed}
}

// ---- the state machine ----

// mayHoldRequests reports whether the filter may have to change a request, so that
// none may be forwarded before its head is read.
func (c *Conn) mayHoldRequests() bool {
	s := c.f.s
	return s.pol != nil || s.allowList || len(s.denied) > 0 || s.rules != nil || s.tenant != nil
}

// mayHoldResponses reports whether a response now expected may be one the filter
// changes, so that none may be forwarded before its head is read.
func (c *Conn) mayHoldResponses() bool {
	for i := range c.pending {
		if k := c.pending[i].kind; k != kindPass && k != kindTags || c.pending[i].tenant {
			return true
		}
	}
	return false
}

// run handles one callback's buffer for direction d.
func (c *Conn) run(d *dir, b Buffer, endOfStream bool) Action {
	n := b.Len()
	c.out.reset()
	if !c.winKept || c.win.n != n {
		c.win = window{b: b, n: n, buf: c.win.buf}
	}
	c.winKept = false
	if c.closed {
		return Action{Edit: true, Drain: n, Close: true}
	}
	if c.closeDue {
		c.closeWith(c.closeMsg)
		return Action{Edit: true, Drain: n, Close: true}
	}
	if d.discard {
		d.base += n
		return Action{Edit: true, Drain: n}
	}
	pos := 0
	if d.paused {
		pos = d.resume
		d.paused = false
	}
	if d.mode == modeHead && pos == 0 && len(d.head) == 0 && !c.f.noQuick {
		// The buffer starts with a frame's head: the common cases first (see
		// quickResponse and quickProduce).
		if !d.request {
			if c.quickResponse(d, n) {
				return Action{}
			}
		} else if c.quickProduce(d, n) {
			if d.mode == modeDecide {
				pos = c.decide(d, 0, n)
			} else {
				pos = c.produceRulesHead(d, 0, n)
			}
			if d.paused {
				return c.pause(d, pos, n, endOfStream)
			}
			if d.mode == modePass && pos == 0 && len(c.out.ops) == 0 && !c.closed && d.frameEnd-d.base >= n {
				// It streams, and fills the buffer: forwarded as it is.
				d.base += n
				if d.base == d.frameEnd {
					d.mode = modeHead
				}
				return Action{}
			}
		}
	}
	for pos < n && !c.closed && !d.discard {
		s := d.base + pos // stream offset at pos
		switch d.mode {
		case modePass, modeDrop:
			k := min(d.frameEnd-s, n-pos)
			if d.mode == modePass {
				c.out.host(pos, pos+k)
			}
			pos += k
			if d.base+pos == d.frameEnd {
				d.mode = modeHead
			}
		case modeHead:
			pos = c.head(d, pos, n)
		case modeHold:
			pos = c.hold(d, pos, n)
		case modeDecide:
			pos = c.decide(d, pos, n)
		case modeTenant:
			pos = c.tenantProduce(d, pos, n)
		case modeRules:
			pos = c.produceRules(d, pos, n)
		case modeRulesHead:
			pos = c.produceRulesHead(d, pos, n)
		case modeWalk:
			pos = c.walkResponse(d, pos, n)
		case modeTail:
			pos = c.collectTail(d, pos, n)
		}
		if d.paused {
			return c.pause(d, pos, n, endOfStream)
		}
	}
	act := c.action(n)
	d.base += n
	return act
}

// pause is what a callback returns when the request being held starts the buffer
// and needs more bytes: the proxy keeps the whole buffer (or, at the end of the
// stream, the connection closes).
func (c *Conn) pause(d *dir, pos, n int, endOfStream bool) Action {
	if endOfStream {
		// Nothing more comes: the request held is incomplete, and goes nowhere.
		d.paused = false
		c.closeWith("the client closed its side in the middle of a request")
		return Action{Edit: true, Drain: n, Close: true}
	}
	// The frame being held starts the buffer: keep all of it.
	d.resume = pos
	return Action{Pause: true}
}

// quickProduce is run's path for a buffer of client bytes that starts with the head
// of a Produce request the filter decides on as it streams (under a schema policy, or
// rules on its head only): it does what head and requestHead do for it, and leaves
// the request to decide (or produceRulesHead). It reports false, having changed
// nothing, for any other buffer.
func (c *Conn) quickProduce(d *dir, n int) bool {
	mode := c.f.quickProduce
	if mode == modeHead || n < reqHeadLen {
		return false
	}
	_, size, ok := c.produceAt0()
	if !ok {
		return false // the window read stays valid for head, which reports any failure
	}
	c.f.countRequest(apiProduce)
	d.mode = mode
	if mode == modeDecide {
		d.decision = decideUnknown
		d.topics, d.acks, d.parts = -1, -1, 0
		d.bodyAt = -1
	}
	d.frameAt, d.frameEnd = d.base, d.base+size
	d.stash = d.stash[:0]
	d.inHost = true // the request starts the buffer: the proxy holds it
	return true
}

// headRepeats reports whether the head of the Produce request whose first bytes are h
// (its body's head ending at frame offset end, where its topics start) is the last
// head the rules passed: produceRulesHead's key of the request, compared in place.
func (c *Conn) headRepeats(h []byte, end int) bool {
	p := c.headPassed
	k := 4 + end - 12
	// The api key and version as one word: no call, where bytes.Equal makes two.
	if len(p) < k || binary.BigEndian.Uint32(p) != binary.BigEndian.Uint32(h[4:]) || !bytes.Equal(p[4:k], h[12:end]) {
		return false
	}
	if int16(binary.BigEndian.Uint16(h[6:])) >= 9 {
		return string(p[k:]) == "\x01\x00"
	}
	return string(p[k:]) == "\x00\x00\x00\x00"
}

// produceAt0 reads the head of the frame that starts the buffer: when it is a Produce
// request at a version the filter knows, of a size it accepts, ok is true, size is
// the whole frame's and h the window read (at least reqHeadLen bytes).
func (c *Conn) produceAt0() (h []byte, size int, ok bool) {
	h = c.at(0, reqHeadLen)
	if len(h) < reqHeadLen {
		return nil, 0, false
	}
	size = int(int32(binary.BigEndian.Uint32(h)))
	if int16(binary.BigEndian.Uint16(h[4:])) != apiProduce || !c.f.produceReq.ValidVersion(int16(binary.BigEndian.Uint16(h[6:]))) ||
		size < reqHeadLen-4 || size > c.f.s.maxFrame {
		return nil, 0, false
	}
	return h, 4 + size, true
}

// quickResponse is run's path for the most common buffer of broker bytes: it starts
// with the head of the response to the oldest pending request, one the filter only
// counts and times, and that response goes on to the buffer's end or past it. It
// does what head, responseHead and the forwarding loop do for such a buffer (the same
// read, metrics and state), in fewer steps: inside a VM most of a callback's cost is
// the code it runs. It reports false, having changed nothing, for any other buffer.
func (c *Conn) quickResponse(d *dir, n int) bool {
	if len(c.pending) == 0 || n < respHeadLen {
		return false
	}
	p := &c.pending[0]
	switch {
	case p.key < 0 || p.tenant:
		return false
	case p.kind == kindPass:
	case p.kind == kindProduce && len(p.rejected) == 0 && c.f.s.brokers == nil:
	default:
		return false
	}
	h := c.at(0, respHeadLen)
	if len(h) < respHeadLen {
		return false // head reads it again and reports the failure
	}
	size := int(int32(binary.BigEndian.Uint32(h)))
	if int32(binary.BigEndian.Uint32(h[4:])) != p.corr || size < 4 || size > c.f.s.maxFrame || 4+size < n {
		return false // the window read stays valid for head
	}
	c.f.countResponse(p.key, p.start)
	d.cur = *p
	if len(c.pending) == 1 {
		c.pending = c.pending[:0] // no copy: a call less
	} else {
		c.pending = c.pending[:copy(c.pending, c.pending[1:])]
	}
	d.frameAt, d.frameEnd = d.base, d.base+4+size
	d.base += n
	d.mode = modePass
	if d.base == d.frameEnd {
		d.mode = modeHead
	}
	return true
}

// head reads the head of the frame at pos and decides what to do with it.
func (c *Conn) head(d *dir, pos, n int) int {
	headLen := respHeadLen
	if d.request {
		headLen = reqHeadLen
	}
	s := d.base + pos
	var h []byte
	if len(d.head) == 0 && n-pos >= headLen {
		h = c.at(pos, headLen)[:headLen]
		d.frameAt = s
	} else {
		if len(d.head) == 0 {
			d.frameAt = s
			d.headSent = false
		}
		k := min(headLen-len(d.head), n-pos)
		hold := d.request && c.mayHoldRequests() || !d.request && c.mayHoldResponses()
		if len(d.head) == 0 && k < headLen && hold && pos == 0 && d.request {
			d.paused = true // the proxy keeps the partial head
			return pos
		}
		var ok bool
		if d.head, ok = c.readInto(d.head, pos, k); !ok {
			return n
		}
		if !hold {
			c.out.host(pos, pos+k)
			d.headSent = true
		}
		pos += k
		if len(d.head) < headLen {
			return pos
		}
		h = d.head
	}
	size := int(int32(binary.BigEndian.Uint32(h)))
	if d.request {
		c.requestHead(d, h, size)
	} else {
		c.responseHead(d, h, size)
	}
	if c.closed {
		return n
	}
	d.frameEnd = d.frameAt + 4 + size
	if len(d.head) > 0 {
		// The head was assembled from earlier callbacks: its bytes are forwarded now
		// if the frame streams, or start the frame the filter holds.
		switch d.mode {
		case modePass, modeWalk:
			if !d.headSent {
				c.out.own(d.head)
			}
		case modeDrop:
		default:
			d.stash = append(d.stash[:0], d.head...)
			d.inHost = false
		}
		d.head = d.head[:0]
		if (d.mode == modePass || d.mode == modeDrop) && d.base+pos >= d.frameEnd {
			d.mode = modeHead
		}
		return pos
	}
	// The head is in this buffer at pos and has not been forwarded.
	switch d.mode {
	case modeHold, modeDecide, modeTenant, modeRules, modeRulesHead:
		// Held by the proxy when the frame starts the buffer (requests), in the filter
		// otherwise: hold and decide read it from pos.
		d.stash = d.stash[:0]
		d.inHost = d.request && pos == 0
	}
	return pos
}

// frameSizeOK checks a frame's size prefix.
func (c *Conn) frameSizeOK(size, min int, what string) bool {
	if size < min || size > c.f.s.maxFrame {
		c.f.inc(c.f.mReqFailure, 1)
		c.closeWith(what + " frame size " + strconv.Itoa(size) + " outside " + strconv.Itoa(min) + ".." + strconv.Itoa(c.f.s.maxFrame))
		return false
	}
	return true
}

func (c *Conn) requestHead(d *dir, h []byte, size int) {
	if !c.frameSizeOK(size, reqHeadLen-4, "request") {
		return
	}
	key := int16(binary.BigEndian.Uint16(h[4:]))
	ver := int16(binary.BigEndian.Uint16(h[6:]))
	corr := int32(binary.BigEndian.Uint32(h[8:]))
	s := c.f.s
	api, known := codec.LookupAPI(key)
	if !known || !api.Request.ValidVersion(ver) {
		c.f.inc(c.f.mReqUnknown, 1)
		if s.tenant != nil {
			c.f.inc(c.f.mTenantRefused, 1)
			c.closeWith("api key " + strconv.Itoa(int(key)) + " v" + strconv.Itoa(int(ver)) + " is unknown to the filter and cannot be mapped for the tenant")
			return
		}
		if !known && s.allowList || known && s.isDenied(key) {
			c.closeWith("denied api key " + strconv.Itoa(int(key)) + " v" + strconv.Itoa(int(ver)) + " cannot be answered (version unknown to the filter)")
			return
		}
		if key == apiProduce && s.pol != nil && s.pol.Enforces() {
			c.f.inc(c.f.mReqRefused, 1)
			c.closeWith("Produce v" + strconv.Itoa(int(ver)) + " is unknown to the filter and the schema policy enforces")
			return
		}
		// Forward it as is; its response is matched and counted as unknown.
		c.pending = append(c.pending, pend{corr: corr, key: -1, ver: ver, start: c.f.host.NowNanos()})
		d.mode = modePass
		return
	}
	c.f.countRequest(key)
	if s.held(key) {
		d.mode = modeHold
		if key == apiProduce {
			d.mode = s.produceMode // modeRules, modeRulesHead or modeHold (settings)
		}
		return
	}
	if s.tenant != nil && tenant.RequestNames(key, ver) {
		d.mode = modeHold
		if key == apiProduce && s.pol == nil {
			d.mode = modeTenant // its names are in its first bytes: the records stream
		}
		return
	}
	if key == apiProduce && s.pol != nil {
		d.mode = modeDecide
		d.decision = decideUnknown
		d.topics, d.acks, d.parts = -1, -1, 0
		d.bodyAt = -1
		return
	}
	c.pending = append(c.pending, c.pendFor(key, ver, corr, c.f.host.NowNanos()))
	d.mode = modePass
}

// pendFor is the pending entry of a request forwarded as it is: what its response
// needs from the filter.
func (c *Conn) pendFor(key, ver int16, corr int32, start int64) pend {
	s := c.f.s
	p := pend{corr: corr, key: key, ver: ver, start: start, tenant: s.tenant != nil && tenant.ResponseNames(key, ver), consumer: c.consumerReq}
	c.consumerReq = false
	switch key {
	case apiProduce:
		// No policy: only its response's node endpoints (v10+) may change.
		if s.brokers != nil && ver >= 10 {
			p.kind = kindProduce
		}
	case apiMetadata:
		if s.brokers != nil || s.learnTopicID {
			p.kind = kindMetadata
		}
	case apiFindCoordinator:
		if s.brokers != nil {
			p.kind = kindFindCoord
		}
	case apiDescribeCluster:
		if s.brokers != nil {
			p.kind = kindDescCluster
		}
	case apiApiVersions:
		if s.maxProduceV >= 0 || s.tenant != nil {
			p.kind = kindApiVersions
		}
	case apiFetch, apiShareFetch, apiShareAcknowledge:
		// Their responses name the leaders' endpoints (Fetch from v16).
		switch {
		case s.brokers == nil || key == apiFetch && ver < 16:
		case key != apiFetch:
			p.kind = kindAddresses // their endpoints are not in the tag section: held whole
		case s.fetchEndpoints == endpointsInPlace:
			p.kind = kindTags
		case s.fetchEndpoints == endpointsHold:
			p.kind = kindAddresses
		}
	}
	return p
}

func (c *Conn) responseHead(d *dir, h []byte, size int) {
	if !c.frameSizeOK(size, 4, "response") {
		return
	}
	corr := int32(binary.BigEndian.Uint32(h[4:]))
	idx := -1
	for j := range c.pending {
		if c.pending[j].corr == corr {
			idx = j
			break
		}
	}
	d.mode = modePass
	if idx < 0 {
		c.f.inc(c.f.mRespUnknown, 1)
		c.f.host.Log(LevelDebug, "kwire: response with correlation id "+strconv.Itoa(int(corr))+" matches no pending request")
		return
	}
	if idx > 0 {
		// Requests the broker did not answer (it never answers acks=0 Produce).
		c.f.host.Log(LevelDebug, "kwire: "+strconv.Itoa(idx)+" pending requests were not answered")
	}
	p := c.pending[idx]
	c.pending = c.pending[:copy(c.pending, c.pending[idx+1:])]
	if p.kind == kindClose {
		// Every response before it has gone to the client. When bytes of one go in this
		// callback, the close waits for the connection's next callback: Envoy closes
		// before it writes the bytes of the callback that asked (proxy_close_stream runs
		// after the VM call, and a close with nothing buffered yet is immediate).
		if len(c.out.ops) == 0 {
			c.closeWith(c.closeMsg)
			return
		}
		c.closeDue = true
		d.mode = modeDrop
		return
	}
	if p.key < 0 {
		c.f.inc(c.f.mRespUnknown, 1)
		return
	}
	c.f.countResponse(p.key, p.start)
	d.cur = p
	if p.tenant && p.kind != kindReplace {
		d.mode = modeHold // its names are stripped
		return
	}
	switch p.kind {
	case kindPass:
		return
	case kindReplace:
		c.out.own(p.synth)
		d.mode = modeDrop
		return
	case kindProduce:
		if len(p.rejected) == 0 && c.f.s.brokers == nil {
			return
		}
	case kindTags:
		d.mode = modeWalk
		d.bodyAt, d.tailAt, d.carry = -1, -1, d.carry[:0]
		return
	}
	d.mode = modeHold
}

// ---- frames the filter needs whole ----

// hold gathers a frame the filter needs whole, then handles it.
func (c *Conn) hold(d *dir, pos, n int) int {
	size := d.frameEnd - d.frameAt
	if d.inHost {
		// The frame starts the buffer (pos 0) and the proxy holds it.
		if n < size {
			d.paused = true
			return 0
		}
		frame, ok := c.readInto(d.stash[:0], 0, size)
		if !ok {
			return n
		}
		d.stash = frame
		c.frame(d, frame, 0)
		d.inHost = false
		d.stash = d.stash[:0]
		d.mode = modeHead
		return size
	}
	k := min(size-len(d.stash), n-pos)
	var ok bool
	if d.stash, ok = c.readInto(d.stash, pos, k); !ok {
		return n
	}
	pos += k
	if len(d.stash) == size {
		c.frame(d, d.stash, -1)
		d.stash = d.stash[:0]
		d.mode = modeHead
	}
	return pos
}

// frame handles one whole frame; at is its buffer offset, or -1 when it was
// gathered in the filter.
func (c *Conn) frame(d *dir, frame []byte, at int) {
	forward := func() {
		if at >= 0 {
			c.out.host(at, at+len(frame))
		} else {
			c.out.own(frame)
		}
	}
	if d.request {
		c.requestFrame(frame, at)
		return
	}
	if d.cur.tenant {
		mapped, ok := c.tenantResponse(&d.cur, frame)
		if !ok {
			return
		}
		if d.cur.kind == kindPass {
			c.out.own(mapped) // nothing else to change in it
			return
		}
		frame, at = mapped, -1
	}
	out, err := c.rewriteResponse(&d.cur, frame)
	if err != nil {
		c.f.inc(c.f.mRespFailure, 1)
		c.f.host.Log(LevelWarn, "kwire: response "+apiVersionName(d.cur.key, d.cur.ver)+" forwarded unchanged: "+err.Error())
		forward()
		return
	}
	if out == nil {
		forward()
		return
	}
	c.out.own(out)
}

// requestFrame handles a whole request the filter held (a denied request, one under
// rules, a Produce under the schema policy, one whose names a tenant maps); at is its
// buffer offset, or -1 when it was gathered in the filter.
func (c *Conn) requestFrame(frame []byte, at int) {
	key := int16(binary.BigEndian.Uint16(frame[4:]))
	ver := int16(binary.BigEndian.Uint16(frame[6:]))
	corr := int32(binary.BigEndian.Uint32(frame[8:]))
	hlen, err := codec.RequestHeaderLen(frame)
	if err != nil {
		c.f.inc(c.f.mReqFailure, 1)
		c.closeWith("request header: " + err.Error())
		return
	}
	now := c.f.host.NowNanos()
	if c.f.s.isDenied(key) {
		c.f.inc(c.f.mDenied, 1)
		synth, err := c.f.denyResponse(frame, key)
		if err != nil {
			c.f.inc(c.f.mReqRefused, 1)
			c.closeWith("denied " + apiVersionName(key, ver) + ": " + err.Error())
			return
		}
		if synth == nil { // acks=0 Produce: no response expected
			c.closeAfterAnswers(corr, now, "denied "+apiVersionName(key, ver)+" with acks=0")
			return
		}
		c.substitute(corr, key, ver, now, synth)
		return
	}
	s := c.f.s
	if s.rules != nil && s.rules.Applies(key) && c.ruleRefused(frame, key, ver, corr, now) {
		return
	}
	if key != apiProduce || s.pol == nil {
		if c.emitRequest(frame, at, hlen, key, ver, corr, now) {
			c.pending = append(c.pending, c.pendFor(key, ver, corr, now))
		}
		return
	}
	// Produce under the schema policy.
	act := c.f.checkProduce(frame, hlen, ver)
	tenantResp := s.tenant != nil && tenant.ResponseNames(key, ver)
	switch {
	case act.refuse != "":
		c.f.inc(c.f.mReqRefused, 1)
		c.closeWith(act.refuse)
	case act.forwardAsIs:
		if c.emitRequest(frame, at, hlen, key, ver, corr, now) && act.acks != 0 {
			c.pending = append(c.pending, pend{corr: corr, key: key, ver: ver, start: now, kind: kindProduce, tenant: tenantResp})
		}
	case act.rewritten != nil:
		if !c.emitRequest(act.rewritten, -1, hlen, key, ver, corr, now) {
			return
		}
		if act.acks == 0 {
			c.closeAfterAnswers(corr, now, apiVersionName(key, ver)+" with acks=0 had partitions the schema policy rejected")
			return
		}
		c.pending = append(c.pending, pend{corr: corr, key: key, ver: ver, start: now, kind: kindProduce, rejected: act.rejected, tenant: tenantResp})
	default: // every partition rejected
		if act.acks == 0 {
			c.closeAfterAnswers(corr, now, apiVersionName(key, ver)+" with acks=0 had partitions the schema policy rejected")
			return
		}
		synth, err := produceErrorResponse(corr, ver, act.rejected)
		if err != nil {
			c.f.inc(c.f.mReqRefused, 1)
			c.closeWith("building the Produce response: " + err.Error())
			return
		}
		c.substitute(corr, key, ver, now, synth)
	}
}

// ruleRefused checks a request against the configured rules and, when it breaks one
// (or cannot be read: the rules fail closed), answers it in its api's own shape with
// the rule's message, or closes the connection where the response has no field for
// the error (and, as the broker does, after an acks=0 Produce, which has no
// response); it reports whether the request was refused.
func (c *Conn) ruleRefused(frame []byte, key, ver int16, corr int32, now int64) bool {
	s := c.f.s
	r, err := s.rules.CheckFrame(frame, s.ruleCode)
	if err == nil && r == nil {
		return false
	}
	c.f.inc(c.f.mRuleRefused, 1)
	what := apiVersionName(key, ver)
	if err != nil || r.Place == rules.Nowhere {
		msg := "its header could not be read: "
		if err == nil {
			msg = r.Message + "; its response has no field for the error"
		} else {
			msg += err.Error()
		}
		c.f.inc(c.f.mRuleClosed, 1)
		c.closeWith(what + " refused by a rule (" + msg + ")")
		return true
	}
	if r.Response == nil { // an acks=0 Produce: the client reads no response
		c.f.inc(c.f.mRuleClosed, 1)
		c.closeAfterAnswers(corr, now, what+" with acks=0 refused by a rule ("+r.Message+")")
		return true
	}
	c.f.host.Log(LevelDebug, "kwire: "+what+" refused by a rule: "+r.Message)
	c.substitute(corr, key, ver, now, r.Response)
	return true
}

// emitRequest forwards a whole request the filter held: as it is (from the proxy's
// buffer when at >= 0), or under a tenant with its entity names prefixed. A request
// the tenant may not send is answered here as a denied one is (or the connection
// closed); it reports whether the request went to the broker.
func (c *Conn) emitRequest(frame []byte, at, hlen int, key, ver int16, corr int32, now int64) bool {
	s := c.f.s
	if s.tenant == nil || !tenant.RequestNames(key, ver) {
		if at >= 0 {
			c.out.host(at, at+len(frame))
		} else {
			c.out.own(frame)
		}
		return true
	}
	if c.session == nil {
		c.session = s.tenant.NewSession()
	}
	buf := append(c.f.frameBuf[:0], frame[:hlen]...)
	buf, n, err := c.session.Request(buf, frame[hlen:], key, ver)
	c.f.frameBuf = buf[:0]
	if err != nil {
		what := apiVersionName(key, ver) // only here: a string built per message costs in the VM
		c.f.inc(c.f.mTenantRefused, 1)
		if !errors.Is(err, tenant.ErrRefused) {
			c.f.inc(c.f.mReqFailure, 1)
			c.closeWith(what + " cannot be mapped for the tenant: " + err.Error())
			return false
		}
		c.f.host.Log(LevelDebug, "kwire: "+what+" "+err.Error())
		synth, derr := c.f.denyResponse(frame, key)
		if derr != nil {
			c.closeWith(what + " " + err.Error() + "; no error response: " + derr.Error())
			return false
		}
		if synth == nil { // an acks=0 Produce
			c.closeAfterAnswers(corr, now, what+" with acks=0 "+err.Error())
			return false
		}
		c.substitute(corr, key, ver, now, synth)
		return false
	}
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	c.out.own(buf)
	if n.Renamed > 0 {
		c.f.inc(c.f.mTenantReq, 1)
	}
	c.consumerReq = n.ConsumerGroup
	return true
}

// tenantResponse strips the tenant's prefix from a response's names and leaves out
// the list elements of other tenants; a response the tenant must not see closes the
// connection (fails closed: nothing of it is forwarded).
func (c *Conn) tenantResponse(p *pend, frame []byte) ([]byte, bool) {
	s := c.f.s
	hlen, err := codec.ResponseHeaderLen(frame, p.key, p.ver)
	if err != nil {
		c.f.inc(c.f.mRespFailure, 1)
		c.closeWith("response " + apiVersionName(p.key, p.ver) + ": " + err.Error())
		return nil, false
	}
	if c.session == nil {
		c.session = s.tenant.NewSession()
	}
	buf := append(c.f.frameBuf[:0], frame[:hlen]...)
	buf, n, err := c.session.Response(buf, frame[hlen:], p.key, p.ver, p.consumer)
	c.f.frameBuf = buf[:0]
	if err != nil {
		c.f.inc(c.f.mTenantRefused, 1)
		if !errors.Is(err, tenant.ErrRefused) {
			c.f.inc(c.f.mRespFailure, 1)
		}
		c.closeWith("response " + apiVersionName(p.key, p.ver) + " cannot be mapped for the tenant: " + err.Error())
		return nil, false
	}
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	if n.Renamed > 0 || n.Hidden > 0 {
		c.f.inc(c.f.mTenantResp, 1)
	}
	c.f.inc(c.f.mTenantHidden, n.Hidden)
	return buf, true
}

// substitute sends the broker an ApiVersions v0 request in place of a request
// the filter answers, and queues synth as the response to send in its place.
func (c *Conn) substitute(corr int32, key, ver int16, now int64, synth []byte) {
	c.f.inc(c.f.mSubstitu, 1)
	c.apiVersionsV0(corr)
	c.pending = append(c.pending, pend{corr: corr, key: key, ver: ver, start: now, kind: kindReplace, synth: synth})
}

// closeAfterAnswers answers a refused request that expects no response (an acks=0
// Produce) as Kafka's broker answers a failed one: the connection closes, after the
// responses to the requests before it, and nothing the client sends after it reaches
// the broker (the broker reads no further). An ApiVersions v0 request sent in its
// place keeps the order: when its response comes, dropped, the connection closes.
func (c *Conn) closeAfterAnswers(corr int32, now int64, why string) {
	c.f.host.Log(LevelDebug, "kwire: "+why+"; the connection closes after the responses before it")
	c.closeMsg = why
	c.req.discard = true
	c.apiVersionsV0(corr)
	c.pending = append(c.pending, pend{corr: corr, key: apiApiVersions, start: now, kind: kindClose})
}

// apiVersionsV0 sends the broker an ApiVersions v0 request with correlation id corr.
func (c *Conn) apiVersionsV0(corr int32) {
	var b [14]byte
	binary.BigEndian.PutUint32(b[0:], 10)
	binary.BigEndian.PutUint16(b[4:], apiApiVersions)
	binary.BigEndian.PutUint16(b[6:], 0)
	binary.BigEndian.PutUint32(b[8:], uint32(corr))
	binary.BigEndian.PutUint16(b[12:], 0xffff) // null client id
	c.out.own(b[:])
}
