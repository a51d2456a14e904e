package frames

import (
	"encoding/json"
	"os"
	"testing"
)

// FuzzFrames decodes arbitrary bytes as a request frame and as a Fetch and a Produce
// response, plain and with hints and topic names: no panic, and every line is valid
// JSON ending in one newline.
func FuzzFrames(f *testing.F) {
	for _, p := range []string{"../../../../examples/data/produce-request.bin", "../../../../examples/data/fetch-response.bin"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	w := NewWriter(false)
	hw := NewWriter(false)
	hw.Hints = true
	topics := NewTopics()
	topics.Add([16]byte{1}, "orders")
	hw.ResolveTopics(topics)
	f.Fuzz(func(t *testing.T, frame []byte) {
		m := &Meta{Latency: -1}
		check := func(line []byte) {
			if len(line) == 0 || line[len(line)-1] != '\n' || !json.Valid(line[:len(line)-1]) {
				t.Fatalf("not a JSON line: %q", line)
			}
		}
		line, _ := w.AppendRequest(nil, m, frame)
		check(line)
		line, _ = w.AppendResponse(nil, m, frame, 1, 12)
		check(line)
		line, _ = w.AppendResponse(nil, m, frame, 0, 9)
		check(line)
		line, _ = hw.AppendRequest(nil, m, frame)
		check(line)
		line, _ = hw.AppendResponse(nil, m, frame, 1, 13)
		check(line)
	})
}
