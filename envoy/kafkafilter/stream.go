package kafkafilter

import (
	"encoding/binary"
	"errors"
	"strings"
	"sync"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/policy"
	"github.com/kwire/kwire/internal/transcode"
)

// The walk plans of the frames the filter follows as they stream.
var (
	plansOnce                    sync.Once
	producePlan                  *transcode.WalkPlan // a Produce request's acks and topics
	fetchPlan                    *transcode.WalkPlan // a Fetch response, to its tag section
	producePlanErr, fetchPlanErr error
)

// Selections of producePlan.
const (
	selAcks = iota
	selTopics
	selTopicName
	selTopicID
	selPartitions
)

func plans() {
	plansOnce.Do(func() {
		producePlan, producePlanErr = transcode.NewWalkPlan(apiProduce, codec.KindRequest, "acks", "topicData", "topicData.name", "topicData.topicId", "topicData.partitionData")
		fetchPlan, fetchPlanErr = transcode.NewWalkPlan(apiFetch, codec.KindResponse)
	})
}

// Decisions about a Produce request under a policy.
const (
	decideUnknown = iota
	decidePass    // no rule covers any of its topics: it streams through
	decideHold    // a rule may apply: the filter needs it whole
)

// frameSrc serves a held frame's body to a walk: from the proxy's buffer when the
// proxy holds the frame (it starts the buffer), or from stash.
type frameSrc struct {
	c     *Conn
	d     *dir
	body  int // frame offset of the body
	avail int // frame bytes available
}

func (s *frameSrc) At(off, n int) []byte {
	o := s.body + off
	if o >= s.avail {
		return nil
	}
	if !s.d.inHost {
		return s.d.stash[o:s.avail]
	}
	b := s.c.at(o, min(n, s.avail-o))
	return b[:min(len(b), s.avail-o)]
}

// frameBytes returns up to n bytes of a held frame from its start.
func (c *Conn) frameBytes(d *dir, avail, n int) []byte {
	n = min(n, avail)
	if !d.inHost {
		return d.stash[:n]
	}
	b := c.at(0, n)
	return b[:min(len(b), n)]
}

// decide walks a Produce request under a policy, held meanwhile, until the filter
// knows whether a rule covers one of its topics: if none does, it streams through
// (a single-topic request is decided by its first bytes, up to its partition count); otherwise the filter
// holds it whole and checks it.
func (c *Conn) decide(d *dir, pos, n int) int {
	size := d.frameEnd - d.frameAt
	pos, avail, ok := c.gather(d, pos, n)
	if !ok {
		return n
	}
	if d.bodyAt < 0 {
		hb, hl, wait, err := c.produceHeader(d, avail, size)
		if wait {
			return c.decideWait(d, pos)
		}
		c.decideHead(d, hb, hl, err, size)
	}
	return c.decideRest(d, pos, avail, size)
}

// decideHead starts deciding a Produce request from its first bytes hb (its header of
// hl bytes, or the error reading it): a single-topic request is decided at once, any
// other is walked from its body (decideRest).
func (c *Conn) decideHead(d *dir, hb []byte, hl int, err error, size int) {
	if producePlan == nil {
		plans()
	}
	if err != nil || producePlanErr != nil {
		d.decision = decideHold // the whole-frame path reports what is wrong
		return
	}
	ver := int16(binary.BigEndian.Uint16(hb[6:]))
	d.bodyAt = hl
	h, ok := produceHead(hb[min(hl, len(hb)):], ver, size-hl)
	if !ok {
		d.walk.Reset(producePlan, ver, size-hl, false)
		return
	}
	// One topic, and its partition count, in the first bytes: decided without the
	// walk.
	d.acks = h.acks
	name, known := unsafeString(h.name), true
	if ver >= 13 {
		name, known = c.f.topicNames[h.id]
	}
	if !known || c.f.ruled(name) {
		d.decision = decideHold
	} else {
		d.parts, d.decision = h.parts, decidePass
	}
}

// ruled reports whether a schema rule covers the topic (its mode is not none). The
// answer for the last topic asked about is kept: a producer's requests name the same
// topic again and again, and the policy does not change.
func (f *Filter) ruled(name string) bool {
	if f.lastTopicOK && name == f.lastTopic {
		return f.lastRuled
	}
	r := f.s.pol.RuleFor(name).Mode != policy.None
	f.lastTopic, f.lastRuled, f.lastTopicOK = strings.Clone(name), r, true // name may alias a buffer
	return r
}

// produceHeaderLen is codec.RequestHeaderLen for the header of a Produce request at
// ver in its first bytes b, in the common case of a flexible header without tagged
// fields or a classic one; ok is false otherwise (call codec.RequestHeaderLen).
func (f *Filter) produceHeaderLen(b []byte, ver int16) (n int, ok bool) {
	if len(b) < reqHeadLen+2 {
		return 0, false
	}
	id := int(int16(binary.BigEndian.Uint16(b[reqHeadLen:])))
	if id < -1 {
		return 0, false
	}
	n = reqHeadLen + 2 + max(id, 0)
	if f.produceReq.Flexible(ver) {
		if n >= len(b) || b[n] != 0 {
			return 0, false
		}
		n++ // no tagged fields
	}
	return n, n <= len(b)
}

// decideRest walks the Produce request being decided as far as its avail bytes go,
// and holds it or lets it stream once decided.
func (c *Conn) decideRest(d *dir, pos, avail, size int) int {
	d.fsrc = frameSrc{c: c, d: d, body: d.bodyAt, avail: avail}
	for d.decision == decideUnknown {
		switch d.walk.Next(&d.fsrc) {
		case transcode.WalkMore:
			if avail < size {
				return c.decideWait(d, pos)
			}
			d.decision = decideHold
		case transcode.WalkField:
			ev := d.walk.Event()
			switch ev.Sel {
			case selAcks:
				d.acks = int16(ev.Int)
			case selTopics:
				d.topics = int(ev.Int)
				if d.topics <= 0 {
					d.decision = decidePass
				}
			case selTopicName, selTopicID:
				name := unsafeString(ev.Bytes)
				known := true
				if ev.Sel == selTopicID {
					var id codec.UUID
					copy(id[:], ev.Bytes)
					name, known = c.f.topicNames[id]
				}
				if !known || c.f.s.pol.RuleFor(name).Mode != policy.None {
					d.decision = decideHold
				}
			case selPartitions:
				// A topic no rule covers: the partitions it names go through.
				d.parts += max(int(ev.Int), 0)
				if d.topics--; d.topics == 0 {
					d.decision = decidePass
				}
			}
		case transcode.WalkDone:
			d.decision = decidePass
		default:
			d.decision = decideHold
		}
	}
	if d.decision == decideHold {
		return c.toHold(d, pos)
	}
	// No rule covers the request: it streams through from its first byte.
	c.streamProduce(c.frameBytes(d, avail, reqHeadLen), d.acks, d.parts)
	return c.streamDecided(d, pos, 0)
}

// streamProduce lets a Produce request whose head is h stream: under a schema policy
// it is counted as one no rule covers, with its parts partitions, and unless acks is 0
// its response is expected.
func (c *Conn) streamProduce(h []byte, acks int16, parts int) {
	if c.f.s.pol != nil {
		c.f.bump(c.f.mUnruled, 1)
		c.f.bump(c.f.mPartAccepted, parts)
	}
	if acks != 0 {
		c.pending = append(c.pending, c.pendFor(apiProduce, int16(binary.BigEndian.Uint16(h[6:])), int32(binary.BigEndian.Uint32(h[8:])), c.f.host.NowNanos()))
	}
}

// streamDecided lets a decided request through from its frame offset from on (what
// comes before is sent already): from the proxy's buffer when it holds the request,
// else what the filter gathered of it, and the rest as it arrives.
func (c *Conn) streamDecided(d *dir, pos, from int) int {
	d.mode = modePass
	if d.inHost {
		d.inHost = false
		return from // the frame starts the buffer
	}
	c.out.own(d.stash[from:])
	d.stash = d.stash[:0]
	if d.base+pos >= d.frameEnd {
		d.mode = modeHead
	}
	return pos
}

// produceHeadInfo is what decides a single-topic Produce request under a policy.
type produceHeadInfo struct {
	acks    int16
	headEnd int        // body offset of the topic array (after acks and timeoutMs)
	name    []byte     // the topic's name (to v12)
	id      codec.UUID // the topic's id (v13 on)
	parts   int        // its partition count
}

// produceHead reads, from the first bytes of a Produce request body of bodyLen
// bytes at version ver, what decides a single-topic request: acks, the topic and its
// partition count. ok is false when b ends first, the request does not name exactly
// one topic, or a length is out of bounds; the walk (the reference this fast path is
// tested against) then decides. b is not kept.
func produceHead(b []byte, ver int16, bodyLen int) (h produceHeadInfo, ok bool) {
	b = b[:min(len(b), bodyLen)]
	flex := ver >= 9
	off := 0
	var n int
	var ok1 bool
	if ver >= 3 {
		if n, off, ok1 = oneByteLength(b, off, flex); !ok1 {
			n, off = headLength(b, off, flex, false) // transactional id
		}
		if n < -1 || n > len(b)-off {
			return h, false
		}
		off += max(n, 0)
	}
	if len(b)-off < 6 {
		return h, false
	}
	h.acks = int16(binary.BigEndian.Uint16(b[off:]))
	off += 6 // acks, timeout
	h.headEnd = off
	if n, off, ok1 = oneByteLength(b, off, flex); !ok1 {
		n, off = headLength(b, off, flex, true)
	}
	if n != 1 {
		return h, false
	}
	if ver >= 13 {
		if len(b)-off < 16 {
			return h, false
		}
		copy(h.id[:], b[off:])
		off += 16
	} else {
		if n, off, ok1 = oneByteLength(b, off, flex); !ok1 {
			n, off = headLength(b, off, flex, false)
		}
		if n < 0 || n > len(b)-off {
			return h, false
		}
		h.name = b[off : off+n]
		off += n
	}
	if h.parts, off, ok1 = oneByteLength(b, off, flex); !ok1 {
		h.parts, off = headLength(b, off, flex, true)
	}
	// The smallest partition: index, records length, and tags in flexible versions.
	minPart := 8
	if flex {
		minPart = 6
	}
	return h, h.parts >= 0 && h.parts*minPart <= bodyLen-off
}

// oneByteLength is headLength's common case, apart so that it inlines (a call costs
// in a VM): a compact length of one byte. ok is false for any other (call headLength).
func oneByteLength(b []byte, off int, flex bool) (n, next int, ok bool) {
	if flex && off < len(b) && b[off] < 0x80 {
		return int(b[off]) - 1, off + 1, true
	}
	return 0, off, false
}

// headLength reads the length or count at b[off:] for produceHead: a compact one
// (uvarint, one more than it) in flexible versions, else an int16 (strings) or int32
// (wide: arrays); -1 is null, -2 a length that does not read. It returns the offset
// after it. produceHead asks oneByteLength first, which takes the common one-byte form.
func headLength(b []byte, off int, flex, wide bool) (int, int) {
	if flex {
		v, n := binary.Uvarint(b[min(off, len(b)):])
		if n <= 0 || v > 1<<31 {
			return -2, off
		}
		return int(v) - 1, off + n
	}
	if wide {
		if len(b)-off < 4 {
			return -2, off
		}
		return int(int32(binary.BigEndian.Uint32(b[off:]))), off + 4
	}
	if len(b)-off < 2 {
		return -2, off
	}
	return int(int16(binary.BigEndian.Uint16(b[off:]))), off + 2
}

// decideWait waits for more of an undecided Produce request: the proxy keeps it
// when it starts the buffer; otherwise it is in stash already.
func (c *Conn) decideWait(d *dir, pos int) int {
	if d.inHost {
		d.paused = true
		return 0
	}
	return pos
}

// ---- responses rewritten in place ----

// streamAt returns the response bytes from stream offset so on, at least n of them
// when they have arrived: from the buffer, or from carry for bytes of a field that
// began in an earlier callback.
func (c *Conn) streamAt(d *dir, so, n int) []byte {
	if so >= d.base {
		return c.at(so-d.base, n)
	}
	co := so - d.carryAt
	if co < 0 || co >= len(d.carry) {
		return nil
	}
	rest := d.carry[co:]
	if len(rest) >= n {
		return rest
	}
	d.join = append(append(d.join[:0], rest...), c.at(0, n-len(rest))...)
	return d.join
}

type respSrc struct {
	c *Conn
	d *dir
}

func (s *respSrc) At(off, n int) []byte { return s.c.streamAt(s.d, s.d.bodyAt+off, n) }

// keepCarry saves the response bytes from stream offset so to buffer offset end,
// which the walk reads again in the next callback (they are forwarded meanwhile).
func (c *Conn) keepCarry(d *dir, so, end int) {
	endS := d.base + end
	if so >= endS {
		d.carry = d.carry[:0]
		return
	}
	keep := d.spare[:0]
	from := so
	if so < d.base {
		keep = append(keep, d.carry[so-d.carryAt:]...)
		from = d.base
	}
	keep, _ = c.readInto(keep, from-d.base, endS-from)
	d.spare = d.carry[:0]
	d.carry, d.carryAt = keep, so
}

// walkResponse follows a response whose tag section the filter may rewrite (a Fetch
// response's node endpoints), forwarding it as it goes: the walk reads the length
// prefixes up to the root struct's tag section, which is the frame's last bytes.
func (c *Conn) walkResponse(d *dir, pos, n int) int {
	if d.bodyAt < 0 {
		if fetchPlan == nil {
			plans()
		}
		hdr := d.frameAt + respHeadLen
		if codec.ResponseHeaderVersion(d.cur.key, d.cur.ver) == 1 {
			b := c.streamAt(d, hdr, 64)
			end, err := skipTags(b, 0)
			if err != nil {
				if d.base+n-hdr < 64 && d.base+n < d.frameEnd {
					// The header's tags have not all arrived.
					return c.walkForward(d, pos, n, hdr)
				}
				return c.walkFailed(d, pos, "response header: "+err.Error())
			}
			hdr += end
		}
		d.bodyAt = hdr
		if fetchPlanErr != nil || d.cur.key != apiFetch {
			return c.walkFailed(d, pos, "no walk plan")
		}
		if err := d.walk.Reset(fetchPlan, d.cur.ver, d.frameEnd-hdr, true); err != nil {
			return c.walkFailed(d, pos, err.Error())
		}
	}
	d.rsrc = respSrc{c, d}
	for {
		switch d.walk.Next(&d.rsrc) {
		case transcode.WalkMore:
			return c.walkForward(d, pos, n, d.bodyAt+d.walk.Pos())
		case transcode.WalkRootTags:
			d.tailAt = d.bodyAt + d.walk.Pos()
			d.tail = d.tail[:0]
			d.carry = d.carry[:0]
			d.mode = modeTail
			return pos
		case transcode.WalkField:
			continue
		default:
			return c.walkFailed(d, pos, d.walk.Err().Error())
		}
	}
}

// walkForward forwards the response's bytes in this buffer, keeping those from
// stream offset from, which the walk reads next time.
func (c *Conn) walkForward(d *dir, pos, n, from int) int {
	end := min(n, d.frameEnd-d.base)
	c.keepCarry(d, from, end)
	c.out.host(pos, end)
	if d.base+end == d.frameEnd {
		// The frame ended before the walk did: it is malformed.
		c.walkFailed(d, end, "the frame ends inside its body")
		d.mode = modeHead
	}
	return end
}

// walkFailed forwards the rest of a response the walk cannot follow, unchanged.
func (c *Conn) walkFailed(d *dir, pos int, msg string) int {
	c.f.inc(c.f.mRespFailure, 1)
	c.f.host.Log(LevelWarn, "kwire: response "+apiVersionName(d.cur.key, d.cur.ver)+" forwarded unchanged: "+msg)
	d.mode = modePass
	d.carry = d.carry[:0]
	return pos
}

// collectTail forwards a walked response up to its tag section, then reads the
// section (usually a byte or a few dozen) and forwards it rewritten in place.
func (c *Conn) collectTail(d *dir, pos, n int) int {
	if s := d.base + pos; s < d.tailAt {
		k := min(d.tailAt-s, n-pos)
		c.out.host(pos, pos+k)
		pos += k
		if pos == n {
			return pos
		}
	}
	tailLen := d.frameEnd - d.tailAt
	at := pos // buffer offset of the tail bytes read now
	k := min(tailLen-len(d.tail), n-pos)
	if len(d.tail) == 0 && k == tailLen {
		// The whole section is here: forward it from the buffer unless it changes.
		t := c.at(pos, k)[:k]
		if t[0] == 0 { // no tagged fields: nothing to rewrite
			c.out.host(pos, pos+k)
			d.mode = modeHead
			return pos + k
		}
		nt, changed := c.f.rewriteTail(&d.cur, t)
		if changed {
			c.out.own(nt)
		} else {
			c.out.host(at, at+k)
		}
		d.mode = modeHead
		return pos + k
	}
	var ok bool
	if d.tail, ok = c.readInto(d.tail, pos, k); !ok {
		return n
	}
	pos += k
	if len(d.tail) < tailLen {
		return pos
	}
	nt, changed := c.f.rewriteTail(&d.cur, d.tail)
	if changed {
		c.out.own(nt)
	} else {
		c.out.own(d.tail)
	}
	d.mode = modeHead
	return pos
}

// rewriteTail rewrites the broker addresses in a response's root tag section (p's
// api and version) at the same size, so that the frame's size, forwarded first,
// still holds. Addresses that do not fit are removed with the field that carries
// them, which is left empty (clients then ask for metadata, which the filter
// rewrites). It returns the
// section unchanged (and false) when nothing changes or it cannot be read.
func (f *Filter) rewriteTail(p *pend, tail []byte) ([]byte, bool) {
	prefix, err := f.emptyBody(p.key, p.ver)
	if err != nil {
		f.tailFailed(p, err.Error())
		return tail, false
	}
	f.syn = append(append(f.syn[:0], prefix...), tail...)
	d := &f.doc
	if err := d.ParseAPI(f.syn, p.key, codec.KindResponse, p.ver); err != nil {
		f.tailFailed(p, err.Error())
		return tail, false
	}
	changed, err := f.rewriteAddresses(d, d.Root())
	if err != nil || !changed {
		if err != nil {
			f.tailFailed(p, err.Error())
		}
		return tail, false
	}
	body, err := d.AppendTo(f.synOut[:0])
	if err != nil {
		f.tailFailed(p, err.Error())
		return tail, false
	}
	f.synOut = body
	nt := body[len(prefix):]
	if len(nt) <= len(tail) {
		if out, ok := padTags(nt, len(tail)); ok {
			f.inc(f.mInPlace, 1)
			return out, true
		}
	}
	// The new addresses are longer than the old: drop the node endpoints.
	if err := d.ParseAPI(f.syn, p.key, codec.KindResponse, p.ver); err != nil {
		return tail, false
	}
	ne := d.Field(d.Root(), "nodeEndpoints")
	if ne == transcode.NoNode {
		return tail, false
	}
	for e := d.First(ne); e != transcode.NoNode; {
		next := d.Next(e)
		if d.Remove(e) != nil {
			return tail, false
		}
		e = next
	}
	body, err = d.AppendTo(f.synOut[:0])
	if err != nil {
		return tail, false
	}
	f.synOut = body
	if out, ok := padTags(body[len(prefix):], len(tail)); ok {
		f.inc(f.mEndpointsDropped, 1)
		f.host.Log(LevelInfo, "kwire: "+apiVersionName(p.key, p.ver)+" response: node endpoints removed (the proxy's addresses are longer than the broker's, and the response was already on its way)")
		return out, true
	}
	return tail, false
}

func (f *Filter) tailFailed(p *pend, msg string) {
	f.inc(f.mRespFailure, 1)
	f.host.Log(LevelWarn, "kwire: response "+apiVersionName(p.key, p.ver)+": tag section forwarded unchanged: "+msg)
}

// emptyBody is the body of a response of key at ver with every field at its
// default, without its root tag section (the last byte, an empty section).
func (f *Filter) emptyBody(key, ver int16) ([]byte, error) {
	k := int32(key)<<16 | int32(uint16(ver))
	if b, ok := f.empty[k]; ok {
		return b, nil
	}
	api, _ := codec.LookupAPI(key)
	b, err := transcode.AppendWire(nil, api.Response.Name, ver, []byte(`{}`))
	if err != nil {
		return nil, err
	}
	if len(b) == 0 || b[len(b)-1] != 0 {
		return nil, errShort
	}
	b = b[:len(b)-1]
	if f.empty == nil {
		f.empty = map[int32][]byte{}
	}
	f.empty[k] = b
	return b, nil
}

// padTagTag is the tag of the field padTags adds: above any tag Kafka defines, so
// every reader keeps it as an unknown tagged field (and tags still ascend).
const padTagTag = 0x3fff

// padTags grows a tag section to want bytes with content that every Kafka reader
// skips: a tagged field of zeros with a tag no message defines or, for one or two
// bytes, a longer (non-minimal) encoding of the field count, which readers decode as
// the same number.
func padTags(t []byte, want int) ([]byte, bool) {
	diff := want - len(t)
	if diff == 0 {
		return t, true
	}
	count, cl := binary.Uvarint(t)
	if cl <= 0 || diff < 0 {
		return nil, false
	}
	fields := t[cl:]
	// The largest tag present, so that the padding's tag ascends.
	maxTag := int64(-1)
	for rest := fields; len(rest) > 0; {
		tag, n1 := binary.Uvarint(rest)
		size, n2 := binary.Uvarint(rest[max(n1, 0):])
		if n1 <= 0 || n2 <= 0 || uint64(len(rest)-n1-n2) < size {
			return nil, false
		}
		maxTag = max(maxTag, int64(tag))
		rest = rest[n1+n2+int(size):]
	}
	padTag := uint64(max(padTagTag, maxTag+1))
	var scratch [binary.MaxVarintLen64]byte // the varint lengths of the padding tag and of the new count
	tl := binary.PutUvarint(scratch[:], padTag)
	newCount := binary.PutUvarint(scratch[:], count+1)
	room := diff - (newCount - cl) // bytes for the padding field
	out := make([]byte, 0, want)
	if room >= tl+1 {
		s := room - tl - 1
		sl := 1
		if s > 127 {
			sl, s = 5, room-tl-5
		}
		out = binary.AppendUvarint(out, count+1)
		out = append(out, fields...)
		out = binary.AppendUvarint(out, padTag)
		out = appendUvarintN(out, uint64(s), sl)
		out = append(out, make([]byte, s)...)
	} else {
		if cl+diff > 5 {
			return nil, false
		}
		out = appendUvarintN(out, count, cl+diff)
		out = append(out, fields...)
	}
	return out, len(out) == want
}

// appendUvarintN appends v as an unsigned varint of exactly n bytes (n at least its
// minimal length): continuation bits carry zeros to the last byte.
func appendUvarintN(b []byte, v uint64, n int) []byte {
	for i := 0; i < n; i++ {
		c := byte(v & 0x7f)
		v >>= 7
		if i < n-1 {
			c |= 0x80
		}
		b = append(b, c)
	}
	return b
}

// produceNameSpan is where a Produce request body's names are, for a tenant: the
// transactional id (from v3) and, up to v12, the topic name of a single-topic request,
// both in the body's first bytes. Everything after the topic name (or the
// transactional id, from v13, which names topics by id) carries no name.
type produceNameSpan struct {
	acks         int16
	txStart      int // the transactional id's length prefix (-1 before v3)
	txEnd        int
	txNull       bool
	headEnd      int // the topic array, after acks and timeoutMs (0 until they are read)
	nameStart    int // the topic name's length prefix (-1 from v13)
	nameEnd      int
	end          int // where the names end: the rest streams as it is
	single, flex bool
}

// produceNames reads a produceNameSpan from the first bytes b of a Produce body of
// bodyLen bytes at ver. more is true when b ends before the span does; ok false means
// the request cannot stream (several topics up to v12, or a length out of bounds):
// the whole-frame path maps it, or reports what is wrong. The head (acks, headEnd)
// is read whenever b holds it, ok or not.
func produceNames(b []byte, ver int16, bodyLen int) (s produceNameSpan, more, ok bool) {
	b = b[:min(len(b), bodyLen)]
	s.flex = ver >= 9
	off := 0
	short := false
	length := func(wide bool) int {
		if s.flex {
			v, n := binary.Uvarint(b[off:])
			if n == 0 {
				short = true
				return -2
			}
			if n < 0 || v > 1<<31 {
				return -2
			}
			off += n
			return int(v) - 1
		}
		w := 2
		if wide {
			w = 4
		}
		if len(b)-off < w {
			short = true
			return -2
		}
		var v int
		if wide {
			v = int(int32(binary.BigEndian.Uint32(b[off:])))
		} else {
			v = int(int16(binary.BigEndian.Uint16(b[off:])))
		}
		off += w
		return v
	}
	// str steps over a nullable string; false when it does not fit.
	str := func() bool {
		n := length(false)
		if n < -1 {
			return false
		}
		if n > len(b)-off {
			short = len(b) < bodyLen
			return false
		}
		off += max(n, 0)
		return true
	}
	s.txStart, s.nameStart = -1, -1
	if ver >= 3 {
		s.txStart = off
		if !str() {
			return s, short, false
		}
		s.txEnd = off
		s.txNull = s.flex && b[s.txStart] == 0 || !s.flex && int16(binary.BigEndian.Uint16(b[s.txStart:])) < 0
	}
	if len(b)-off < 6 {
		return s, len(b) < bodyLen, false
	}
	s.acks = int16(binary.BigEndian.Uint16(b[off:]))
	s.headEnd = off + 6
	if ver >= 13 {
		s.end = off // topics by id: nothing after the transactional id is renamed
		return s, false, true
	}
	off += 6
	if n := length(true); n != 1 {
		return s, short, false
	}
	s.single = true
	s.nameStart = off
	if !str() {
		return s, short, false
	}
	s.nameEnd, s.end = off, off
	return s, false, true
}

// appendPrefixed appends the string at b[start:end] (its length prefix included) with
// the prefix before it; a null string stays null.
func appendPrefixed(dst, b []byte, start, end int, prefix string, flex bool) []byte {
	var body []byte
	if flex {
		v, k := binary.Uvarint(b[start:end])
		if v == 0 {
			return append(dst, 0)
		}
		body = b[start+k : end]
	} else {
		if int16(binary.BigEndian.Uint16(b[start:])) < 0 {
			return append(dst, b[start:end]...)
		}
		body = b[start+2 : end]
	}
	l := len(prefix) + len(body)
	if flex {
		dst = binary.AppendUvarint(dst, uint64(l)+1)
	} else {
		dst = binary.BigEndian.AppendUint16(dst, uint16(l))
	}
	dst = append(dst, prefix...)
	return append(dst, body...)
}

// tenantProduce streams a Produce request through a tenant's listener: its names
// are in its first bytes (the transactional id, and up to v12 a single topic's name),
// which are rewritten with the prefix and sent with the new size, and the rest, the
// records, follows as it arrives, never copied into the filter when the request
// starts the proxy's buffer. A request with several topics up to v12, or one that
// does not read, is held and mapped whole.
func (c *Conn) tenantProduce(d *dir, pos, n int) int {
	size := d.frameEnd - d.frameAt
	pos, avail, ok := c.gather(d, pos, n)
	if !ok {
		return n
	}
	hold := func() int { return c.toHold(d, pos) }
	hb, hl, wait, err := c.requestHeader(d, avail, size)
	if wait {
		return c.decideWait(d, pos)
	}
	if err != nil {
		return hold()
	}
	ver := int16(binary.BigEndian.Uint16(hb[6:]))
	sp, more, ok := produceNames(hb[hl:], ver, size-hl)
	if more && len(hb) < avail {
		hb = c.frameBytes(d, avail, avail)
		sp, more, ok = produceNames(hb[hl:], ver, size-hl)
	}
	if more && avail < size {
		return c.decideWait(d, pos)
	}
	if !ok {
		return hold()
	}
	prefix := c.f.s.tenant.Prefix()
	body := hb[hl:]
	head := append(c.f.frameBuf[:0], hb[:hl]...)
	renamed := 0
	if sp.txStart >= 0 {
		head = appendPrefixed(head, body, sp.txStart, sp.txEnd, prefix, sp.flex)
		if !sp.txNull {
			renamed++
		}
	}
	if sp.single {
		from := max(sp.txEnd, 0)
		head = append(head, body[from:sp.nameStart]...)
		head = appendPrefixed(head, body, sp.nameStart, sp.nameEnd, prefix, sp.flex)
		renamed++
	}
	skip := hl + sp.end // frame offset where the unchanged rest begins
	newSize := size - 4 + len(head) - skip
	binary.BigEndian.PutUint32(head, uint32(newSize))
	c.f.frameBuf = head[:0]
	if renamed > 0 {
		c.f.inc(c.f.mTenantReq, 1)
	}
	corr := int32(binary.BigEndian.Uint32(hb[8:]))
	if sp.acks != 0 {
		c.pending = append(c.pending, c.pendFor(apiProduce, ver, corr, c.f.host.NowNanos()))
	}
	c.out.own(head)
	return c.streamDecided(d, pos, skip)
}

// toHold hands a request the filter was deciding on to the whole-frame path (modeHold):
// from buffer offset 0 when the proxy holds it; a frame already gathered whole in the
// filter is handled at once (no more bytes may come before its answer is awaited).
func (c *Conn) toHold(d *dir, pos int) int {
	d.mode = modeHold
	if d.inHost {
		return 0
	}
	if len(d.stash) == d.frameEnd-d.frameAt {
		c.frame(d, d.stash, -1)
		d.stash = d.stash[:0]
		d.mode = modeHead
	}
	return pos
}

// gather reads, for a request being decided that the filter holds itself (it starts in
// the middle of the buffer), what this buffer has of it into the stash; avail is how
// many of its bytes are at hand (in the stash, or in the proxy's buffer from offset 0).
// ok is false when the proxy refused a read.
func (c *Conn) gather(d *dir, pos, n int) (next, avail int, ok bool) {
	size := d.frameEnd - d.frameAt
	if d.inHost {
		return pos, min(n, size), true
	}
	k := min(size-len(d.stash), n-pos)
	if d.stash, ok = c.readInto(d.stash, pos, k); !ok {
		return n, 0, false
	}
	return pos + k, len(d.stash), true
}

// produceHeader is requestHeader for a Produce request, with its common headers read
// without codec.RequestHeaderLen (see produceHeaderLen).
func (c *Conn) produceHeader(d *dir, avail, size int) (hb []byte, hl int, wait bool, err error) {
	hb = c.frameBytes(d, avail, 1024)
	if len(hb) >= reqHeadLen {
		if hl, ok := c.f.produceHeaderLen(hb, int16(binary.BigEndian.Uint16(hb[6:]))); ok {
			return hb, hl, false, nil
		}
	}
	return c.requestHeader(d, avail, size)
}

// requestHeader is the first bytes of the request being decided (at least its header
// when avail has it) and its header's length; wait is true when more must arrive.
func (c *Conn) requestHeader(d *dir, avail, size int) (hb []byte, hl int, wait bool, err error) {
	hb = c.frameBytes(d, avail, 1024)
	hl, err = codec.RequestHeaderLen(hb)
	if errors.Is(err, codec.ErrTruncated) && len(hb) < avail {
		hb = c.frameBytes(d, avail, avail)
		hl, err = codec.RequestHeaderLen(hb)
	}
	return hb, hl, errors.Is(err, codec.ErrTruncated) && avail < size, err
}
