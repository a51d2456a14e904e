package policy

import (
	"encoding/binary"

	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/internal/recordscan"
)

// scanBatch is the fast path of Check for one data batch (magic 2, not control):
// recordscan.Scan (a WebAssembly kernel inside a VM, its plain-Go twin
// elsewhere) writes the spans of the records and their headers, without a
// records.Record per record, and the rule is applied to them. It reports ok only
// when every record is well formed and passes the rule, returning their count;
// anything else (a malformed record, a failure of decompression, a record failing
// the rule) returns ok false, and the caller reads the batch again with the records
// iterator, whose errors and verdicts are the reference. recordscan.Scan accepts
// exactly what records.RecordIter accepts (FuzzScanMatchesIterator holds the two
// together here).
func (c *Checker) scanBatch(rule *Rule, b *records.Batch) (int, bool) {
	data := b.Records
	if comp := b.Compression(); comp != records.CompressionNone {
		out, err := records.Decompress(c.buf[:0], comp, b.Records, c.p.cfg.MaxDecompressedBytes)
		if cap(out) > cap(c.buf) {
			c.buf = out[:0]
		}
		if err != nil {
			return 0, false
		}
		data = out
	}
	n := int(b.NumRecords)
	if n < 0 || int64(n)*minRecordSize > int64(len(data)) {
		return 0, false
	}
	if c.spans == nil {
		c.spans = make([]int32, scanChunk*recordscan.SpanRecordWords)
		c.hdrs = make([]int32, 4*scanChunk*recordscan.SpanHeaderWords)
	}
	p := 0
	for seen := 0; seen < n; {
		spans := c.spans[:min(n-seen, scanChunk)*recordscan.SpanRecordWords]
		next, nrec, _, ok := recordscan.Scan(data, p, spans, c.hdrs)
		if !ok || nrec == 0 {
			// Malformed, or a record with more headers than hdrs holds: the
			// iterator reads the batch.
			return 0, false
		}
		h := c.hdrs
		for i := 0; i < nrec; i++ {
			sp := spans[i*recordscan.SpanRecordWords : (i+1)*recordscan.SpanRecordWords]
			key := spanOf(data, sp[recordscan.SpanKeyOff], sp[recordscan.SpanKeyLen])
			value := spanOf(data, sp[recordscan.SpanValueOff], sp[recordscan.SpanValueLen])
			var id, ver []byte
			haveID, haveVer := false, false
			for j := int32(0); j < sp[recordscan.SpanHeaders]; j++ {
				hk := spanOf(data, h[0], h[1])
				switch string(hk) {
				case records.SchemaIDHeader:
					id, haveID = spanOf(data, h[2], h[3]), true
				case records.SchemaVersionHeader:
					ver, haveVer = spanOf(data, h[2], h[3]), true
				}
				h = h[recordscan.SpanHeaderWords:]
			}
			// records.ResolveSchema, with the policy's malformed-header rule first.
			ref := records.SchemaRef{ID: -1, Version: -1}
			if haveVer {
				if !decimalInt32(ver) {
					return 0, false
				}
				ref.Version = atoi32(ver)
			}
			switch {
			case haveID:
				if !decimalInt32(id) {
					return 0, false
				}
				ref.ID, ref.Source = atoi32(id), records.SchemaHeader
			case len(value) >= 5 && value[0] == 0:
				ref.ID, ref.Source = int32(binary.BigEndian.Uint32(value[1:])), records.SchemaValuePrefix
			}
			if !c.scanOK(rule, key, value, ref) {
				return 0, false
			}
		}
		seen += nrec
		p = next
	}
	if p != len(data) {
		return 0, false
	}
	return n, true
}

// scanChunk is the number of records one recordscan.Scan call reads into the
// checker's spans (and four headers each, on average, into its header spans).
const scanChunk = 128

// spanOf is the bytes of a span of data, nil for length -1 (null).
func spanOf(data []byte, off, n int32) []byte {
	if n < 0 {
		return nil
	}
	return data[off : off+n : off+n]
}

// scanOK reports whether a record the scan read passes rule (checkRecord's
// checks, its malformed-header check done by the scan before).
func (c *Checker) scanOK(rule *Rule, key, value []byte, ref records.SchemaRef) bool {
	if p := &rule.value; p.checks() {
		if value == nil {
			if p.refuseNull {
				return false
			}
		} else if p.schema && !p.json {
			// The common rule (schema ids, versions): checkRef's verdict without its
			// detail text.
			if !refOK(p, ref) {
				return false
			}
		} else if reason, _ := c.checkPart(p, "value", value, ref); reason != OK {
			return false
		}
	}
	if p := &rule.key; p.checks() {
		if key == nil {
			if p.refuseNull {
				return false
			}
		} else if reason, _ := c.checkPart(p, "key", key, keyRef(key)); reason != OK {
			return false
		}
	}
	return true
}

// refOK is checkRef(p, ref) == OK.
func refOK(p *part, ref records.SchemaRef) bool {
	return ref.Source != records.SchemaNone &&
		(len(p.ids) == 0 || contains(p.ids, ref.ID)) &&
		(ref.Version >= 0 || !p.requireVersion && len(p.versions) == 0) &&
		(len(p.versions) == 0 || contains(p.versions, ref.Version))
}

// minRecordSize is the smallest record (records' minimum): length, attributes,
// timestamp and offset deltas, key and value lengths, header count.
const minRecordSize = 7

// atoi32 reads a decimal int32 decimalInt32 accepted.
func atoi32(b []byte) int32 {
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var v int64
	for _, c := range b {
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return int32(v)
}
