package policy

import (
	"encoding/binary"

	"github.com/kwire/kwire/codec/records"
)

// scanBatch is the fast path of Check for one data batch (magic 2, not control):
// it reads the records in one tight loop, without a records.Record per record,
// and applies rule. It reports ok only when every record is well formed and
// passes the rule, returning their count; anything else (a malformed record, a
// failure of decompression, a record failing the rule) returns ok false, and the
// caller reads the batch again with the records iterator, whose errors and
// verdicts are the reference. So the scan is at least as strict as
// records.RecordIter: every check of decodeRecord is made here too (a differential
// test holds them together).
//
// Inside a WebAssembly VM this loop is about ten times faster than the
// iterator, which is most of the filter's cost per Produce request.
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
	p := 0
	for i := 0; i < n; i++ {
		// Each varint takes the one-byte path inline (varint1) and calls
		// varintLong only for longer ones.
		length, q := varint1(data, p)
		if q < 0 {
			length, q = varintLong(data, p)
		}
		if q < 0 || length < minRecordSize-1 || int64(length) > int64(len(data)-q) {
			return 0, false
		}
		end := q + int(length)
		rec := data[:end]
		q = skipVarlong(rec, q+1) // attributes, timestampDelta
		at := q
		if _, q = varint1(rec, at); q < 0 { // offsetDelta
			_, q = varintLong(rec, at)
		}
		at = q
		kl, q := varint1(rec, at) // key
		if q < 0 {
			kl, q = varintLong(rec, at)
		}
		if q < 0 || int64(kl) > int64(end-q) {
			return 0, false
		}
		var key []byte
		if kl >= 0 {
			key = rec[q : q+int(kl)]
			q += int(kl)
		}
		at = q
		vl, q := varint1(rec, at) // value
		if q < 0 {
			vl, q = varintLong(rec, at)
		}
		if q < 0 || int64(vl) > int64(end-q) {
			return 0, false
		}
		var value []byte
		if vl >= 0 {
			value = rec[q : q+int(vl)]
			q += int(vl)
		}
		at = q
		nh, q := varint1(rec, at)
		if q < 0 {
			nh, q = varintLong(rec, at)
		}
		if q < 0 || nh < 0 || int64(nh)*2 > int64(end-q) {
			return 0, false
		}
		var id, ver []byte
		haveID, haveVer := false, false
		for h := int32(0); h < nh; h++ {
			kl, kq := varint(rec, q)
			if kq < 0 || kl < 0 || int64(kl) > int64(end-kq) {
				return 0, false
			}
			key := rec[kq : kq+int(kl)]
			hl, hq := varint(rec, kq+int(kl))
			if hq < 0 || int64(hl) > int64(end-hq) {
				return 0, false
			}
			var val []byte
			if hl >= 0 {
				val = rec[hq : hq+int(hl)]
				hq += int(hl)
			}
			q = hq
			switch string(key) {
			case records.SchemaIDHeader:
				id, haveID = val, true
			case records.SchemaVersionHeader:
				ver, haveVer = val, true
			}
		}
		if q != end {
			return 0, false
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
		p = end
	}
	if p != len(data) {
		return 0, false
	}
	return n, true
}

// scanOK reports whether a record the scan read passes rule (checkRecord's
// checks, its malformed-header check done by the scan before).
func (c *Checker) scanOK(rule *Rule, key, value []byte, ref records.SchemaRef) bool {
	if p := &rule.value; p.checks() {
		if value == nil {
			if p.refuseNull {
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

// minRecordSize is the smallest record (records' minimum): length, attributes,
// timestamp and offset deltas, key and value lengths, header count.
const minRecordSize = 7

// varint reads a zigzag varint of at most 5 bytes, as records reads Kafka's int32
// varints (bits past 32 of a fifth byte are dropped); next is -1 on failure.
func varint(b []byte, pos int) (v int32, next int) {
	if v, next = varint1(b, pos); next < 0 {
		v, next = varintLong(b, pos)
	}
	return v, next
}

// varint1 reads a one-byte varint (next -1 for anything else): small enough to
// inline, so the common case costs no call inside a WebAssembly VM.
func varint1(b []byte, pos int) (v int32, next int) {
	if uint(pos) < uint(len(b)) {
		if c := int32(b[pos]); c < 0x80 {
			return c>>1 ^ -(c & 1), pos + 1
		}
	}
	return 0, -1
}

//go:noinline
func varintLong(b []byte, pos int) (int32, int) {
	if pos < 0 {
		return 0, -1
	}
	var x uint32
	var shift uint
	for i := 0; i < 5; i++ {
		if pos >= len(b) {
			return 0, -1
		}
		c := b[pos]
		pos++
		x |= uint32(c&0x7f) << shift
		if c < 0x80 {
			return int32(x>>1) ^ -int32(x&1), pos
		}
		shift += 7
	}
	return 0, -1
}

// skipVarlong skips a varint of at most 10 bytes; -1 on failure.
func skipVarlong(b []byte, pos int) int {
	if uint(pos) < uint(len(b)) && b[pos] < 0x80 {
		return pos + 1
	}
	return skipVarlongLong(b, pos)
}

//go:noinline
func skipVarlongLong(b []byte, pos int) int {
	if pos < 0 {
		return -1
	}
	for i := 0; i < 10; i++ {
		if pos >= len(b) {
			return -1
		}
		c := b[pos]
		pos++
		if c < 0x80 {
			return pos
		}
	}
	return -1
}

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
