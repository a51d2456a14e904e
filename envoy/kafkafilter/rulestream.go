package kafkafilter

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/policy"
	"github.com/kwire/kwire/internal/transcode"
)

// A Produce request under request rules is checked without its records: while the
// proxy holds the request (Pause), the filter reads every field but the records'
// bytes, which it steps over by length, into a skeleton of the request with each
// records field null, and checks the rules on the skeleton. A request that follows
// them is forwarded from the proxy's buffer as it is; one that breaks them is answered
// from the skeleton (the error response names its topics and partitions). The records
// are never copied into the filter. A rule that names the records field itself, or a
// request that starts in the middle of a buffer, takes the whole-frame path.

var errSkeleton = errors.New("the Produce request does not read")

// skeletonReader reads the frame the proxy holds (it starts the buffer) by offset.
type skeletonReader struct {
	c   *Conn
	off int
	end int
	out []byte
	err error
}

// take appends the next n bytes to the skeleton.
func (r *skeletonReader) take(n int) []byte {
	if r.err != nil || n < 0 || r.end-r.off < n {
		r.err = errSkeleton
		return nil
	}
	at := len(r.out)
	for n > 0 {
		b := r.c.at(r.off, n)
		if len(b) == 0 {
			r.err = errSkeleton
			return nil
		}
		k := min(n, len(b))
		r.out = append(r.out, b[:k]...)
		r.off += k
		n -= k
	}
	return r.out[at:]
}

// uvarint copies an unsigned varint.
func (r *skeletonReader) uvarint() uint64 {
	var v uint64
	for shift := 0; shift < 35; shift += 7 {
		b := r.take(1)
		if b == nil {
			return 0
		}
		v |= uint64(b[0]&0x7f) << shift
		if b[0] < 0x80 {
			return v
		}
	}
	r.err = errSkeleton
	return 0
}

// length copies a length or count: compact (one more, -1 null) or int16/int32.
func (r *skeletonReader) length(flex, wide bool) int {
	if flex {
		v := r.uvarint()
		if v > 1<<31 {
			r.err = errSkeleton
		}
		return int(v) - 1
	}
	if wide {
		if b := r.take(4); b != nil {
			return int(int32(binary.BigEndian.Uint32(b)))
		}
		return -2
	}
	if b := r.take(2); b != nil {
		return int(int16(binary.BigEndian.Uint16(b)))
	}
	return -2
}

// tags copies a tagged-field section.
func (r *skeletonReader) tags() {
	n := r.uvarint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		r.uvarint() // tag
		r.take(int(r.uvarint()))
	}
}

// produceSkeleton reads the Produce frame of size bytes at the start of the proxy's
// buffer into a copy with every records field null.
func (c *Conn) produceSkeleton(size, hlen int, ver int16) ([]byte, error) {
	r := skeletonReader{c: c, end: size, out: c.f.frameBuf[:0]}
	r.take(hlen)
	flex := ver >= 9
	if ver >= 3 {
		r.take(max(r.length(flex, false), 0)) // transactional id
	}
	r.take(6) // acks, timeout
	topics := r.length(flex, true)
	for t := 0; t < topics && r.err == nil; t++ {
		if ver >= 13 {
			r.take(16)
		} else {
			r.take(max(r.length(flex, false), 0))
		}
		parts := r.length(flex, true)
		for p := 0; p < parts && r.err == nil; p++ {
			r.take(4) // index
			// The records, stepped over: the skeleton gets null in their place.
			var n int
			if flex {
				mark := len(r.out)
				n = int(r.uvarint()) - 1
				r.out = append(r.out[:mark], 0)
			} else {
				mark := len(r.out)
				n = r.length(false, true)
				r.out = binary.BigEndian.AppendUint32(r.out[:mark], 0xffffffff)
			}
			if n > 0 {
				if n > r.end-r.off {
					r.err = errSkeleton
					break
				}
				r.off += n
			}
			if flex {
				r.tags()
			}
		}
		if flex {
			r.tags()
		}
	}
	if flex {
		r.tags()
	}
	c.f.frameBuf = r.out[:0]
	if r.err != nil || r.off != size || topics < -1 {
		return nil, errSkeleton
	}
	binary.BigEndian.PutUint32(r.out, uint32(len(r.out)-4))
	return r.out, nil
}

// produceRules checks a Produce request under rules from its skeleton (see above).
func (c *Conn) produceRules(d *dir, pos, n int) int {
	size := d.frameEnd - d.frameAt
	if !d.inHost {
		d.mode = modeHold // it starts mid-buffer: gathered in the filter
		return pos
	}
	if n < size {
		d.paused = true
		return 0
	}
	head := c.at(0, min(size, 1024))
	hlen, err := codec.RequestHeaderLen(head)
	if errors.Is(err, codec.ErrTruncated) {
		hlen, err = codec.RequestHeaderLen(c.at(0, size)[:size])
	}
	if err != nil {
		d.mode = modeHold // the whole-frame path reports it
		return 0
	}
	ver := int16(binary.BigEndian.Uint16(head[6:]))
	corr := int32(binary.BigEndian.Uint32(head[8:]))
	skel, err := c.produceSkeleton(size, hlen, ver)
	if err != nil {
		d.mode = modeHold
		return 0
	}
	now := c.f.host.NowNanos()
	d.inHost = false
	d.mode = modeHead
	if c.ruleRefused(skel, apiProduce, ver, corr, now) {
		return size // answered: nothing of it goes to the broker
	}
	if c.f.s.pol != nil {
		// Under a schema policy too: the records matter only if a rule covers one of
		// the topics; then the whole-frame path checks them (and the rules again).
		parts, covered := c.policyCovers(skel[hlen:], ver)
		if covered {
			d.inHost, d.mode = true, modeHold
			return 0
		}
		c.f.inc(c.f.mUnruled, 1)
		c.f.inc(c.f.mPartAccepted, parts)
	}
	c.out.host(0, size)
	if sp, _, _ := produceNames(skel[hlen:], ver, len(skel)-hlen); sp.acks != 0 {
		c.pending = append(c.pending, c.pendFor(apiProduce, ver, corr, now))
	}
	return size
}

// policyCovers reports whether the schema policy covers a topic of the Produce body
// (a topic id the filter has not learned counts as covered: it fails closed), and
// the partitions it names.
func (c *Conn) policyCovers(body []byte, ver int16) (parts int, covered bool) {
	d := &c.f.doc
	if d.ParseAPI(body, apiProduce, codec.KindRequest, ver) != nil {
		return 0, true
	}
	for t := d.First(d.Field(d.Root(), "topicData")); t != transcode.NoNode; t = d.Next(t) {
		name, known := "", true
		if ver >= 13 {
			name, known = c.f.topicNames[codec.UUID(d.UUID(d.Field(t, "topicId")))]
		} else {
			b, _ := d.Str(d.Field(t, "name"))
			name = string(b)
		}
		if !known || c.f.s.pol.RuleFor(name).Mode != policy.None {
			return parts, true
		}
		parts += max(d.Len(d.Field(t, "partitionData")), 0)
	}
	return parts, false
}

// When every Produce rule names a field of the request's head (acks, timeoutMs,
// transactionalId, the header's client id), the request is decided from its first
// bytes and streams through as a Produce under no rule does: the rules are checked on
// the head with an empty topic list. One that breaks a rule goes the skeleton path,
// which reads its topics and partitions for the answer.

// produceRulesHead decides a Produce request from its head (see above).
func (c *Conn) produceRulesHead(d *dir, pos, n int) int {
	size := d.frameEnd - d.frameAt
	pos, avail, ok := c.gather(d, pos, n)
	if !ok {
		return n
	}
	whole := func() int { // the skeleton path (or, mid-buffer, the whole frame)
		if d.inHost {
			d.mode = modeRules
			return 0
		}
		return c.toHold(d, pos)
	}
	hb, hl, wait, err := c.produceHeader(d, avail, size)
	if wait {
		return c.decideWait(d, pos)
	}
	if err != nil {
		return whole()
	}
	ver := int16(binary.BigEndian.Uint16(hb[6:]))
	sp, more, _ := produceNames(hb[hl:], ver, size-hl)
	if sp.headEnd == 0 && more && len(hb) < avail {
		hb = c.frameBytes(d, avail, avail)
		sp, more, _ = produceNames(hb[hl:], ver, size-hl)
	}
	if sp.headEnd == 0 && more && avail < size {
		return c.decideWait(d, pos)
	}
	if sp.headEnd == 0 {
		return whole()
	}
	end, acks := sp.headEnd, sp.acks
	// The head with an empty topic list.
	skel := append(c.f.frameBuf[:0], hb[:hl+end]...)
	if ver >= 9 {
		skel = append(skel, 1, 0) // no topics, no tagged fields
	} else {
		skel = append(skel, 0, 0, 0, 0)
	}
	binary.BigEndian.PutUint32(skel, uint32(len(skel)-4))
	c.f.frameBuf = skel[:0]
	var clientID *string
	if n := int(int16(binary.BigEndian.Uint16(skel[12:]))); n >= 0 && 14+n <= hl {
		id := unsafeString(skel[14 : 14+n]) // read during Check only
		clientID = &id
	}
	// The verdict depends on the head alone (version, client id, head fields), which a
	// producer repeats request after request: a head equal to the last one that
	// passed passes without the check.
	key := append(append(c.headKey[:0], skel[4:8]...), skel[12:]...)
	c.headKey = key
	if !bytes.Equal(key, c.headPassed) {
		if v, err := c.f.s.rules.Check(apiProduce, ver, clientID, skel[hl:]); err != nil || v != nil {
			return whole() // answered from the skeleton, with its partitions
		}
		c.headPassed = append(c.headPassed[:0], key...)
	}
	if c.f.s.pol != nil {
		// The rules hold; the schema policy decides as for a Produce under no rule.
		// Its header is read already: the decision starts from its first bytes.
		d.mode, d.decision = modeDecide, decideUnknown
		d.topics, d.acks, d.parts, d.bodyAt = -1, -1, 0, -1
		c.decideHead(d, hb, hl, nil, size)
		return c.decideRest(d, pos, avail, size)
	}
	c.streamProduce(hb, acks, 0)
	return c.streamDecided(d, pos, 0)
}
