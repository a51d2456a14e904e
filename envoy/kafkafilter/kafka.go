package kafkafilter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
	"github.com/kwire/kwire/codec/policy"
	"github.com/kwire/kwire/codec/transcode"
)

// Api keys the filter treats specially.
const (
	apiProduce         = 0
	apiMetadata        = 3
	apiFindCoordinator = 10
	apiApiVersions     = 18
	apiDescribeCluster = 60
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

// requestHeaderLen is the length of a request frame's size prefix and header.
func requestHeaderLen(frame []byte, key, ver int16) (int, error) {
	hv := codec.RequestHeaderVersion(key, ver)
	off := 12
	if hv >= 1 {
		if len(frame) < off+2 {
			return 0, errShort
		}
		n := int(int16(binary.BigEndian.Uint16(frame[off:])))
		off += 2
		if n > 0 {
			off += n
		}
		if off > len(frame) {
			return 0, errShort
		}
	}
	if hv >= 2 {
		var err error
		if off, err = skipTags(frame, off); err != nil {
			return 0, err
		}
	}
	return off, nil
}

// responseHeaderLen is the length of a response frame's size prefix and header.
func responseHeaderLen(frame []byte, key, ver int16) (int, error) {
	if len(frame) < 8 {
		return 0, errShort
	}
	if codec.ResponseHeaderVersion(key, ver) == 1 {
		return skipTags(frame, 8)
	}
	return 8, nil
}

// encoder is a typed message's encoder; the filter names concrete types only, so
// the linker keeps just the messages it uses.
type encoder interface {
	Encode(dst []byte, version int16) ([]byte, error)
}

// responseFrame encodes a whole response frame with an empty tagged-field section
// when the header is flexible.
func responseFrame(corr int32, key, ver int16, body encoder) ([]byte, error) {
	b := make([]byte, 8, 256)
	binary.BigEndian.PutUint32(b[4:], uint32(corr))
	if codec.ResponseHeaderVersion(key, ver) == 1 {
		b = append(b, 0)
	}
	b, err := body.Encode(b, ver)
	if err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b, nil
}

// reframe writes the header bytes of frame (after the size) followed by body.
func reframe(frame []byte, hlen int, ver int16, body encoder) ([]byte, error) {
	b := make([]byte, 0, len(frame))
	b = append(b, frame[:hlen]...)
	b, err := body.Encode(b, ver)
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
	parts []codec.ProduceResponsePartitionProduceResponse
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
// The request is decoded into one ProduceRequest the filter reuses, with strings
// aliasing the frame, so that a request allocates nothing here: nothing decoded may
// outlive the call unless copied (rejectedTopic names are).
func (f *Filter) checkProduce(frame []byte, hlen int, ver int16) produceAction {
	req := &f.produce
	if err := req.DecodeWith(frame[hlen:], ver, codec.DecodeOptions{UnsafeStrings: true}); err != nil {
		f.inc(f.mReqFailure, 1)
		if f.s.pol != nil && f.s.pol.Enforces() {
			return produceAction{refuse: "Produce v" + strconv.Itoa(int(ver)) + " cannot be decoded and the schema policy enforces: " + err.Error()}
		}
		f.host.Log(LevelWarn, "kwire: Produce v"+strconv.Itoa(int(ver))+" forwarded undecoded: "+err.Error())
		// Without the body the filter cannot know acks; assume a response comes (a
		// response that never comes is skipped when the next one is matched).
		return produceAction{acks: -1, forwardAsIs: true}
	}
	act := produceAction{acks: req.Acks}
	if f.s.pol == nil {
		act.forwardAsIs = true
		return act
	}
	accepted := f.accepted[:0] // per partition, in request order
	anyRejected := false
	// Counts are added to the metrics once per request: each update is a call
	// into the host.
	var n struct{ checked, failed, warned, rejected, partAccepted, partRejected int }
	defer func() {
		f.inc(f.mChecked, n.checked)
		f.inc(f.mFailed, n.failed)
		f.inc(f.mWarned, n.warned)
		f.inc(f.mRejected, n.rejected)
		f.inc(f.mPartAccepted, n.partAccepted)
		f.inc(f.mPartRejected, n.partRejected)
	}()
	for ti := range req.TopicData {
		t := &req.TopicData[ti]
		name := t.Name
		known := true
		if ver >= 13 {
			name, known = f.topicNames[t.TopicId]
		}
		var rej rejectedTopic
		for pi := range t.PartitionData {
			p := &t.PartitionData[pi]
			accepted = append(accepted, false)
			if !known {
				n.partRejected++
				rej.parts = append(rej.parts, partitionError(p.Index, int16(kerr.UnknownTopicID),
					"topic id "+t.TopicId.String()+" is unknown to the schema filter (no Metadata response named it yet)", nil))
				continue
			}
			v := f.chk.Check(name, p.Index, p.Records)
			if v.Checked {
				n.checked += v.Records
				n.failed += v.Failed
			}
			if v.Accept {
				n.partAccepted++
				if v.Failed > 0 || v.Err != nil {
					n.warned += v.Failed
					f.host.Log(LevelWarn, "kwire: schema policy "+v.Rule+" (warn) on "+name+"/"+strconv.Itoa(int(p.Index))+": "+warnText(&v))
				}
				accepted[len(accepted)-1] = true
				continue
			}
			n.partRejected++
			n.rejected += max(v.Records, 1)
			f.host.Log(LevelInfo, "kwire: "+name+"/"+strconv.Itoa(int(p.Index))+" "+v.Message())
			rej.parts = append(rej.parts, partitionError(p.Index, v.ErrorCode, v.Message(), v.Failures))
		}
		if len(rej.parts) > 0 {
			anyRejected = true
			rej.name, rej.id = strings.Clone(t.Name), t.TopicId
			act.rejected = append(act.rejected, rej)
		}
	}
	f.accepted = accepted
	if !anyRejected {
		act.forwardAsIs = true
		return act
	}
	// The accepted partitions, re-encoded without the rejected ones.
	var kept []codec.ProduceRequestTopicProduceData
	i := 0
	for _, t := range req.TopicData {
		var parts []codec.ProduceRequestPartitionProduceData
		for _, p := range t.PartitionData {
			if accepted[i] {
				parts = append(parts, p)
			}
			i++
		}
		if len(parts) > 0 {
			t.PartitionData = parts
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		return act
	}
	req.TopicData = kept
	b, err := reframe(frame, hlen, ver, req)
	if err != nil {
		return produceAction{refuse: "re-encoding the accepted partitions: " + err.Error()}
	}
	act.rewritten = b
	return act
}

func warnText(v *policy.PartitionVerdict) string {
	if v.Err != nil {
		return "records undecodable: " + v.Error
	}
	s := strconv.Itoa(v.Failed) + " of " + strconv.Itoa(v.Records) + " records without a valid schema reference"
	if len(v.Failures) > 0 {
		s += ", first at index " + strconv.Itoa(v.Failures[0].Index) + ": " + v.Failures[0].Detail
	}
	return s
}

// partitionError is a Produce partition response carrying code, with the record
// errors and message for versions that have them (the encoder drops them below v8).
func partitionError(index int32, code int16, msg string, failures []policy.RecordVerdict) codec.ProduceResponsePartitionProduceResponse {
	p := codec.ProduceResponsePartitionProduceResponse{Index: index, ErrorCode: code, BaseOffset: -1, LogAppendTimeMs: -1, LogStartOffset: -1}
	p.CurrentLeader.LeaderId, p.CurrentLeader.LeaderEpoch = -1, -1
	p.ErrorMessage = &msg
	for _, fl := range failures {
		m := fl.Detail
		p.RecordErrors = append(p.RecordErrors, codec.ProduceResponseBatchIndexAndErrorMessage{BatchIndex: int32(fl.Index), BatchIndexErrorMessage: &m})
	}
	return p
}

// produceErrorResponse is the Produce response for a request whose partitions
// the filter answered.
func produceErrorResponse(corr int32, ver int16, rejected []rejectedTopic) ([]byte, error) {
	var resp codec.ProduceResponse
	mergeRejected(&resp, rejected)
	return responseFrame(corr, apiProduce, ver, &resp)
}

func mergeRejected(resp *codec.ProduceResponse, rejected []rejectedTopic) {
	for _, r := range rejected {
		i := 0
		for ; i < len(resp.Responses); i++ {
			t := &resp.Responses[i]
			if t.Name == r.name && t.TopicId == r.id {
				break
			}
		}
		if i == len(resp.Responses) {
			resp.Responses = append(resp.Responses, codec.ProduceResponseTopicProduceResponse{Name: r.name, TopicId: r.id})
		}
		resp.Responses[i].PartitionResponses = append(resp.Responses[i].PartitionResponses, r.parts...)
	}
}

// denyResponse builds the error response to a denied request, or nil for an acks=0
// Produce (which gets none). Every error field of the response carries the
// configured code; per-entity responses name the request's entities.
//
// Produce, Metadata, FindCoordinator, DescribeCluster and ApiVersions are built
// with their typed messages and name the request's entities (topics, partitions,
// coordinator keys). Every other api key goes through codec/transcode's
// schema-driven encoder, which carries no per-message code: the response body is
// {"errorCode": code, "errorMessage": ...} where the version has both fields,
// {"errorCode": code} where it has one, and the all-default body otherwise (an
// api whose errors are only per entity then answers with no entities).
func (f *Filter) denyResponse(frame []byte, hlen int, key, ver int16, corr int32) ([]byte, error) {
	code := f.s.denyCode
	msg := "api key " + strconv.Itoa(int(key)) + " (" + apiMetricName(key) + ") is denied by the proxy"
	body := frame[hlen:]
	switch key {
	case apiProduce:
		var req codec.ProduceRequest
		if err := req.Decode(body, ver); err != nil {
			return nil, err
		}
		if req.Acks == 0 {
			return nil, nil
		}
		var rej []rejectedTopic
		for _, t := range req.TopicData {
			r := rejectedTopic{name: t.Name, id: t.TopicId}
			for _, p := range t.PartitionData {
				r.parts = append(r.parts, partitionError(p.Index, code, msg, nil))
			}
			rej = append(rej, r)
		}
		return produceErrorResponse(corr, ver, rej)
	case apiMetadata:
		var req codec.MetadataRequest
		if err := req.Decode(body, ver); err != nil {
			return nil, err
		}
		resp := codec.NewMetadataResponse()
		resp.ControllerId = -1
		if ver >= 13 {
			resp.ErrorCode = code
		}
		for _, t := range req.Topics {
			rt := codec.NewMetadataResponseTopic()
			rt.ErrorCode, rt.Name, rt.TopicId = code, t.Name, t.TopicId
			resp.Topics = append(resp.Topics, *rt)
		}
		return responseFrame(corr, key, ver, resp)
	case apiFindCoordinator:
		var req codec.FindCoordinatorRequest
		if err := req.Decode(body, ver); err != nil {
			return nil, err
		}
		resp := codec.NewFindCoordinatorResponse()
		resp.NodeId, resp.Port = -1, -1
		if ver < 4 {
			resp.ErrorCode = code
			if ver >= 1 {
				resp.ErrorMessage = &msg
			}
		}
		if ver >= 4 {
			for _, k := range req.CoordinatorKeys {
				resp.Coordinators = append(resp.Coordinators, codec.FindCoordinatorResponseCoordinator{Key: k, NodeId: -1, Port: -1, ErrorCode: code, ErrorMessage: &msg})
			}
		}
		return responseFrame(corr, key, ver, resp)
	case apiDescribeCluster:
		resp := codec.NewDescribeClusterResponse()
		resp.ErrorCode, resp.ErrorMessage, resp.ControllerId = code, &msg, -1
		if ver >= 1 {
			var req codec.DescribeClusterRequest
			if err := req.Decode(body, ver); err == nil {
				resp.EndpointType = req.EndpointType
			}
		}
		return responseFrame(corr, key, ver, resp)
	case apiApiVersions:
		resp := codec.NewApiVersionsResponse()
		resp.ErrorCode = code
		return responseFrame(corr, key, ver, resp)
	}
	var tf transcode.Framer
	var lastErr error
	for _, body := range []string{
		`{"errorCode":` + strconv.Itoa(int(code)) + `,"errorMessage":"` + msg + `"}`,
		`{"errorCode":` + strconv.Itoa(int(code)) + `}`,
		`{}`,
	} {
		js := `{"header":{"correlationId":` + strconv.Itoa(int(corr)) + `},"body":` + body + `}`
		out, err := tf.AppendResponseFrame(nil, []byte(js), key, ver)
		if err == nil {
			return out, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("no error response for api key %d v%d: %w", key, ver, lastErr)
}

// rewriteResponse decodes a response the filter changes and returns the new frame,
// or nil when nothing changed.
func (c *Conn) rewriteResponse(p *pend, frame []byte) ([]byte, error) {
	f := c.f
	hlen, err := responseHeaderLen(frame, p.key, p.ver)
	if err != nil {
		return nil, err
	}
	body := frame[hlen:]
	changed := false
	var out encoder
	switch p.kind {
	case kindMetadata:
		var r codec.MetadataResponse
		if err := r.Decode(body, p.ver); err != nil {
			return nil, err
		}
		for i := range r.Brokers {
			b := &r.Brokers[i]
			changed = f.mapNode(b.NodeId, &b.Host, &b.Port) || changed
		}
		if f.s.learnTopicID && p.ver >= 10 {
			for _, t := range r.Topics {
				if t.Name != nil && t.TopicId != (codec.UUID{}) {
					f.topicNames[t.TopicId] = *t.Name
				}
			}
		}
		out = &r
	case kindFindCoord:
		var r codec.FindCoordinatorResponse
		if err := r.Decode(body, p.ver); err != nil {
			return nil, err
		}
		if p.ver < 4 {
			if r.ErrorCode == 0 {
				changed = f.mapNode(r.NodeId, &r.Host, &r.Port)
			}
		}
		for i := range r.Coordinators {
			k := &r.Coordinators[i]
			if k.ErrorCode == 0 {
				changed = f.mapNode(k.NodeId, &k.Host, &k.Port) || changed
			}
		}
		out = &r
	case kindDescCluster:
		var r codec.DescribeClusterResponse
		if err := r.Decode(body, p.ver); err != nil {
			return nil, err
		}
		for i := range r.Brokers {
			b := &r.Brokers[i]
			changed = f.mapNode(b.BrokerId, &b.Host, &b.Port) || changed
		}
		out = &r
	case kindApiVersions:
		var r codec.ApiVersionsResponse
		if err := r.Decode(body, p.ver); err != nil {
			return nil, err
		}
		for i := range r.ApiKeys {
			k := &r.ApiKeys[i]
			if k.ApiKey == apiProduce && k.MaxVersion > f.s.maxProduceV && k.MinVersion <= f.s.maxProduceV {
				k.MaxVersion = f.s.maxProduceV
				changed = true
			}
		}
		out = &r
	case kindProduce:
		var r codec.ProduceResponse
		if err := r.Decode(body, p.ver); err != nil {
			return nil, err
		}
		for i := range r.NodeEndpoints {
			n := &r.NodeEndpoints[i]
			changed = f.mapNode(n.NodeId, &n.Host, &n.Port) || changed
		}
		if len(p.rejected) > 0 {
			mergeRejected(&r, p.rejected)
			changed = true
		}
		out = &r
	default:
		return nil, nil
	}
	if !changed {
		return nil, nil
	}
	return reframe(frame, hlen, p.ver, out)
}

// mapNode rewrites one broker address from the brokers map; it reports whether
// anything changed.
func (f *Filter) mapNode(id int32, host *string, port *int32) bool {
	if f.s.brokers == nil {
		return false
	}
	hp, ok := f.s.brokers[id]
	if !ok {
		f.inc(f.mUnmapped, 1)
		return false
	}
	f.inc(f.mRewritten, 1)
	if *host == hp.host && *port == hp.port {
		return false
	}
	*host, *port = hp.host, hp.port
	return true
}
