package abi

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
)

// parsedTable reads a layout-2 table back: its JSON and every record.
type parsedTable struct {
	json []byte
	recs []records.Record
	offs []int64
}

func parseFrameTable(t *testing.T, b []byte) parsedTable {
	t.Helper()
	le := binary.LittleEndian
	if string(b[:4]) != TableMagic || le.Uint32(b[4:]) != TableLayoutFrame || int(le.Uint32(b[36:])) != len(b) {
		t.Fatalf("bad table header %x", b[:48])
	}
	tr, err := readTable(b)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := tr.records(0, tr.count)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for i := 0; i < tr.count; i++ {
		offs = append(offs, int64(le.Uint64(b[tr.recsOff+i*tr.stride:])))
	}
	jo, jl := int(le.Uint32(b[40:])), int(le.Uint32(b[44:]))
	return parsedTable{json: b[jo : jo+jl], recs: recs, offs: offs}
}

// expectRecords decodes records bytes with the records package, the reference.
func expectRecords(t *testing.T, b []byte) ([]records.Record, []int64, error) {
	var recs []records.Record
	var offs []int64
	d := records.NewDecoder(records.Options{})
	_, err := d.ForEachMessage(b, "", 0, func(m *records.Message) error {
		r := records.Record{Key: clone(m.Key), Value: clone(m.Value), Timestamp: m.Timestamp}
		for _, h := range m.Headers {
			k := h.Key
			if k == nil {
				k = []byte{}
			}
			r.Headers = append(r.Headers, records.Header{Key: clone(k), Value: clone(h.Value)})
		}
		recs = append(recs, r)
		offs = append(offs, m.Offset)
		return nil
	})
	return recs, offs, err
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func sameRecords(a, b []records.Record) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if !bytes.Equal(x.Key, y.Key) || (x.Key == nil) != (y.Key == nil) || !bytes.Equal(x.Value, y.Value) || (x.Value == nil) != (y.Value == nil) ||
			x.Timestamp != y.Timestamp || len(x.Headers) != len(y.Headers) {
			return false
		}
		for j := range x.Headers {
			if !bytes.Equal(x.Headers[j].Key, y.Headers[j].Key) || !bytes.Equal(x.Headers[j].Value, y.Headers[j].Value) || (x.Headers[j].Value == nil) != (y.Headers[j].Value == nil) {
				return false
			}
		}
	}
	return true
}

// walkRecords calls fn for every records field in a decoded frame JSON value, in order.
func walkRecords(v any, fn func(key string, val any)) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		for _, k := range keys {
			if k == "records" {
				fn(k, x[k])
				continue
			}
			walkRecords(x[k], fn)
		}
	case []any:
		for _, e := range x {
			walkRecords(e, fn)
		}
	}
}

func recordVectors(t *testing.T) [][]byte {
	f, err := os.Open("../conformance/vectors/records/kafka-clients-4.4.0.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var v struct{ Bytes []byte }
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v.Bytes)
	}
	return out
}

// checkFrame decodes frame both ways and compares: the JSON with references against the
// plain frame JSON, and the table's records against the records package's.
func checkFrameRecords(t *testing.T, what string, frame []byte, request bool, key, v int16) {
	t.Helper()
	var plain, table []byte
	var perr, terr error
	if request {
		plain, perr = DecodeRequestFrame(nil, frame)
		table, terr = DecodeRequestFrameRecords(nil, frame, 0, 0)
	} else {
		plain, perr = DecodeResponseFrame(nil, frame, int32(key), int32(v))
		table, terr = DecodeResponseFrameRecords(nil, frame, int32(key), int32(v), 0, 0)
	}
	if perr != nil {
		if terr == nil || StatusOf(terr) != StatusOf(perr) {
			t.Fatalf("%s: plain decode fails (%v) but the table decode gives %v", what, perr, terr)
		}
		return
	}
	checkSamePaths(t, what, frame, request, key, v, 0)
	var pj any
	if err := json.Unmarshal(plain, &pj); err != nil {
		t.Fatal(err)
	}
	var fields [][]byte
	walkRecords(pj, func(_ string, val any) {
		if s, ok := val.(string); ok {
			b := make([]byte, 0, len(s))
			b, _ = appendB64Decode(b, s)
			fields = append(fields, b)
		} else {
			fields = append(fields, nil)
		}
	})
	// A records field whose bytes are not valid batches fails the table decode, with
	// the records field named.
	var want []records.Record
	var wantOffs []int64
	var werr error
	for _, f := range fields {
		if f == nil {
			continue
		}
		r, o, err := expectRecords(t, f)
		if err != nil {
			werr = err
			break
		}
		want, wantOffs = append(want, r...), append(wantOffs, o...)
	}
	if werr != nil {
		if terr == nil {
			t.Fatalf("%s: records fail to decode (%v) but the table decode succeeds", what, werr)
		}
		return
	}
	if terr != nil {
		t.Fatalf("%s: table decode: %v", what, terr)
	}
	pt := parseFrameTable(t, table)
	if !sameRecords(pt.recs, want) || fmt.Sprint(pt.offs) != fmt.Sprint(wantOffs) {
		t.Fatalf("%s: table records differ from the records package's", what)
	}
	var tj any
	if err := json.Unmarshal(pt.json, &tj); err != nil {
		t.Fatalf("%s: table JSON: %v", what, err)
	}
	i, next := 0, 0
	walkRecords(tj, func(_ string, val any) {
		if fields[i] == nil {
			if val != nil {
				t.Fatalf("%s: null records field became %v", what, val)
			}
		} else {
			ref := val.(map[string]any)
			if int(ref["firstRecord"].(float64)) != next || int(ref["size"].(float64)) != len(fields[i]) {
				t.Fatalf("%s: reference %v (want firstRecord %d, size %d)", what, ref, next, len(fields[i]))
			}
			next += int(ref["recordCount"].(float64))
		}
		i++
	})
	if next != len(want) {
		t.Fatalf("%s: references cover %d records, the table holds %d", what, next, len(want))
	}
	if !request {
		return
	}
	// Encode the frame again from the JSON with references and the table: its records
	// must be the same.
	out, err := EncodeRequestFrameRecords(nil, pt.json, table)
	if err != nil {
		t.Fatalf("%s: encode from the table: %v", what, err)
	}
	again, err := DecodeRequestFrameRecords(nil, out, 0, 0)
	if err != nil {
		t.Fatalf("%s: the re-encoded frame does not decode: %v", what, err)
	}
	if pt2 := parseFrameTable(t, again); !sameRecords(pt2.recs, want) {
		t.Fatalf("%s: re-encoded records differ", what)
	}
}

func appendB64Decode(dst []byte, s string) ([]byte, error) {
	var v []byte
	err := json.Unmarshal([]byte(`"`+s+`"`), &v)
	return append(dst, v...), err
}

func requestFrame(t *testing.T, key, v int16, body []byte) []byte {
	hv := codec.RequestHeaderVersion(key, v)
	h := codec.NewRequestHeader()
	h.RequestAPIKey, h.RequestAPIVersion, h.CorrelationID = key, v, 7
	cid := "kwire"
	h.ClientID = &cid
	hb, err := h.Encode(nil, hv)
	if err != nil {
		t.Fatal(err)
	}
	f := binary.BigEndian.AppendUint32(nil, uint32(len(hb)+len(body)))
	return append(append(f, hb...), body...)
}

func responseFrame(t *testing.T, key, v int16, body []byte) []byte {
	hv := codec.ResponseHeaderVersion(key, v)
	h := codec.NewResponseHeader()
	h.CorrelationID = 7
	hb, err := h.Encode(nil, hv)
	if err != nil {
		t.Fatal(err)
	}
	f := binary.BigEndian.AppendUint32(nil, uint32(len(hb)+len(body)))
	return append(append(f, hb...), body...)
}

func TestFrameRecordsConformanceVectors(t *testing.T) {
	files, _ := filepath.Glob("../conformance/vectors/kafka-clients-*.jsonl")
	n := 0
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<26)
		for sc.Scan() {
			var v struct {
				ID, Name, Kind string
				APIKey         int16
				Version        int16
				Bytes          []byte
			}
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				t.Fatal(err)
			}
			switch {
			case v.APIKey == 0 && v.Kind == "request":
				n++
				checkFrameRecords(t, v.ID, requestFrame(t, 0, v.Version, v.Bytes), true, 0, v.Version)
			case v.APIKey == 1 && v.Kind == "response":
				n++
				checkFrameRecords(t, v.ID, responseFrame(t, 1, v.Version, v.Bytes), false, 1, v.Version)
			}
		}
		f.Close()
	}
	if n < 400 {
		t.Fatalf("only %d Produce/Fetch vectors", n)
	}
	t.Logf("%d Produce request and Fetch response vectors", n)
}

func TestFrameRecordsBatchVectors(t *testing.T) {
	defer func() {
		// Every codec's vectors went through host decompression.
		for c := records.CompressionGzip; c <= records.CompressionZstd; c++ {
			if hostInflated[c] == 0 && !t.Failed() {
				t.Errorf("no %v batch was decompressed by the host", c)
			}
		}
		t.Logf("batches decompressed by the host: %v", hostInflated)
	}()
	vecs := recordVectors(t)
	if len(vecs) < 20 {
		t.Fatalf("%d record vectors", len(vecs))
	}
	for i, b := range vecs {
		for _, v := range []int16{3, 9, 12} {
			p := codec.NewProduceRequest()
			p.Acks = 1
			p.TopicData = []codec.ProduceRequestTopicProduceData{{Name: "t", TopicID: codec.UUID{1},
				PartitionData: []codec.ProduceRequestPartitionProduceData{{Index: 0, Records: b}, {Index: 1, Records: nil}}}}
			body, err := p.Encode(nil, v)
			if err != nil {
				t.Fatal(err)
			}
			checkFrameRecords(t, fmt.Sprintf("record vector %d in Produce v%d", i, v), requestFrame(t, 0, v, body), true, 0, v)
		}
		for _, v := range []int16{4, 12, 16} {
			r := codec.NewFetchResponse()
			part := codec.NewFetchResponsePartitionData()
			part.Records = b
			r.Responses = []codec.FetchResponseFetchableTopicResponse{{Topic: "t", TopicID: codec.UUID{1},
				Partitions: []codec.FetchResponsePartitionData{*part}}}
			body, err := r.Encode(nil, v)
			if err != nil {
				t.Fatal(err)
			}
			checkFrameRecords(t, fmt.Sprintf("record vector %d in Fetch v%d", i, v), responseFrame(t, 1, v, body), false, 1, v)
		}
	}
}

func TestFrameRecordsErrors(t *testing.T) {
	body := []byte(`{"acks":1,"timeoutMs":5,"topicData":[{"name":"t","partitionData":[{"index":0,"records":%s}]}]}`)
	env := func(rec string) []byte {
		return []byte(`{"header":{"requestApiKey":0,"requestApiVersion":9,"correlationId":1,"clientId":"c"},"body":` + fmt.Sprintf(string(body), rec) + `}`)
	}
	_, err := EncodeRequestFrameRecords(nil, env(`{"firstRecord":0,"recordCount":1}`), nil)
	e := status(t, err, StatusJSON)
	if e.Path != "$.body.topicData[0].partitionData[0].records" {
		t.Fatalf("path %q", e.Path)
	}
	if _, err := EncodeRequestFrameRecords(nil, env(`{"firstRecord":0}`), nil); err == nil {
		t.Fatal("a reference without recordCount was accepted")
	}
	_, err = EncodeRequestFrameRecords(nil, env(`null`), []byte("junk"))
	status(t, err, StatusArg)
	// Base64 and null keep their meaning.
	if _, err := EncodeRequestFrameRecords(nil, env(`null`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := EncodeRequestFrameRecords(nil, env(`""`), nil); err != nil {
		t.Fatal(err)
	}
	// A reference beyond the table.
	tbl, err := RecordsDecodeTable(nil, recordVectors(t)[0], 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = EncodeRequestFrameRecords(nil, env(`{"firstRecord":2,"recordCount":100,"compression":"lz4"}`), tbl)
	status(t, err, StatusJSON)
	out, err := EncodeRequestFrameRecords(nil, env(`{"firstRecord":0,"recordCount":2,"compression":"zstd","producerId":"5"}`), tbl)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := codec.DecodeRequestFrame(out)
	if err != nil {
		t.Fatal(err)
	}
	recs := fr.Body.(*codec.ProduceRequest).TopicData[0].PartitionData[0].Records
	b, _, err := records.ParseBatch(recs, false)
	if err != nil || b.Compression() != records.CompressionZstd || b.ProducerID != 5 || b.NumRecords != 2 {
		t.Fatalf("batch %+v %v", b, err)
	}
}

// tableEntries reads every record entry of a frame table as its words, with each span
// (key, value, header keys and values) replaced by the bytes it names: the table's own,
// or for a layout-3 entry marked TableSourceInput, the frame's.
func tableEntries(t *testing.T, b, frame []byte) []string {
	t.Helper()
	le := binary.LittleEndian
	tr, err := readTable(b)
	if err != nil {
		t.Fatal(err)
	}
	layout := le.Uint32(b[4:])
	span := func(src []byte, off, n int32) string {
		if n == -1 {
			if off != 0 {
				t.Fatalf("null span with offset %d", off)
			}
			return "null"
		}
		if off < 0 || n < 0 || int(off)+int(n) > len(src) {
			t.Fatalf("span (%d, %d) outside its %d bytes", off, n, len(src))
		}
		return fmt.Sprintf("%q", src[off:off+n])
	}
	var out []string
	for i := 0; i < tr.count; i++ {
		e := b[tr.recsOff+i*tr.stride:]
		src := b
		switch le.Uint32(e[TableRecSource:]) {
		case TableSourceTable:
		case TableSourceInput:
			if layout != TableLayoutInput {
				t.Fatalf("record %d of a layout-%d table points into the input", i, layout)
			}
			src = frame
		default:
			t.Fatalf("record %d: source %d", i, le.Uint32(e[TableRecSource:]))
		}
		w := func(at int) int32 { return int32(le.Uint32(e[at:])) }
		s := fmt.Sprintf("off=%d ts=%d pid=%d key=%s value=%s", int64(le.Uint64(e)), int64(le.Uint64(e[8:])), int64(le.Uint64(e[16:])),
			span(src, w(24), w(28)), span(src, w(32), w(36)))
		for at := 40; at < 92; at += 4 {
			if at == 40 {
				continue // first header: compared through the headers below
			}
			s += fmt.Sprintf(" +%d=%d", at, w(at))
		}
		for j := 0; j < int(w(44)); j++ {
			h := b[tr.hdrsOff+(int(w(40))+j)*tr.hstride:]
			hw := func(at int) int32 { return int32(le.Uint32(h[at:])) }
			s += " h[" + span(src, hw(0), hw(4)) + "]=" + span(src, hw(8), hw(12))
		}
		out = append(out, s)
	}
	return out
}

func sameEntries(t *testing.T, what string, a, b []string) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d entries, the reader %d", what, len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("%s: entry %d\n got    %s\n reader %s", what, i, a[i], b[i])
		}
	}
}

// columnEntries reads a layout-4 table as tableEntries reads layouts 2 and 3, in the
// same form, after checking its geometry: every array 8-aligned, inside the table and
// apart from the others, every record in the batch that names it.
func columnEntries(t *testing.T, b, frame []byte, inputSpans bool) []string {
	t.Helper()
	le := binary.LittleEndian
	w := func(at int) int { return int(int32(le.Uint32(b[at:]))) }
	if string(b[:4]) != TableMagic || w(4) != TableLayoutColumns || w(12) != 0 || w(36) != len(b) {
		t.Fatalf("layout-4 header: % x", b[:TableHeaderSizeColumns])
	}
	n, hn, nb := w(8), w(20), w(ColBatchCount)
	if w(ColBatchStride) != RBStride || w(24) != TableHeaderStride || w(16) != w(ColOffsets) {
		t.Fatalf("layout-4 strides: batch %d, header %d; records_offset %d", w(ColBatchStride), w(24), w(16))
	}
	type area struct{ at, size int }
	areas := []area{{0, TableHeaderSizeColumns}, {w(ColBatches), nb * RBStride}, {w(ColOffsets), 8 * n}, {w(ColTimestamps), 8 * n},
		{w(ColKeys), 8 * n}, {w(ColValues), 8 * n}, {w(ColHeaderIndex), 8 * n}, {w(ColBatchIndex), 4 * n}, {w(ColSources), n},
		{w(ColControlTypes), 4 * n}, {w(ColSchemas), 12 * n}, {w(28), 16 * hn}, {w(40), w(44)}}
	for i, a := range areas {
		if a.at < 0 || a.size < 0 || a.at+a.size > len(b) || (i < len(areas)-2 && a.at%8 != 0) {
			t.Fatalf("layout-4 area %d (%d, %d) of %d bytes", i, a.at, a.size, len(b))
		}
		for j, o := range areas[:i] {
			if a.size > 0 && o.size > 0 && a.at < o.at+o.size && o.at < a.at+a.size {
				t.Fatalf("layout-4 areas %d and %d overlap", j, i)
			}
		}
	}
	span := func(src []byte, off, l int) string {
		if l == -1 {
			if off != 0 {
				t.Fatalf("null span with offset %d", off)
			}
			return "null"
		}
		if off < 0 || l < 0 || off+l > len(src) {
			t.Fatalf("span (%d, %d) outside its %d bytes", off, l, len(src))
		}
		return fmt.Sprintf("%q", src[off:off+l])
	}
	col := func(field, i, size int) int {
		at := w(field) + i*size
		if size == 8 {
			return int(int64(le.Uint64(b[at:])))
		}
		return w(at)
	}
	var out []string
	for i := 0; i < n; i++ {
		bi := col(ColBatchIndex, i, 4)
		if bi < 0 || bi >= nb {
			t.Fatalf("record %d: batch %d of %d", i, bi, nb)
		}
		be := w(ColBatches) + bi*RBStride
		bw := func(at int) int { return w(be + at) }
		if i < bw(RBFirstRecord) || i >= bw(RBFirstRecord)+bw(RBRecordCount) {
			t.Fatalf("record %d: not in its batch %d (%d+%d)", i, bi, bw(RBFirstRecord), bw(RBRecordCount))
		}
		src := b
		switch source := int(b[w(ColSources)+i]); {
		case source != bw(RBSource):
			t.Fatalf("record %d: source %d, its batch's %d", i, source, bw(RBSource))
		case source == TableSourceInput && inputSpans:
			src = frame
		case source != TableSourceTable:
			t.Fatalf("record %d: source %d", i, source)
		}
		off := int64(col(ColOffsets, i, 8))
		s := fmt.Sprintf("off=%d ts=%d pid=%d key=%s value=%s", off, col(ColTimestamps, i, 8), int64(le.Uint64(b[be+RBProducerID:])),
			span(src, col(ColKeys, 2*i, 4), col(ColKeys, 2*i+1, 4)), span(src, col(ColValues, 2*i, 4), col(ColValues, 2*i+1, 4)))
		seq := records.RecordSequence(int32(bw(RBBaseSequence)), int32(off-int64(le.Uint64(b[be+RBBaseOffset:]))))
		fh, hc := col(ColHeaderIndex, 2*i, 4), col(ColHeaderIndex, 2*i+1, 4)
		field := 44 // the entry of layouts 2 and 3 that each value is compared with
		for _, v := range []int{hc, int(seq), bw(RBLeaderEpoch), bw(RBProducerEpoch), bw(RBMagic), bw(RBCompression), bw(RBTimestampType), bw(RBFlags),
			col(ColControlTypes, i, 4), col(ColSchemas, 3*i, 4), col(ColSchemas, 3*i+1, 4), col(ColSchemas, 3*i+2, 4)} {
			s += fmt.Sprintf(" +%d=%d", field, v)
			field += 4
		}
		if fh < 0 || hc < 0 || fh+hc > hn {
			t.Fatalf("record %d: headers %d+%d of %d", i, fh, hc, hn)
		}
		for j := 0; j < hc; j++ {
			h := w(28) + (fh+j)*TableHeaderStride
			s += " h[" + span(src, w(h), w(h+4)) + "]=" + span(src, w(h+8), w(h+12))
		}
		out = append(out, s)
	}
	return out
}

// checkSamePaths decodes frame with the record scan and with the records reader alone,
// in layouts 2 and 3: every entry, every byte a span names and the JSON must agree,
// and so must errors.
func checkSamePaths(t *testing.T, what string, frame []byte, request bool, key, v int16, extra int32) {
	t.Helper()
	run := func(flags int32, reader bool) ([]byte, error) {
		flags |= extra
		readerOnly = reader
		defer func() { readerOnly = false }()
		if request {
			return DecodeRequestFrameRecords(nil, frame, flags, 0)
		}
		return DecodeResponseFrameRecords(nil, frame, int32(key), int32(v), flags, 0)
	}
	ref, rerr := run(0, true)
	for _, flags := range []int32{0, FlagInputSpans} {
		got, err := run(flags, false)
		if (err != nil) != (rerr != nil) || (err != nil && (err.Error() != rerr.Error() || AsError(err).Path != AsError(rerr).Path || AsError(err).Offset != AsError(rerr).Offset)) {
			t.Fatalf("%s (flags %d): scan gives %v, the reader %v", what, flags, err, rerr)
		}
		if err != nil {
			continue
		}
		a, b := tableEntries(t, got, frame), tableEntries(t, ref, frame)
		sameEntries(t, fmt.Sprintf("%s (flags %d)", what, flags), a, b)
		if pa, pb := parseFrameJSON(t, got), parseFrameJSON(t, ref); !bytes.Equal(pa, pb) {
			t.Fatalf("%s (flags %d): JSON differs", what, flags)
		}
		// Layout 4 holds the same records as columns, and the same JSON.
		cols, err := run(flags|FlagColumns, false)
		if err != nil {
			t.Fatalf("%s (flags %d): layouts 2 and 3 decode, layout 4 gives %v", what, flags, err)
		}
		sameEntries(t, fmt.Sprintf("%s (flags %d, columns)", what, flags), columnEntries(t, cols, frame, flags&FlagInputSpans != 0), b)
		if pa, pb := parseFrameJSON(t, cols), parseFrameJSON(t, ref); !bytes.Equal(pa, pb) {
			t.Fatalf("%s (flags %d, columns): JSON differs", what, flags)
		}
	}
	if _, err := run(FlagColumns, false); (err != nil) != (rerr != nil) || (err != nil && err.Error() != rerr.Error()) {
		t.Fatalf("%s (columns): %v, the reader %v", what, err, rerr)
	}
	checkInflated(t, what, frame, request, key, v, extra)
}

// checkInflated decodes frame in one call and with host decompression (the frame-records
// call with every KW_RECORDS_HOST_* flag, then kw_decode_frame_records_inflated with every
// listed batch the host could decompress, here by the records package): the tables, or
// the errors, must be identical, in layouts 2 and 3, and with every other batch left to
// the module.
func checkInflated(t *testing.T, what string, frame []byte, request bool, key, v int16, flags int32) {
	t.Helper()
	apiKey := int32(key)
	if request {
		apiKey = -1
	}
	call := func(fl int32) ([]byte, error) {
		if request {
			return DecodeRequestFrameRecords(nil, frame, fl, 0)
		}
		return DecodeResponseFrameRecords(nil, frame, apiKey, int32(v), fl, 0)
	}
	for _, fl := range []int32{flags, flags | FlagInputSpans, flags | FlagColumns, flags | FlagInputSpans | FlagColumns} {
		want, werr := call(fl)
		list, lerr := call(fl | flagsHost)
		sameErr := func(err error) bool {
			return (err != nil) == (werr != nil) && (err == nil || (err.Error() == werr.Error() && AsError(err).Path == AsError(werr).Path &&
				AsError(err).Offset == AsError(werr).Offset && StatusOf(err) == StatusOf(werr)))
		}
		if lerr != nil {
			if !sameErr(lerr) {
				t.Fatalf("%s (flags %d): with the host flags %v, without %v", what, fl, lerr, werr)
			}
			continue
		}
		if string(list[:4]) != BatchListMagic {
			if werr != nil {
				t.Fatalf("%s (flags %d): with the host flags a table, without %v", what, fl, werr)
			}
			// No batch for the host: the table itself, as without the flags.
			if !bytes.Equal(list, want) {
				t.Fatalf("%s (flags %d): the host flags changed a table with no batch for the host", what, fl)
			}
			continue
		}
		batches := inflateAll(t, frame, list)
		for _, b := range batches {
			if b.ok {
				hostInflated[b.codec]++
			}
		}
		for _, keep := range []func(int) bool{func(int) bool { return true }, func(i int) bool { return i%2 == 1 }} {
			got, err := DecodeFrameRecordsInflated(nil, frame, apiKey, int32(v), fl|flagsHost, 0, inflatedInput(batches, keep))
			if !sameErr(err) {
				t.Fatalf("%s (flags %d, %d batches listed): host decompression gives %v, the module %v", what, fl, len(batches), err, werr)
			}
			if err == nil && !bytes.Equal(got, want) {
				t.Fatalf("%s (flags %d, %d batches listed): the tables differ", what, fl, len(batches))
			}
		}
	}
}

// hostInflated counts, per codec, the batches checkInflated had the "host" decompress.
var hostInflated = map[records.Compression]int{}

// hostBatch is one listed batch and, when the "host" could decompress it, its bytes.
type hostBatch struct {
	at    int32
	codec records.Compression
	data  []byte
	ok    bool
}

// inflateAll decompresses every batch of a batch list, as a host would, leaving out
// those it cannot (corrupt, or past the default cap).
func inflateAll(t *testing.T, frame, list []byte) []hostBatch {
	t.Helper()
	le := binary.LittleEndian
	n := int(le.Uint32(list[4:]))
	if string(list[:4]) != BatchListMagic || len(list) != BatchListHeaderSize+n*4*CompressedBatchWords || n == 0 {
		t.Fatalf("a list of %d batches in %d bytes", n, len(list))
	}
	var out []hostBatch
	for i := 0; i < n; i++ {
		e := list[BatchListHeaderSize+16*i:]
		at, size, c := int(le.Uint32(e)), int(le.Uint32(e[4:])), records.Compression(le.Uint32(e[8:]))
		if at < 0 || size < 0 || at+size > len(frame) || c < records.CompressionGzip || c > records.CompressionZstd {
			t.Fatalf("entry %d: (%d, %d, codec %d) in a %d-byte frame", i, at, size, c, len(frame))
		}
		data, err := records.Decompress(nil, c, frame[at:at+size], records.DefaultMaxDecompressedSize)
		out = append(out, hostBatch{at: int32(at), codec: c, data: data, ok: err == nil})
	}
	return out
}

// inflatedInput is kw_decode_frame_records_inflated's inflated input of the batches
// decompressed that keep(i) selects.
func inflatedInput(bs []hostBatch, keep func(int) bool) []byte {
	le := binary.LittleEndian
	var head, data []byte
	n := 0
	for i, b := range bs {
		if b.ok && keep(i) {
			head = le.AppendUint32(le.AppendUint32(head, uint32(b.at)), uint32(len(b.data)))
			data = append(data, b.data...)
			n++
		}
	}
	return append(append(le.AppendUint32(nil, uint32(n)), head...), data...)
}

func parseFrameJSON(t *testing.T, b []byte) []byte {
	le := binary.LittleEndian
	jo, jl := int(le.Uint32(b[40:])), int(le.Uint32(b[44:]))
	return b[jo : jo+jl]
}

// TestFrameRecordsScanMatchesReader spoils the record vectors (byte flips and
// truncations inside the records, checksums not checked so that the records are read)
// and holds the scan to the reader's verdict, entries and errors.
func TestFrameRecordsScanMatchesReader(t *testing.T) {
	vecs := recordVectors(t)
	n := 0
	for i, b := range vecs {
		r := codec.NewFetchResponse()
		part := codec.NewFetchResponsePartitionData()
		part.Records = b
		r.Responses = []codec.FetchResponseFetchableTopicResponse{{Topic: "t", Partitions: []codec.FetchResponsePartitionData{*part}}}
		body, err := r.Encode(nil, 12)
		if err != nil {
			t.Fatal(err)
		}
		frame := responseFrame(t, 1, 12, body)
		recStart := len(frame) - len(b) - 1 // the records field, then the tag section's count (0)
		step := 1 + len(b)/50
		for at := recStart; at < len(frame)-1; at += step {
			for _, x := range []byte{0x01, 0xff} {
				spoilt := append([]byte(nil), frame...)
				spoilt[at] ^= x
				checkSamePaths(t, fmt.Sprintf("vector %d, byte %d ^ %#x", i, at, x), spoilt, false, 1, 12, FlagSkipCRC)
				n++
			}
		}
		// A records field cut short: the last batch becomes a partial one, or a
		// record runs past its batch.
		for cut := 1; cut < len(b) && cut < 200; cut += 13 {
			r2 := *r
			p2 := *part
			p2.Records = b[:len(b)-cut]
			r2.Responses = []codec.FetchResponseFetchableTopicResponse{{Topic: "t", Partitions: []codec.FetchResponsePartitionData{p2}}}
			body, err := r2.Encode(nil, 12)
			if err != nil {
				t.Fatal(err)
			}
			checkSamePaths(t, fmt.Sprintf("vector %d cut by %d", i, cut), responseFrame(t, 1, 12, body), false, 1, 12, FlagSkipCRC)
			n++
		}
	}
	t.Logf("%d spoilt frames", n)
}

// fetchFrameOf is a Fetch v12 response frame whose one partition holds recs.
func fetchFrameOf(t *testing.T, recs []byte) []byte {
	t.Helper()
	r := codec.NewFetchResponse()
	part := codec.NewFetchResponsePartitionData()
	part.Records = recs
	r.Responses = []codec.FetchResponseFetchableTopicResponse{{Topic: "t", Partitions: []codec.FetchResponsePartitionData{*part}}}
	body, err := r.Encode(nil, 12)
	if err != nil {
		t.Fatal(err)
	}
	return responseFrame(t, 1, 12, body)
}

func TestFrameRecordsInflatedErrors(t *testing.T) {
	batch, err := RecordsEncode(nil, []byte(`{"records":[{"value":"`+strings.Repeat("QUFB", 300)+`"},{"key":"aw=="}]}`), int32(records.CompressionGzip))
	if err != nil {
		t.Fatal(err)
	}
	frame := fetchFrameOf(t, batch)
	list, err := DecodeResponseFrameRecords(nil, frame, 1, 12, FlagHostGzip, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Codecs the host does not take are decoded as always.
	if tbl, err := DecodeResponseFrameRecords(nil, frame, 1, 12, FlagHostZstd|FlagHostLZ4, 0); err != nil || string(tbl[:4]) != TableMagic {
		t.Fatalf("zstd and lz4 for the host, a gzip batch: %v", err)
	}
	bs := inflateAll(t, frame, list)
	if len(bs) != 1 || !bs[0].ok || bs[0].codec != records.CompressionGzip {
		t.Fatalf("listed %+v", bs)
	}
	good := inflatedInput(bs, func(int) bool { return true })
	le := binary.LittleEndian
	mk := func(words ...int32) []byte {
		var b []byte
		for _, w := range words {
			b = le.AppendUint32(b, uint32(w))
		}
		return b
	}
	// Inflated inputs that do not describe themselves exactly are refused, naming why.
	for _, c := range []struct {
		in   []byte
		text string
	}{
		{nil, "needs at least 4 bytes"},
		{mk(-1), "a count of -1"},
		{mk(2, 10, 0), "a count of 2 does not fit"},
		{mk(2, 10, 0, 10, 0), "batch 1: offset 10 is not after"},
		{mk(1, 10, 5), "batch 0: 5 bytes, 0 left"},
		{append(mk(1, 10, 1), 1, 2), "1 bytes after the last batch"},
	} {
		_, err := DecodeFrameRecordsInflated(nil, frame, 1, 12, 0, 0, c.in)
		if e := status(t, err, StatusArg); !strings.Contains(e.Text, c.text) {
			t.Errorf("%x: %q, want %q", c.in, e.Text, c.text)
		}
	}
	// A batch the host decompressed past the cap gets the error of the module's own
	// decompression at that cap.
	_, want := DecodeResponseFrameRecords(nil, frame, 1, 12, 0, 100)
	_, got := DecodeFrameRecordsInflated(nil, frame, 1, 12, 0, 100, good)
	if StatusOf(want) != StatusTooLarge || got == nil || got.Error() != want.Error() {
		t.Fatalf("past the cap: host %v, module %v", got, want)
	}
	// Bytes at an offset that is no batch's are not read.
	stray := mk(1, 3, 4)
	stray = append(stray, 1, 2, 3, 4)
	a, err1 := DecodeFrameRecordsInflated(nil, frame, 1, 12, 0, 0, stray)
	b, err2 := DecodeResponseFrameRecords(nil, frame, 1, 12, 0, 0)
	if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
		t.Fatalf("stray batch: %v %v", err1, err2)
	}
	// Wrong bytes from the host are read as records, and refused as such: no panic.
	wrong := append([]byte(nil), good...)
	for i := 12; i < len(wrong); i++ {
		wrong[i] = 0xff
	}
	_, err = DecodeFrameRecordsInflated(nil, frame, 1, 12, 0, 0, wrong)
	if StatusOf(err) != StatusDecode {
		t.Fatalf("wrong bytes: %v", err)
	}
	// A request frame (api key -1): the same batch in a Produce request.
	p := codec.NewProduceRequest()
	p.Acks = -1
	p.TopicData = []codec.ProduceRequestTopicProduceData{{Name: "t", PartitionData: []codec.ProduceRequestPartitionProduceData{{Records: batch}}}}
	body, err := p.Encode(nil, 9)
	if err != nil {
		t.Fatal(err)
	}
	req := requestFrame(t, 0, 9, body)
	rl, err := DecodeRequestFrameRecords(nil, req, FlagHostGzip, 0)
	if err != nil || string(rl[:4]) != BatchListMagic || le.Uint32(rl[4:]) != 1 {
		t.Fatalf("request listing %x %v", rl, err)
	}
	checkInflated(t, "produce v9", req, true, 0, 9, 0)
	// With the host flags, errors are those of the call without them, even where the
	// failure lies after a listed batch.
	bad := append([]byte(nil), batch...)
	binary.BigEndian.PutUint32(bad[17:], 0) // a wrong CRC
	// A frame cut short fails in the first call; a batch that fails after a listed one
	// fails in the second, with the error of the one-call decode.
	_, want = DecodeResponseFrameRecords(nil, frame[:len(frame)-3], 1, 12, 0, 0)
	if _, got := DecodeResponseFrameRecords(nil, frame[:len(frame)-3], 1, 12, flagsHost, 0); want == nil || got == nil || got.Error() != want.Error() {
		t.Fatalf("a cut frame: with the host flags %v, without %v", got, want)
	}
	checkInflated(t, "a partial batch after a gzip one", fetchFrameOf2(t, batch, batch[:70]), false, 1, 12, 0)
	fr := fetchFrameOf2(t, batch, bad)
	checkInflated(t, "a bad checksum after a gzip batch", fr, false, 1, 12, 0)
	if _, err := DecodeResponseFrameRecords(nil, fr, 1, 12, 0, 0); StatusOf(err) != StatusDecode {
		t.Fatalf("the bad checksum: %v", err)
	}
	_, err = DecodeResponseFrameRecords(nil, frame, 1, 99, flagsHost, 0)
	status(t, err, StatusVersion)
}

// fetchFrameOf2 is a Fetch v12 response frame of two partitions.
func fetchFrameOf2(t *testing.T, a, b []byte) []byte {
	t.Helper()
	r := codec.NewFetchResponse()
	pa, pb := codec.NewFetchResponsePartitionData(), codec.NewFetchResponsePartitionData()
	pa.Records, pb.Records, pb.PartitionIndex = a, b, 1
	r.Responses = []codec.FetchResponseFetchableTopicResponse{{Topic: "t", Partitions: []codec.FetchResponsePartitionData{*pa, *pb}}}
	body, err := r.Encode(nil, 12)
	if err != nil {
		t.Fatal(err)
	}
	return responseFrame(t, 1, 12, body)
}
