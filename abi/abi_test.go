package abi

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
)

func status(t *testing.T, err error, want int32) *Error {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want status %d", want)
	}
	e := AsError(err)
	if e.Status != want {
		t.Fatalf("status %d (%s), want %d", e.Status, e.Text, want)
	}
	if e.Text == "" {
		t.Fatalf("status %d without text", e.Status)
	}
	var j map[string]any
	if err := json.Unmarshal(e.AppendJSON(nil), &j); err != nil {
		t.Fatalf("error JSON: %v", err)
	}
	if int32(j["status"].(float64)) != want || j["text"] != e.Text || j["category"] != StatusName(want) {
		t.Fatalf("error JSON %v does not match", j)
	}
	return e
}

func TestVersion(t *testing.T) {
	if Version() != Major<<16|Minor {
		t.Fatal(Version())
	}
	hdr := readHeader(t)
	if !strings.Contains(hdr, "#define KW_ABI_MAJOR "+strconv.Itoa(Major)+"\n") || !strings.Contains(hdr, "#define KW_ABI_MINOR "+strconv.Itoa(Minor)+"\n") {
		t.Fatalf("kwire.h disagrees with Major.Minor %d.%d", Major, Minor)
	}
}

func readHeader(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../capi/kwire.h")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStatusesMatchHeader: every status and constant here has the value kwire.h gives.
func TestStatusesMatchHeader(t *testing.T) {
	hdr := readHeader(t)
	for name, v := range map[string]int32{"KW_ERR_ARG": StatusArg, "KW_ERR_DECODE": StatusDecode, "KW_ERR_ENCODE": StatusEncode,
		"KW_ERR_JSON": StatusJSON, "KW_ERR_UNKNOWN_API": StatusUnknownAPI, "KW_ERR_VERSION": StatusVersion,
		"KW_ERR_TOO_LARGE": StatusTooLarge, "KW_ERR_NOMEM": StatusNoMem, "KW_ERR_UNSUPPORTED": StatusUnsupported,
		"KW_ERR_INTERNAL": StatusInternal} {
		want := "#define " + name + " (" + itoa(int(v)) + ")"
		if !strings.Contains(hdr, want) {
			t.Errorf("kwire.h lacks %q", want)
		}
		if StatusName(v) == "" || strings.HasPrefix(StatusName(v), "status ") {
			t.Errorf("%s has no category name", name)
		}
	}
	for _, c := range []string{"#define KW_OK 0", "#define KW_MAX_ALLOC (512 * 1024 * 1024)", "#define KW_RECORDS_SKIP_CRC 1",
		"#define KW_COMPRESSION_ZSTD 4"} {
		if !strings.Contains(hdr, c) {
			t.Errorf("kwire.h lacks %q", c)
		}
	}
	if MaxAlloc != 512*1024*1024 || FlagSkipCRC != 1 || records.CompressionZstd != 4 {
		t.Error("constants drifted from kwire.h")
	}
}

func itoa(v int) string { return strconv.Itoa(v) }

func fmtInt(v int) string { return strconv.Itoa(v) }

func TestDecodeEncodeMessage(t *testing.T) {
	h := codec.NewRequestHeader()
	h.RequestAPIKey, h.RequestAPIVersion, h.CorrelationID = 18, 3, 42
	id := "kw"
	h.ClientID = &id
	wire, err := h.Encode(nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	js, err := DecodeMessage([]byte("prefix:"), "RequestHeader", 2, wire)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(js, []byte("prefix:")) {
		t.Fatal("dst not kept")
	}
	want := `{"requestApiKey":18,"requestApiVersion":3,"correlationId":42,"clientId":"kw"}`
	if string(js[7:]) != want {
		t.Fatalf("got %s, want %s", js[7:], want)
	}
	back, err := EncodeMessage(nil, "RequestHeader", 2, js[7:])
	if err != nil || !bytes.Equal(back, wire) {
		t.Fatalf("encode: %x %v, want %x", back, err, wire)
	}
	// The output never aliases the input.
	in := bytes.Clone(wire)
	out, _ := EncodeMessage(nil, "RequestHeader", 2, js[7:])
	out[0] ^= 0xff
	if !bytes.Equal(in, wire) {
		t.Fatal("output aliases input")
	}

	status(t, second(DecodeMessage(nil, "NoSuch", 0, wire)), StatusUnknownAPI)
	status(t, second(DecodeMessage(nil, "RequestHeader", 9, wire)), StatusVersion)
	status(t, second(DecodeMessage(nil, "RequestHeader", 1<<20, wire)), StatusVersion)
	e := status(t, second(DecodeMessage(nil, "RequestHeader", 2, wire[:9])), StatusDecode)
	if e.Message != "RequestHeader" || e.Version != 2 || e.Path == "" || e.Offset < 0 {
		t.Fatalf("decode error lacks context: %+v", e)
	}
	status(t, second(DecodeMessage(nil, "RequestHeader", 2, append(bytes.Clone(wire), 0))), StatusDecode)
	e = status(t, second(EncodeMessage(nil, "RequestHeader", 2, []byte(`{"correlationId":"x"}`))), StatusJSON)
	if e.Path != "$.correlationId" || e.Offset < 0 {
		t.Fatalf("JSON error lacks path/offset: %+v", e)
	}
	status(t, second(EncodeMessage(nil, "RequestHeader", 2, []byte(`{"nope":1}`))), StatusJSON)
	// A null where the JSON form forbids it is a JSON error; a non-default value in a
	// non-ignorable field the version lacks is an encode error naming the field.
	status(t, second(EncodeMessage(nil, "ConsumerProtocolSubscription", 0, []byte(`{"topics":null}`))), StatusJSON)
	e = status(t, second(EncodeMessage(nil, "CreateTopicsRequest", 0, []byte(`{"topics":[],"timeoutMs":1,"validateOnly":true}`))), StatusEncode)
	if !strings.Contains(e.Path, "validateOnly") || e.Message != "CreateTopicsRequest" {
		t.Fatalf("encode error lacks context: %+v", e)
	}
}

func second(_ []byte, err error) error { return err }

func TestFrames(t *testing.T) {
	body := codec.NewRequest(18).(*codec.APIVersionsRequest)
	body.ClientSoftwareName, body.ClientSoftwareVersion = "kw", "1"
	h := codec.NewRequestHeaderFor(body, 3, 7, "cli")
	frame, err := codec.EncodeRequestFrame(nil, h, body)
	if err != nil {
		t.Fatal(err)
	}
	js, err := DecodeRequestFrame(nil, frame)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"apiKey":18,"apiVersion":3,"headerVersion":2,"header":{"requestApiKey":18,"requestApiVersion":3,"correlationId":7,"clientId":"cli"},"body":{"clientSoftwareName":"kw","clientSoftwareVersion":"1"}}`
	if string(js) != want {
		t.Fatalf("got  %s\nwant %s", js, want)
	}
	back, err := EncodeRequestFrame(nil, js)
	if err != nil || !bytes.Equal(back, frame) {
		t.Fatalf("re-encode: %v", err)
	}
	// apiKey/apiVersion/headerVersion are optional but must agree when present.
	minimal := `{"header":{"requestApiKey":18,"requestApiVersion":3,"correlationId":7,"clientId":"cli"},"body":{"clientSoftwareName":"kw","clientSoftwareVersion":"1"}}`
	if back, err := EncodeRequestFrame(nil, []byte(minimal)); err != nil || !bytes.Equal(back, frame) {
		t.Fatalf("minimal envelope: %v", err)
	}
	for _, bad := range []string{
		strings.Replace(want, `"apiKey":18`, `"apiKey":19`, 1),
		strings.Replace(want, `"apiVersion":3`, `"apiVersion":2`, 1),
		strings.Replace(want, `"headerVersion":2`, `"headerVersion":1`, 1),
		strings.Replace(want, `"body"`, `"bodi"`, 1),
		`{"header":{}}`,
		`{"header":{},"body":{},"header":{}}`,
		want + "x",
	} {
		status(t, second(EncodeRequestFrame(nil, []byte(bad))), StatusJSON)
	}
	e := status(t, second(EncodeRequestFrame(nil, []byte(strings.Replace(want, `"clientSoftwareVersion":"1"`, `"clientSoftwareVersion":1`, 1)))), StatusJSON)
	if !strings.HasPrefix(e.Path, "$.body.clientSoftwareVersion") || e.Offset <= strings.Index(want, `"body"`) {
		t.Fatalf("body error not rebased onto the envelope: %+v", e)
	}
	status(t, second(EncodeRequestFrame(nil, []byte(strings.Replace(want, `"requestApiVersion":3`, `"requestApiVersion":77`, 1)))), StatusJSON)
	status(t, second(EncodeRequestFrame(nil, []byte(`{"apiVersion":77,"header":{"requestApiKey":18,"requestApiVersion":77},"body":{}}`))), StatusVersion)
	status(t, second(EncodeRequestFrame(nil, []byte(`{"header":{"requestApiKey":999},"body":{}}`))), StatusUnknownAPI)

	// Response: ApiVersions answers always use response header v0.
	resp := codec.NewResponse(18)
	rframe, err := codec.EncodeResponseFrame(nil, &codec.ResponseHeader{CorrelationID: 7}, 3, resp)
	if err != nil {
		t.Fatal(err)
	}
	rjs, err := DecodeResponseFrame(nil, rframe, 18, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(rjs, []byte(`{"apiKey":18,"apiVersion":3,"headerVersion":0,"header":{"correlationId":7},"body":{`)) {
		t.Fatalf("response envelope %s", rjs)
	}
	if back, err := EncodeResponseFrame(nil, rjs, 18, 3); err != nil || !bytes.Equal(back, rframe) {
		t.Fatalf("response re-encode: %v", err)
	}
	status(t, second(EncodeResponseFrame(nil, rjs, 18, 2)), StatusJSON) // apiVersion disagrees
	status(t, second(DecodeResponseFrame(nil, rframe, 18, 99)), StatusVersion)
	status(t, second(DecodeResponseFrame(nil, rframe, -5, 0)), StatusUnknownAPI)
	status(t, second(DecodeResponseFrame(nil, rframe[:len(rframe)-1], 18, 3)), StatusDecode)
	big := []byte{0x10, 0, 0, 0, 0, 18, 0, 3}
	status(t, second(DecodeRequestFrame(nil, big)), StatusTooLarge)
}

// TestPeekMatchesCodec: the allocation-free peek agrees with the codec's.
func TestPeekMatchesCodec(t *testing.T) {
	body := codec.NewRequest(0)
	for _, c := range []struct {
		key, version int16
		clientID     *string
	}{{0, 9, strp("producer-1")}, {0, 3, strp("")}, {0, 3, nil}, {7, 0, strp("x")}, {18, 4, strp("é")}} {
		h := codec.NewRequestHeader()
		h.RequestAPIKey, h.RequestAPIVersion, h.CorrelationID, h.ClientID = c.key, c.version, 99, c.clientID
		hv := codec.RequestHeaderVersion(c.key, c.version)
		hb, err := h.Encode(nil, hv)
		if err != nil {
			t.Fatal(err)
		}
		frame := binary.BigEndian.AppendUint32(nil, uint32(len(hb)+3))
		frame = append(append(frame, hb...), 1, 2, 3)
		p, err := PeekRequestHeader(frame)
		if err != nil {
			t.Fatal(err)
		}
		cp, err := codec.PeekRequestHeader(frame)
		if err != nil {
			t.Fatal(err)
		}
		if p.APIKey != int32(cp.APIKey) || p.APIVersion != int32(cp.APIVersion) || p.CorrelationID != cp.CorrelationID ||
			p.HeaderVersion != int32(cp.HeaderVersion) || int(p.FrameSize) != cp.FrameSize {
			t.Fatalf("peek %+v, codec %+v", p, cp)
		}
		if cp.ClientID == nil {
			if p.ClientIDLength != -1 {
				t.Fatalf("null client id: %+v", p)
			}
		} else if string(frame[p.ClientIDOffset:p.ClientIDOffset+p.ClientIDLength]) != *cp.ClientID {
			t.Fatalf("client id %q", frame[p.ClientIDOffset:p.ClientIDOffset+p.ClientIDLength])
		}
		var buf [PeekSize]byte
		p.Put(buf[:])
		if int32(binary.LittleEndian.Uint32(buf[12:])) != 99 || binary.LittleEndian.Uint32(buf[28:]) != 0 {
			t.Fatalf("Put layout %x", buf)
		}
		// Every truncation either peeks the same or fails with a decode error.
		for n := 0; n < len(frame); n++ {
			q, err := PeekRequestHeader(frame[:n])
			if err != nil {
				if StatusOf(err) != StatusDecode {
					t.Fatalf("truncated to %d: %v", n, err)
				}
				continue
			}
			if q != p {
				t.Fatalf("truncated to %d: %+v, want %+v", n, q, p)
			}
		}
	}
	_ = body
	status(t, second2(PeekRequestHeader([]byte{0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})), StatusTooLarge)
	status(t, second2(PeekRequestHeader([]byte{0, 0, 0, 8, 0x7f, 0, 0, 0, 0, 0, 0, 0})), StatusUnknownAPI)
	status(t, second2(PeekRequestHeader([]byte{0, 0, 0, 20, 0, 0, 0, 9, 0, 0, 0, 0, 0xff, 0xfe})), StatusDecode)
}

func second2(_ Peek, err error) error { return err }

func strp(s string) *string { return &s }

func TestHeaderVersions(t *testing.T) {
	for _, c := range []struct{ key, v, req, resp int32 }{{18, 3, 2, 0}, {18, 0, 1, 0}, {7, 0, 0, 0}, {0, 9, 2, 1}, {0, 8, 1, 0}} {
		req, resp, err := HeaderVersions(c.key, c.v)
		if err != nil || req != c.req || resp != c.resp {
			t.Errorf("api %d v%d: %d %d %v, want %d %d", c.key, c.v, req, resp, err, c.req, c.resp)
		}
	}
	status(t, third(HeaderVersions(9999, 0)), StatusUnknownAPI)
	status(t, third(HeaderVersions(0, 999)), StatusVersion)
}

func third(_, _ int32, err error) error { return err }

func TestCatalogue(t *testing.T) {
	a, err := Catalogue(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Catalogue(nil)
	a[0] = 'x'
	if b[0] != '{' {
		t.Fatal("catalogue outputs share memory")
	}
	var c struct {
		ABIVersion   string   `json:"abiVersion"`
		SpecReleases []string `json:"specReleases"`
		APIs         []struct {
			APIKey     int16  `json:"apiKey"`
			Name       string `json:"name"`
			Request    string `json:"request"`
			MaxVersion int16  `json:"maxVersion"`
		} `json:"apis"`
		Messages []struct {
			Name string `json:"name"`
			Kind string `json:"kind"`
		} `json:"messages"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.ABIVersion != strconv.Itoa(Major)+"."+strconv.Itoa(Minor) || len(c.SpecReleases) == 0 || len(c.APIs) != len(codec.APIs()) || len(c.Messages) != len(codec.Messages()) {
		t.Fatalf("catalogue: %s %v %d apis %d messages", c.ABIVersion, c.SpecReleases, len(c.APIs), len(c.Messages))
	}
	if c.APIs[0].APIKey != 0 || c.APIs[0].Name != "Produce" || c.APIs[0].Request != "ProduceRequest" {
		t.Fatalf("first api %+v", c.APIs[0])
	}
	kinds := map[string]int{}
	for _, m := range c.Messages {
		kinds[m.Kind]++
	}
	if kinds["header"] != 2 || kinds["data"] == 0 || kinds["request"] != kinds["response"] {
		t.Fatalf("kinds %v", kinds)
	}
}

func TestRecordsRoundTrip(t *testing.T) {
	in := `{"baseOffset":"10","producerId":"4611686018427387905","producerEpoch":3,"baseSequence":5,
	  "partitionLeaderEpoch":2,"transactional":true,
	  "records":[{"key":"aw==","value":"dg==","timestamp":"1700000000000","headers":[{"key":"h","value":null},{"key":"schema.id","value":"NDI="}]},
	             {"key":null,"value":"","timestamp":1700000000005}]}`
	for c := int32(0); c <= 4; c++ {
		batch, err := RecordsEncode(nil, []byte(in), c)
		if err != nil {
			t.Fatalf("compression %d: %v", c, err)
		}
		js, err := RecordsDecodeJSON(nil, batch, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Records []map[string]any `json:"records"`
			Skipped int              `json:"skippedBytes"`
		}
		if err := json.Unmarshal(js, &d); err != nil {
			t.Fatal(err)
		}
		if len(d.Records) != 2 || d.Skipped != 0 {
			t.Fatalf("%s", js)
		}
		r0, r1 := d.Records[0], d.Records[1]
		if r0["offset"] != "10" || r1["offset"] != "11" || r0["producerId"] != "4611686018427387905" || r0["key"] != "aw==" ||
			r1["key"] != nil || r1["value"] != "" || r1["timestamp"] != "1700000000005" || r0["transactional"] != true ||
			r0["sequence"].(float64) != 5 || r1["sequence"].(float64) != 6 || r0["schemaSource"] != "header" || r0["schemaId"].(float64) != 42 {
			t.Fatalf("compression %d: %s", c, js)
		}
		hs := r0["headers"].([]any)
		if len(hs) != 2 || hs[0].(map[string]any)["value"] != nil || hs[1].(map[string]any)["key"] != "schema.id" {
			t.Fatalf("headers %v", hs)
		}
		// The table says the same, and its spans hold the bytes.
		tb, err := RecordsDecodeTable(nil, batch, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		le := binary.LittleEndian
		if string(tb[:4]) != TableMagic || le.Uint32(tb[8:]) != 2 || int(le.Uint32(tb[36:])) != len(tb) || le.Uint32(tb[20:]) != 2 {
			t.Fatalf("table header %x", tb[:40])
		}
		rec0 := tb[TableHeaderSize:]
		if le.Uint64(rec0[16:]) != 4611686018427387905 || int32(le.Uint32(rec0[72:])) != 1 || int32(le.Uint32(rec0[64:])) != c {
			t.Fatalf("record 0 entry %x", rec0[:TableRecordStride])
		}
		ko, kl := le.Uint32(rec0[24:]), le.Uint32(rec0[28:])
		if string(tb[ko:ko+kl]) != "k" {
			t.Fatalf("key span %d %d", ko, kl)
		}
		rec1 := tb[TableHeaderSize+TableRecordStride:]
		if int32(le.Uint32(rec1[28:])) != -1 || le.Uint32(rec1[36:]) != 0 || le.Uint32(rec1[44:]) != 0 {
			t.Fatalf("record 1 entry %x", rec1[:TableRecordStride])
		}
		hOff := le.Uint32(tb[28:])
		if int32(le.Uint32(tb[hOff+12:])) != -1 {
			t.Fatal("null header value is not -1")
		}
	}
	// Legacy sets.
	for _, magic := range []string{"0", "1"} {
		set, err := RecordsEncode(nil, []byte(`{"magic":`+magic+`,"baseOffset":"5","records":[{"key":"aw==","value":"dg==","timestamp":"7"}]}`), 1)
		if err != nil {
			t.Fatal(err)
		}
		js, err := RecordsDecodeJSON(nil, set, 0, 0)
		if err != nil || !bytes.Contains(js, []byte(`"magic":`+magic)) || !bytes.Contains(js, []byte(`"offset":"5"`)) {
			t.Fatalf("magic %s: %s %v", magic, js, err)
		}
	}
	status(t, second(RecordsEncode(nil, []byte(`{"magic":1,"records":[]}`), 4)), StatusUnsupported)
	status(t, second(RecordsEncode(nil, []byte(`{"magic":1,"records":[{"headers":[{"key":"a"}]}]}`), 0)), StatusArg)
	status(t, second(RecordsEncode(nil, []byte(`{"records":[],"magic":3}`), 0)), StatusJSON)
	status(t, second(RecordsEncode(nil, []byte(`{"records":[{"headers":[{"value":null}]}]}`), 0)), StatusJSON)
	status(t, second(RecordsEncode(nil, []byte(`{}`), 0)), StatusJSON)
	status(t, second(RecordsEncode(nil, []byte(`{"records":[]}`), 5)), StatusArg)
	e := status(t, second(RecordsEncode(nil, []byte(`{"records":[{"timestamp":"x"}]}`), 0)), StatusJSON)
	if e.Path != "$.records[0].timestamp" {
		t.Fatalf("path %q", e.Path)
	}

	// Decoding limits and flags.
	big := bytes.Repeat([]byte("a"), 1<<16)
	batch, err := RecordsEncode(nil, []byte(`{"records":[{"value":"`+b64(big)+`"}]}`), 1)
	if err != nil {
		t.Fatal(err)
	}
	status(t, second(RecordsDecodeJSON(nil, batch, 0, 1024)), StatusTooLarge)
	status(t, second(RecordsDecodeJSON(nil, batch, 2, 0)), StatusArg)
	status(t, second(RecordsDecodeJSON(nil, batch, 0, -1)), StatusArg)
	bad := bytes.Clone(batch)
	bad[len(bad)-1] ^= 1
	e = status(t, second(RecordsDecodeTable(nil, bad, 0, 0)), StatusDecode)
	if !strings.Contains(e.Path, "crc") {
		t.Fatalf("CRC error path %q", e.Path)
	}
	if _, err := RecordsDecodeTable(nil, bad, FlagSkipCRC, 0); err != nil && errors.Is(err, records.ErrCRC) {
		t.Fatalf("skip CRC still checks: %v", err)
	}
	// A partial batch at the end is skipped and reported.
	js, err := RecordsDecodeJSON(nil, batch[:len(batch)/2], 0, 0)
	if err != nil || !bytes.HasSuffix(js, []byte(`"skippedBytes":`+fmtInt(len(batch)/2)+`}`)) {
		t.Fatalf("partial batch: %s %v", js, err)
	}
}

func b64(b []byte) string {
	s, _ := json.Marshal(b)
	return strings.Trim(string(s), `"`)
}

func TestGuard(t *testing.T) {
	f := func() (err error) {
		defer guard(&err)
		var m map[string]int
		m["x"] = 1
		return nil
	}
	e := status(t, f(), StatusInternal)
	if !strings.Contains(e.Text, "recovered panic") {
		t.Fatal(e.Text)
	}
}

func TestEnvelopeErrors(t *testing.T) {
	for _, c := range []struct {
		in, path, msg string
	}{
		{`{"header":{},"header":{}}`, "$.header", "duplicate key"},
		{`{"header":[1,2,}`, "$.header", "invalid JSON"},
		{`{"body":"\x"}`, "$.body", "invalid escape"},
		{`{"apiKey":01}`, "$", "want ',' or '}'"},
		{`{"header":{},"body":{}} x`, "$", "unexpected data"},
		{`{"header":{}}`, "$", `missing key "body"`},
		{`{"nope":1}`, "$.nope", "unknown key"},
		{"{\"body\":\"\x01\"}", "$.body", "control character"},
		{`{"apiKey":3,"header":{"requestApiKey":18,"requestApiVersion":3},"body":{}}`, "$.apiKey", "3 disagrees with 18"},
		{`{"header":{"requestApiKey":18,"requestApiVersion":3,"clientId":7},"body":{}}`, "$.header.clientId", "want string"},
		{`{"header":{"requestApiKey":18,"requestApiVersion":3},"body":{"clientSoftwareName":1}}`, "$.body.clientSoftwareName", "want string"},
	} {
		_, err := EncodeRequestFrame(nil, []byte(c.in))
		e := status(t, err, StatusJSON)
		if e.Path != c.path || !strings.Contains(e.Text, c.msg) || e.Offset < 0 {
			t.Errorf("%s: %+v, want path %s and %q", c.in, e, c.path, c.msg)
		}
	}
}
