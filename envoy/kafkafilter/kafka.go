package kafkafilter

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"unsafe"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
	"github.com/kwire/kwire/codec/policy"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/codec/rules"
	"github.com/kwire/kwire/codec/tenant"
	"github.com/kwire/kwire/internal/jsonx"
	"github.com/kwire/kwire/internal/transcode"
)

// Api keys the filter treats specially.
const (
	apiProduce          = 0
	apiFetch            = 1
	apiMetadata         = 3
	apiFindCoordinator  = 10
	apiApiVersions      = 18
	apiDescribeCluster  = 60
	apiShareFetch       = 78
	apiShareAcknowledge = 79
)

var errShort = errors.New("truncated header")

// uvarint reads an unsigned varint at off.
func uvarint(b []byte, off int) (uint64, int, error) {
	v, n := binary.Uvarint(b[min(off, len(b)):])
	if n <= 0 {
		return 0, off, errShort
	}
	return v, off + n, nil
}

// skipTags skips a tagged-field section at off.
func skipTags(b []byte, off int) (int, error) {
	n, off, err := uvarint(b, off)
	if err != nil {
		return off, err
	}
	for i := uint64(0); i < n; i++ {
		if _, off, err = uvarint(b, off); err != nil {
			return off, err
		}
		var size uint64
		if size, off, err = uvarint(b, off); err != nil {
			return off, err
		}
		if size > uint64(len(b)-off) {
			return off, errShort
		}
		off += int(size)
	}
	return off, nil
}

// frameWith writes the header bytes of frame (size prefix included) followed by
// body, and fixes the size.
func frameWith(frame []byte, hlen int, body func([]byte) ([]byte, error)) ([]byte, error) {
	b := make([]byte, 0, len(frame)+64)
	b = append(b, frame[:hlen]...)
	b, err := body(b)
	if err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b, nil
}

// responseFrame encodes a whole response frame from the body's JSON form, with an
// empty tagged-field section when the header is flexible.
func responseFrame(corr int32, key, ver int16, bodyJSON []byte) ([]byte, error) {
	api, _ := codec.LookupAPI(key)
	b := make([]byte, 8, 256)
	binary.BigEndian.PutUint32(b[4:], uint32(corr))
	if codec.ResponseHeaderVersion(key, ver) == 1 {
		b = append(b, 0)
	}
	b, err := transcode.AppendWire(b, api.Response.Name, ver, bodyJSON)
	if err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b, nil
}

// rejectedTopic holds the partitions of one topic the filter answered.
type rejectedTopic struct {
	name  string
	id    codec.UUID
	parts []rejectedPartition
}

type rejectedPartition struct {
	index    int32
	code     int16
	msg      string
	failures []policy.RecordVerdict
}

type produceAction struct {
	acks        int16
	forwardAsIs bool
	rewritten   []byte
	rejected    []rejectedTopic
	refuse      string // close the connection with this reason
}

// checkProduce applies the schema policy to a whole Produce request frame.
//
// The request is indexed by f.doc (transcode.Doc), which copies nothing: topic names
// alias the frame while the checker looks at them and are copied only for the
// partitions the filter answers. The accepted partitions of a partly rejected request
// are written again by the Doc with the rejected ones removed, every other byte as the
// client sent it.
func (f *Filter) checkProduce(frame []byte, hlen int, ver int16) produceAction {
	d := &f.doc
	if err := d.ParseAPI(frame[hlen:], apiProduce, codec.KindRequest, ver); err != nil {
		f.inc(f.mReqFailure, 1)
		if f.s.pol != nil && f.s.pol.Enforces() {
			return produceAction{refuse: "Produce v" + strconv.Itoa(int(ver)) + " cannot be decoded and the schema policy enforces: " + err.Error()}
		}
		f.host.Log(LevelWarn, "kwire: Produce v"+strconv.Itoa(int(ver))+" forwarded undecoded: "+err.Error())
		// Without the body the filter cannot know acks; assume a response comes (a
		// response that never comes is skipped when the next one is matched).
		return produceAction{acks: -1, forwardAsIs: true}
	}
	root := d.Root()
	act := produceAction{acks: int16(d.Int(d.Field(root, "acks")))}
	if f.s.pol == nil {
		act.forwardAsIs = true
		return act
	}
	// Counts are added to the metrics once per request: each update is a call
	// into the host.
	var n produceCounts
	kept := f.checkTopics(d, root, ver, &act, &n)
	f.inc(f.mChecked, n.checked)
	f.inc(f.mFailed, n.failed)
	f.inc(f.mWarned, n.warned)
	f.inc(f.mRejected, n.rejected)
	f.inc(f.mPartAccepted, n.partAccepted)
	f.inc(f.mPartRejected, n.partRejected)
	f.flushPolicy() // per-topic counters (policystats.go)
	if len(act.rejected) == 0 {
		act.forwardAsIs = true
		return act
	}
	if kept == 0 {
		return act
	}
	b, err := frameWith(frame, hlen, d.AppendTo)
	if err != nil {
		return produceAction{refuse: "re-encoding the accepted partitions: " + err.Error()}
	}
	act.rewritten = b
	return act
}

// produceCounts are the metrics of one Produce request's check.
type produceCounts struct{ checked, failed, warned, rejected, partAccepted, partRejected int }

// checkTopics applies the schema policy to every partition of the Produce
// request indexed by d, removes the rejected ones from d and adds them to
// act.rejected; it returns how many partitions are kept. The rule is looked up
// once per topic, and the partitions of a topic whose rule is none are accepted
// without a call into the checker (its verdict for them is always the accepting
// one, with nothing checked).
func (f *Filter) checkTopics(d *transcode.Doc, root transcode.Node, ver int16, act *produceAction, n *produceCounts) int {
	kept := 0
	var v policy.PartitionVerdict
	for t := d.First(d.Field(root, "topicData")); t != transcode.NoNode; {
		next := d.Next(t)
		var name string
		var id codec.UUID
		known := true
		if ver >= 13 {
			id = d.UUID(d.Field(t, "topicId"))
			name, known = f.topicNames[id]
		} else {
			s, _ := d.Str(d.Field(t, "name"))
			name = unsafeString(s)
		}
		var rule *policy.Rule
		if known {
			rule = f.s.pol.RuleFor(name)
		}
		var rej rejectedTopic
		keptHere := 0
		for p := d.First(d.Field(t, "partitionData")); p != transcode.NoNode; {
			nextP := d.Next(p)
			if known && rule.Mode == policy.None {
				n.partAccepted++
				keptHere++
				p = nextP
				continue
			}
			index := int32(d.Int(d.Field(p, "index")))
			if !known {
				n.partRejected++
				rej.parts = append(rej.parts, rejectedPartition{index: index, code: int16(kerr.UnknownTopicID),
					msg: "topic id " + id.String() + " is unknown to the schema filter (no Metadata response named it yet)"})
				d.Remove(p)
				p = nextP
				continue
			}
			recs := d.Bytes(d.Field(p, "records"))
			// What the broker would refuse whatever the rule (Kafka's validateRecords: one
			// complete magic-2 batch from v3, no zstd before v7) is answered here, as the
			// broker would answer it, before the rule reads the records.
			if pv := records.ValidateProduceRecords(ver, recs); !pv.OK() {
				n.partRejected++
				n.rejected++
				f.host.Log(LevelInfo, "kwire: "+name+"/"+strconv.Itoa(int(index))+" refused as the broker would: "+pv.Reason)
				rej.parts = append(rej.parts, rejectedPartition{index: index, code: int16(pv.Code), msg: pv.Reason})
				d.Remove(p)
				p = nextP
				continue
			}
			f.chk.CheckRule(&v, rule, name, index, recs)
			f.countPolicy(name, &v)
			if v.Checked {
				n.checked += v.Records
				n.failed += v.Failed
			}
			if v.Accept {
				n.partAccepted++
				keptHere++
				if v.Failed > 0 || v.Err != nil {
					n.warned += v.Failed
					f.host.Log(LevelWarn, "kwire: schema policy "+v.Rule+" (warn) on "+name+"/"+strconv.Itoa(int(index))+": "+warnText(&v))
				}
				p = nextP
				continue
			}
			n.partRejected++
			n.rejected += max(v.Records, 1)
			f.host.Log(LevelInfo, "kwire: "+name+"/"+strconv.Itoa(int(index))+" "+v.Message())
			rej.parts = append(rej.parts, rejectedPartition{index: index, code: v.ErrorCode, msg: v.Message(), failures: v.Failures})
			d.Remove(p)
			p = nextP
		}
		if len(rej.parts) > 0 {
			rej.name, rej.id = strings.Clone(name), id
			act.rejected = append(act.rejected, rej)
		}
		if keptHere == 0 {
			d.Remove(t)
		}
		kept += keptHere
		t = next
	}
	return kept
}

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func warnText(v *policy.PartitionVerdict) string {
	if v.Err != nil {
		return "records undecodable: " + v.Error
	}
	s := strconv.Itoa(v.Failed) + " of " + strconv.Itoa(v.Records) + " records failed the rule"
	if len(v.Failures) > 0 {
		s += ", first at index " + strconv.Itoa(v.Failures[0].Index) + ": " + v.Failures[0].Detail
	}
	return s
}

// produceResponseJSON is the JSON form of a Produce response (at ver) answering the
// rejected partitions: each carries its error code and, at versions that have them,
// the record errors and message (ignorable fields, dropped below v8).
func produceResponseJSON(ver int16, rejected []rejectedTopic) []byte {
	b := []byte(`{"responses":[`)
	for _, t := range rejected {
		if ver >= 13 {
			b = jsonx.Elem(b, `{"topicId":`)
			b = jsonx.AppendUUID(b, t.id)
		} else {
			b = jsonx.Elem(b, `{"name":`)
			b = jsonx.AppendString(b, t.name)
		}
		b = append(b, `,"partitionResponses":[`...)
		for _, p := range t.parts {
			b = jsonx.Elem(b, `{"index":`)
			b = jsonx.AppendInt(b, int64(p.index))
			b = append(b, `,"errorCode":`...)
			b = jsonx.AppendInt(b, int64(p.code))
			b = append(b, `,"baseOffset":"-1","logAppendTimeMs":"-1","logStartOffset":"-1","errorMessage":`...)
			b = jsonx.AppendString(b, p.msg)
			b = append(b, `,"recordErrors":[`...)
			for _, fl := range p.failures {
				b = jsonx.Elem(b, `{"batchIndex":`)
				b = jsonx.AppendInt(b, int64(fl.Index))
				b = append(b, `,"batchIndexErrorMessage":`...)
				b = jsonx.AppendString(b, fl.Detail)
				b = append(b, '}')
			}
			b = append(b, "]}"...)
		}
		b = append(b, "]}"...)
	}
	return append(b, "]}"...)
}

// produceErrorResponse is the Produce response for a request whose partitions
// the filter answered.
func produceErrorResponse(corr int32, ver int16, rejected []rejectedTopic) ([]byte, error) {
	return responseFrame(corr, apiProduce, ver, produceResponseJSON(ver, rejected))
}

// mergeRejected adds the rejected partitions to the broker's Produce response held
// by d: into the topic's entry when the broker answered other partitions of it, as new
// topic entries otherwise.
func mergeRejected(d *transcode.Doc, ver int16, rejected []rejectedTopic) error {
	body, err := transcode.AppendWire(nil, "ProduceResponse", ver, produceResponseJSON(ver, rejected))
	if err != nil {
		return err
	}
	var add transcode.Doc
	if err := add.Parse(body, "ProduceResponse", ver); err != nil {
		return err
	}
	responses := d.Field(d.Root(), "responses")
	for t := add.First(add.Field(add.Root(), "responses")); t != transcode.NoNode; t = add.Next(t) {
		match := transcode.NoNode
		for bt := d.First(responses); bt != transcode.NoNode && match == transcode.NoNode; bt = d.Next(bt) {
			if sameTopic(d, bt, &add, t, ver) {
				match = bt
			}
		}
		if match == transcode.NoNode {
			if err := d.AppendRaw(responses, add.Raw(t)); err != nil {
				return err
			}
			continue
		}
		parts := d.Field(match, "partitionResponses")
		for p := add.First(add.Field(t, "partitionResponses")); p != transcode.NoNode; p = add.Next(p) {
			if err := d.AppendRaw(parts, add.Raw(p)); err != nil {
				return err
			}
		}
	}
	return nil
}

func sameTopic(a *transcode.Doc, at transcode.Node, b *transcode.Doc, bt transcode.Node, ver int16) bool {
	if ver >= 13 {
		return a.UUID(a.Field(at, "topicId")) == b.UUID(b.Field(bt, "topicId"))
	}
	x, _ := a.Str(a.Field(at, "name"))
	y, _ := b.Str(b.Field(bt, "name"))
	return string(x) == string(y)
}

// denyResponse builds the error response to a denied request frame, key's: its api's
// own error response, as a broker refusing it would answer (rules.ErrorFrame: every
// error field carries the configured code, every message field says it is denied, and
// the request's entities are answered one by one; a request that names none gets the
// answer with none), or nil for an acks=0 Produce (which gets none).
func (f *Filter) denyResponse(frame []byte, key int16) ([]byte, error) {
	msg := "api key " + strconv.Itoa(int(key)) + " (" + apiMetricName(key) + ") is denied by the proxy"
	resp, _, err := rules.ErrorFrame(frame, f.s.denyCode, msg)
	return resp, err
}

// rewriteResponse indexes a response the filter may change and returns the new
// frame, or nil when nothing changed.
func (c *Conn) rewriteResponse(p *pend, frame []byte) ([]byte, error) {
	f := c.f
	hlen, err := codec.ResponseHeaderLen(frame, p.key, p.ver)
	if err != nil {
		return nil, err
	}
	d := &f.doc
	if err := d.ParseAPI(frame[hlen:], p.key, codec.KindResponse, p.ver); err != nil {
		return nil, err
	}
	root := d.Root()
	changed := false
	switch p.kind {
	case kindMetadata:
		if f.s.learnTopicID && p.ver >= 10 {
			for t := d.First(d.Field(root, "topics")); t != transcode.NoNode; t = d.Next(t) {
				name, null := d.Str(d.Field(t, "name"))
				if id := codec.UUID(d.UUID(d.Field(t, "topicId"))); !null && id != (codec.UUID{}) {
					f.topicNames[id] = string(name)
				}
			}
		}
	case kindApiVersions:
		for k := d.First(d.Field(root, "apiKeys")); k != transcode.NoNode; k = d.Next(k) {
			key := d.Int(d.Field(k, "apiKey"))
			if f.s.tenant != nil && tenant.APIAccess(int16(key)) == tenant.Refused {
				// Not open to the tenant: left out, so that clients do not try it.
				if err := d.Remove(k); err != nil {
					return nil, err
				}
				changed = true
				continue
			}
			maxV := d.Field(k, "maxVersion")
			if f.s.maxProduceV >= 0 && key == apiProduce && d.Int(maxV) > int64(f.s.maxProduceV) && d.Int(d.Field(k, "minVersion")) <= int64(f.s.maxProduceV) {
				if err := d.SetInt(maxV, int64(f.s.maxProduceV)); err != nil {
					return nil, err
				}
				changed = true
			}
		}
	case kindProduce:
		if len(p.rejected) > 0 {
			if err := mergeRejected(d, p.ver, p.rejected); err != nil {
				return nil, err
			}
			changed = true
		}
	}
	if f.s.brokers != nil {
		ch, err := f.rewriteAddresses(d, root)
		if err != nil {
			return nil, err
		}
		changed = ch || changed
	}
	if !changed {
		return nil, nil
	}
	return frameWith(frame, hlen, d.AppendTo)
}

// rewriteAddresses rewrites the broker addresses in the message under n from the
// brokers map (transcode.Doc.RewriteAddresses says which structs carry them), counting
// those it maps and those it has no entry for.
func (f *Filter) rewriteAddresses(d *transcode.Doc, n transcode.Node) (bool, error) {
	return d.RewriteAddresses(n, f.mapAddress)
}

// mapAddress is the brokers map as a transcode.AddressMap.
func (f *Filter) mapAddress(node int32, _ string, _ int32) (string, int32, bool) {
	hp, ok := f.s.brokers[node]
	if !ok {
		f.inc(f.mUnmapped, 1)
		return "", 0, false
	}
	f.inc(f.mRewritten, 1)
	return hp.host, hp.port, true
}
