package kafkafilter

import (
	"encoding/binary"
	"strconv"

	"github.com/kwire/kwire/codec"
)

// Conn follows one Kafka connection. Downstream carries client bytes toward the
// broker, Upstream broker bytes toward the client. Each call consumes every byte it
// is given and returns what to forward; bytes of a frame not yet complete stay in
// the Conn (or, downstream, in the proxy's buffer: see DownstreamWait).
//
// Frames the filter needs whole (Produce requests, denied requests, responses it
// rewrites) are buffered up to the frame limit; every other frame streams through
// as soon as its header is read, so a large Fetch response is never held.
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
	closed  bool
	done    bool
	out     outBuf
}

// dir is the parsing state of one direction.
type dir struct {
	mode   int
	remain int    // modePass, modeDrop: bytes left of the current frame
	need   int    // modeFrame: length of the frame being buffered
	stash  []byte // bytes of the current head or frame not yet handled
	cur    pend   // upstream: the request the current response answers
}

const (
	modeHead = iota
	modePass
	modeDrop
	modeFrame
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
	kindAddresses                   // rewrite node endpoints (Fetch, share groups)
)

// pend is a request forwarded upstream whose response is expected.
type pend struct {
	corr     int32
	key, ver int16
	start    int64
	kind     pendKind
	rejected []rejectedTopic // kindProduce: partitions answered by the filter
	synth    []byte          // kindReplace: the response frame to send
}

// Output is the result of one call: the bytes to forward, and whether the
// connection must be closed (after forwarding them).
type Output struct {
	Data []byte
	// Same is set when Data is exactly the input: the proxy need not replace its buffer.
	Same  bool
	Close bool
}

// outBuf collects what one call forwards, aliasing the input while it can.
type outBuf struct {
	in   []byte
	b    []byte
	same bool
	pos  int
}

func (o *outBuf) reset(in []byte) {
	o.in, o.b, o.same, o.pos = in, o.b[:0], true, 0
}

func (o *outBuf) materialize() {
	if o.same {
		o.same = false
		o.b = append(o.b[:0], o.in[:o.pos]...)
	}
}

// emitIn forwards in[i:j].
func (o *outBuf) emitIn(i, j int) {
	if o.same && i == o.pos {
		o.pos = j
		return
	}
	o.materialize()
	o.b = append(o.b, o.in[i:j]...)
}

// emit forwards p (copied).
func (o *outBuf) emit(p []byte) {
	if len(p) == 0 {
		return
	}
	o.materialize()
	o.b = append(o.b, p...)
}

func (o *outBuf) result(close bool) Output {
	if o.same {
		return Output{Data: o.in[:o.pos], Same: o.pos == len(o.in), Close: close}
	}
	return Output{Data: o.b, Close: close}
}

// DownstreamWait reports whether n more downstream bytes still cannot complete
// what the filter is waiting for (a request head, or a request it needs whole).
// The proxy may then keep the bytes buffered (Envoy's StopIteration) and call
// Downstream later with all of them, which saves copying them into the Conn.
func (c *Conn) DownstreamWait(n int) bool {
	if c.closed {
		return false
	}
	switch c.req.mode {
	case modeHead:
		return len(c.req.stash)+n < reqHeadLen
	case modeFrame:
		return len(c.req.stash)+n < c.req.need
	}
	return false
}

// HeadLen is how many bytes DownstreamWaitFrame wants to see.
const HeadLen = reqHeadLen

// BetweenFrames reports whether the filter holds no part of a request: only then
// can DownstreamWaitFrame tell anything from the head of the proxy's buffer, so a
// proxy need not read the head otherwise.
func (c *Conn) BetweenFrames() bool {
	return !c.closed && c.req.mode == modeHead && len(c.req.stash) == 0
}

// DownstreamWaitFrame refines DownstreamWait when the filter is between frames:
// given the first HeadLen bytes of the proxy's buffer (head) and its length n, it
// reports whether the request starting there is one the filter needs whole
// (Produce, or a denied api key) and n bytes do not complete it yet. The proxy can
// then keep buffering without handing the bytes over, so a large request arriving
// in many reads is read once.
func (c *Conn) DownstreamWaitFrame(head []byte, n int) bool {
	if c.closed || c.req.mode != modeHead || len(c.req.stash) != 0 || len(head) < reqHeadLen {
		return false
	}
	size := int(int32(binary.BigEndian.Uint32(head)))
	if size < reqHeadLen-4 || size > c.f.s.maxFrame {
		return false
	}
	key := int16(binary.BigEndian.Uint16(head[4:]))
	if key != apiProduce && !c.f.s.isDenied(key) {
		return false
	}
	return n < 4+size
}

// Closed reports whether the filter has asked for the connection to be closed.
func (c *Conn) Closed() bool { return c.closed }

// Done releases the connection's state (the proxy closed it).
func (c *Conn) Done() {
	if c.done {
		return
	}
	c.done = true
	c.f.host.IncrementMetric(c.f.mConnActive, -1)
	c.pending, c.req.stash, c.resp.stash, c.out.b = nil, nil, nil, nil
}

func (c *Conn) closeWith(msg string) {
	if !c.closed {
		c.f.host.Log(LevelWarn, "kwire: closing the connection: "+msg)
	}
	c.closed = true
}

// Downstream consumes client bytes and returns what to forward to the broker.
func (c *Conn) Downstream(data []byte, endOfStream bool) Output {
	c.out.reset(data)
	if c.closed {
		c.out.pos = 0
		return Output{Close: true}
	}
	c.run(&c.req, data, true)
	return c.out.result(c.closed)
}

// Upstream consumes broker bytes and returns what to forward to the client.
func (c *Conn) Upstream(data []byte, endOfStream bool) Output {
	c.out.reset(data)
	if c.closed {
		return Output{Close: true}
	}
	c.run(&c.resp, data, false)
	return c.out.result(c.closed)
}

// run walks data through one direction's state machine.
func (c *Conn) run(d *dir, data []byte, request bool) {
	headLen := respHeadLen
	if request {
		headLen = reqHeadLen
	}
	i := 0
	for i < len(data) && !c.closed {
		switch d.mode {
		case modePass, modeDrop:
			n := min(d.remain, len(data)-i)
			if d.mode == modePass {
				c.out.emitIn(i, i+n)
			}
			d.remain -= n
			i += n
			if d.remain == 0 {
				d.mode = modeHead
			}
		case modeHead:
			if len(d.stash) == 0 && len(data)-i >= headLen {
				c.head(d, data[i:i+headLen], request)
				continue
			}
			take := min(headLen-len(d.stash), len(data)-i)
			d.stash = append(d.stash, data[i:i+take]...)
			i += take
			if len(d.stash) < headLen {
				continue
			}
			c.head(d, d.stash, request)
			// The stashed head bytes belong to the frame now being handled.
			switch d.mode {
			case modePass:
				c.out.emit(d.stash)
				d.remain -= len(d.stash)
				d.stash = d.stash[:0]
			case modeDrop:
				d.remain -= len(d.stash)
				d.stash = d.stash[:0]
			}
			if (d.mode == modePass || d.mode == modeDrop) && d.remain == 0 {
				d.mode = modeHead
			}
		case modeFrame:
			if len(d.stash) == 0 && len(data)-i >= d.need {
				frame := data[i : i+d.need]
				c.frame(d, frame, i, request)
				i += len(frame)
				d.mode = modeHead
				continue
			}
			take := min(d.need-len(d.stash), len(data)-i)
			d.stash = append(d.stash, data[i:i+take]...)
			i += take
			if len(d.stash) == d.need {
				c.frame(d, d.stash, -1, request)
				d.stash = d.stash[:0]
				d.mode = modeHead
			}
		}
	}
}

// head decides what to do with the frame whose first bytes are h.
func (c *Conn) head(d *dir, h []byte, request bool) {
	size := int(int32(binary.BigEndian.Uint32(h)))
	if request {
		c.requestHead(d, h, size)
	} else {
		c.responseHead(d, h, size)
	}
}

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
		d.mode, d.remain = modePass, 4+size
		return
	}
	c.f.countRequest(key)
	if s.isDenied(key) || key == apiProduce {
		d.mode, d.need = modeFrame, 4+size
		return
	}
	p := pend{corr: corr, key: key, ver: ver, start: c.f.host.NowNanos()}
	switch key {
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
		if s.maxProduceV >= 0 {
			p.kind = kindApiVersions
		}
	case apiFetch, apiShareFetch, apiShareAcknowledge:
		// Their responses name the leaders' endpoints (Fetch from v16).
		if s.brokers != nil && (key != apiFetch || ver >= 16) {
			p.kind = kindAddresses
		}
	}
	c.pending = append(c.pending, p)
	d.mode, d.remain = modePass, 4+size
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
	d.mode, d.remain = modePass, 4+size
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
	c.pending = c.pending[idx+1:]
	if p.key < 0 {
		c.f.inc(c.f.mRespUnknown, 1)
		return
	}
	c.f.countResponse(p.key, p.start)
	switch p.kind {
	case kindPass:
		return
	case kindReplace:
		c.out.emit(p.synth)
		d.mode = modeDrop
		return
	case kindProduce:
		if len(p.rejected) == 0 && c.f.s.brokers == nil {
			return
		}
	}
	d.cur = p
	d.mode, d.need = modeFrame, 4+size
}

// frame handles one whole frame; at is its offset in the current input, or -1
// when it was assembled in the stash.
func (c *Conn) frame(d *dir, frame []byte, at int, request bool) {
	forward := func() {
		if at >= 0 {
			c.out.emitIn(at, at+len(frame))
		} else {
			c.out.emit(frame)
		}
	}
	if request {
		c.requestFrame(frame, forward)
		return
	}
	out, err := c.rewriteResponse(&d.cur, frame)
	if err != nil {
		c.f.inc(c.f.mRespFailure, 1)
		c.f.host.Log(LevelWarn, "kwire: response "+apiMetricName(d.cur.key)+" v"+strconv.Itoa(int(d.cur.ver))+" forwarded unchanged: "+err.Error())
		forward()
		return
	}
	if out == nil {
		forward()
		return
	}
	c.out.emit(out)
}

// requestFrame handles a whole request the filter buffered: a Produce or a denied
// request.
func (c *Conn) requestFrame(frame []byte, forward func()) {
	key := int16(binary.BigEndian.Uint16(frame[4:]))
	ver := int16(binary.BigEndian.Uint16(frame[6:]))
	corr := int32(binary.BigEndian.Uint32(frame[8:]))
	hlen, err := requestHeaderLen(frame, key, ver)
	if err != nil {
		c.f.inc(c.f.mReqFailure, 1)
		c.closeWith("request header: " + err.Error())
		return
	}
	now := c.f.host.NowNanos()
	if c.f.s.isDenied(key) {
		c.f.inc(c.f.mDenied, 1)
		synth, err := c.f.denyResponse(frame, hlen, key, ver, corr)
		if err != nil {
			c.f.inc(c.f.mReqRefused, 1)
			c.closeWith("denied " + apiMetricName(key) + " v" + strconv.Itoa(int(ver)) + ": " + err.Error())
			return
		}
		if synth == nil { // acks=0 Produce: no response expected
			return
		}
		c.substitute(corr, key, ver, now, synth)
		return
	}
	// Produce.
	act := c.f.checkProduce(frame, hlen, ver)
	switch {
	case act.refuse != "":
		c.f.inc(c.f.mReqRefused, 1)
		c.closeWith(act.refuse)
	case act.forwardAsIs:
		forward()
		if act.acks != 0 {
			c.pending = append(c.pending, pend{corr: corr, key: key, ver: ver, start: now, kind: kindProduce})
		}
	case act.rewritten != nil:
		c.out.emit(act.rewritten)
		if act.acks != 0 {
			c.pending = append(c.pending, pend{corr: corr, key: key, ver: ver, start: now, kind: kindProduce, rejected: act.rejected})
		}
	default: // every partition rejected
		if act.acks == 0 {
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

// substitute sends the broker an ApiVersions v0 request in place of a request
// the filter answers, and queues synth as the response to send in its place.
func (c *Conn) substitute(corr int32, key, ver int16, now int64, synth []byte) {
	c.f.inc(c.f.mSubstitu, 1)
	var b [14]byte
	binary.BigEndian.PutUint32(b[0:], 10)
	binary.BigEndian.PutUint16(b[4:], apiApiVersions)
	binary.BigEndian.PutUint16(b[6:], 0)
	binary.BigEndian.PutUint32(b[8:], uint32(corr))
	binary.BigEndian.PutUint16(b[12:], 0xffff) // null client id
	c.out.emit(b[:])
	c.pending = append(c.pending, pend{corr: corr, key: key, ver: ver, start: now, kind: kindReplace, synth: synth})
}
