package jsonline_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/jsonline"
)

const repo = "../.."

type vector struct {
	Name    string `json:"name"`
	APIKey  int16  `json:"apiKey"`
	Kind    string `json:"kind"`
	Version int16  `json:"version"`
	Bytes   []byte `json:"bytes"`
}

func readVectors(t *testing.T, path string) []vector {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []vector
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var v vector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// requestFrame wraps a request body in a frame with a header of the right version.
func requestFrame(t *testing.T, key, version int16, corr int32, body []byte) []byte {
	t.Helper()
	h := codec.RequestHeader{RequestAPIKey: key, RequestAPIVersion: version, CorrelationID: corr, ClientID: codec.StringPtr("jsonline")}
	f, err := h.Encode([]byte{0, 0, 0, 0}, codec.RequestHeaderVersion(key, version))
	if err != nil {
		t.Fatal(err)
	}
	return sized(append(f, body...))
}

func responseFrame(t *testing.T, key, version int16, corr int32, body []byte) []byte {
	t.Helper()
	h := codec.ResponseHeader{CorrelationID: corr}
	f, err := h.Encode([]byte{0, 0, 0, 0}, codec.ResponseHeaderVersion(key, version))
	if err != nil {
		t.Fatal(err)
	}
	return sized(append(f, body...))
}

func sized(f []byte) []byte {
	n := len(f) - 4
	f[0], f[1], f[2], f[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return f
}

// withRecords puts one records vector into a Produce v9 request and a Fetch v12
// response, so that every batch form (codecs, legacy sets, control batches) is written.
func withRecords(t *testing.T, recs []byte, corr int32) (req, resp []byte) {
	t.Helper()
	p := codec.NewProduceRequest()
	p.Acks, p.TimeoutMs = -1, 1000
	p.TopicData = []codec.ProduceRequestTopicProduceData{{Name: "t", PartitionData: []codec.ProduceRequestPartitionProduceData{{Index: 0, Records: recs}}}}
	body, err := p.Encode(nil, 9)
	if err != nil {
		t.Fatal(err)
	}
	f := codec.NewFetchResponse()
	f.Responses = []codec.FetchResponseFetchableTopicResponse{{Topic: "t", Partitions: []codec.FetchResponsePartitionData{{PartitionIndex: 0, Records: recs}}}}
	fbody, err := f.Encode(nil, 12)
	if err != nil {
		t.Fatal(err)
	}
	return requestFrame(t, 0, 9, corr, body), responseFrame(t, 1, 12, corr, fbody)
}

type responseCase struct {
	key, version int16
	frames       [][]byte
}

// corpus: the conformance vectors in frames, the sample frames, the bindings' shared
// frames, every records vector inside a Produce request and a Fetch response, and
// damaged frames (cut short, a batch whose CRC fails, a size field that lies).
func corpus(t *testing.T) (requests [][]byte, responses []responseCase) {
	t.Helper()
	groups := map[[2]int16][][]byte{}
	addResponse := func(key, version int16, f []byte) {
		groups[[2]int16{key, version}] = append(groups[[2]int16{key, version}], f)
	}
	vecs, _ := filepath.Glob(filepath.Join(repo, "conformance", "vectors", "kafka-clients-*.jsonl"))
	if len(vecs) == 0 {
		t.Fatal("no conformance vectors")
	}
	corr := int32(0)
	for _, path := range vecs {
		for _, v := range readVectors(t, path) {
			corr++
			switch v.Kind {
			case "request":
				if codec.RequestHeaderVersion(v.APIKey, v.Version) >= 0 {
					requests = append(requests, requestFrame(t, v.APIKey, v.Version, corr, v.Bytes))
				}
			case "response":
				addResponse(v.APIKey, v.Version, responseFrame(t, v.APIKey, v.Version, corr, v.Bytes))
			}
		}
	}
	recVecs, _ := filepath.Glob(filepath.Join(repo, "conformance", "vectors", "records", "*.jsonl"))
	for _, path := range recVecs {
		for _, v := range readVectors(t, path) {
			corr++
			req, resp := withRecords(t, v.Bytes, corr)
			requests = append(requests, req)
			addResponse(1, 12, resp)
			// The same batch with one byte of its records changed: its CRC fails.
			bad := bytes.Clone(v.Bytes)
			bad[len(bad)-1] ^= 0xff
			req, resp = withRecords(t, bad, corr)
			requests = append(requests, req)
			addResponse(1, 12, resp)
		}
	}
	produce, err := os.ReadFile(filepath.Join(repo, "examples", "data", "produce-request.bin"))
	if err != nil {
		t.Fatal(err)
	}
	fetch, err := os.ReadFile(filepath.Join(repo, "examples", "data", "fetch-response.bin"))
	if err != nil {
		t.Fatal(err)
	}
	requests = append(requests, produce, produce[:len(produce)-7], sized(append(bytes.Clone(produce), 0)), []byte{0, 0, 0, 1, 0})
	addResponse(1, 12, fetch)
	addResponse(1, 11, fetch) // the wrong version: the error carries the hint
	addResponse(1, 12, fetch[:len(fetch)/2])
	shared, err := os.ReadFile(filepath.Join(repo, "abi", "testdata", "frames.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(shared), "\n") {
		name, hx, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		f, err := hex.DecodeString(hx)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(name, "produce-v9") {
			requests = append(requests, f)
		} else if strings.HasPrefix(name, "fetch-v12") {
			addResponse(1, 12, f)
		}
	}
	keys := make([][2]int16, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i][0] < keys[j][0] || keys[i][0] == keys[j][0] && keys[i][1] < keys[j][1]
	})
	for _, k := range keys {
		responses = append(responses, responseCase{k[0], k[1], groups[k]})
	}
	return requests, responses
}

// TestSameLinesAsTheCommand: the lines are the kwire command's (`kwire decode`), line for
// line, on every conformance vector in a frame and on frames that fail, with records
// decoded and with --raw-records. The command is built from cmd/kwire in this checkout.
// (No frame here is given in the wrong direction, the one case where the command's line
// says more: its hint that the bytes look like a response, or a request.)
func TestSameLinesAsTheCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the kwire command (cmd/kwire)")
	}
	bin := filepath.Join(t.TempDir(), "kwire")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join(repo, "cmd", "kwire")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building cmd/kwire: %v\n%s", err, out)
	}
	requests, responses := corpus(t)
	decode := func(frames [][]byte, args ...string) []string {
		t.Helper()
		var in bytes.Buffer
		for _, f := range frames {
			in.WriteString(hex.EncodeToString(f))
			in.WriteByte('\n')
		}
		cmd := exec.Command(bin, append([]string{"decode", "--format", "hex"}, args...)...)
		cmd.Stdin = &in
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		_ = cmd.Run() // a frame that fails makes the exit status non-zero; its line is still printed
		lines := strings.SplitAfter(out.String(), "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if len(lines) != len(frames) {
			t.Fatalf("kwire decode %v: %d lines for %d frames: %s", args, len(lines), len(frames), errOut.String())
		}
		return lines
	}
	compared, failed := 0, 0
	check := func(what string, want string, got []byte, err error) {
		t.Helper()
		compared++
		if string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", what, got, want)
		}
		var top struct {
			Error json.RawMessage `json:"error"`
		}
		if jerr := json.Unmarshal([]byte(want), &top); jerr != nil || (err != nil) != (top.Error != nil) {
			t.Errorf("%s: error %v (%v) for the line %.500s", what, err, jerr, want)
		}
		if err != nil {
			failed++
		}
	}
	for _, raw := range []bool{false, true} {
		var flags []string
		if raw {
			flags = []string{"--raw-records"}
		}
		w := jsonline.Writer{RawRecords: raw}
		var line []byte
		var err error
		for i, want := range decode(requests, flags...) {
			line, err = w.AppendRequest(line[:0], requests[i], nil)
			check(fmt.Sprintf("request %d (raw %v)", i, raw), want, line, err)
		}
		for _, rc := range responses {
			args := append([]string{"--response", fmt.Sprintf("%d:%d", rc.key, rc.version)}, flags...)
			for i, want := range decode(rc.frames, args...) {
				line, err = w.AppendResponse(line[:0], rc.frames[i], rc.key, rc.version, nil)
				check(fmt.Sprintf("response %d v%d #%d (raw %v)", rc.key, rc.version, i, raw), want, line, err)
			}
		}
	}
	if failed == 0 || compared < 10000 {
		t.Errorf("%d lines compared, %d with errors: the corpus should have thousands, some failing", compared, failed)
	}
	t.Logf("%d lines compared with the command's (%d of frames that fail)", compared, failed)
}

// TestMeta: time, connection and latency come first, as in `kwire pcap` lines; a
// request never gets a latency.
func TestMeta(t *testing.T) {
	frame, err := os.ReadFile(filepath.Join(repo, "examples", "data", "fetch-response.bin"))
	if err != nil {
		t.Fatal(err)
	}
	m := &jsonline.Meta{Time: time.Date(2024, 5, 1, 12, 0, 0, 123456789, time.FixedZone("x", 3600)), Conn: "10.0.0.1:5000 > 10.0.0.2:9092", Latency: 1500 * time.Microsecond}
	line, err := jsonline.AppendResponse([]byte("> "), frame, 1, 12, m)
	if err != nil {
		t.Fatal(err)
	}
	want := `> {"time":"2024-05-01T11:00:00.123456789Z","conn":"10.0.0.1:5000 > 10.0.0.2:9092","dir":"response","correlationId":8,"size":815,"latencyUs":1500,"apiKey":1,"apiVersion":12,`
	if !strings.HasPrefix(string(line), want) || !strings.HasSuffix(string(line), "}\n") || !json.Valid(line[2:]) {
		t.Fatalf("line %.300s", line)
	}
	req, err := os.ReadFile(filepath.Join(repo, "examples", "data", "produce-request.bin"))
	if err != nil {
		t.Fatal(err)
	}
	m.Latency = 0
	line, err = jsonline.AppendRequest(nil, req, m)
	if err != nil || strings.Contains(string(line), "latencyUs") || !strings.HasPrefix(string(line), `{"time":"2024-05-01T11:00:00.123456789Z","conn":`) {
		t.Fatalf("request line %.200s %v", line, err)
	}
	var decoded struct {
		Body struct {
			TopicData []struct {
				PartitionData []struct {
					Records struct {
						Batches []struct {
							Records []struct {
								Value struct{ Text string }
							}
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal(line, &decoded); err != nil {
		t.Fatal(err)
	}
	if v := decoded.Body.TopicData[0].PartitionData[0].Records.Batches[0].Records[1].Value.Text; v != "orders/0 message 1" {
		t.Errorf("second record's value %q", v)
	}
}

// TestAppendValue: null, text when valid UTF-8 (read back unchanged), base64 otherwise.
func TestAppendValue(t *testing.T) {
	for _, v := range [][]byte{nil, {}, []byte("héllo \"x\"\n\t\x01\\ \u2028"), {0, 0xff, 7}} {
		b := jsonline.AppendValue(nil, v)
		var got struct {
			Text   *string
			Base64 *string
		}
		if string(b) == "null" {
			if v != nil {
				t.Errorf("%q: null", v)
			}
			continue
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q: %s: %v", v, b, err)
		}
		switch {
		case got.Text != nil && *got.Text == string(v):
		case got.Base64 != nil && *got.Base64 == base64.StdEncoding.EncodeToString(v):
		default:
			t.Errorf("%q: %s", v, b)
		}
	}
}

// TestTopicName: a Produce v13 request names its topic by id alone; with TopicName the
// line carries the name beside the id, as kwire pcap writes it, and without, it does not.
func TestTopicName(t *testing.T) {
	id := codec.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	p := codec.NewProduceRequest()
	p.Acks, p.TimeoutMs = -1, 1000
	p.TopicData = []codec.ProduceRequestTopicProduceData{{TopicID: id, PartitionData: []codec.ProduceRequestPartitionProduceData{{Index: 0}}}}
	frame, err := codec.EncodeRequestFrame(nil, codec.NewRequestHeaderFor(p, 13, 5, "c"), p)
	if err != nil {
		t.Fatal(err)
	}
	var w jsonline.Writer
	plain, err := w.AppendRequest(nil, frame, nil)
	if err != nil || strings.Contains(string(plain), `"name"`) {
		t.Fatalf("without TopicName: %s %v", plain, err)
	}
	w.TopicName = func(got [16]byte) (string, bool) { return "orders", got == id }
	named, err := w.AppendRequest(nil, frame, nil)
	if err != nil || !strings.Contains(string(named), `"topicId":"AQIDBAUGBwgJCgsMDQ4PEA","name":"orders"`) {
		t.Fatalf("with TopicName: %s %v", named, err)
	}
}

// TestAppendValueText: every valid UTF-8 string, escapes and all, is written as text and
// comes back from a JSON reader unchanged.
func TestAppendValueText(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []rune{'a', 'Z', '"', '\\', '\n', '\r', '\t', 0, 1, 0x1f, 0x7f, 'é', '€', '𝄞', 0x2028, '/', '<'}
	for i := 0; i < 5000; i++ {
		var rs []rune
		for n := rng.Intn(40); n > 0; n-- {
			rs = append(rs, alphabet[rng.Intn(len(alphabet))])
		}
		s := string(rs)
		var got struct{ Text *string }
		b := jsonline.AppendValue(nil, []byte(s))
		if err := json.Unmarshal(b, &got); err != nil || got.Text == nil || *got.Text != s {
			t.Fatalf("%q: %s, %v", s, b, err)
		}
	}
}

// TestAppendHead: a line of one's own about a frame, opened with AppendHead and closed
// with AppendError, is the line a Writer writes for a frame that does not decode.
func TestAppendHead(t *testing.T) {
	frame := []byte{0, 0, 0, 6, 0, 1, 0, 12, 0, 0, 0, 7} // a response, cut short
	m := &jsonline.Meta{Conn: "a > b", Latency: 2 * time.Millisecond}
	want, err := jsonline.AppendResponse(nil, frame, 1, 12, m)
	if err == nil {
		t.Fatal("a cut frame decodes")
	}
	line := jsonline.AppendHead(nil, frame, true, m)
	line = append(line, `,"apiKey":1,"apiVersion":12,"error":`...)
	line = append(jsonline.AppendError(line, err), "}\n"...)
	if !bytes.Equal(line, want) {
		t.Fatalf("%s\nwant %s", line, want)
	}
	if got := string(jsonline.AppendError(nil, errors.New("x"))); got != `{"message":"x","path":"","offset":0}` {
		t.Errorf("a plain error: %s", got)
	}
}
