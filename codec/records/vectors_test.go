package records_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/internal/vecjson"
)

func javaVectors(t *testing.T) []vecjson.Vector {
	t.Helper()
	files, err := filepath.Glob("../../conformance/vectors/records/kafka-clients-*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no record vectors found (%v)", err)
	}
	var all []vecjson.Vector
	for _, f := range files {
		vs, err := vecjson.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, vs...)
	}
	if len(all) < 20 {
		t.Fatalf("only %d record vectors", len(all))
	}
	return all
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Every batch kafka-clients built decodes to what Kafka's own reader saw.
func TestJavaVectorsDecode(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range javaVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			d := records.NewDecoder(records.Options{})
			got, err := vecjson.Describe(d, v.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, v.Batches) {
				t.Fatalf("kwire reads\n%s\nKafka reads\n%s", mustJSON(got), mustJSON(v.Batches))
			}
			for _, b := range got {
				seen[strconv.Itoa(int(b.Magic))+"/"+b.Compression] = true
				if b.Control {
					seen["control"] = true
				}
				if b.Transactional {
					seen["transactional"] = true
				}
			}
		})
	}
	for _, k := range []string{"2/none", "2/gzip", "2/snappy", "2/lz4", "2/zstd", "1/none", "1/gzip", "1/snappy", "1/lz4",
		"0/none", "0/gzip", "0/snappy", "0/lz4", "control", "transactional"} {
		if !seen[k] {
			t.Errorf("no vector covers %s", k)
		}
	}
}

// kwire re-encodes every Java batch with the same settings: uncompressed ones
// byte for byte, compressed ones to bytes that read back the same.
func TestJavaVectorsReencode(t *testing.T) {
	for _, v := range javaVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			var out []byte
			var enc records.Encoder
			d := records.NewDecoder(records.Options{})
			for pos := 0; pos < len(v.Bytes); {
				size, magic, err := records.PeekEntry(v.Bytes[pos:])
				if err != nil || size == 0 {
					t.Fatalf("entry at %d: size %d, %v", pos, size, err)
				}
				entry := v.Bytes[pos : pos+size]
				pos += size
				start := len(out)
				if magic == 2 {
					b, _, err := records.ParseBatch(entry, false)
					if err != nil {
						t.Fatal(err)
					}
					recs, err := d.AppendRecords(nil, &b)
					if err != nil {
						t.Fatal(err)
					}
					if out, err = records.AppendBatchT(t, &enc, out, &b, recs); err != nil {
						t.Fatal(err)
					}
				} else {
					w, _, err := records.ParseLegacyMessage(entry, false)
					if err != nil {
						t.Fatal(err)
					}
					var msgs []records.LegacyMessage
					if err := d.ForEachInner(&w, func(m *records.LegacyMessage) error {
						m.Key, m.Value = bytes.Clone(m.Key), bytes.Clone(m.Value)
						msgs = append(msgs, *m)
						return nil
					}); err != nil {
						t.Fatal(err)
					}
					set := records.LegacySet{Magic: w.Magic, Compression: w.Compression(), TimestampType: w.TimestampType(),
						BaseOffset: msgs[0].Offset, LogAppendTime: w.Timestamp}
					if out, err = records.AppendLegacySetT(t, &enc, out, set, msgs); err != nil {
						t.Fatal(err)
					}
				}
				if entryCompression(entry, magic) == records.CompressionNone && !bytes.Equal(out[start:], entry) {
					t.Fatalf("uncompressed magic %d entry at %d re-encodes differently:\n got %x\nwant %x", magic, pos-size, out[start:], entry)
				}
			}
			got, err := vecjson.Describe(records.NewDecoder(records.Options{}), out)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, v.Batches) {
				t.Fatalf("re-encoded batches read\n%s\nwant\n%s", mustJSON(got), mustJSON(v.Batches))
			}
		})
	}
}

func entryCompression(entry []byte, magic int8) records.Compression {
	if magic == 2 {
		return records.Compression(entry[22] & 7)
	}
	return records.Compression(entry[17] & 7)
}

func vectorNamed(t *testing.T, name string) vecjson.Vector {
	for _, v := range javaVectors(t) {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no vector %q", name)
	return vecjson.Vector{}
}

func TestMessageViewOnJavaBatches(t *testing.T) {
	d := records.NewDecoder(records.Options{})
	var msgs []records.Message
	collect := func(m *records.Message) error {
		c := *m
		c.Headers = append([]records.Header(nil), m.Headers...)
		msgs = append(msgs, c)
		return nil
	}
	v := vectorNamed(t, "v2-transactional-snappy")
	if _, err := d.ForEachMessage(v.Bytes, "orders", 3, collect); err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 8 {
		t.Fatalf("%d messages", len(msgs))
	}
	for i, m := range msgs {
		if m.Topic != "orders" || m.Partition != 3 || !m.Transactional || m.Control || m.ProducerID != 9001 ||
			m.ProducerEpoch != 2 || m.Sequence != int32(i) || m.Offset != 2000+int64(i) || m.LeaderEpoch != 11 ||
			m.Compression != records.CompressionSnappy || m.Magic != 2 || m.TimestampType != records.CreateTime {
			t.Fatalf("message %d: %+v", i, m)
		}
	}
	last := msgs[7]
	if last.Schema != (records.SchemaRef{Source: records.SchemaValuePrefix, ID: 300, Version: 3}) || string(last.Payload()) != "pay" {
		t.Fatalf("schema %+v payload %q", last.Schema, last.Payload())
	}
	if v, ok := msgs[0].HeaderValue("h1"); !ok || string(v) != "b" {
		t.Fatalf("HeaderValue(h1) = %q %v, want the last one", v, ok)
	}

	msgs = nil
	v = vectorNamed(t, "v2-control-commit")
	if _, err := d.ForEachMessage(v.Bytes, "orders", 3, collect); err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || !msgs[0].Control || !msgs[0].Transactional || msgs[0].ControlRecord.Type != records.ControlCommit ||
		msgs[0].ControlRecord.CoordinatorEpoch != 6 || msgs[0].Offset != 2010 {
		t.Fatalf("commit marker: %+v", msgs)
	}

	msgs = nil
	v = vectorNamed(t, "v2-idempotent-sequence-wrap")
	if _, err := d.ForEachMessage(v.Bytes, "t", 0, collect); err != nil {
		t.Fatal(err)
	}
	want := []int32{2147483645, 2147483646, 2147483647, 0, 1, 2, 3, 4}
	for i, m := range msgs {
		if m.Sequence != want[i] {
			t.Fatalf("sequence %d = %d, want %d", i, m.Sequence, want[i])
		}
	}

	msgs = nil
	v = vectorNamed(t, "v1-log-append-time-gzip")
	if _, err := d.ForEachMessage(v.Bytes, "t", 0, collect); err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		if m.Timestamp != 1700000012345 || m.TimestampType != records.LogAppendTime || m.Offset != 250+int64(i) || m.ProducerID != -1 {
			t.Fatalf("legacy message %d: %+v", i, m)
		}
	}
}

func TestTruncatedJavaFetch(t *testing.T) {
	v := vectorNamed(t, "mixed-magic-fetch")
	d := records.NewDecoder(records.Options{})
	full := 0
	if _, err := d.ForEachMessage(v.Bytes, "t", 0, func(*records.Message) error { full++; return nil }); err != nil {
		t.Fatal(err)
	}
	if full != 32 {
		t.Fatalf("%d messages, want 32", full)
	}
	// Cut the last entry anywhere: the complete ones still come out, the rest is skipped.
	lastStart := 0
	for pos := 0; pos < len(v.Bytes); {
		size, _, _ := records.PeekEntry(v.Bytes[pos:])
		lastStart = pos
		pos += size
	}
	before := 0
	if _, err := d.ForEachMessage(v.Bytes[:lastStart], "t", 0, func(*records.Message) error { before++; return nil }); err != nil {
		t.Fatal(err)
	}
	if before != 31 { // the last entry is one plain magic 0 message
		t.Fatalf("%d messages before the last entry", before)
	}
	for cut := lastStart + 1; cut < len(v.Bytes); cut++ {
		n := 0
		skipped, err := d.ForEachMessage(v.Bytes[:cut], "t", 0, func(*records.Message) error { n++; return nil })
		if err != nil || n != before || skipped != cut-lastStart {
			t.Fatalf("cut at %d: %d messages, skipped %d, %v", cut, n, skipped, err)
		}
	}
}
