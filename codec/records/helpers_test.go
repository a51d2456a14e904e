package records

import (
	"bytes"
	"fmt"
)

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func cloneRecords(recs []Record) []Record {
	out := make([]Record, len(recs))
	for i, r := range recs {
		r.Key = cloneBytes(r.Key)
		r.Value = cloneBytes(r.Value)
		if r.Headers != nil {
			hs := make([]Header, len(r.Headers))
			for j, h := range r.Headers {
				hs[j] = Header{Key: cloneBytes(h.Key), Value: cloneBytes(h.Value)}
			}
			r.Headers = hs
		}
		out[i] = r
	}
	return out
}

func eqNullable(a, b []byte) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	return bytes.Equal(a, b)
}

// diffRecords compares the wire-visible fields of two record lists.
func diffRecords(a, b []Record) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d records vs %d", len(a), len(b))
	}
	for i := range a {
		x, y := &a[i], &b[i]
		switch {
		case x.Attributes != y.Attributes:
			return fmt.Sprintf("record %d: attributes %d vs %d", i, x.Attributes, y.Attributes)
		case x.TimestampDelta != y.TimestampDelta:
			return fmt.Sprintf("record %d: timestampDelta %d vs %d", i, x.TimestampDelta, y.TimestampDelta)
		case x.OffsetDelta != y.OffsetDelta:
			return fmt.Sprintf("record %d: offsetDelta %d vs %d", i, x.OffsetDelta, y.OffsetDelta)
		case !eqNullable(x.Key, y.Key):
			return fmt.Sprintf("record %d: key %q vs %q", i, x.Key, y.Key)
		case !eqNullable(x.Value, y.Value):
			return fmt.Sprintf("record %d: value %q vs %q", i, x.Value, y.Value)
		case len(x.Headers) != len(y.Headers):
			return fmt.Sprintf("record %d: %d headers vs %d", i, len(x.Headers), len(y.Headers))
		}
		for j := range x.Headers {
			if !bytes.Equal(x.Headers[j].Key, y.Headers[j].Key) || !eqNullable(x.Headers[j].Value, y.Headers[j].Value) {
				return fmt.Sprintf("record %d header %d: %q=%q vs %q=%q", i, j, x.Headers[j].Key, x.Headers[j].Value, y.Headers[j].Key, y.Headers[j].Value)
			}
		}
	}
	return ""
}
