// Command kwirebatches writes record batches built by kwire, with what each
// must read as, in the JSON Lines form of conformance/vectors/records. Kafka's
// reader checks them (conformance/reference/records, mode verify).
//
//	go run ./codec/records/internal/kwirebatches -out build/records-kwire.jsonl
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"reflect"
	"strconv"

	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/internal/vecjson"
)

const t0 = 1_750_000_000_000

func value(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		if i%50 < 30 {
			b[i] = 'A' + byte(i/50%26)
		} else {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			b[i] = byte(x)
		}
	}
	return b
}

func sampleRecords(big bool) []records.Record {
	bigLen := 200
	if big {
		bigLen = 80_000
	}
	return []records.Record{
		{Timestamp: t0, Key: []byte("kwire-0"), Value: []byte("first"), Headers: []records.Header{
			{Key: []byte("trace"), Value: []byte("abc")}, {Key: []byte("trace"), Value: []byte("def")},
			{Key: []byte("nil"), Value: nil}, {Key: []byte(""), Value: []byte{}}}},
		{Timestamp: t0 + 10, Key: nil, Value: []byte("null key")},
		{Timestamp: t0 + 5, Key: []byte{}, Value: nil},
		{Timestamp: t0 - 50, Key: []byte("older"), Value: []byte{}},
		{Timestamp: t0 + 20, Key: []byte("big"), Value: value(bigLen, 7)},
		{Timestamp: t0 + 21, Key: []byte("ünïcødé"), Value: value(300, 9), Headers: []records.Header{{Key: []byte("schema.id"), Value: []byte("42")}}},
	}
}

func legacyMessages(big bool) []records.LegacyMessage {
	var out []records.LegacyMessage
	for _, r := range sampleRecords(big) {
		out = append(out, records.LegacyMessage{Timestamp: r.Timestamp, Key: r.Key, Value: r.Value})
	}
	return out
}

type builder struct {
	vs  []vecjson.Vector
	err error
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

// v2 adds a magic 2 batch built from recs, with what it must read as.
func (g *builder) v2(name string, enc records.Encoder, b records.Batch, recs []records.Record, control []*vecjson.Control) {
	b.SetDeltas(recs)
	if b.TimestampType() == records.LogAppendTime {
		b.MaxTimestamp = t0 + 777_777
	}
	if b.HasDeleteHorizon() {
		b.BaseTimestamp = t0 + 86_400_000
		for i := range recs {
			recs[i].TimestampDelta = recs[i].Timestamp - b.BaseTimestamp
		}
	}
	data, err := enc.AppendBatch(nil, &b, recs)
	if err != nil {
		g.err = fmt.Errorf("%s: %w", name, err)
		return
	}
	vb := vecjson.Batch{
		BaseOffset: i64(b.BaseOffset), LastOffset: i64(b.LastOffset()), Magic: 2, Compression: b.Compression().String(),
		TimestampType: b.TimestampType().String(), MaxTimestamp: i64(b.MaxTimestamp), ProducerID: i64(b.ProducerID),
		ProducerEpoch: b.ProducerEpoch, BaseSequence: b.BaseSequence, PartitionLeaderEpoch: b.PartitionLeaderEpoch,
		Transactional: b.IsTransactional(), Control: b.IsControl(), DeleteHorizonMs: i64(b.DeleteHorizonMs()),
		Records: []vecjson.Record{},
	}
	for i, r := range recs {
		ts := r.Timestamp
		if b.TimestampType() == records.LogAppendTime {
			ts = b.MaxTimestamp
		}
		vr := vecjson.Record{Offset: i64(b.BaseOffset + int64(i)), Timestamp: i64(ts),
			Sequence: records.RecordSequence(b.BaseSequence, int32(i)), Key: r.Key, Value: r.Value, Headers: []vecjson.Header{}}
		for _, h := range r.Headers {
			vr.Headers = append(vr.Headers, vecjson.Header{Key: string(h.Key), Value: h.Value})
		}
		if control != nil {
			vr.Control = control[i]
		}
		vb.Records = append(vb.Records, vr)
	}
	g.vs = append(g.vs, vecjson.Vector{Name: name, Source: "kwire", Bytes: data, Batches: []vecjson.Batch{vb}})
}

// legacy adds a magic 0 or 1 message set.
func (g *builder) legacy(name string, enc records.Encoder, s records.LegacySet, msgs []records.LegacyMessage) {
	data, err := enc.AppendLegacySet(nil, s, msgs)
	if err != nil {
		g.err = fmt.Errorf("%s: %w", name, err)
		return
	}
	tsType := s.TimestampType
	ts := func(m records.LegacyMessage) int64 {
		switch {
		case s.Magic == 0:
			return -1
		case tsType == records.LogAppendTime:
			return s.LogAppendTime
		}
		return m.Timestamp
	}
	if s.Magic == 0 {
		tsType = records.NoTimestampType
	}
	batch := func(base, last, maxTS int64) vecjson.Batch {
		return vecjson.Batch{BaseOffset: i64(base), LastOffset: i64(last), Magic: s.Magic, Compression: s.Compression.String(),
			TimestampType: tsType.String(), MaxTimestamp: i64(maxTS), ProducerID: "-1", ProducerEpoch: -1, BaseSequence: -1,
			PartitionLeaderEpoch: -1, DeleteHorizonMs: "-1", Records: []vecjson.Record{}}
	}
	rec := func(i int, m records.LegacyMessage) vecjson.Record {
		return vecjson.Record{Offset: i64(s.BaseOffset + int64(i)), Timestamp: i64(ts(m)), Sequence: -1, Key: m.Key, Value: m.Value, Headers: []vecjson.Header{}}
	}
	var bs []vecjson.Batch
	if s.Compression == records.CompressionNone {
		for i, m := range msgs {
			b := batch(s.BaseOffset+int64(i), s.BaseOffset+int64(i), ts(m))
			b.Records = append(b.Records, rec(i, m))
			bs = append(bs, b)
		}
	} else {
		maxTS := int64(-1)
		for _, m := range msgs {
			maxTS = max(maxTS, ts(m))
		}
		b := batch(s.BaseOffset, s.BaseOffset+int64(len(msgs))-1, maxTS)
		for i, m := range msgs {
			b.Records = append(b.Records, rec(i, m))
		}
		bs = append(bs, b)
	}
	g.vs = append(g.vs, vecjson.Vector{Name: name, Source: "kwire", Bytes: data, Batches: bs})
}

func main() {
	out := flag.String("out", "build/records-kwire.jsonl", "output file")
	mutate := flag.Bool("mutate", false, "spoil every vector (bytes or expectation) so that a checker must reject each one")
	flag.Parse()
	var g builder
	codecs := []records.Compression{records.CompressionNone, records.CompressionGzip, records.CompressionSnappy, records.CompressionLZ4, records.CompressionZstd}
	plain := records.Batch{BaseOffset: 100, PartitionLeaderEpoch: 4, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	for _, c := range codecs {
		b := plain
		b.Attributes = int16(c)
		g.v2("kwire-v2-"+c.String(), records.Encoder{}, b, sampleRecords(true), nil)
		b.ProducerID, b.ProducerEpoch, b.BaseSequence = 1234, 5, 100
		g.v2("kwire-v2-idempotent-"+c.String(), records.Encoder{}, b, sampleRecords(false), nil)
		b.Attributes |= records.AttrTransactional
		g.v2("kwire-v2-transactional-"+c.String(), records.Encoder{}, b, sampleRecords(false), nil)
	}
	for _, lv := range []struct {
		c     records.Compression
		level int
	}{{records.CompressionGzip, 1}, {records.CompressionGzip, 9}, {records.CompressionLZ4, 9}, {records.CompressionZstd, 1}, {records.CompressionZstd, 19}} {
		b := plain
		b.Attributes = int16(lv.c)
		g.v2(fmt.Sprintf("kwire-v2-%v-level-%d", lv.c, lv.level), records.Encoder{Level: lv.level}, b, sampleRecords(true), nil)
	}
	{
		b := plain
		b.Attributes = int16(records.CompressionSnappy)
		g.v2("kwire-v2-snappy-raw", records.Encoder{RawSnappy: true}, b, sampleRecords(true), nil)
		b = plain
		b.Attributes = records.AttrLogAppendTime | int16(records.CompressionLZ4)
		g.v2("kwire-v2-log-append-time", records.Encoder{}, b, sampleRecords(false), nil)
		b = plain
		b.Attributes = records.AttrHasDeleteHorizon
		g.v2("kwire-v2-delete-horizon", records.Encoder{}, b, sampleRecords(false), nil)
		b = plain
		var many []records.Record
		for i := 0; i < 1000; i++ {
			many = append(many, records.Record{Timestamp: t0 + int64(i), Key: []byte(strconv.Itoa(i)), Value: bytes.Repeat([]byte{byte(i)}, i%17)})
		}
		b.Attributes = int16(records.CompressionZstd)
		g.v2("kwire-v2-zstd-1000-records", records.Encoder{}, b, many, nil)
		b.ProducerID, b.ProducerEpoch, b.BaseSequence = 77, 0, 2147483600
		b.Attributes = int16(records.CompressionNone)
		g.v2("kwire-v2-sequence-wrap", records.Encoder{}, b, many[:100], nil)
	}
	for _, ct := range []records.ControlType{records.ControlCommit, records.ControlAbort} {
		b := records.Batch{BaseOffset: 3000, PartitionLeaderEpoch: 9, ProducerID: 9001, ProducerEpoch: 2, BaseSequence: -1,
			Attributes: records.AttrControl | records.AttrTransactional}
		rec := []records.Record{{Timestamp: t0 + 1, Key: records.AppendControlKey(nil, ct), Value: records.AppendEndTxnMarker(nil, 13)}}
		epoch := int32(13)
		g.v2("kwire-v2-control-"+ct.String(), records.Encoder{}, b, rec, []*vecjson.Control{{Type: ct.String(), CoordinatorEpoch: &epoch}})
	}
	for _, magic := range []int8{0, 1} {
		for _, c := range codecs[:4] {
			g.legacy(fmt.Sprintf("kwire-v%d-%v", magic, c), records.Encoder{}, records.LegacySet{Magic: magic, Compression: c, BaseOffset: 500}, legacyMessages(magic == 1))
		}
	}
	for _, c := range codecs[:4] {
		g.legacy("kwire-v1-log-append-time-"+c.String(), records.Encoder{},
			records.LegacySet{Magic: 1, Compression: c, TimestampType: records.LogAppendTime, BaseOffset: 600, LogAppendTime: t0 + 999}, legacyMessages(false))
	}
	if g.err != nil {
		fmt.Fprintln(os.Stderr, "kwirebatches:", g.err)
		os.Exit(1)
	}
	// A fetch-like run of entries of every magic, back to back.
	var fetch vecjson.Vector
	fetch.Name, fetch.Source = "kwire-fetch-mixed", "kwire"
	for _, n := range []string{"kwire-v1-gzip", "kwire-v2-zstd", "kwire-v0-none", "kwire-v2-control-COMMIT"} {
		for _, v := range g.vs {
			if v.Name == n {
				fetch.Bytes = append(fetch.Bytes, v.Bytes...)
				fetch.Batches = append(fetch.Batches, v.Batches...)
			}
		}
	}
	g.vs = append(g.vs, fetch)

	// Check every vector reads back as intended before handing it to Java.
	for _, v := range g.vs {
		got, err := vecjson.Describe(records.NewDecoder(records.Options{}), v.Bytes)
		if err != nil || !reflect.DeepEqual(got, v.Batches) {
			fmt.Fprintf(os.Stderr, "kwirebatches: %s does not read back as built (%v)\n", v.Name, err)
			os.Exit(1)
		}
	}
	if *mutate {
		for i := range g.vs {
			v := &g.vs[i]
			if i%2 == 0 {
				// A flipped bit in the last byte: the checksum no longer matches.
				v.Bytes = append([]byte{}, v.Bytes...)
				v.Bytes[len(v.Bytes)-1] ^= 0x10
			} else {
				// The bytes are fine, but the expectation is off by one offset.
				r := &v.Batches[0].Records[0]
				n, _ := strconv.ParseInt(r.Offset, 10, 64)
				r.Offset = i64(n + 1)
			}
		}
	}
	if err := vecjson.Write(*out, g.vs); err != nil {
		fmt.Fprintln(os.Stderr, "kwirebatches:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %d kwire-built record vectors to %s\n", len(g.vs), *out)
}
