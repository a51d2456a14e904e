package abi

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
)

var updateFixtures = flag.Bool("update-fixtures", false, "rewrite testdata/frames.txt")

// The frames of testdata/frames.txt, which every binding's tests read: a Produce v9
// request whose partitions break Kafka's validateRecords rules in each way, and a Fetch
// v12 response whose records end in a partial batch (decoded at v11 it fails, with a
// hint naming v12).
// tableJSON is the frame JSON of a layout-2 or layout-3 table.
func tableJSON(b []byte) []byte {
	le := binary.LittleEndian
	jo, jl := int(le.Uint32(b[40:])), int(le.Uint32(b[44:]))
	return b[jo : jo+jl]
}

func fixtureFrames(t *testing.T) map[string][]byte {
	t.Helper()
	var e records.Encoder
	batch := func(n int, tag string) []byte {
		recs := make([]records.Record, n)
		for i := range recs {
			recs[i] = records.Record{Key: []byte(tag), Value: []byte(tag + "-value-" + string(rune('0'+i))), OffsetDelta: int32(i)}
		}
		b := records.Batch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
		b.SetDeltas(recs)
		out, err := e.AppendBatch(nil, &b, recs)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	legacy, err := e.AppendLegacySet(nil, records.LegacySet{Magic: 1}, []records.LegacyMessage{{Key: []byte("k"), Value: []byte("legacy")}})
	if err != nil {
		t.Fatal(err)
	}
	ok := batch(2, "ok")
	trunc := batch(3, "cut")
	two := append(batch(1, "a"), batch(1, "b")...)
	req := codec.NewProduceRequest()
	req.Acks, req.TimeoutMs = -1, 1000
	req.TopicData = []codec.ProduceRequestTopicProduceData{{Name: "events", PartitionData: []codec.ProduceRequestPartitionProduceData{
		{Index: 0, Records: ok},
		{Index: 1, Records: trunc[:len(trunc)-7]},
		{Index: 2, Records: []byte{}},
		{Index: 3, Records: two},
		{Index: 4, Records: legacy},
	}}}
	produce, err := codec.EncodeRequestFrame(nil, codec.NewRequestHeaderFor(req, 9, 7, "fixture"), req)
	if err != nil {
		t.Fatal(err)
	}
	resp := codec.NewFetchResponse()
	full := append(batch(2, "f"), batch(3, "g")...)
	resp.Responses = []codec.FetchResponseFetchableTopicResponse{{Topic: "events", Partitions: []codec.FetchResponsePartitionData{
		{PartitionIndex: 3, HighWatermark: 5, Records: full[:len(full)-11]},
	}}}
	h := codec.NewResponseHeader()
	h.CorrelationID = 7
	fetch, err := codec.EncodeResponseFrame(nil, h, 12, resp)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"produce-v9-invalid-partitions": produce, "fetch-v12-partial-batch": fetch}
}

func TestFixtureFrames(t *testing.T) {
	frames := fixtureFrames(t)
	var b strings.Builder
	b.WriteString("# Frames the bindings' tests share: name, then the frame in hex. Written by\n")
	b.WriteString("# `go test ./abi -run TestFixtureFrames -update-fixtures`; checked by the same test.\n")
	for _, name := range []string{"produce-v9-invalid-partitions", "fetch-v12-partial-batch"} {
		b.WriteString(name + " " + hex.EncodeToString(frames[name]) + "\n")
	}
	if *updateFixtures {
		if err := os.WriteFile("testdata/frames.txt", []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("testdata/frames.txt")
	if err != nil || !bytes.Equal(got, []byte(b.String())) {
		t.Fatalf("testdata/frames.txt is stale (%v): run go test ./abi -run TestFixtureFrames -update-fixtures", err)
	}
}

// Every partition of the Produce fixture but the first breaks validateRecords; the
// frame-records calls say so in the partition's records reference.
func TestFrameRecordsProduceVerdicts(t *testing.T) {
	frame := fixtureFrames(t)["produce-v9-invalid-partitions"]
	for _, flags := range []int32{0, FlagInputSpans} {
		out, err := DecodeRequestFrameRecords(nil, frame, flags, 0)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Body struct {
				TopicData []struct {
					Name          string
					PartitionData []struct {
						Index   int
						Records struct {
							RecordCount  int
							SkippedBytes int
							Invalid      *struct {
								ErrorCode int
								Error     string
								Reason    string
							}
						}
					}
				}
			}
		}
		if err := json.Unmarshal(tableJSON(out), &f); err != nil {
			t.Fatal(err)
		}
		want := []struct {
			code   int
			reason string
		}{{0, ""}, {87, "found none complete"}, {87, "found none"}, {87, "exactly one"}, {87, "found magic 1"}}
		ps := f.Body.TopicData[0].PartitionData
		if len(ps) != len(want) {
			t.Fatalf("%d partitions", len(ps))
		}
		for i, w := range want {
			inv := ps[i].Records.Invalid
			switch {
			case w.code == 0 && inv != nil:
				t.Errorf("partition %d: verdict %+v, want none", i, inv)
			case w.code != 0 && (inv == nil || inv.ErrorCode != w.code || inv.Error != "INVALID_RECORD" || !strings.Contains(inv.Reason, w.reason)):
				t.Errorf("partition %d: verdict %+v, want %d %q", i, inv, w.code, w.reason)
			}
		}
		if ps[1].Records.RecordCount != 0 || ps[1].Records.SkippedBytes == 0 || ps[3].Records.RecordCount != 2 || ps[4].Records.RecordCount != 1 {
			t.Errorf("references %+v", ps)
		}
	}
	// A v2 request gets no verdicts (Kafka checks from v3 on); the JSON frame call
	// (records as base64) has none either.
	v2 := append([]byte{}, frame...)
	v2[7] = 2
	if out, err := DecodeRequestFrameRecords(nil, v2, 0, 0); err == nil && bytes.Contains(tableJSON(out), []byte(`"invalid"`)) {
		t.Error("a v2 request got a verdict")
	}
}

// A Fetch response decoded at the wrong version gets a hint naming the version that
// decodes it, in the text and in kw_last_error_json; at the right one, the partial
// trailing batch is skipped.
func TestResponseVersionHint(t *testing.T) {
	frame := fixtureFrames(t)["fetch-v12-partial-batch"]
	out, err := DecodeResponseFrameRecords(nil, frame, 1, 12, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if pt := parseFrameTable(t, out); !bytes.Contains(pt.json, []byte(`"recordCount":2,"skippedBytes":`)) || bytes.Contains(pt.json, []byte(`"skippedBytes":0`)) {
		t.Fatalf("json %s", pt.json)
	}
	check := func(name string, err error) {
		t.Helper()
		e := status(t, err, StatusDecode)
		if e.Hint == nil || e.Hint.Version != 12 || e.Hint.Message != "FetchResponse" ||
			!strings.HasSuffix(e.Text, "; the bytes decode as FetchResponse v12: was the request v12?") {
			t.Fatalf("%s: %q hint %+v", name, e.Text, e.Hint)
		}
		var j struct {
			Hint struct {
				Message, Text string
				Version       int
			}
		}
		if err := json.Unmarshal(e.AppendJSON(nil), &j); err != nil || j.Hint.Version != 12 || j.Hint.Message != "FetchResponse" {
			t.Fatalf("%s: json %s", name, e.AppendJSON(nil))
		}
	}
	_, err = DecodeResponseFrame(nil, frame, 1, 11)
	check("DecodeResponseFrame", err)
	_, err = DecodeResponseFrameRecords(nil, frame, 1, 11, 0, 0)
	check("DecodeResponseFrameRecords", err)
	_, err = codec.DecodeResponseFrame(frame, 1, 11)
	var de *codec.DecodeError
	if !errors.As(err, &de) || de.Hint == nil || de.Hint.Version != 12 {
		t.Fatalf("codec: %v", err)
	}
}

// A records error of a frame-records decode counts its byte offset from the frame.
func TestFrameRecordsErrorOffsetInFrame(t *testing.T) {
	frame := append([]byte{}, fixtureFrames(t)["fetch-v12-partial-batch"]...)
	at := bytes.Index(frame, []byte("f-value-0"))
	frame[at] ^= 0xff // the first batch's CRC no longer matches
	f, err := codec.DecodeResponseFrame(frame, 1, 12)
	if err != nil {
		t.Fatal(err)
	}
	recs := f.Body.(*codec.FetchResponse).Responses[0].Partitions[0].Records
	field := bytes.Index(frame, recs)
	var d records.Decoder
	_, want := d.ForEachMessage(recs, "", 0, func(*records.Message) error { return nil })
	var re *records.Error
	if !errors.As(want, &re) || field < 0 {
		t.Fatalf("reference error %v, field at %d", want, field)
	}
	_, err = DecodeResponseFrameRecords(nil, frame, 1, 12, 0, 0)
	e := status(t, err, StatusDecode)
	if e.Offset != field+re.Offset || !strings.Contains(e.Text, "byte "+strconv.Itoa(field+re.Offset)+":") {
		t.Fatalf("offset %d (%q), want %d = field %d + %d", e.Offset, e.Text, field+re.Offset, field, re.Offset)
	}
}
