// Package recordsjson is the JSON form of record batches that kwire's flat ABI speaks
// (kw_records_decode_json and kw_records_encode in capi/kwire.h): one record as a JSON
// object, and a batch to build described as JSON. It reads and writes JSON with the
// same strict reader and writer as the message codec.
package recordsjson

import (
	"errors"
	"math"
	"strconv"
	"unsafe"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/internal/errtext"
	"github.com/kwire/kwire/internal/jsonx"
)

// AppendString appends s as a JSON string (invalid UTF-8 becomes U+FFFD), as the JSON
// form writes strings.
func AppendString(b []byte, s string) []byte { return jsonx.AppendString(b, s) }

func appendBase64(b, v []byte) []byte { return jsonx.AppendBytes(b, v, true) }

func appendInt(b []byte, key string, v int64) []byte {
	b = jsonx.Key(b, false, key)
	return jsonx.AppendInt(b, v)
}

// ControlType is the control record type of m, or -1 when m is not a control record.
func ControlType(m *records.Message) int32 {
	if !m.Control {
		return -1
	}
	return int32(m.ControlRecord.Type)
}

// AppendMessage appends the JSON object of one record (see kw_records_decode_json).
func AppendMessage(b []byte, m *records.Message) []byte {
	b = append(b, `{"offset":`...)
	b = jsonx.AppendInt64(b, m.Offset)
	b = append(b, `,"timestamp":`...)
	b = jsonx.AppendInt64(b, m.Timestamp)
	b = append(b, `,"timestampType":`...)
	b = jsonx.AppendString(b, m.TimestampType.String())
	b = append(b, `,"key":`...)
	b = appendBase64(b, m.Key)
	b = append(b, `,"value":`...)
	b = appendBase64(b, m.Value)
	b = append(b, `,"headers":[`...)
	for _, h := range m.Headers {
		b = jsonx.Elem(b, `{"key":`)
		b = jsonx.AppendString(b, unsafeString(h.Key))
		b = append(b, `,"value":`...)
		b = appendBase64(b, h.Value)
		b = append(b, '}')
	}
	b = append(b, `],"producerId":`...)
	b = jsonx.AppendInt64(b, m.ProducerID)
	b = appendInt(b, "producerEpoch", int64(m.ProducerEpoch))
	b = appendInt(b, "sequence", int64(m.Sequence))
	b = appendInt(b, "leaderEpoch", int64(m.LeaderEpoch))
	b = appendInt(b, "magic", int64(m.Magic))
	b = append(b, `,"compression":`...)
	b = jsonx.AppendString(b, m.Compression.String())
	b = append(b, `,"transactional":`...)
	b = strconv.AppendBool(b, m.Transactional)
	b = append(b, `,"control":`...)
	b = strconv.AppendBool(b, m.Control)
	b = appendInt(b, "controlType", int64(ControlType(m)))
	b = append(b, `,"schemaSource":`...)
	b = jsonx.AppendString(b, m.Schema.Source.String())
	b = appendInt(b, "schemaId", int64(m.Schema.ID))
	b = appendInt(b, "schemaVersion", int64(m.Schema.Version))
	return append(b, '}')
}

// BatchSpec is a batch to build (the input of kw_records_encode).
type BatchSpec struct {
	Magic                int8 // 2, or 0/1 for a legacy message set
	BaseOffset           int64
	PartitionLeaderEpoch int32
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	Transactional        bool
	LogAppendTime        bool  // timestampType "LogAppendTime"
	LogAppendValue       int64 // logAppendTime
	Level                int   // compression level on the codec's scale; 0 = default
	Records              []records.Record
}

// NewBatchSpec returns a spec holding the defaults of every optional key.
func NewBatchSpec() *BatchSpec {
	return &BatchSpec{Magic: 2, PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, LogAppendValue: -1}
}

// ParseBatchSpec reads the JSON description of a batch strictly: unknown keys, wrong
// types and a missing "records" key are *codec.JSONError values (message "records").
func ParseBatchSpec(json []byte) (*BatchSpec, error) {
	s := NewBatchSpec()
	d := jsonx.NewDecoder(json)
	hasRecords := s.readFields(d)
	d.End()
	if !d.Failed() && !hasRecords {
		d.Fail(jsonx.ErrType, `missing key "records"`)
	}
	if err := d.Err(); err != nil {
		return nil, jsonError(err)
	}
	return s, nil
}

// readBatchAttributes reads the batch keys of a spec (everything but "records") from
// an object being iterated: it handles key and reports whether it knew it.
func (s *BatchSpec) readBatchAttributes(d *jsonx.Decoder, key string) bool {
	switch key {
	case "magic":
		s.Magic = int8(d.Int(0, 2))
	case "baseOffset":
		s.BaseOffset = d.Int64()
	case "partitionLeaderEpoch":
		s.PartitionLeaderEpoch = int32(d.Int(math.MinInt32, math.MaxInt32))
	case "producerId":
		s.ProducerID = d.Int64()
	case "producerEpoch":
		s.ProducerEpoch = int16(d.Int(math.MinInt16, math.MaxInt16))
	case "baseSequence":
		s.BaseSequence = int32(d.Int(math.MinInt32, math.MaxInt32))
	case "transactional":
		s.Transactional = d.Bool()
	case "timestampType":
		at := d.Pos()
		switch v := string(d.StringBytes()); v {
		case "CreateTime":
			s.LogAppendTime = false
		case "LogAppendTime":
			s.LogAppendTime = true
		default:
			if !d.Failed() {
				d.Rewind(at)
				d.Fail(jsonx.ErrType, `want "CreateTime" or "LogAppendTime", got `+strconv.Quote(v))
			}
		}
	case "logAppendTime":
		s.LogAppendValue = d.Int64()
	case "level":
		s.Level = int(d.Int(math.MinInt32, math.MaxInt32))
	default:
		return false
	}
	return true
}

func (s *BatchSpec) readFields(d *jsonx.Decoder) (hasRecords bool) {
	d.Object(func(key string) {
		switch {
		case key == "records":
			hasRecords = true
			s.Records = readRecords(d, s.Records[:0])
		case s.readBatchAttributes(d, key):
		default:
			d.UnknownKey(key)
		}
	})
	return hasRecords
}

func readRecords(d *jsonx.Decoder, out []records.Record) []records.Record {
	if !d.BeginArray() {
		return out
	}
	for first := true; d.More(&first, ']'); {
		rec := records.Record{Timestamp: -1}
		d.Object(func(key string) {
			switch key {
			case "key":
				rec.Key = copyBytes(d.BytesView(true))
			case "value":
				rec.Value = copyBytes(d.BytesView(true))
			case "timestamp":
				rec.Timestamp = d.Int64()
			case "headers":
				rec.Headers = readHeaders(d)
			default:
				d.UnknownKey(key)
			}
		})
		if d.Failed() {
			d.PushIndex(len(out))
			return out
		}
		out = append(out, rec)
	}
	return out
}

func readHeaders(d *jsonx.Decoder) []records.Header {
	var hs []records.Header
	if !d.BeginArray() {
		return nil
	}
	for first := true; d.More(&first, ']'); {
		var h records.Header
		hasKey := false
		d.Object(func(key string) {
			switch key {
			case "key":
				h.Key = append([]byte{}, d.StringBytes()...)
				hasKey = true
			case "value":
				h.Value = copyBytes(d.BytesView(true))
			default:
				d.UnknownKey(key)
			}
		})
		if !d.Failed() && !hasKey {
			d.Fail(jsonx.ErrType, `a header needs "key"`)
		}
		if d.Failed() {
			d.PushIndex(len(hs))
			return hs
		}
		hs = append(hs, h)
	}
	return hs
}

func copyBytes(b []byte, null bool) []byte {
	if null || b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func jsonError(err error) error {
	var je *jsonx.Error
	if errors.As(err, &je) {
		return &codec.JSONError{Message: "records", Path: je.Path, Offset: je.Offset, Err: je.Err, Detail: je.Detail}
	}
	return err
}

// LegacyHeadersError reports record headers in a magic 0 or 1 message set, which cannot
// carry them.
type LegacyHeadersError struct {
	Record int  // index of the record in the spec
	Magic  int8 // the set's magic
}

// Error reports the record and the magic.
func (e *LegacyHeadersError) Error() string {
	return "kwire: records: json $.records[" + strconv.Itoa(e.Record) + "].headers: magic " +
		strconv.Itoa(int(e.Magic)) + " messages have no headers"
}

// Append encodes the spec's records into one batch (or legacy message set) compressed
// with c, as Kafka's producer does, and appends it to dst.
func (s *BatchSpec) Append(dst []byte, c records.Compression) ([]byte, error) {
	enc := records.Encoder{Level: s.Level}
	if s.Magic < 2 {
		if c == records.CompressionZstd {
			return dst, errtext.Wrap("kwire: zstd needs magic 2, not "+strconv.Itoa(int(s.Magic))+": "+
				records.ErrUnsupported.Error(), records.ErrUnsupported)
		}
		msgs := make([]records.LegacyMessage, len(s.Records))
		for i, r := range s.Records {
			if len(r.Headers) > 0 {
				return dst, &LegacyHeadersError{Record: i, Magic: s.Magic}
			}
			msgs[i] = records.LegacyMessage{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
		}
		set := records.LegacySet{Magic: s.Magic, Compression: c, TimestampType: records.CreateTime,
			BaseOffset: s.BaseOffset, LogAppendTime: s.LogAppendValue}
		if s.LogAppendTime {
			set.TimestampType = records.LogAppendTime
		}
		if s.Magic == 0 {
			set.TimestampType = records.NoTimestampType
		}
		return enc.AppendLegacySet(dst, set, msgs)
	}
	b := records.Batch{BaseOffset: s.BaseOffset, PartitionLeaderEpoch: s.PartitionLeaderEpoch, ProducerID: s.ProducerID,
		ProducerEpoch: s.ProducerEpoch, BaseSequence: s.BaseSequence, Attributes: int16(c)}
	if s.Transactional {
		b.Attributes |= records.AttrTransactional
	}
	b.SetDeltas(s.Records)
	if s.LogAppendTime {
		b.Attributes |= records.AttrLogAppendTime
		b.MaxTimestamp = s.LogAppendValue
	}
	return enc.AppendBatch(dst, &b, s.Records)
}

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// TableRef is a records field of a frame written against a record table (see
// kw_encode_request_frame_records): records FirstRecord .. FirstRecord+RecordCount-1 of
// the table, encoded into one batch with Compression and the batch keys of BatchSpec.
type TableRef struct {
	BatchSpec
	FirstRecord, RecordCount int
	Compression              records.Compression
}

// ParseTableRef reads a table reference object strictly.
func ParseTableRef(json []byte) (*TableRef, error) {
	ref := &TableRef{BatchSpec: *NewBatchSpec(), FirstRecord: -1, RecordCount: -1}
	d := jsonx.NewDecoder(json)
	d.Object(func(key string) {
		switch {
		case key == "firstRecord":
			ref.FirstRecord = int(d.Int(0, math.MaxInt32))
		case key == "recordCount":
			ref.RecordCount = int(d.Int(0, math.MaxInt32))
		case key == "skippedBytes" || key == "size":
			// What a decode wrote about the field it read; informational here.
			d.Int(0, math.MaxInt32)
		case key == "invalid":
			// A decode's verdict on a Produce partition's records; informational here.
			d.Skip()
		case key == "compression":
			c := string(d.StringBytes())
			if !d.Failed() {
				var ok bool
				if ref.Compression, ok = ParseCompression(c); !ok {
					d.Fail(jsonx.ErrType, `want "none", "gzip", "snappy", "lz4" or "zstd", got `+strconv.Quote(c))
				}
			}
		case ref.readBatchAttributes(d, key):
		default:
			d.UnknownKey(key)
		}
	})
	d.End()
	if !d.Failed() && (ref.FirstRecord < 0 || ref.RecordCount < 0) {
		d.Fail(jsonx.ErrType, `a records reference needs "firstRecord" and "recordCount"`)
	}
	if err := d.Err(); err != nil {
		return nil, jsonError(err)
	}
	return ref, nil
}

// ParseCompression reads a codec name as records.Compression.String writes it.
func ParseCompression(s string) (records.Compression, bool) {
	for c := records.CompressionNone; c <= records.CompressionZstd; c++ {
		if c.String() == s {
			return c, true
		}
	}
	return 0, false
}
