package records

import (
	"errors"

	"github.com/kwire/kwire/internal/proto"
)

// SchemaSource tells where a message's schema reference came from.
type SchemaSource int8

// Where a record's schema reference was found.
const (
	SchemaNone        SchemaSource = 0
	SchemaValuePrefix SchemaSource = 1 // Confluent wire format: 0x00 + 4-byte id
	SchemaHeader      SchemaSource = 2 // record headers, see the package doc
)

// String is the source's name as verdict JSON writes it.
func (s SchemaSource) String() string {
	return proto.EnumString(schemaSourceNames[:], 0, int(s), "SchemaSource")
}

// schemaSourceNames are the names of the sources from SchemaNone (0) up.
var schemaSourceNames = [...]string{"none", "value-prefix", "header"}

// Header keys of the schema reference convention (see the package doc).
const (
	SchemaIDHeader      = "schema.id"
	SchemaVersionHeader = "schema.version"
)

// SchemaRef is a message's schema reference. ID and Version are -1 when unknown.
type SchemaRef struct {
	Source  SchemaSource
	ID      int32
	Version int32
}

// Message is one record as an application or a filter sees it: where it is,
// what it holds, who produced it and how. Key, Value and header data alias the
// decoded input or the decoder's decompression buffer.
type Message struct {
	Topic         string
	TopicID       [16]byte // set by the FetchResponse helpers from v13 on
	Partition     int32
	Offset        int64
	Timestamp     int64
	TimestampType TimestampType
	Key           []byte // nil when null
	Value         []byte // nil when null
	Headers       []Header

	// Producer fields come from the batch; a legacy message has -1 for all three.
	ProducerID    int64
	ProducerEpoch int16
	Sequence      int32 // BaseSequence+OffsetDelta, -1 when the batch has none

	LeaderEpoch int32 // the batch's partition leader epoch, -1 for legacy messages
	Magic       int8
	Compression Compression

	Transactional bool
	Control       bool
	// Aborted is set by ForEachFetchMessage on data of an aborted transaction.
	Aborted bool
	// ControlRecord is the typed control record when Control is set.
	ControlRecord ControlRecord

	Schema SchemaRef

	batchLastOffset int64
}

// Payload is the value without the Confluent wire-format prefix when the schema
// reference came from that prefix, else the value itself.
func (m *Message) Payload() []byte {
	if m.Schema.Source == SchemaValuePrefix && len(m.Value) >= 5 {
		return m.Value[5:]
	}
	return m.Value
}

// HeaderValue returns the value of the last header named key, and whether one
// was found.
func (m *Message) HeaderValue(key string) ([]byte, bool) {
	for i := len(m.Headers) - 1; i >= 0; i-- {
		if string(m.Headers[i].Key) == key {
			return m.Headers[i].Value, true
		}
	}
	return nil, false
}

// ResolveSchema reads the schema reference of a record: headers first
// ("schema.id", and "schema.version", as decimal ASCII int32), then the
// Confluent wire-format prefix of the value (magic byte 0 and a 4-byte
// big-endian id, at least 5 bytes).
func ResolveSchema(value []byte, headers []Header) SchemaRef {
	ref := SchemaRef{ID: -1, Version: -1}
	var idh, verh []byte
	var haveID, haveVer bool
	for i := range headers {
		switch string(headers[i].Key) {
		case SchemaIDHeader:
			idh, haveID = headers[i].Value, true
		case SchemaVersionHeader:
			verh, haveVer = headers[i].Value, true
		}
	}
	if haveVer {
		if v, ok := parseInt32(verh); ok {
			ref.Version = v
		}
	}
	if haveID {
		if v, ok := parseInt32(idh); ok {
			ref.ID = v
			ref.Source = SchemaHeader
			return ref
		}
	}
	if len(value) >= 5 && value[0] == 0 {
		ref.ID = int32(be.Uint32(value[1:]))
		ref.Source = SchemaValuePrefix
	}
	return ref
}

func parseInt32(b []byte) (int32, bool) {
	if len(b) == 0 || len(b) > 11 {
		return 0, false
	}
	neg := false
	if b[0] == '-' {
		neg = true
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	if v < -1<<31 || v > 1<<31-1 {
		return 0, false
	}
	return int32(v), true
}

// RecordSequence is the sequence number of the record at offsetDelta in a batch
// whose base sequence is base (-1 when base is -1), wrapping as Kafka does.
func RecordSequence(base int32, delta int32) int32 {
	if base < 0 {
		return -1
	}
	if base > 1<<31-1-delta {
		return delta - (1<<31 - 1 - base) - 1
	}
	return base + delta
}

// ForEachMessage decodes every batch and legacy message in src (the records
// field of a Fetch or Produce partition) and calls fn with each message. The
// Message passed to fn is reused between calls, and its byte slices alias src
// or the decoder's buffer; copy what must outlive the call. topic and partition
// are copied into every message.
//
// A partial batch at the end of src is skipped, as Kafka's readers do, and its
// size is returned as skipped. Any other malformed input stops the walk with an
// *Error. An error returned by fn stops it too and is returned as is.
func (d *Decoder) ForEachMessage(src []byte, topic string, partition int32, fn func(m *Message) error) (skipped int, err error) {
	m := &d.msg
	pos := 0
	for pos < len(src) {
		size, magic, err := PeekEntry(src[pos:])
		if err != nil {
			return 0, shift(err, pos)
		}
		if size == 0 {
			return len(src) - pos, nil
		}
		entry := src[pos : pos+size]
		switch magic {
		case 2:
			if err := d.batchMessages(entry, pos, topic, partition, m, fn); err != nil {
				return 0, err
			}
		case 0, 1:
			if err := d.legacyMessages(entry, pos, topic, partition, m, fn); err != nil {
				return 0, err
			}
		default:
			return 0, newErr(int64(be.Uint64(entry)), -1, "magic", pos+offMagic, detail(ErrUnsupported, "magic %d", magic))
		}
		pos += size
	}
	return 0, nil
}

func shift(err error, by int) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) && !e.Decompressed {
		e.Offset += by
	}
	return err
}

func (d *Decoder) batchMessages(entry []byte, at int, topic string, partition int32, m *Message, fn func(*Message) error) error {
	b, _, err := ParseBatch(entry, d.SkipCRC)
	if err != nil {
		return shift(err, at)
	}
	it, err := d.Records(&b)
	if err != nil {
		return shift(err, at)
	}
	control := b.IsControl()
	var r Record
	for it.Next(&r) {
		*m = Message{
			Topic:         topic,
			Partition:     partition,
			Offset:        r.Offset,
			Timestamp:     r.Timestamp,
			TimestampType: b.TimestampType(),
			Key:           r.Key,
			Value:         r.Value,
			Headers:       r.Headers,
			ProducerID:    b.ProducerID,
			ProducerEpoch: b.ProducerEpoch,
			Sequence:      RecordSequence(b.BaseSequence, r.OffsetDelta),
			LeaderEpoch:   b.PartitionLeaderEpoch,
			Magic:         2,
			Compression:   b.Compression(),
			Transactional: b.IsTransactional(),
			Control:       control,

			batchLastOffset: b.LastOffset(),
		}
		if control {
			cr, err := ParseControlRecord(r.Key, r.Value)
			if err != nil {
				e := it.fail(it.Index()-1, "key", it.last, err)
				if !e.(*Error).Decompressed {
					e.(*Error).Offset += at
				}
				return e
			}
			m.ControlRecord = cr
			m.Schema = SchemaRef{ID: -1, Version: -1}
		} else {
			m.Schema = ResolveSchema(r.Value, r.Headers)
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return shift(it.Err(), at)
}

func (d *Decoder) legacyMessages(entry []byte, at int, topic string, partition int32, m *Message, fn func(*Message) error) error {
	w, _, err := ParseLegacyMessage(entry, d.SkipCRC)
	if err != nil {
		return shift(err, at)
	}
	err = d.ForEachInner(&w, func(lm *LegacyMessage) error {
		*m = Message{
			Topic:         topic,
			Partition:     partition,
			Offset:        lm.Offset,
			Timestamp:     lm.Timestamp,
			TimestampType: lm.TimestampType(),
			Key:           lm.Key,
			Value:         lm.Value,
			ProducerID:    -1,
			ProducerEpoch: -1,
			Sequence:      -1,
			LeaderEpoch:   -1,
			Magic:         lm.Magic,
			Compression:   w.Compression(),
			Schema:        ResolveSchema(lm.Value, nil),
		}
		return fn(m)
	})
	if e, ok := err.(*Error); ok && !e.Decompressed {
		e.Offset += at
	}
	return err
}
