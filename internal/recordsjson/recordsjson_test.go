package recordsjson

import (
	"errors"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
)

func TestParseBatchSpec(t *testing.T) {
	s, err := ParseBatchSpec([]byte(`{"magic":2,"producerId":"7","timestampType":"LogAppendTime","logAppendTime":"5",
		"records":[{"key":null,"value":"AAE=","timestamp":"9","headers":[{"key":"h","value":null}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.ProducerID != 7 || !s.LogAppendTime || s.LogAppendValue != 5 || len(s.Records) != 1 {
		t.Fatalf("%+v", s)
	}
	r := s.Records[0]
	if r.Key != nil || string(r.Value) != "\x00\x01" || r.Timestamp != 9 || len(r.Headers) != 1 || string(r.Headers[0].Key) != "h" || r.Headers[0].Value != nil {
		t.Fatalf("%+v", r)
	}
	for _, c := range []struct{ in, path string }{
		{`{}`, "$"},
		{`{"records":[],"records":[]}`, "$.records"},
		{`{"records":[{"nope":1}]}`, "$.records[0].nope"},
		{`{"records":[{"headers":[{"value":null}]}]}`, "$.records[0].headers[0]"},
		{`{"records":[],"timestampType":"Later"}`, "$.timestampType"},
		{`{"records":[],"magic":3}`, "$.magic"},
	} {
		_, err := ParseBatchSpec([]byte(c.in))
		var je *codec.JSONError
		if !errors.As(err, &je) || je.Path != c.path || je.Message != "records" {
			t.Errorf("%s: %v, want a JSON error at %s", c.in, err, c.path)
		}
	}
}

func TestParseTableRef(t *testing.T) {
	ref, err := ParseTableRef([]byte(`{"firstRecord":2,"recordCount":3,"compression":"zstd","skippedBytes":0,"size":100,"baseSequence":4}`))
	if err != nil || ref.FirstRecord != 2 || ref.RecordCount != 3 || ref.Compression != records.CompressionZstd || ref.BaseSequence != 4 {
		t.Fatalf("%+v %v", ref, err)
	}
	for _, in := range []string{`{"firstRecord":1}`, `{"firstRecord":1,"recordCount":1,"compression":"brotli"}`, `{"firstRecord":-1,"recordCount":1}`, `[]`} {
		if _, err := ParseTableRef([]byte(in)); err == nil {
			t.Errorf("%s accepted", in)
		}
	}
}

func TestLegacyHeaders(t *testing.T) {
	s := NewBatchSpec()
	s.Magic = 1
	s.Records = []records.Record{{Value: []byte("v"), Headers: []records.Header{{Key: []byte("k")}}}}
	_, err := s.Append(nil, records.CompressionNone)
	var he *LegacyHeadersError
	if !errors.As(err, &he) || he.Record != 0 || he.Magic != 1 {
		t.Fatalf("%v", err)
	}
	s.Magic = 0
	s.Records[0].Headers = nil
	_, err = s.Append(nil, records.CompressionZstd)
	if !errors.Is(err, records.ErrUnsupported) || err.Error() != "kwire: zstd needs magic 2, not 0: unsupported" {
		t.Fatalf("zstd with magic 0: %v", err)
	}
}
