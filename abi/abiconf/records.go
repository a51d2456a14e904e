package abiconf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/kwire/kwire/conformance"
	"github.com/kwire/kwire/internal/vecjson"
)

// RecordsHost is a host with the records functions.
type RecordsHost interface {
	RecordsDecodeJSON(b []byte, flags, maxDecompressed int32) ([]byte, error)
	RecordsDecodeTable(b []byte, flags, maxDecompressed int32) ([]byte, error)
	RecordsEncode(json []byte, compression int32) ([]byte, error)
}

// RecordVector is one line of conformance/vectors/records/*.jsonl: batches kafka-clients
// built and what Kafka's reader saw in them.
type RecordVector = vecjson.Vector

// ReadRecordVectors reads every conformance/vectors/records/*.jsonl under dir.
func ReadRecordVectors(dir string) ([]RecordVector, error) {
	files, err := filepath.Glob(filepath.Join(dir, "records", "*.jsonl"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no record vectors under %s/records (%v)", dir, err)
	}
	var out []RecordVector
	for _, f := range files {
		vs, err := vecjson.Read(f)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

// Header is a record header: its key, and its value (nil when null).
type Header = vecjson.Header

// DecodedRecord is one element of kw_records_decode_json's "records".
type DecodedRecord struct {
	Offset        string   `json:"offset"`
	Timestamp     string   `json:"timestamp"`
	TimestampType string   `json:"timestampType"`
	Key           []byte   `json:"key"`
	Value         []byte   `json:"value"`
	Headers       []Header `json:"headers"`
	ProducerID    string   `json:"producerId"`
	ProducerEpoch int16    `json:"producerEpoch"`
	Sequence      int32    `json:"sequence"`
	LeaderEpoch   int32    `json:"leaderEpoch"`
	Magic         int8     `json:"magic"`
	Compression   string   `json:"compression"`
	Transactional bool     `json:"transactional"`
	Control       bool     `json:"control"`
	ControlType   int16    `json:"controlType"`
	SchemaSource  string   `json:"schemaSource"`
	SchemaID      int32    `json:"schemaId"`
	SchemaVersion int32    `json:"schemaVersion"`
}

// DecodedRecords is kw_records_decode_json's output.
type DecodedRecords struct {
	Records      []DecodedRecord `json:"records"`
	SkippedBytes int             `json:"skippedBytes"`
}

var controlTypes = map[string]int16{"ABORT": 0, "COMMIT": 1, "LEADER_CHANGE": 2, "SNAPSHOT_HEADER": 3,
	"SNAPSHOT_FOOTER": 4, "KRAFT_VERSION": 5, "KRAFT_VOTERS": 6}

var compressionIDs = map[string]int32{"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}

// CheckRecords runs the record vectors through the host: kw_records_decode_json must
// show what Kafka's reader saw, kw_records_decode_table must agree with it field by
// field and byte by byte, and kw_records_encode of the decoded records (same magic,
// compression and producer fields) must decode back to the same records — and, for an
// uncompressed batch, give Kafka's bytes exactly. It returns the number of vectors.
func CheckRecords(h RecordsHost, dir string) (int, error) {
	vs, err := ReadRecordVectors(dir)
	if err != nil {
		return 0, err
	}
	var fails []string
	for _, v := range vs {
		if msg := checkRecordVector(h, v); msg != "" {
			fails = append(fails, "record vector "+v.Name+": "+msg)
		}
	}
	if len(fails) > 0 {
		return len(vs), errors.New(strings.Join(fails, "\n"))
	}
	return len(vs), nil
}

func decodeRecordsJSON(h RecordsHost, b []byte) (*DecodedRecords, error) {
	js, err := h.RecordsDecodeJSON(b, 0, 0)
	if err != nil {
		return nil, err
	}
	var d DecodedRecords
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("bad JSON from kw_records_decode_json: %w", err)
	}
	return &d, nil
}

func checkRecordVector(h RecordsHost, v RecordVector) string {
	d, err := decodeRecordsJSON(h, v.Bytes)
	if err != nil {
		return "kw_records_decode_json: " + err.Error()
	}
	i := 0
	for _, b := range v.Batches {
		for _, r := range b.Records {
			if i >= len(d.Records) {
				return fmt.Sprintf("the ABI decodes %d records, Kafka more", len(d.Records))
			}
			g := d.Records[i]
			i++
			want := DecodedRecord{Offset: r.Offset, Timestamp: r.Timestamp, TimestampType: b.TimestampType,
				Key: r.Key, Value: r.Value, ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch,
				Sequence: r.Sequence, LeaderEpoch: b.PartitionLeaderEpoch, Magic: b.Magic, Compression: b.Compression,
				Transactional: b.Transactional, Control: b.Control, ControlType: -1,
				SchemaSource: g.SchemaSource, SchemaID: g.SchemaID, SchemaVersion: g.SchemaVersion}
			want.Headers = r.Headers
			if r.Control != nil {
				ct, ok := controlTypes[r.Control.Type]
				if !ok {
					return "unknown control type " + r.Control.Type
				}
				want.ControlType = ct
			}
			if !sameRecord(g, want) {
				gj, _ := json.Marshal(g)
				wj, _ := json.Marshal(want)
				return fmt.Sprintf("record %d: the ABI reads\n%s\nKafka read\n%s", i-1, gj, wj)
			}
		}
	}
	if i != len(d.Records) {
		return fmt.Sprintf("the ABI decodes %d records, Kafka %d", len(d.Records), i)
	}
	if msg := checkTable(h, v.Bytes, d); msg != "" {
		return msg
	}
	return checkReencode(h, v, d)
}

// sameRecord compares with nil and empty slices kept apart (null vs empty key).
func sameRecord(a, b DecodedRecord) bool {
	if (a.Key == nil) != (b.Key == nil) || (a.Value == nil) != (b.Value == nil) || len(a.Headers) != len(b.Headers) {
		return false
	}
	for i := range a.Headers {
		if (a.Headers[i].Value == nil) != (b.Headers[i].Value == nil) {
			return false
		}
	}
	norm := func(r DecodedRecord) DecodedRecord {
		if r.Key == nil {
			r.Key = []byte{}
		}
		if r.Value == nil {
			r.Value = []byte{}
		}
		hs := r.Headers
		r.Headers = nil
		for _, h := range hs {
			if h.Value == nil {
				h.Value = []byte{}
			}
			r.Headers = append(r.Headers, h)
		}
		return r
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// Table is a parsed record table (kw_records_decode_table).
type Table struct {
	Records []TableRecord
	Skipped int32
}

// TableRecord is one record entry with its bytes resolved.
type TableRecord struct {
	Offset, Timestamp, ProducerID                            int64
	Key, Value                                               []byte // nil when null
	Headers                                                  [][2][]byte
	Sequence, LeaderEpoch, ProducerEpoch, Magic, Compression int32
	TimestampType, Flags, ControlType                        int32
	SchemaSource, SchemaID, SchemaVersion                    int32
}

// ParseTable reads a record table as a host would, checking every offset and length.
func ParseTable(b []byte) (*Table, error) {
	le := binary.LittleEndian
	if len(b) < 40 || string(b[:4]) != "KWRT" {
		return nil, errors.New("no KWRT table header")
	}
	i32 := func(at int) int32 { return int32(le.Uint32(b[at:])) }
	if i32(4) != 1 {
		return nil, fmt.Errorf("layout %d", i32(4))
	}
	n, stride, recOff := int(i32(8)), int(i32(12)), int(i32(16))
	hn, hstride, hOff := int(i32(20)), int(i32(24)), int(i32(28))
	if int(i32(36)) != len(b) {
		return nil, fmt.Errorf("total_size %d, buffer %d", i32(36), len(b))
	}
	if stride < 96 || hstride < 16 || recOff < 40 || recOff%8 != 0 || n < 0 || hn < 0 ||
		recOff+n*stride > len(b) || hOff+hn*hstride > len(b) {
		return nil, errors.New("bad table geometry")
	}
	span := func(off, l int32) ([]byte, error) {
		if l == -1 {
			return nil, nil
		}
		if l < 0 || off < 0 || int(off)+int(l) > len(b) {
			return nil, fmt.Errorf("span (%d, %d) outside the buffer", off, l)
		}
		return b[off : off+l : off+l], nil
	}
	t := &Table{Skipped: i32(32)}
	for i := 0; i < n; i++ {
		at := recOff + i*stride
		r := TableRecord{Offset: int64(le.Uint64(b[at:])), Timestamp: int64(le.Uint64(b[at+8:])), ProducerID: int64(le.Uint64(b[at+16:])),
			Sequence: i32(at + 48), LeaderEpoch: i32(at + 52), ProducerEpoch: i32(at + 56), Magic: i32(at + 60),
			Compression: i32(at + 64), TimestampType: i32(at + 68), Flags: i32(at + 72), ControlType: i32(at + 76),
			SchemaSource: i32(at + 80), SchemaID: i32(at + 84), SchemaVersion: i32(at + 88)}
		var err error
		if r.Key, err = span(i32(at+24), i32(at+28)); err != nil {
			return nil, err
		}
		if r.Value, err = span(i32(at+32), i32(at+36)); err != nil {
			return nil, err
		}
		first, cnt := int(i32(at+40)), int(i32(at+44))
		if first < 0 || cnt < 0 || first+cnt > hn {
			return nil, fmt.Errorf("record %d: headers %d+%d of %d", i, first, cnt, hn)
		}
		for j := first; j < first+cnt; j++ {
			ha := hOff + j*hstride
			k, err := span(i32(ha), i32(ha+4))
			if err != nil || k == nil {
				return nil, fmt.Errorf("header %d key: %v", j, err)
			}
			val, err := span(i32(ha+8), i32(ha+12))
			if err != nil {
				return nil, err
			}
			r.Headers = append(r.Headers, [2][]byte{k, val})
		}
		t.Records = append(t.Records, r)
	}
	return t, nil
}

var tsTypes = map[string]int32{"NoTimestampType": -1, "CreateTime": 0, "LogAppendTime": 1}
var schemaSources = map[string]int32{"none": 0, "value-prefix": 1, "header": 2}

func checkTable(h RecordsHost, in []byte, d *DecodedRecords) string {
	tb, err := h.RecordsDecodeTable(in, 0, 0)
	if err != nil {
		return "kw_records_decode_table: " + err.Error()
	}
	t, err := ParseTable(tb)
	if err != nil {
		return "record table: " + err.Error()
	}
	if len(t.Records) != len(d.Records) || int(t.Skipped) != d.SkippedBytes {
		return fmt.Sprintf("record table has %d records (skipped %d), JSON %d (skipped %d)", len(t.Records), t.Skipped, len(d.Records), d.SkippedBytes)
	}
	for i, g := range t.Records {
		w := d.Records[i]
		flags := int32(0)
		if w.Transactional {
			flags |= 1
		}
		if w.Control {
			flags |= 2
		}
		ok := strconv.FormatInt(g.Offset, 10) == w.Offset && strconv.FormatInt(g.Timestamp, 10) == w.Timestamp &&
			strconv.FormatInt(g.ProducerID, 10) == w.ProducerID && g.Sequence == w.Sequence && g.LeaderEpoch == w.LeaderEpoch &&
			g.ProducerEpoch == int32(w.ProducerEpoch) && g.Magic == int32(w.Magic) && g.Compression == compressionIDs[w.Compression] &&
			g.TimestampType == tsTypes[w.TimestampType] && g.Flags == flags && g.ControlType == int32(w.ControlType) &&
			g.SchemaSource == schemaSources[w.SchemaSource] && g.SchemaID == w.SchemaID && g.SchemaVersion == w.SchemaVersion &&
			sameBytes(g.Key, w.Key) && sameBytes(g.Value, w.Value) && len(g.Headers) == len(w.Headers)
		for j := 0; ok && j < len(g.Headers); j++ {
			ok = string(g.Headers[j][0]) == w.Headers[j].Key && sameBytes(g.Headers[j][1], w.Headers[j].Value)
		}
		if !ok {
			return fmt.Sprintf("record table entry %d %+v disagrees with the JSON %+v", i, g, w)
		}
	}
	return ""
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// checkReencode encodes the decoded records again through kw_records_encode when every
// batch of the vector shares its settings (one producer batch, or an uncompressed
// legacy set), and checks what comes back.
func checkReencode(h RecordsHost, v RecordVector, d *DecodedRecords) string {
	if len(v.Batches) == 0 || len(d.Records) == 0 {
		return ""
	}
	b0 := v.Batches[0]
	if b0.Control || b0.TimestampType == "LogAppendTime" || b0.DeleteHorizonMs != "-1" {
		return "" // the broker writes these, not a producer
	}
	for _, b := range v.Batches[1:] {
		if b.Magic != b0.Magic || b.Compression != b0.Compression || b.Magic == 2 {
			return ""
		}
	}
	in := map[string]any{"magic": b0.Magic, "baseOffset": v.Batches[0].BaseOffset}
	if b0.Magic == 2 {
		in["producerId"] = b0.ProducerID
		in["producerEpoch"] = b0.ProducerEpoch
		in["baseSequence"] = b0.BaseSequence
		in["partitionLeaderEpoch"] = b0.PartitionLeaderEpoch
		in["transactional"] = b0.Transactional
	}
	var recs []map[string]any
	for _, r := range d.Records {
		m := map[string]any{"key": r.Key, "value": r.Value, "timestamp": r.Timestamp}
		if b0.Magic == 2 {
			hs := []map[string]any{}
			for _, h := range r.Headers {
				hs = append(hs, map[string]any{"key": h.Key, "value": h.Value})
			}
			m["headers"] = hs
		}
		recs = append(recs, m)
	}
	in["records"] = recs
	js, _ := json.Marshal(in)
	enc, err := h.RecordsEncode(js, compressionIDs[b0.Compression])
	if err != nil {
		return "kw_records_encode: " + err.Error()
	}
	if b0.Compression == "none" && !bytes.Equal(enc, v.Bytes) {
		return fmt.Sprintf("kw_records_encode of an uncompressed batch gives %d bytes, Kafka wrote %d (first difference at %d)",
			len(enc), len(v.Bytes), conformance.FirstDiff(enc, v.Bytes))
	}
	back, err := decodeRecordsJSON(h, enc)
	if err != nil {
		return "decoding what kw_records_encode wrote: " + err.Error()
	}
	if len(back.Records) != len(d.Records) {
		return fmt.Sprintf("re-encoded records decode to %d records, want %d", len(back.Records), len(d.Records))
	}
	for i := range back.Records {
		if !sameRecord(back.Records[i], d.Records[i]) {
			gj, _ := json.Marshal(back.Records[i])
			wj, _ := json.Marshal(d.Records[i])
			return fmt.Sprintf("re-encoded record %d reads\n%s\nwant\n%s", i, gj, wj)
		}
	}
	return ""
}
