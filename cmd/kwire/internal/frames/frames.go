// Package frames writes Kafka frames as the kwire command's JSON lines: the frame's place
// in the traffic (time, connection, direction, correlation id, size, latency) and then
// its header and body in the JSON form of the transcoder, with the records fields
// decoded into batches and records instead of base64.
//
// A Writer is reusable and not safe for concurrent use. Its output buffers are kept
// from frame to frame, so a steady stream of frames allocates nothing per frame beyond
// what the transcoder needs.
package frames

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/codec/records/recordsjson"
	"github.com/kwire/kwire/codec/transcode"
)

// Meta is where a frame was seen. Zero values are left out of the line: a zero Time,
// an empty Conn, a negative Latency.
type Meta struct {
	Time    time.Time
	Conn    string // "client-ip:port > server-ip:port"
	Latency time.Duration
}

// Writer renders frames as JSON lines.
type Writer struct {
	// RawRecords keeps records fields as base64 (the transcoder's lossless form)
	// instead of decoding them.
	RawRecords bool
	// Hints makes the error of a frame that does not decode say what its bytes look
	// like: a request frame that decodes whole as a response says so, with the
	// likeliest apis and versions (RequestHint), and a response frame that decodes as
	// a request says so too (ResponseHint). For frames whose direction is a guess
	// (kwire decode); finding the hint costs a decode per api version.
	Hints bool

	framer transcode.Framer
	dec    records.Decoder
	body   []byte
	topics *Topics
}

// NewWriter returns a Writer that decodes records fields unless rawRecords is set.
func NewWriter(rawRecords bool) *Writer {
	w := &Writer{RawRecords: rawRecords}
	if !rawRecords {
		w.framer.Decode.Records = w.records
	}
	return w
}

// ResolveTopics makes the writer name the topics of frames that carry topic ids alone
// (Produce v13, Fetch v13+, ShareFetch, ...) from t, beside the ids, and learn into t
// the names of the responses it writes (see Topics). nil turns it off.
func (w *Writer) ResolveTopics(t *Topics) {
	w.topics = t
	w.framer.Decode.TopicName = nil
	if t != nil {
		w.framer.Decode.TopicName = t.Name
	}
}

// Header is what the first bytes of a frame say: for a request its api key, version and
// correlation id; for a response only the correlation id.
type Header struct {
	APIKey, APIVersion int16
	CorrelationID      int32
}

// PeekRequest reads the api key, version and correlation id of a request frame (size
// prefix included). ok is false when the frame is too short.
func PeekRequest(frame []byte) (h Header, ok bool) {
	if len(frame) < 12 {
		return h, false
	}
	return Header{
		APIKey:        int16(binary.BigEndian.Uint16(frame[4:])),
		APIVersion:    int16(binary.BigEndian.Uint16(frame[6:])),
		CorrelationID: int32(binary.BigEndian.Uint32(frame[8:])),
	}, true
}

// PeekResponse reads the correlation id of a response frame (size prefix included).
func PeekResponse(frame []byte) (id int32, ok bool) {
	if len(frame) < 8 {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(frame[4:])), true
}

// ValidRequest reports whether the api key and version are ones kwire knows.
func ValidRequest(key, version int16) bool {
	info, ok := transcode.LookupAPI(key, codec.KindRequest)
	return ok && version >= info.MinVersion && version <= info.MaxVersion
}

func (w *Writer) prefix(b []byte, m *Meta, dir string, h Header, size int) []byte {
	b = append(b, '{')
	if !m.Time.IsZero() {
		b = append(b, `"time":"`...)
		b = m.Time.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, `",`...)
	}
	if m.Conn != "" {
		b = append(b, `"conn":`...)
		b = recordsjson.AppendString(b, m.Conn)
		b = append(b, ',')
	}
	b = append(b, `"dir":"`...)
	b = append(b, dir...)
	b = append(b, `","correlationId":`...)
	b = strconv.AppendInt(b, int64(h.CorrelationID), 10)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, int64(size), 10)
	if m.Latency >= 0 && dir == "response" {
		b = append(b, `,"latencyUs":`...)
		b = strconv.AppendInt(b, m.Latency.Microseconds(), 10)
	}
	return b
}

// AppendRequest appends the JSON line (with its newline) of one complete request frame.
// A frame that does not decode gives a line with "error" instead of header and body, and
// the error is returned too.
func (w *Writer) AppendRequest(dst []byte, m *Meta, frame []byte) ([]byte, error) {
	h, _ := PeekRequest(frame)
	b := w.prefix(dst, m, "request", h, len(frame))
	n := len(b)
	out, err := w.framer.AppendRequestFrameJSON(b, frame)
	if err != nil {
		out = out[:n]
		if len(frame) >= 8 {
			out = appendKeyVersion(out, h.APIKey, h.APIVersion)
		}
		if w.Hints {
			err = requestHint(frame, err)
		}
	}
	return finish(out, n, err)
}

// AppendResponse appends the JSON line of one complete response frame that answers a
// request with the given api key and version.
func (w *Writer) AppendResponse(dst []byte, m *Meta, frame []byte, apiKey, version int16) ([]byte, error) {
	id, _ := PeekResponse(frame)
	b := w.prefix(dst, m, "response", Header{CorrelationID: id}, len(frame))
	n := len(b)
	out, err := w.framer.AppendResponseFrameJSON(b, frame, apiKey, version)
	if err != nil {
		out = appendKeyVersion(out[:n], apiKey, version)
		if w.Hints {
			err = responseHint(frame, err)
		}
	} else if w.topics != nil {
		w.topics.Learn(frame, apiKey, version)
	}
	return finish(out, n, err)
}

// AppendUnmatched appends the line of a response whose request was not seen (so its
// body cannot be decoded): it says so in "error".
func (w *Writer) AppendUnmatched(dst []byte, m *Meta, frame []byte) []byte {
	id, _ := PeekResponse(frame)
	b := w.prefix(dst, m, "response", Header{CorrelationID: id}, len(frame))
	b = append(b, `,"error":{"message":"no request with this correlation id was seen: the body cannot be decoded","path":"","offset":4}}`...)
	return append(b, '\n')
}

func appendKeyVersion(b []byte, key, version int16) []byte {
	b = append(b, `,"apiKey":`...)
	b = strconv.AppendInt(b, int64(key), 10)
	b = append(b, `,"apiVersion":`...)
	return strconv.AppendInt(b, int64(version), 10)
}

// finish completes a line. On success the transcoder's envelope
// ({"apiKey":..,"apiVersion":..,"headerVersion":..,"header":..,"body":..}) was appended
// at n, right after the line's own keys: its opening brace becomes a comma, so the
// envelope's keys join the line without a copy. On failure the line ends with "error".
func finish(out []byte, n int, err error) ([]byte, error) {
	if err != nil {
		return appendError(out, err), err
	}
	if n >= len(out) || out[n] != '{' {
		return appendError(out[:n], errors.New("kwire: unexpected envelope")), errors.New("kwire: unexpected envelope")
	}
	out[n] = ','
	return append(out, '\n'), nil
}

// appendError closes a line with the "error" key: message, path and offset.
func appendError(b []byte, err error) []byte {
	msg, path, off := Describe(err)
	b = append(b, `,"error":{"message":`...)
	b = recordsjson.AppendString(b, msg)
	b = append(b, `,"path":`...)
	b = recordsjson.AppendString(b, path)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, int64(off), 10)
	return append(b, "}}\n"...)
}

// Describe splits a decode error into its message, field path and byte offset (from
// the frame's first byte).
func Describe(err error) (msg, path string, offset int) {
	var de *codec.DecodeError
	if errors.As(err, &de) {
		p := de.Path
		if de.Message != "" && p != "" {
			p = de.Message + "." + p
		} else if p == "" {
			p = de.Message
		}
		return err.Error(), p, de.Offset
	}
	var re *records.Error
	if errors.As(err, &re) {
		return err.Error(), re.Field, re.Offset
	}
	return err.Error(), "", 0
}

// records is the transcoder's records hook: the field's batches and records as JSON.
// A records field that does not decode keeps its bytes as base64 beside the error, so
// the rest of the frame still shows.
func (w *Writer) records(dst []byte, recs []byte, path func() string) ([]byte, error) {
	start := len(dst)
	dst = append(dst, `{"batches":[`...)
	pos := 0
	first := true
	for pos < len(recs) {
		size, magic, err := records.PeekEntry(recs[pos:])
		if err != nil {
			return recordsError(dst[:start], recs, path(), pos, err), nil
		}
		if size == 0 {
			break
		}
		entry := recs[pos : pos+size]
		if !first {
			dst = append(dst, ',')
		}
		first = false
		mark := len(dst)
		dst, err = w.batch(dst, entry, magic)
		if err != nil {
			_ = mark
			return recordsError(dst[:start], recs, path(), pos, err), nil
		}
		pos += size
	}
	dst = append(dst, `],"skippedBytes":`...)
	dst = strconv.AppendInt(dst, int64(len(recs)-pos), 10)
	return append(dst, '}'), nil
}

func recordsError(dst, recs []byte, path string, at int, err error) []byte {
	msg, field, off := Describe(err)
	dst = append(dst, `{"error":{"message":`...)
	dst = recordsjson.AppendString(dst, msg)
	dst = append(dst, `,"path":`...)
	dst = recordsjson.AppendString(dst, path+"."+field)
	dst = append(dst, `,"offset":`...)
	if off < at {
		off += at
	}
	dst = strconv.AppendInt(dst, int64(off), 10)
	dst = append(dst, `},"base64":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, recs)
	return append(dst, `"}`...)
}

// batch appends one batch (or legacy message) object with its records.
func (w *Writer) batch(dst, entry []byte, magic int8) ([]byte, error) {
	dst = append(dst, `{"magic":`...)
	dst = strconv.AppendInt(dst, int64(magic), 10)
	if magic == 2 {
		b, _, err := records.ParseBatch(entry, true)
		if err != nil {
			return dst, err
		}
		dst = appendInt64(dst, "baseOffset", b.BaseOffset)
		dst = appendInt(dst, "partitionLeaderEpoch", int64(b.PartitionLeaderEpoch))
		dst = appendStr(dst, "compression", b.Compression().String())
		dst = appendStr(dst, "timestampType", b.TimestampType().String())
		dst = appendInt64(dst, "producerId", b.ProducerID)
		dst = appendInt(dst, "producerEpoch", int64(b.ProducerEpoch))
		dst = appendInt(dst, "baseSequence", int64(b.BaseSequence))
		dst = append(dst, `,"transactional":`...)
		dst = strconv.AppendBool(dst, b.IsTransactional())
		dst = append(dst, `,"control":`...)
		dst = strconv.AppendBool(dst, b.IsControl())
		if b.TimestampType() == records.LogAppendTime {
			dst = appendInt64(dst, "logAppendTime", b.MaxTimestamp)
		}
	}
	dst = append(dst, `,"records":[`...)
	first := true
	_, err := w.dec.ForEachMessage(entry, "", 0, func(m *records.Message) error {
		if !first {
			dst = append(dst, ',')
		}
		if magic < 2 && first {
			// A legacy wrapper's attributes are its messages'.
			n := len(dst)
			dst = dst[:n-len(`,"records":[`)]
			dst = appendStr(dst, "compression", m.Compression.String())
			dst = appendStr(dst, "timestampType", m.TimestampType.String())
			dst = append(dst, `,"records":[`...)
		}
		first = false
		dst = appendRecord(dst, m)
		return nil
	})
	if err != nil {
		return dst, err
	}
	return append(dst, "]}"...), nil
}

func appendInt(b []byte, key string, v int64) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, v, 10)
}

// appendInt64 writes an int64 as a decimal string, as the JSON form does, so that no
// reader (JavaScript's JSON.parse) loses precision.
func appendInt64(b []byte, key string, v int64) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':', '"')
	b = strconv.AppendInt(b, v, 10)
	return append(b, '"')
}

func appendStr(b []byte, key, v string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return recordsjson.AppendString(b, v)
}

// AppendValue appends a key, value or header value: null, {"text": ...} when the bytes
// are valid UTF-8, else {"base64": ...}.
func AppendValue(b, v []byte) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	if utf8.Valid(v) {
		b = append(b, `{"text":`...)
		b = appendText(b, v)
		return append(b, '}')
	}
	b = append(b, `{"base64":"`...)
	b = base64.StdEncoding.AppendEncode(b, v)
	return append(b, `"}`...)
}

func appendRecord(b []byte, m *records.Message) []byte {
	b = append(b, `{"offset":"`...)
	b = strconv.AppendInt(b, m.Offset, 10)
	b = append(b, `","timestamp":"`...)
	b = strconv.AppendInt(b, m.Timestamp, 10)
	b = append(b, '"')
	b = append(b, `,"key":`...)
	b = AppendValue(b, m.Key)
	b = append(b, `,"value":`...)
	b = AppendValue(b, m.Value)
	b = append(b, `,"headers":[`...)
	for i, h := range m.Headers {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = recordsjson.AppendString(b, unsafeString(h.Key))
		b = append(b, `,"value":`...)
		b = AppendValue(b, h.Value)
		b = append(b, '}')
	}
	b = append(b, ']')
	if m.Control {
		b = appendStr(b, "controlType", m.ControlRecord.Type.String())
	}
	if m.Schema.Source != records.SchemaNone {
		b = append(b, `,"schema":{"source":`...)
		b = recordsjson.AppendString(b, m.Schema.Source.String())
		b = appendInt(b, "id", int64(m.Schema.ID))
		if m.Schema.Version >= 0 {
			b = appendInt(b, "version", int64(m.Schema.Version))
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// needsEscape marks the bytes a JSON string cannot hold as they are.
var needsEscape = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

const hexDigits = "0123456789abcdef"

// appendText appends valid UTF-8 as a JSON string: runs of bytes that need no escape
// are copied whole.
func appendText(b, v []byte) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !needsEscape[c] {
			continue
		}
		b = append(b, v[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
		}
		start = i + 1
	}
	b = append(b, v[start:]...)
	return append(b, '"')
}
