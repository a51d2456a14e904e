package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// decodeErrors runs kwire decode and returns each line's error message (or "" for a
// line without error), the exit code and stderr.
func decodeErrors(t *testing.T, input []byte, args ...string) ([]string, int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append([]string{"decode"}, args...), bytes.NewReader(input), &out, &errOut)
	var msgs []string
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l struct {
			Error *struct {
				Message string `json:"message"`
				Path    string `json:"path"`
				Offset  int    `json:"offset"`
			} `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, sc.Text())
		}
		m := ""
		if l.Error != nil {
			m = l.Error.Message
		}
		msgs = append(msgs, m)
	}
	return msgs, code, errOut.String()
}

// TestDecodeResponseAsRequest: a response decoded without --response says it looks
// like a response and which --response reads it; the suggestion works.
func TestDecodeResponseAsRequest(t *testing.T) {
	frame, err := os.ReadFile("../../examples/data/fetch-response.bin")
	if err != nil {
		t.Fatal(err)
	}
	msgs, code, stderr := decodeErrors(t, frame)
	const want = "this looks like a response, not a request: try --response Fetch:12 (as a request: decode ProduceRequest v8 field topicData at offset 22: "
	if code != exitFrames || len(msgs) != 1 || !strings.HasPrefix(msgs[0], want) {
		t.Fatalf("exit %d, messages %q\nwant a message starting %q", code, msgs, want)
	}
	if stderr != "kwire: 1 frame did not decode (frame 1: this looks like a response, not a request: try --response Fetch:12)\n" {
		t.Errorf("stderr %q", stderr)
	}
	if msgs, code, stderr = decodeErrors(t, frame, "--response", "Fetch:12"); code != 0 || msgs[0] != "" {
		t.Errorf("the suggestion: exit %d, %q (%s)", code, msgs, stderr)
	}
}

// TestDecodeRequestAsResponse: a request decoded with --response says it looks like a
// request.
func TestDecodeRequestAsResponse(t *testing.T) {
	frame, err := os.ReadFile("../../examples/data/produce-request.bin")
	if err != nil {
		t.Fatal(err)
	}
	msgs, code, stderr := decodeErrors(t, frame, "--response", "Fetch:12")
	const want = "this looks like a request (ProduceRequest v9), not a response: drop --response (as a response: decode FetchResponse v12 "
	if code != exitFrames || len(msgs) != 1 || !strings.HasPrefix(msgs[0], want) {
		t.Fatalf("exit %d, messages %q\nwant a message starting %q", code, msgs, want)
	}
	if !strings.HasSuffix(stderr, "(frame 1: this looks like a request (ProduceRequest v9), not a response: drop --response)\n") {
		t.Errorf("stderr %q", stderr)
	}
}

// TestDecodeDamagedRequest: a request cut short is a request of its api and version
// that does not decode; the error's path and offset stay those of the decoder.
func TestDecodeDamagedRequest(t *testing.T) {
	frame, err := os.ReadFile("../../examples/data/produce-request.bin")
	if err != nil {
		t.Fatal(err)
	}
	cut := append([]byte(nil), frame[:100]...)
	binary.BigEndian.PutUint32(cut, uint32(len(cut)-4))
	msgs, code, stderr := decodeErrors(t, cut)
	const want = "a ProduceRequest v9 frame that does not decode: decode ProduceRequest v9 field topicData[0].partitionData[0].records at offset 48: input truncated"
	if code != exitFrames || len(msgs) != 1 || !strings.HasPrefix(msgs[0], want) {
		t.Fatalf("exit %d, messages %q\nwant a message starting %q", code, msgs, want)
	}
	if stderr != "kwire: 1 frame did not decode\n" {
		t.Errorf("stderr %q", stderr)
	}
	// Bytes that are neither a known request nor any response keep the decoder's error.
	junk := []byte{0, 0, 0, 8, 0x7f, 0x7f, 0, 9, 0, 0, 0, 7}
	if msgs, _, _ = decodeErrors(t, junk); len(msgs) != 1 || !strings.HasPrefix(msgs[0], "kwire: decode RequestHeader field requestApiKey at offset 4: unknown api") {
		t.Errorf("junk: %q", msgs)
	}
}

// TestDecodeAmbiguousResponse: a response of a few zero bytes decodes as the response of
// many apis: the hint names 3, each of which decodes the frame, and says how many do.
func TestDecodeAmbiguousResponse(t *testing.T) {
	// A Heartbeat v4 response: correlation id 5, no header tags, throttle 0, error 0, no tags.
	frame := []byte{0, 0, 0, 12, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0}
	msgs, code, _ := decodeErrors(t, frame)
	if code != exitFrames || len(msgs) != 1 || !strings.HasPrefix(msgs[0], "this looks like a response, not a request: try --response ") {
		t.Fatalf("exit %d, %q", code, msgs)
	}
	tries := regexp.MustCompile(`--response ([A-Za-z]+:[0-9]+)`).FindAllStringSubmatch(msgs[0], -1)
	if len(tries) != 3 || !regexp.MustCompile(`; the responses of [0-9]+ apis decode it: the request it answers says which \(as a request: `).MatchString(msgs[0]) {
		t.Fatalf("%q: want 3 suggestions and the count of apis", msgs[0])
	}
	for _, try := range tries {
		if m, code, stderr := decodeErrors(t, frame, "--response", try[1]); code != 0 || m[0] != "" {
			t.Errorf("suggested --response %s: exit %d %q (%s)", try[1], code, m, stderr)
		}
	}
}

// TestDecodeHintsStop: past the first 100 frames that fail, the lines keep the
// decoder's error alone (the hint costs a decode per api version).
func TestDecodeHintsStop(t *testing.T) {
	frame, err := os.ReadFile("../../examples/data/fetch-response.bin")
	if err != nil {
		t.Fatal(err)
	}
	msgs, code, stderr := decodeErrors(t, bytes.Repeat(frame, hintedFrames+2))
	if code != exitFrames || len(msgs) != hintedFrames+2 {
		t.Fatalf("exit %d, %d lines", code, len(msgs))
	}
	for i, m := range msgs {
		if hinted := strings.HasPrefix(m, "this looks like a response"); hinted != (i < hintedFrames) {
			t.Fatalf("line %d: %q", i+1, m)
		}
	}
	if !strings.HasPrefix(stderr, "kwire: 102 frames did not decode (frame 1: this looks like a response") {
		t.Errorf("stderr %q", stderr)
	}
}
