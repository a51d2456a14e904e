// Package inspect is what the browser inspector computes, in one place for the
// WebAssembly module and for native tests: a pasted frame or a whole capture in, the
// same JSON lines as kwire decode and kwire pcap out.
package inspect

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/kwire/kwire/cmd/kwire/internal/capture"
	"github.com/kwire/kwire/cmd/kwire/internal/frames"
	"github.com/kwire/kwire/internal/recordsjson"
)

// MaxOutput bounds the lines of one call, so that a huge capture in a browser tab fails
// with a clear error instead of exhausting memory.
const MaxOutput = 256 << 20

// Pcap reads a pcap or pcapng capture and appends one line per frame to dst, then a
// last line {"summary": {...}} with the counts. ports as kwire pcap --port. Topic ids
// are named as kwire pcap names them in a regular file: from the responses before a
// frame, or, once a frame has an id none of them named, from all the capture's.
func Pcap(dst, data []byte, ports []uint16) ([]byte, error) {
	opts := capture.Options{Ports: ports}
	topics := frames.NewTopics()
	topics.Missing = func(t *frames.Topics) {
		first := capture.NewReader(opts, func(f *capture.Frame) {
			if f.Matched && frames.Learns(f.APIKey, f.APIVersion) {
				t.Learn(f.Data, f.APIKey, f.APIVersion)
			}
		})
		// A capture that does not read fails below, with its error.
		_ = first.ReadCapture(bytes.NewReader(data))
		first.Close()
	}
	w := frames.NewWriter(false)
	w.ResolveTopics(topics)
	var tooBig bool
	r := capture.NewReader(opts, func(f *capture.Frame) {
		if tooBig {
			return
		}
		meta := frames.Meta{Time: f.Time, Conn: f.Conn, Latency: -1}
		switch {
		case f.Request:
			dst, _ = w.AppendRequest(dst, &meta, f.Data)
		case f.Matched:
			meta.Latency = f.Latency
			dst, _ = w.AppendResponse(dst, &meta, f.Data, f.APIKey, f.APIVersion)
		default:
			dst = w.AppendUnmatched(dst, &meta, f.Data)
		}
		if len(dst) > MaxOutput {
			tooBig = true
		}
	})
	err := r.ReadCapture(bytes.NewReader(data))
	r.Close()
	if tooBig {
		return dst, errors.New("the capture's frames exceed " + strconv.Itoa(MaxOutput>>20) + " MB of JSON: use kwire pcap")
	}
	if err != nil {
		return dst, err
	}
	st := r.Stats()
	dst = append(dst, `{"summary":{"packets":`...)
	dst = strconv.AppendInt(dst, int64(st.Packets), 10)
	dst = append(dst, `,"connections":`...)
	dst = strconv.AppendInt(dst, int64(st.Connections), 10)
	dst = append(dst, `,"requests":`...)
	dst = strconv.AppendInt(dst, int64(st.Requests), 10)
	dst = append(dst, `,"responses":`...)
	dst = strconv.AppendInt(dst, int64(st.Responses), 10)
	dst = append(dst, `,"resyncs":`...)
	dst = strconv.AppendInt(dst, int64(st.Resyncs), 10)
	return append(dst, "}}\n"...), nil
}

// Frame decodes one frame: a request, or with apiKey >= 0 a response to that api key
// and version. A frame that does not decode gives its error line, which says what the
// bytes look like when they decode in the other direction (as kwire decode does).
func Frame(dst, frame []byte, apiKey, version int16) []byte {
	w := frames.NewWriter(false)
	w.Hints = true // a pasted frame's direction is a guess
	meta := frames.Meta{Latency: -1}
	if apiKey >= 0 {
		dst, _ = w.AppendResponse(dst, &meta, frame, apiKey, version)
	} else {
		dst, _ = w.AppendRequest(dst, &meta, frame)
	}
	return dst
}

// ErrorLine is the line of a failure of the whole call.
func ErrorLine(dst []byte, err error) []byte {
	dst = append(dst, `{"error":{"message":`...)
	dst = recordsjson.AppendString(dst, err.Error())
	return append(dst, `,"path":"","offset":0}}`+"\n"...)
}
