package records

import (
	"errors"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
)

// testBatch is one uncompressed magic 2 batch of n records.
func testBatch(t *testing.T, n int) []byte {
	t.Helper()
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Key: []byte("k"), Value: []byte("value"), OffsetDelta: int32(i)}
	}
	b := Batch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	b.SetDeltas(recs)
	var e Encoder
	out, err := e.AppendBatch(nil, &b, recs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func testLegacy(t *testing.T, magic int8) []byte {
	t.Helper()
	var e Encoder
	out, err := e.AppendLegacySet(nil, LegacySet{Magic: magic}, []LegacyMessage{{Key: []byte("k"), Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func withCompression(b []byte, c Compression) []byte {
	b = append([]byte{}, b...)
	attr := be.Uint16(b[offAttributes:])&^uint16(AttrCompressionMask) | uint16(c)
	be.PutUint16(b[offAttributes:], attr)
	return b
}

func TestValidateProduceRecords(t *testing.T) {
	one := testBatch(t, 3)
	two := append(append([]byte{}, one...), testBatch(t, 1)...)
	cases := []struct {
		name    string
		version int16
		recs    []byte
		want    kerr.Code
		reason  string
	}{
		{"one batch", 9, one, kerr.None, ""},
		{"one batch v3", 3, one, kerr.None, ""},
		{"truncated batch", 9, one[:len(one)-5], kerr.InvalidRecord, "found none complete"},
		{"header only", 9, one[:20], kerr.InvalidRecord, "found none complete"},
		{"fewer than 12 bytes", 9, one[:7], kerr.InvalidRecord, "found none"},
		{"no batch", 9, []byte{}, kerr.InvalidRecord, "found none"},
		{"two batches", 9, two, kerr.InvalidRecord, "exactly one record batch"},
		{"one batch and a partial one", 9, two[:len(one)+30], kerr.None, ""},
		{"legacy magic 1 at v3", 3, testLegacy(t, 1), kerr.InvalidRecord, "found magic 1"},
		{"legacy magic 0 at v9", 9, testLegacy(t, 0), kerr.InvalidRecord, "found magic 0"},
		{"legacy then batch", 9, append(testLegacy(t, 1), one...), kerr.InvalidRecord, "found magic 1"},
		{"zstd at v6", 6, withCompression(one, CompressionZstd), kerr.UnsupportedCompressionType, "zstd"},
		{"zstd at v7", 7, withCompression(one, CompressionZstd), kerr.None, ""},
		{"gzip at v3", 3, withCompression(one, CompressionGzip), kerr.None, ""},
		{"unknown compression at v5", 5, withCompression(one, 6), kerr.UnknownServerError, "compression id 6"},
		{"unknown compression at v9", 9, withCompression(one, 6), kerr.None, ""},
		{"bad magic", 9, func() []byte { b := append([]byte{}, one...); b[offMagic] = 3; return b }(), kerr.CorruptMessage, "invalid magic 3"},
		{"size below 14", 9, func() []byte { b := append([]byte{}, one...); be.PutUint32(b[offLength:], 13); return b }(), kerr.CorruptMessage, "less than the minimum"},
		{"second entry corrupt", 9, append(append([]byte{}, one...), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5), kerr.CorruptMessage, "record size 5"},
		{"null records", 9, nil, kerr.None, ""},
		{"truncated at v2: no check", 2, one[:len(one)-5], kerr.None, ""},
		{"two batches at v0: no check", 0, two, kerr.None, ""},
	}
	for _, c := range cases {
		v := ValidateProduceRecords(c.version, c.recs)
		if v.Code != c.want {
			t.Errorf("%s: code %v (%s), want %v", c.name, v.Code, v.Reason, c.want)
			continue
		}
		if v.OK() != (c.want == kerr.None) || !strings.Contains(v.Reason, c.reason) {
			t.Errorf("%s: reason %q, want it to contain %q", c.name, v.Reason, c.reason)
		}
	}
}

func TestValidateProduceRequest(t *testing.T) {
	one := testBatch(t, 2)
	req := codec.NewProduceRequest()
	req.TopicData = []codec.ProduceRequestTopicProduceData{
		{Name: "a", PartitionData: []codec.ProduceRequestPartitionProduceData{{Index: 0, Records: one}, {Index: 1, Records: one[:len(one)-1]}}},
		{Name: "b", PartitionData: []codec.ProduceRequestPartitionProduceData{{Index: 7, Records: append(append([]byte{}, one...), one...)}}},
	}
	got := ValidateProduceRequest(req, 9)
	if len(got) != 2 || got[0].Topic != "a" || got[0].Partition != 1 || got[0].Code != kerr.InvalidRecord ||
		got[1].Topic != "b" || got[1].Partition != 7 || got[1].Code != kerr.InvalidRecord {
		t.Fatalf("verdicts %+v", got)
	}
	if got := ValidateProduceRequest(req, 2); got != nil {
		t.Fatalf("v2 verdicts %+v, want none", got)
	}
}

func TestValidateProduceRecordsAllocates(t *testing.T) {
	one := testBatch(t, 2)
	if n := testing.AllocsPerRun(100, func() { ValidateProduceRecords(9, one) }); n != 0 {
		t.Fatalf("%v allocations for records that pass", n)
	}
}

// A Fetch response's records may end in a partial batch: it stays skipped, not an error.
func TestFetchPartialTrailingBatchSkipped(t *testing.T) {
	one := testBatch(t, 2)
	two := append(append([]byte{}, one...), testBatch(t, 3)...)
	var d Decoder
	n := 0
	skipped, err := d.ForEachMessage(two[:len(two)-9], "t", 0, func(*Message) error { n++; return nil })
	if err != nil || n != 2 || skipped != len(two)-9-len(one) {
		t.Fatalf("n %d skipped %d err %v", n, skipped, err)
	}
}

// FuzzValidateProduceRecords: any input gets a verdict without a panic, and the verdict
// agrees with a plain walk of the entries by their length prefixes.
func FuzzValidateProduceRecords(f *testing.F) {
	var e Encoder
	recs := []Record{{Key: []byte("k"), Value: []byte("v")}}
	b := Batch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	b.SetDeltas(recs)
	one, _ := e.AppendBatch(nil, &b, recs)
	f.Add(int16(9), one)
	f.Add(int16(5), append(append([]byte{}, one...), one...))
	f.Add(int16(3), one[:30])
	f.Fuzz(func(t *testing.T, version int16, data []byte) {
		v := ValidateProduceRecords(version, data)
		if version < 3 {
			if !v.OK() {
				t.Fatalf("v%d: verdict %+v", version, v)
			}
			return
		}
		if v.OK() {
			// The first entry is a whole magic 2 batch, and no second whole entry follows.
			if len(data) < LogOverhead+5 || data[offMagic] != 2 {
				t.Fatalf("accepted %x", data)
			}
			size := LogOverhead + int(int32(be.Uint32(data[offLength:])))
			if size > len(data) || size < LogOverhead+14 {
				t.Fatalf("accepted a first entry of %d bytes in %d", size, len(data))
			}
			rest := data[size:]
			if len(rest) >= LogOverhead+5 {
				if n := int32(be.Uint32(rest[offLength:])); n >= 14 && int64(n) <= int64(len(rest)-LogOverhead) {
					t.Fatalf("accepted two whole entries")
				}
			}
		} else if v.Reason == "" || !v.Code.Known() {
			t.Fatalf("verdict %+v", v)
		}
	})
}

// A records error inside a Fetch response names the partition once, and "records:" once.
func TestFetchMessageErrorPrefixOnce(t *testing.T) {
	bad := testBatch(t, 2)
	bad[len(bad)-3] ^= 0xff // CRC mismatch
	resp := codec.NewFetchResponse()
	resp.Responses = []codec.FetchResponseFetchableTopicResponse{{Topic: "events", Partitions: []codec.FetchResponsePartitionData{{PartitionIndex: 3, Records: bad}}}}
	var d Decoder
	err := d.ForEachFetchMessage(resp, nil, func(*Message) error { return nil })
	if err == nil || !strings.HasPrefix(err.Error(), "records: fetch topic events partition 3: batch") || strings.Count(err.Error(), "records:") != 1 {
		t.Fatalf("%v", err)
	}
	var re *Error
	if !errors.As(err, &re) {
		t.Fatalf("%T does not unwrap to *Error", err)
	}
}
