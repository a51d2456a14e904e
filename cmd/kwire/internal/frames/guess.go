package frames

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
	"github.com/kwire/kwire/codec/transcode"
)

// Guess is an api whose responses decode a frame whole: the versions that do, and how
// plausible the values read are.
type Guess struct {
	APIKey   int16
	Name     string  // "Fetch"
	Versions []int16 // ascending
	// odd counts the values no broker writes (see plausibleNumber; strings with
	// control characters) at the version with the fewest.
	odd int
}

// Newest is the newest version that decodes the frame.
func (g *Guess) Newest() int16 { return g.Versions[len(g.Versions)-1] }

// GuessResponse returns the apis whose responses decode frame (size prefix included)
// whole, at some version, likeliest first: fewest values no broker writes, then the
// lower api key (the older, more common apis). Records fields are read as bytes.
func GuessResponse(frame []byte) []Guess {
	if len(frame) < 8 || int(binary.BigEndian.Uint32(frame)) != len(frame)-4 {
		return nil
	}
	var out []Guess
	var scratch []byte
	for _, a := range codec.APIs() {
		if a.Response == nil {
			continue
		}
		g := Guess{APIKey: a.Key, Name: a.Name, odd: -1}
		for v := a.Response.MinVersion; v <= a.Response.MaxVersion; v++ {
			n, err := codec.ResponseHeaderLen(frame, a.Key, v)
			if err != nil {
				continue
			}
			var derr error
			scratch, derr = transcode.AppendJSON(scratch[:0], a.Response.Name, v, frame[n:], nil)
			if derr != nil {
				continue
			}
			g.Versions = append(g.Versions, v)
			if odd := oddValues(scratch); g.odd < 0 || odd < g.odd {
				g.odd = odd
			}
		}
		if len(g.Versions) > 0 {
			out = append(out, g)
		}
	}
	// A stable insertion sort: the list is short and already in api key order.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && likelier(&out[j], &out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func likelier(a, b *Guess) bool { return a.odd < b.odd }

// oddValues counts the values of a decoded body's JSON form that no broker writes. A
// body of more than maxScored bytes counts none: bytes that many rarely decode as more
// than one api, and reading them into values would cost more than the decode.
func oddValues(js []byte) (odd int) {
	if len(js) > maxScored {
		return 0
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return 1 << 20
	}
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				walk(k, c)
			}
		case []any:
			for _, c := range x {
				walk(key, c)
			}
		case json.Number:
			n, err := strconv.ParseInt(string(x), 10, 64)
			if err == nil && !plausibleNumber(key, n) {
				odd++
			}
		case string:
			if strings.IndexFunc(x, func(r rune) bool { return r == unicode.ReplacementChar || unicode.IsControl(r) }) >= 0 {
				odd++
			}
		}
	}
	walk("", v)
	return odd
}

const maxScored = 1 << 20

// plausibleNumber reports whether a broker could have written n as the value of key:
// a known error code, a throttle time from 0 to an hour, a node id, epoch or other id
// from -1 up, a port, a partition index from 0 up. Other keys take any value.
func plausibleNumber(key string, n int64) bool {
	switch {
	case key == "errorCode":
		return n == 0 || kerr.Code(int16(n)).Known()
	case key == "throttleTimeMs":
		return n >= 0 && n <= 3600_000
	case key == "port":
		return n >= 0 && n <= 65535
	case key == "partitionIndex" || key == "partition" || key == "index":
		return n >= 0
	case strings.HasSuffix(key, "Id") || strings.HasSuffix(key, "Epoch"):
		return n >= -1
	}
	return true
}

// RequestHint says what a request frame that does not decode looks like: when it
// decodes whole as a response, "this looks like a response, not a request: try
// --response Fetch:12" with the likeliest apis (at most 3); else, when its header names
// an api and version kwire knows, "a ProduceRequest v8 frame that does not decode". It
// is "" when the frame's size field is wrong or the header names no such request.
func RequestHint(frame []byte) string {
	if guesses := GuessResponse(frame); len(guesses) > 0 {
		return "this looks like a response, not a request: try " + tryList(guesses)
	}
	h, ok := PeekRequest(frame)
	if !ok || int(binary.BigEndian.Uint32(frame)) != len(frame)-4 || !ValidRequest(h.APIKey, h.APIVersion) {
		return ""
	}
	info, _ := transcode.LookupAPI(h.APIKey, codec.KindRequest)
	return "a " + info.Name + " v" + strconv.Itoa(int(h.APIVersion)) + " frame that does not decode"
}

// tryList is "--response Fetch:18 (v13-v18 decode it), --response Metadata:7 or ...".
func tryList(guesses []Guess) string {
	const most = 3
	var b strings.Builder
	for i, g := range guesses[:min(most, len(guesses))] {
		switch {
		case i == 0:
		case i == min(most, len(guesses))-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		b.WriteString("--response " + g.Name + ":" + strconv.Itoa(int(g.Newest())))
		switch {
		case len(g.Versions) == 2:
			b.WriteString(" (" + versionList(g.Versions) + " decodes it too)")
		case len(g.Versions) > 2:
			b.WriteString(" (" + versionList(g.Versions) + " decode it too)")
		}
	}
	if len(guesses) > most {
		b.WriteString("; the responses of " + strconv.Itoa(len(guesses)) + " apis decode it: the request it answers says which")
	}
	return b.String()
}

// versionList is the versions other than the newest, as "v13-v17" or "v1, v3".
func versionList(vs []int16) string {
	vs = vs[:len(vs)-1]
	var parts []string
	for i := 0; i < len(vs); {
		j := i
		for j+1 < len(vs) && vs[j+1] == vs[j]+1 {
			j++
		}
		p := "v" + strconv.Itoa(int(vs[i]))
		if j > i {
			p += "-v" + strconv.Itoa(int(vs[j]))
		}
		parts = append(parts, p)
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// ResponseHint says what a response frame that does not decode as the answer to
// apiKey looks like when it decodes whole as a request: "this looks like a request
// (ProduceRequest v9), not a response: drop --response". It is "" otherwise.
func ResponseHint(frame []byte) string {
	var f transcode.Framer
	if _, err := f.AppendRequestFrameJSON(nil, frame); err != nil {
		return ""
	}
	h, _ := PeekRequest(frame)
	info, _ := transcode.LookupAPI(h.APIKey, codec.KindRequest)
	return "this looks like a request (" + info.Name + " v" + strconv.Itoa(int(h.APIVersion)) + "), not a response: drop --response"
}

// hinted is a decode error with what the frame looks like in front.
type hinted struct {
	hint, as string // as: what the frame was read as, when the hint says it is something else
	err      error
}

// Error is the hint, then the decode error.
func (h *hinted) Error() string {
	msg := strings.TrimPrefix(h.err.Error(), "kwire: ")
	if h.as != "" {
		return h.hint + " (as " + h.as + ": " + msg + ")"
	}
	return h.hint + ": " + msg
}

// Unwrap returns the decode error (its path and offset stay those of the line).
func (h *hinted) Unwrap() error { return h.err }

// DirectionHint returns, for the error of a Writer with Hints set, what a frame read
// in the wrong direction looks like ("this looks like a response, not a request: try
// --response Fetch:12"), or "".
func DirectionHint(err error) string {
	var h *hinted
	if errors.As(err, &h) && h.as != "" {
		return h.hint
	}
	return ""
}

// requestHint wraps the error of a request frame that does not decode with its hint.
func requestHint(frame []byte, err error) error {
	hint := RequestHint(frame)
	if hint == "" {
		return err
	}
	h := &hinted{hint: hint, err: err}
	if strings.HasPrefix(hint, "this looks like a response") {
		h.as = "a request"
	}
	return h
}

// responseHint wraps the error of a response frame that does not decode with its hint.
func responseHint(frame []byte, err error) error {
	if hint := ResponseHint(frame); hint != "" {
		return &hinted{hint: hint, as: "a response", err: err}
	}
	return err
}
