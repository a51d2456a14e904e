package records

import "math"

// Legacy messages (magic 0 and 1), after the 12-byte offset and size prefix:
//
//	crc uint32 | magic int8 | attributes int8 | timestamp int64 (magic 1 only)
//	| key int32-length bytes | value int32-length bytes
//
// A compressed message set is one "wrapper" message whose value is the
// compressed bytes of a message set of inner messages. With magic 1 the inner
// offsets are relative (0, 1, ...) and the wrapper carries the absolute offset
// of the last inner message; with magic 0 the inner offsets are absolute.

const (
	legacyAttrCompressionMask int8 = 0x07
	legacyAttrLogAppendTime   int8 = 0x08
)

// legacyMinSize is the smallest size (after the 12-byte prefix) of a message.
func legacyMinSize(magic int8) int32 {
	if magic == 0 {
		return 14
	}
	return 22
}

// LegacyMessage is one magic 0 or 1 message.
type LegacyMessage struct {
	Offset     int64
	Magic      int8
	CRC        uint32
	Attributes int8
	// Timestamp is -1 for magic 0, which has no timestamp.
	Timestamp int64
	Key       []byte
	Value     []byte
}

// Compression is the codec of a wrapper message's inner set (attribute bits 0-2).
func (m *LegacyMessage) Compression() Compression {
	return Compression(m.Attributes & legacyAttrCompressionMask)
}

// TimestampType is NoTimestampType for magic 0, else CreateTime or LogAppendTime
// (attribute bit 3).
func (m *LegacyMessage) TimestampType() TimestampType {
	if m.Magic == 0 {
		return NoTimestampType
	}
	if m.Attributes&legacyAttrLogAppendTime != 0 {
		return LogAppendTime
	}
	return CreateTime
}

// ParseLegacyMessage reads the legacy message at the start of src and returns
// it with its size on the wire.
func ParseLegacyMessage(src []byte, skipCRC bool) (LegacyMessage, int, error) {
	var m LegacyMessage
	if len(src) < LogOverhead {
		return m, 0, newErr(-1, -1, "size", len(src), detail(ErrTruncated, "%d bytes, need %d for offset and size", len(src), LogOverhead))
	}
	m.Offset = int64(be.Uint64(src))
	size := int32(be.Uint32(src[8:]))
	if size < legacyMinSize(0) {
		return m, 0, newErr(m.Offset, -1, "size", 8, detail(ErrCorrupt, "message size %d is below the minimum of %d", size, legacyMinSize(0)))
	}
	if int64(size) > int64(len(src)-LogOverhead) {
		return m, 0, newErr(m.Offset, -1, "size", 8, detail(ErrTruncated, "message size %d, %d bytes present", size, len(src)-LogOverhead))
	}
	end := LogOverhead + int(size)
	src = src[:end]
	m.CRC = be.Uint32(src[12:])
	m.Magic = int8(src[16])
	if m.Magic != 0 && m.Magic != 1 {
		return m, 0, newErr(m.Offset, -1, "magic", 16, detail(ErrUnsupported, "magic %d is not a legacy message", m.Magic))
	}
	if size < legacyMinSize(m.Magic) {
		return m, 0, newErr(m.Offset, -1, "size", 8, detail(ErrCorrupt, "magic %d message size %d is below the minimum of %d", m.Magic, size, legacyMinSize(m.Magic)))
	}
	if !skipCRC {
		if c := CRC32(src[16:]); c != m.CRC {
			return m, 0, newErr(m.Offset, -1, "crc", 12, detail(ErrCRC, "stored %#08x, computed %#08x", m.CRC, c))
		}
	}
	m.Attributes = int8(src[17])
	pos := 18
	m.Timestamp = -1
	if m.Magic == 1 {
		m.Timestamp = int64(be.Uint64(src[pos:]))
		pos += 8
	}
	var err error
	at := pos
	if m.Key, pos, err = readBytes32(src, pos); err != nil {
		return m, 0, newErr(m.Offset, -1, "key", at, err)
	}
	at = pos
	if m.Value, pos, err = readBytes32(src, pos); err != nil {
		return m, 0, newErr(m.Offset, -1, "value", at, err)
	}
	if pos != end {
		return m, 0, newErr(m.Offset, -1, "size", 8, detail(ErrCorrupt, "message size %d, but its fields take %d", size, pos-LogOverhead))
	}
	if c := m.Compression(); c > CompressionLZ4 {
		return m, 0, newErr(m.Offset, -1, "attributes", 17, detail(ErrUnsupported, "compression codec %d with magic %d", int(c), m.Magic))
	}
	return m, end, nil
}

func readBytes32(b []byte, pos int) ([]byte, int, error) {
	if len(b)-pos < 4 {
		return nil, pos, detail(ErrTruncated, "length runs past the end")
	}
	n := int32(be.Uint32(b[pos:]))
	pos += 4
	if n < 0 {
		return nil, pos, nil
	}
	if int64(n) > int64(len(b)-pos) {
		return nil, pos, detail(ErrTruncated, "length %d, %d bytes left", n, len(b)-pos)
	}
	return b[pos : pos+int(n) : pos+int(n)], pos + int(n), nil
}

// ForEachInner decompresses the wrapper message w and calls fn for each inner
// message, with offsets and timestamps resolved as Kafka's reader does: magic 1
// inner offsets are relative to the wrapper's (which is the last inner
// message's absolute offset); a LogAppendTime wrapper's timestamp replaces the
// inner ones. The message passed to fn is reused; its key and value alias the
// decoder's buffer. For an uncompressed message fn is called once with it.
func (d *Decoder) ForEachInner(w *LegacyMessage, fn func(m *LegacyMessage) error) error {
	c := w.Compression()
	if c == CompressionNone {
		m := *w
		return fn(&m)
	}
	if w.Value == nil {
		return newErr(w.Offset, -1, "value", 0, detail(ErrCorrupt, "compressed wrapper with a null value"))
	}
	out, err := decompress(d.buf, c, w.Value, d.limit(), w.Magic)
	if cap(out) > cap(d.buf) {
		d.buf = out[:0]
	}
	if err != nil {
		return newErr(w.Offset, -1, "value", 0, err)
	}
	// Pass 1: validate every inner message and find the last inner offset.
	var last int64
	n := 0
	for pos := 0; pos < len(out); {
		m, size, err := ParseLegacyMessage(out[pos:], d.SkipCRC)
		if err != nil {
			e := err.(*Error)
			e.Offset += pos
			e.Record = n
			e.BaseOffset = w.Offset
			e.Decompressed = true
			return e
		}
		if m.Magic != w.Magic {
			return &Error{BaseOffset: w.Offset, Record: n, Field: "magic", Offset: pos + 16, Decompressed: true,
				Err: detail(ErrCorrupt, "inner magic %d in a magic %d wrapper", m.Magic, w.Magic)}
		}
		if m.Compression() != CompressionNone {
			return &Error{BaseOffset: w.Offset, Record: n, Field: "attributes", Offset: pos + 17, Decompressed: true,
				Err: detail(ErrCorrupt, "nested compression")}
		}
		last = m.Offset
		n++
		pos += size
	}
	if n == 0 {
		return newErr(w.Offset, -1, "value", 0, detail(ErrCorrupt, "compressed wrapper holds no messages"))
	}
	var base int64 = -1
	if w.Magic > 0 {
		base = w.Offset - last
	}
	logAppend := w.Magic > 0 && w.TimestampType() == LogAppendTime
	// Pass 2: hand them out.
	for pos := 0; pos < len(out); {
		m, size, _ := ParseLegacyMessage(out[pos:], true)
		pos += size
		if base >= 0 {
			m.Offset = base + m.Offset
		}
		if logAppend {
			m.Timestamp = w.Timestamp
			m.Attributes |= legacyAttrLogAppendTime
		}
		if err := fn(&m); err != nil {
			return err
		}
	}
	return nil
}

// AppendLegacyMessage appends one legacy message as it stands (CRC computed).
func AppendLegacyMessage(dst []byte, m *LegacyMessage) ([]byte, error) {
	if m.Magic != 0 && m.Magic != 1 {
		return dst, newErr(m.Offset, -1, "magic", 16, detail(ErrUnsupported, "magic %d is not a legacy message", m.Magic))
	}
	size := int64(legacyMinSize(m.Magic)) + int64(len(m.Key)) + int64(len(m.Value))
	if size > math.MaxInt32 {
		return dst, newErr(m.Offset, -1, "size", 8, detail(ErrCorrupt, "message of %d bytes", size))
	}
	start := len(dst)
	dst = be.AppendUint64(dst, uint64(m.Offset))
	dst = be.AppendUint32(dst, uint32(size))
	dst = be.AppendUint32(dst, 0)
	dst = append(dst, byte(m.Magic), byte(m.Attributes))
	if m.Magic == 1 {
		dst = be.AppendUint64(dst, uint64(m.Timestamp))
	}
	dst = appendBytes32(dst, m.Key)
	dst = appendBytes32(dst, m.Value)
	m.CRC = CRC32(dst[start+16:])
	be.PutUint32(dst[start+12:], m.CRC)
	return dst, nil
}

func appendBytes32(dst, b []byte) []byte {
	if b == nil {
		return be.AppendUint32(dst, 0xFFFFFFFF)
	}
	dst = be.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

// LegacySet describes a legacy message set to write.
type LegacySet struct {
	Magic         int8 // 0 or 1
	Compression   Compression
	TimestampType TimestampType // magic 1: CreateTime or LogAppendTime
	BaseOffset    int64
	// LogAppendTime is the wrapper timestamp of a LogAppendTime set.
	LogAppendTime int64
}

// AppendLegacySet appends msgs as a legacy message set the way Kafka's
// MemoryRecordsBuilder writes one: message i gets offset BaseOffset+i; with
// compression, one wrapper message holds them (inner offsets relative for magic
// 1, absolute for magic 0; wrapper offset = last offset, wrapper timestamp = the
// largest timestamp, or LogAppendTime). Only Key, Value and Timestamp of msgs
// are used.
func (e *Encoder) AppendLegacySet(dst []byte, s LegacySet, msgs []LegacyMessage) ([]byte, error) {
	if s.Magic != 0 && s.Magic != 1 {
		return dst, newErr(s.BaseOffset, -1, "magic", 16, detail(ErrUnsupported, "magic %d is not a legacy message", s.Magic))
	}
	if s.Compression > CompressionLZ4 || s.Compression < 0 {
		return dst, newErr(s.BaseOffset, -1, "attributes", 17, detail(ErrUnsupported, "compression %v with magic %d", s.Compression, s.Magic))
	}
	var attr int8
	if s.Magic == 1 && s.TimestampType == LogAppendTime {
		attr = legacyAttrLogAppendTime
	}
	ts := func(m *LegacyMessage) int64 {
		if s.Magic == 0 {
			return -1
		}
		if s.TimestampType == LogAppendTime {
			return s.LogAppendTime
		}
		return m.Timestamp
	}
	start := len(dst)
	var err error
	if s.Compression == CompressionNone {
		for i := range msgs {
			m := LegacyMessage{Offset: s.BaseOffset + int64(i), Magic: s.Magic, Attributes: attr, Timestamp: ts(&msgs[i]), Key: msgs[i].Key, Value: msgs[i].Value}
			if dst, err = AppendLegacyMessage(dst, &m); err != nil {
				return dst[:start], err
			}
		}
		return dst, nil
	}
	if len(msgs) == 0 {
		return dst, nil
	}
	inner := e.scratch[:0]
	maxTS := int64(-1)
	for i := range msgs {
		off := s.BaseOffset + int64(i)
		if s.Magic == 1 {
			off = int64(i)
		}
		m := LegacyMessage{Offset: off, Magic: s.Magic, Attributes: attr, Timestamp: ts(&msgs[i]), Key: msgs[i].Key, Value: msgs[i].Value}
		if m.Timestamp > maxTS {
			maxTS = m.Timestamp
		}
		if inner, err = AppendLegacyMessage(inner, &m); err != nil {
			return dst[:start], err
		}
	}
	e.scratch = inner[:0]
	w := LegacyMessage{Offset: s.BaseOffset + int64(len(msgs)) - 1, Magic: s.Magic, Attributes: attr | int8(s.Compression)}
	w.Timestamp = -1
	if s.Magic == 1 {
		w.Timestamp = maxTS
		if s.TimestampType == LogAppendTime {
			w.Timestamp = s.LogAppendTime
		}
	}
	// Write the wrapper with the compressed value in place.
	dst = be.AppendUint64(dst, uint64(w.Offset))
	sizeAt := len(dst)
	dst = be.AppendUint32(dst, 0)
	dst = be.AppendUint32(dst, 0)
	dst = append(dst, byte(w.Magic), byte(w.Attributes))
	if w.Magic == 1 {
		dst = be.AppendUint64(dst, uint64(w.Timestamp))
	}
	dst = be.AppendUint32(dst, 0xFFFFFFFF) // null key
	valAt := len(dst)
	dst = be.AppendUint32(dst, 0)
	if dst, err = compress(dst, s.Compression, inner, e.Level, s.Magic, e.RawSnappy); err != nil {
		return dst[:start], newErr(w.Offset, -1, "value", valAt-start, err)
	}
	vlen := len(dst) - valAt - 4
	total := len(dst) - start - LogOverhead
	if total > math.MaxInt32 {
		return dst[:start], newErr(w.Offset, -1, "size", 8, detail(ErrCorrupt, "message of %d bytes", total))
	}
	be.PutUint32(dst[valAt:], uint32(vlen))
	be.PutUint32(dst[sizeAt:], uint32(total))
	be.PutUint32(dst[start+12:], CRC32(dst[start+16:]))
	return dst, nil
}
