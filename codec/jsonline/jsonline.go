// Package jsonline writes a whole Kafka frame as one JSON line, the line the kwire
// command prints for each frame (`kwire decode`, `kwire pcap`): where the frame was seen
// (optional: time, connection, latency), its direction, correlation id and size, then the
// transcoder's envelope (apiKey, apiVersion, headerVersion, header, body) with every
// records field decoded into its batches and records:
//
//	{"dir":"request","correlationId":7,"size":200,"apiKey":0,"apiVersion":9,"headerVersion":2,
//	 "header":{...},"body":{..."records":{"batches":[{"magic":2,...,"records":[
//	 {"offset":"0","timestamp":"1700000000000","key":{"text":"key-0"},"value":{"text":"..."},
//	 "headers":[{"key":"trace-id","value":{"text":"t00"}}]}]}],"skippedBytes":0}...}}
//
// A key, value or header value is null, {"text": ...} when its bytes are valid UTF-8, or
// {"base64": ...}; int64 values are decimal strings, as everywhere in the JSON form.
// With Writer.RawRecords a records field stays base64 (the form `kwire encode` reads back
// byte for byte). A frame that does not decode still gets a line, whose "error" object
// (message, path, offset) replaces header and body, and the error is returned too.
//
// The lines are those of `kwire decode`, but for the hint that command adds to the error
// of a frame that looks as if it went the other way (there the direction is the user's
// guess; here the caller says which it is). With a Meta and, for frames that name their
// topics by id alone, a Writer.TopicName that knows the names, they are those of `kwire
// pcap`.
//
// A Writer keeps its buffers from frame to frame and is not safe for concurrent use;
// AppendRequest and AppendResponse use a new one per call.
package jsonline

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
	"github.com/kwire/kwire/codec/transcode"
	"github.com/kwire/kwire/internal/jsonx"
	"github.com/kwire/kwire/internal/recordsjson"
)

// Meta is where and when a frame was seen, for lines of captured traffic. Zero values
// are left out: a zero Time, an empty Conn, a negative Latency. Latency is written for
// responses only.
type Meta struct {
	Time    time.Time     // written as "time", RFC 3339 in UTC with nanoseconds
	Conn    string        // written as "conn", e.g. "10.0.0.1:53122 > 10.0.0.2:9092"
	Latency time.Duration // written as "latencyUs", whole microseconds
}

// Writer writes frames as JSON lines. The zero value decodes records fields.
type Writer struct {
	// RawRecords keeps records fields as base64 instead of decoding them.
	RawRecords bool
	// MaxFrameSize bounds a frame's size field; zero means codec.DefaultMaxFrameSize.
	MaxFrameSize int
	// TopicName, when set, names the topic of a struct that carries a topic id alone
	// (Produce v13, Fetch v13+, ShareFetch, ...): the name it returns goes beside the
	// "topicId", as transcode.DecodeOptions.TopicName describes. Names learned from the
	// traffic's Metadata responses, for one.
	TopicName func(id [16]byte) (name string, ok bool)

	framer transcode.Framer
	dec    records.Decoder
	ready  bool
	raw    bool
}

func (w *Writer) setup() {
	if !w.ready || w.raw != w.RawRecords {
		w.framer = transcode.Framer{}
		if !w.RawRecords {
			w.framer.Decode.Records = w.appendRecords
		}
		w.ready, w.raw = true, w.RawRecords
	}
	w.framer.MaxFrameSize = w.MaxFrameSize
	w.framer.Decode.TopicName = w.TopicName
}

// AppendRequest appends the line of one whole request frame (size prefix included),
// newline included, to dst. m may be nil.
func AppendRequest(dst, frame []byte, m *Meta) ([]byte, error) {
	var w Writer
	return w.AppendRequest(dst, frame, m)
}

// AppendResponse appends the line of one whole response frame answering a request of
// (apiKey, version), newline included, to dst. m may be nil.
func AppendResponse(dst, frame []byte, apiKey, version int16, m *Meta) ([]byte, error) {
	var w Writer
	return w.AppendResponse(dst, frame, apiKey, version, m)
}

// AppendRequest appends the line of one whole request frame to dst. m may be nil.
func (w *Writer) AppendRequest(dst, frame []byte, m *Meta) ([]byte, error) {
	w.setup()
	b := AppendHead(dst, frame, false, m)
	n := len(b)
	out, err := w.framer.AppendRequestFrameJSON(b, frame)
	if err != nil {
		out = out[:n]
		// Like the correlation id, the key and version are read only from a frame that
		// holds the request header's fixed part (12 bytes): one of 8 to 11 bytes gets
		// 0 for them, as in kwire decode's lines.
		var key, version int16
		if len(frame) >= 12 {
			key, version = int16(binary.BigEndian.Uint16(frame[4:])), int16(binary.BigEndian.Uint16(frame[6:]))
		}
		if len(frame) >= 8 {
			out = appendKeyVersion(out, key, version)
		}
	}
	return join(out, n, err)
}

// AppendResponse appends the line of one whole response frame answering a request of
// (apiKey, version) to dst. m may be nil.
func (w *Writer) AppendResponse(dst, frame []byte, apiKey, version int16, m *Meta) ([]byte, error) {
	w.setup()
	b := AppendHead(dst, frame, true, m)
	n := len(b)
	out, err := w.framer.AppendResponseFrameJSON(b, frame, apiKey, version)
	if err != nil {
		out = appendKeyVersion(out[:n], apiKey, version)
	}
	return join(out, n, err)
}

// AppendHead appends the opening of the line of a whole frame (size prefix included),
// the keys that come before the envelope's: "{", then "time" and "conn" from m,
// "dir", the frame's "correlationId" (0 when the frame is too short to hold one) and
// "size", and for a response the "latencyUs" of m. m may be nil. It is for a caller
// that writes a line of its own about a frame, such as a response whose request was
// not seen: it appends its keys (",\"error\":" and AppendError, say) and closes the
// line with "}\n".
func AppendHead(dst, frame []byte, response bool, m *Meta) []byte {
	var corr int32
	if response && len(frame) >= 8 {
		corr = int32(binary.BigEndian.Uint32(frame[4:]))
	} else if !response && len(frame) >= 12 {
		corr = int32(binary.BigEndian.Uint32(frame[8:]))
	}
	b := append(dst, '{')
	if m != nil && !m.Time.IsZero() {
		b = append(b, `"time":"`...)
		b = m.Time.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, `",`...)
	}
	if m != nil && m.Conn != "" {
		b = append(b, `"conn":`...)
		b = recordsjson.AppendString(b, m.Conn)
		b = append(b, ',')
	}
	if response {
		b = append(b, `"dir":"response"`...)
	} else {
		b = append(b, `"dir":"request"`...)
	}
	b = append(b, `,"correlationId":`...)
	b = strconv.AppendInt(b, int64(corr), 10)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, int64(len(frame)), 10)
	if response && m != nil && m.Latency >= 0 {
		b = append(b, `,"latencyUs":`...)
		b = strconv.AppendInt(b, m.Latency.Microseconds(), 10)
	}
	return b
}

func appendKeyVersion(b []byte, key, version int16) []byte {
	b = append(b, `,"apiKey":`...)
	b = strconv.AppendInt(b, int64(key), 10)
	b = append(b, `,"apiVersion":`...)
	return strconv.AppendInt(b, int64(version), 10)
}

var errEnvelope = errors.New("kwire: the transcoder's frame JSON is not an object")

// join completes a line. The envelope object was appended at n, right after the line's
// own keys: its opening brace becomes a comma, so that its keys join the line's. On
// failure the line ends with "error".
func join(out []byte, n int, err error) ([]byte, error) {
	if err == nil && (n >= len(out) || out[n] != '{') {
		out, err = out[:n], errEnvelope
	}
	if err != nil {
		out = append(out, `,"error":`...)
		return append(AppendError(out, err), "}\n"...), err
	}
	out[n] = ','
	return append(out, '\n'), nil
}

// AppendError appends the object a line's "error" key holds for err:
// {"message": ..., "path": ..., "offset": ...}, where path is the field that did not
// decode and offset its byte offset from the frame's first byte, when err is a
// *codec.DecodeError or a *records.Error, and "" and 0 otherwise.
func AppendError(b []byte, err error) []byte {
	msg, path, off := describe(err)
	b = append(b, `{"message":`...)
	b = recordsjson.AppendString(b, msg)
	b = append(b, `,"path":`...)
	b = recordsjson.AppendString(b, path)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, int64(off), 10)
	return append(b, '}')
}

// describe splits an error into its text, location and byte offset.
func describe(err error) (msg, path string, offset int) {
	var de *codec.DecodeError
	if errors.As(err, &de) {
		switch {
		case de.Message != "" && de.Path != "":
			path = de.Message + "." + de.Path
		case de.Path == "":
			path = de.Message
		default:
			path = de.Path
		}
		return err.Error(), path, de.Offset
	}
	var re *records.Error
	if errors.As(err, &re) {
		return err.Error(), re.Field, re.Offset
	}
	return err.Error(), "", 0
}

// appendRecords is the transcoder's hook for a records field: its batches and records.
// A field that does not read keeps its bytes, as base64, beside the error, so that the
// rest of the frame still shows.
func (w *Writer) appendRecords(dst, recs []byte, path func() string) ([]byte, error) {
	start := len(dst)
	dst = append(dst, `{"batches":[`...)
	pos := 0
	for pos < len(recs) {
		size, magic, err := records.PeekEntry(recs[pos:])
		if err == nil && size == 0 {
			break // a partial batch at the end: skipped, as a consumer skips it
		}
		if err == nil {
			if pos > 0 {
				dst = append(dst, ',')
			}
			dst, err = w.appendEntry(dst, recs[pos:pos+size], magic)
		}
		if err != nil {
			dst = append(dst[:start], `{"error":`...)
			dst = appendFieldError(dst, err, path(), pos)
			dst = append(dst, `,"base64":"`...)
			dst = base64.StdEncoding.AppendEncode(dst, recs)
			return append(dst, `"}`...), nil
		}
		pos += size
	}
	dst = append(dst, `],"skippedBytes":`...)
	dst = strconv.AppendInt(dst, int64(len(recs)-pos), 10)
	return append(dst, '}'), nil
}

// appendFieldError is AppendError for a records field at path, whose failing entry
// starts at byte at of the field.
func appendFieldError(b []byte, err error, path string, at int) []byte {
	msg, field, off := describe(err)
	if off < at {
		off += at
	}
	b = append(b, `{"message":`...)
	b = recordsjson.AppendString(b, msg)
	b = append(b, `,"path":`...)
	b = recordsjson.AppendString(b, path+"."+field)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, int64(off), 10)
	return append(b, '}')
}

// appendEntry appends one batch (magic 2) or legacy message set entry with its records.
func (w *Writer) appendEntry(dst, entry []byte, magic int8) ([]byte, error) {
	dst = append(dst, `{"magic":`...)
	dst = strconv.AppendInt(dst, int64(magic), 10)
	if magic == 2 {
		b, _, err := records.ParseBatch(entry, true)
		if err != nil {
			return dst, err
		}
		dst = appendQuoted(dst, "baseOffset", b.BaseOffset)
		dst = appendNumber(dst, "partitionLeaderEpoch", int64(b.PartitionLeaderEpoch))
		dst = appendText(dst, "compression", b.Compression().String())
		dst = appendText(dst, "timestampType", b.TimestampType().String())
		dst = appendQuoted(dst, "producerId", b.ProducerID)
		dst = appendNumber(dst, "producerEpoch", int64(b.ProducerEpoch))
		dst = appendNumber(dst, "baseSequence", int64(b.BaseSequence))
		dst = append(dst, `,"transactional":`...)
		dst = strconv.AppendBool(dst, b.IsTransactional())
		dst = append(dst, `,"control":`...)
		dst = strconv.AppendBool(dst, b.IsControl())
		if b.TimestampType() == records.LogAppendTime {
			dst = appendQuoted(dst, "logAppendTime", b.MaxTimestamp)
		}
	}
	dst = append(dst, `,"records":[`...)
	n := 0
	_, err := w.dec.ForEachMessage(entry, "", 0, func(m *records.Message) error {
		if n == 0 && magic < 2 {
			// A legacy entry's compression and timestamp type are its messages'.
			dst = dst[:len(dst)-len(`,"records":[`)]
			dst = appendText(dst, "compression", m.Compression.String())
			dst = appendText(dst, "timestampType", m.TimestampType.String())
			dst = append(dst, `,"records":[`...)
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = appendMessage(dst, m)
		return nil
	})
	if err != nil {
		return dst, err
	}
	return append(dst, "]}"...), nil
}

// appendMessage appends one record.
func appendMessage(b []byte, m *records.Message) []byte {
	b = append(b, `{"offset":"`...)
	b = strconv.AppendInt(b, m.Offset, 10)
	b = append(b, `","timestamp":"`...)
	b = strconv.AppendInt(b, m.Timestamp, 10)
	b = append(b, `","key":`...)
	b = AppendValue(b, m.Key)
	b = append(b, `,"value":`...)
	b = AppendValue(b, m.Value)
	b = append(b, `,"headers":[`...)
	for _, h := range m.Headers {
		b = jsonx.Elem(b, `{"key":`)
		b = recordsjson.AppendString(b, unsafe.String(unsafe.SliceData(h.Key), len(h.Key))) // copied at once
		b = append(b, `,"value":`...)
		b = AppendValue(b, h.Value)
		b = append(b, '}')
	}
	b = append(b, ']')
	if m.Control {
		b = appendText(b, "controlType", m.ControlRecord.Type.String())
	}
	if m.Schema.Source != records.SchemaNone {
		b = append(b, `,"schema":{"source":`...)
		b = recordsjson.AppendString(b, m.Schema.Source.String())
		b = appendNumber(b, "id", int64(m.Schema.ID))
		if m.Schema.Version >= 0 {
			b = appendNumber(b, "version", int64(m.Schema.Version))
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// AppendValue appends a record's key, value or header value as the lines write it:
// null, {"text": ...} when the bytes are valid UTF-8, else {"base64": ...}.
func AppendValue(b, v []byte) []byte {
	switch {
	case v == nil:
		return append(b, "null"...)
	case utf8.Valid(v):
		b = append(b, `{"text":`...)
		return append(appendUTF8(b, v), '}')
	}
	b = append(b, `{"base64":"`...)
	b = base64.StdEncoding.AppendEncode(b, v)
	return append(b, `"}`...)
}

func appendNumber(b []byte, key string, v int64) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, v, 10)
}

// appendQuoted writes an int64 as a decimal string, as the JSON form writes int64.
func appendQuoted(b []byte, key string, v int64) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, `":"`...)
	b = strconv.AppendInt(b, v, 10)
	return append(b, '"')
}

func appendText(b []byte, key, v string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return recordsjson.AppendString(b, v)
}

// appendUTF8 appends valid UTF-8 as a JSON string, escaping only what JSON requires
// (control characters, '"' and '\'), so that the text reads back byte for byte.
func appendUTF8(b, v []byte) []byte {
	b = append(b, '"')
	start := 0
	for i, c := range v {
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = jsonx.AppendEscape(append(b, v[start:i]...), c)
		start = i + 1
	}
	b = append(b, v[start:]...)
	return append(b, '"')
}
