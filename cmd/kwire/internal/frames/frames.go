// Package frames writes Kafka frames as the kwire command's JSON lines: the frame's place
// in the traffic (time, connection, direction, correlation id, size, latency) and then
// its header and body in the JSON form of the transcoder, with the records fields
// decoded into batches and records instead of base64.
//
// The lines are those of the library's codec/jsonline, which a Writer writes them with;
// what is the command's own is here: the direction hints of kwire decode, the lines of
// responses whose request was not seen, and the topic names learned from the traffic.
//
// A Writer is reusable and not safe for concurrent use. Its output buffers are kept
// from frame to frame, so a steady stream of frames allocates nothing per frame beyond
// what the transcoder needs.
package frames

import (
	"encoding/binary"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/jsonline"
	"github.com/kwire/kwire/codec/transcode"
)

// Meta is where a frame was seen. Zero values are left out of the line: a zero Time,
// an empty Conn, a negative Latency.
type Meta = jsonline.Meta

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

	line   jsonline.Writer
	topics *Topics
}

// NewWriter returns a Writer that decodes records fields unless rawRecords is set.
func NewWriter(rawRecords bool) *Writer {
	return &Writer{RawRecords: rawRecords}
}

// ResolveTopics makes the writer name the topics of frames that carry topic ids alone
// (Produce v13, Fetch v13+, ShareFetch, ...) from t, beside the ids, and learn into t
// the names of the responses it writes (see Topics). nil turns it off.
func (w *Writer) ResolveTopics(t *Topics) {
	w.topics = t
	w.line.TopicName = nil
	if t != nil {
		w.line.TopicName = t.Name
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

// AppendRequest appends the JSON line (with its newline) of one complete request frame.
// A frame that does not decode gives a line with "error" instead of header and body, and
// the error is returned too.
func (w *Writer) AppendRequest(dst []byte, m *Meta, frame []byte) ([]byte, error) {
	w.line.RawRecords = w.RawRecords
	out, err := w.line.AppendRequest(dst, frame, m)
	if err != nil && w.Hints {
		out, err = rehint(out, err, requestHint(frame, err))
	}
	return out, err
}

// AppendResponse appends the JSON line of one complete response frame that answers a
// request with the given api key and version.
func (w *Writer) AppendResponse(dst []byte, m *Meta, frame []byte, apiKey, version int16) ([]byte, error) {
	w.line.RawRecords = w.RawRecords
	out, err := w.line.AppendResponse(dst, frame, apiKey, version, m)
	if err != nil {
		if w.Hints {
			out, err = rehint(out, err, responseHint(frame, err))
		}
	} else if w.topics != nil {
		w.topics.Learn(frame, apiKey, version)
	}
	return out, err
}

// rehint replaces the "error" that ends a line written for err with that of hinted (err
// with a hint in front of its message: the same path and offset).
func rehint(line []byte, err, hinted error) ([]byte, error) {
	if hinted == err {
		return line, err
	}
	tail := len(`,"error":`) + len(jsonline.AppendError(nil, err)) + len("}\n")
	line = append(line[:len(line)-tail], `,"error":`...)
	return append(jsonline.AppendError(line, hinted), "}\n"...), hinted
}

// AppendUnmatched appends the line of a response whose request was not seen (so its
// body cannot be decoded): it says so in "error".
func (w *Writer) AppendUnmatched(dst []byte, m *Meta, frame []byte) []byte {
	b := jsonline.AppendHead(dst, frame, true, m)
	b = append(b, `,"error":{"message":"no request with this correlation id was seen: the body cannot be decoded","path":"","offset":4}}`...)
	return append(b, '\n')
}
