// Package recordscan is the record scan: a flat reader of a magic 2 batch's records that writes spans
// (offsets and lengths into the records data) instead of building Record values. It
// is the fast path of the record tables kwire's flat ABI returns: it allocates
// nothing, calls nothing per field and takes few branches, which is what Go's
// WebAssembly code pays for. It accepts exactly what RecordIter accepts; what it
// refuses, the caller reads again with a Decoder, whose error explains why (the scan
// itself says only where it stopped). The abi package's record tables and
// codec/policy's checker read records through it.
package recordscan

import (
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/internal/wire"
)

// minRecordSize: a record with null key and value and no headers is 7 bytes.
const minRecordSize = 7

// Words Scan writes per record into spans (int32 each).
const (
	SpanOffsetDelta = 0 // the record's offset delta
	SpanTSDeltaLo   = 1 // timestamp delta, low 32 bits
	SpanTSDeltaHi   = 2 // timestamp delta, high 32 bits
	SpanKeyOff      = 3 // key offset in data (0 when null)
	SpanKeyLen      = 4 // key length, -1 when null
	SpanValueOff    = 5 // value offset in data (0 when null)
	SpanValueLen    = 6 // value length, -1 when null
	SpanHeaders     = 7 // header count
	// SpanRecordWords is the number of words per record.
	SpanRecordWords = 8
	// SpanHeaderWords is the number of words per header: key offset, key length,
	// value offset, value length (-1 when null).
	SpanHeaderWords = 4
)

// Scan reads whole records of a magic 2 batch from data[pos:] (the batch's
// records section, decompressed) while there is room for them: at most
// len(spans)/SpanRecordWords records and len(hdrs)/SpanHeaderWords headers. For
// record i it writes spans[i*SpanRecordWords:] (see the Span* constants) and for each
// of its headers, in order, SpanHeaderWords words of hdrs; offsets count from the
// start of data. It returns the position after the last record read and the numbers
// of records and headers written. ok is false when the record at next is malformed
// (or longer than data): the caller then asks a Decoder, which explains. A record
// whose headers do not fit in what is left of hdrs is not read (ok stays true).
//
// In WebAssembly builds the loop is a kernel written in WebAssembly (scan_wasm.s);
// scanRecordsGeneric is its plain-Go twin and the native code.
func Scan(data []byte, pos int, spans, hdrs []int32) (next, nrec, nhdr int, ok bool) {
	if pos < 0 || pos > len(data) || len(data) > 1<<31-1 {
		return pos, 0, 0, false
	}
	return scanRecords(data, pos, spans, hdrs)
}

// scanRecordsGeneric is Scan in plain Go. Every read is bounded by the record's
// end, which is itself checked against data, so a record cannot reach into the next.
// Varints of one byte (nearly all of them) are read inline; longer ones by wire.Varint,
// whose limits (5 bytes, the fifth byte's high bits dropped) are the reader's.
func scanRecordsGeneric(data []byte, pos int, spans, hdrs []int32) (next, nrec, nhdr int, ok bool) {
	maxRec := len(spans) / SpanRecordWords
	maxHdr := len(hdrs) / SpanHeaderWords
	for nrec < maxRec && pos < len(data) {
		var length int32
		p := pos
		if c := data[p]; c < 0x80 {
			length, p = int32(c>>1)^-int32(c&1), p+1
		} else if length, p, ok = wire.Varint(data, p); !ok {
			return pos, nrec, nhdr, false
		}
		if length < minRecordSize-1 || int64(length) > int64(len(data)-p) {
			return pos, nrec, nhdr, false
		}
		end := p + int(length)
		rec := data[:end]
		p++ // attributes
		var tsd int64
		if c := rec[p]; c < 0x80 {
			tsd, p = int64(c>>1)^-int64(c&1), p+1
		} else if tsd, p, ok = wire.Varlong(rec, p); !ok {
			return pos, nrec, nhdr, false
		}
		var od, kl, vl, nh int32
		if p < end && rec[p] < 0x80 {
			c := rec[p]
			od, p = int32(c>>1)^-int32(c&1), p+1
		} else if od, p, ok = wire.Varint(rec, p); !ok {
			return pos, nrec, nhdr, false
		}
		if p < end && rec[p] < 0x80 {
			c := rec[p]
			kl, p = int32(c>>1)^-int32(c&1), p+1
		} else if kl, p, ok = wire.Varint(rec, p); !ok {
			return pos, nrec, nhdr, false
		}
		ko := p
		if kl < 0 {
			kl, ko = -1, 0
		} else if int64(kl) > int64(end-p) {
			return pos, nrec, nhdr, false
		} else {
			p += int(kl)
		}
		if p < end && rec[p] < 0x80 {
			c := rec[p]
			vl, p = int32(c>>1)^-int32(c&1), p+1
		} else if vl, p, ok = wire.Varint(rec, p); !ok {
			return pos, nrec, nhdr, false
		}
		vo := p
		if vl < 0 {
			vl, vo = -1, 0
		} else if int64(vl) > int64(end-p) {
			return pos, nrec, nhdr, false
		} else {
			p += int(vl)
		}
		if p < end && rec[p] < 0x80 {
			c := rec[p]
			nh, p = int32(c>>1)^-int32(c&1), p+1
		} else if nh, p, ok = wire.Varint(rec, p); !ok {
			return pos, nrec, nhdr, false
		}
		if nh < 0 || int64(nh)*2 > int64(end-p) {
			return pos, nrec, nhdr, false
		}
		if int(nh) > maxHdr-nhdr {
			return pos, nrec, nhdr, true
		}
		h := hdrs[nhdr*SpanHeaderWords : (nhdr+int(nh))*SpanHeaderWords]
		for j := 0; j < int(nh); j++ {
			var hkl, hvl int32
			if p < end && rec[p] < 0x80 {
				c := rec[p]
				hkl, p = int32(c>>1)^-int32(c&1), p+1
			} else if hkl, p, ok = wire.Varint(rec, p); !ok {
				return pos, nrec, nhdr, false
			}
			if hkl < 0 || int64(hkl) > int64(end-p) {
				return pos, nrec, nhdr, false
			}
			hko := p
			p += int(hkl)
			if p < end && rec[p] < 0x80 {
				c := rec[p]
				hvl, p = int32(c>>1)^-int32(c&1), p+1
			} else if hvl, p, ok = wire.Varint(rec, p); !ok {
				return pos, nrec, nhdr, false
			}
			hvo := p
			if hvl < 0 {
				hvl, hvo = -1, 0
			} else if int64(hvl) > int64(end-p) {
				return pos, nrec, nhdr, false
			} else {
				p += int(hvl)
			}
			w := h[j*SpanHeaderWords : j*SpanHeaderWords+SpanHeaderWords : j*SpanHeaderWords+SpanHeaderWords]
			w[0], w[1], w[2], w[3] = int32(hko), hkl, int32(hvo), hvl
		}
		if p != end {
			return pos, nrec, nhdr, false
		}
		s := spans[nrec*SpanRecordWords : nrec*SpanRecordWords+SpanRecordWords : nrec*SpanRecordWords+SpanRecordWords]
		s[SpanOffsetDelta] = od
		s[SpanTSDeltaLo] = int32(uint32(uint64(tsd)))
		s[SpanTSDeltaHi] = int32(uint32(uint64(tsd) >> 32))
		s[SpanKeyOff] = int32(ko)
		s[SpanKeyLen] = kl
		s[SpanValueOff] = int32(vo)
		s[SpanValueLen] = vl
		s[SpanHeaders] = nh
		nrec++
		nhdr += int(nh)
		pos = end
	}
	return pos, nrec, nhdr, true
}

// MayHaveSchema reports whether SpanSchema could find a schema reference in a record:
// a header whose key has the length of a schema header's, or a value that starts with
// the Confluent prefix's zero byte. Else the reference is none, and SpanSchema need not run.
func MayHaveSchema(data []byte, rec, hdrs []int32) bool {
	for j := 1; j < len(hdrs); j += SpanHeaderWords {
		if n := hdrs[j]; n == int32(len(records.SchemaIDHeader)) || n == int32(len(records.SchemaVersionHeader)) {
			return true
		}
	}
	return rec[SpanValueLen] >= 5 && data[rec[SpanValueOff]] == 0
}

// SpanSchema is records.ResolveSchema for a record read by Scan: rec is its
// SpanRecordWords words, hdrs the words of its headers, data what they index.
func SpanSchema(data []byte, rec, hdrs []int32) records.SchemaRef {
	// ResolveSchema reads the last header of each schema key; only those two are
	// handed over.
	var hs [2]records.Header
	n := 0
	idAt, verAt := -1, -1
	for j := 0; j+SpanHeaderWords <= len(hdrs); j += SpanHeaderWords {
		switch string(data[hdrs[j] : hdrs[j]+hdrs[j+1]]) {
		case records.SchemaIDHeader:
			idAt = j
		case records.SchemaVersionHeader:
			verAt = j
		}
	}
	for _, at := range [2]int{idAt, verAt} {
		if at >= 0 {
			hs[n] = records.Header{Key: data[hdrs[at] : hdrs[at]+hdrs[at+1]], Value: span(data, hdrs[at+2], hdrs[at+3])}
			n++
		}
	}
	return records.ResolveSchema(span(data, rec[SpanValueOff], rec[SpanValueLen]), hs[:n])
}

// span is the bytes of data a span points at: nil for a null one (length -1).
func span(data []byte, off, n int32) []byte {
	if n < 0 {
		return nil
	}
	return data[off : off+n]
}
