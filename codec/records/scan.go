package records

// The record scan: a flat reader of a magic 2 batch's records that writes spans
// (offsets and lengths into the records data) instead of building Record values. It
// is the fast path of the record tables kwire's flat ABI returns: it allocates
// nothing, calls nothing per field and takes few branches, which is what Go's
// WebAssembly code pays for. It accepts exactly what RecordIter accepts; what it
// refuses, the caller reads again with a Decoder, whose error explains why (the scan
// itself says only where it stopped).

// Words ScanRecords writes per record into spans (int32 each).
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

// ScanRecords reads whole records of a magic 2 batch from data[pos:] (the batch's
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
func ScanRecords(data []byte, pos int, spans, hdrs []int32) (next, nrec, nhdr int, ok bool) {
	if pos < 0 || pos > len(data) || len(data) > 1<<31-1 {
		return pos, 0, 0, false
	}
	return scanRecords(data, pos, spans, hdrs)
}

// scanRecordsGeneric is ScanRecords in plain Go. Every read is bounded by the record's
// end, which is itself checked against data, so a record cannot reach into the next.
// Varints of one byte (nearly all of them) are read inline; longer ones by readVarint,
// whose limits (5 bytes, the fifth byte's high bits dropped) are the reader's.
func scanRecordsGeneric(data []byte, pos int, spans, hdrs []int32) (next, nrec, nhdr int, ok bool) {
	maxRec := len(spans) / SpanRecordWords
	maxHdr := len(hdrs) / SpanHeaderWords
	for nrec < maxRec && pos < len(data) {
		var length int32
		p := pos
		if c := data[p]; c < 0x80 {
			length, p = int32(c>>1)^-int32(c&1), p+1
		} else if length, p, ok = readVarint(data, p); !ok {
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
		} else if tsd, p, ok = readVarlong(rec, p); !ok {
			return pos, nrec, nhdr, false
		}
		var od, kl, vl, nh int32
		if p < end && rec[p] < 0x80 {
			c := rec[p]
			od, p = int32(c>>1)^-int32(c&1), p+1
		} else if od, p, ok = readVarint(rec, p); !ok {
			return pos, nrec, nhdr, false
		}
		if p < end && rec[p] < 0x80 {
			c := rec[p]
			kl, p = int32(c>>1)^-int32(c&1), p+1
		} else if kl, p, ok = readVarint(rec, p); !ok {
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
		} else if vl, p, ok = readVarint(rec, p); !ok {
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
		} else if nh, p, ok = readVarint(rec, p); !ok {
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
			} else if hkl, p, ok = readVarint(rec, p); !ok {
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
			} else if hvl, p, ok = readVarint(rec, p); !ok {
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
		if n := hdrs[j]; n == int32(len(SchemaIDHeader)) || n == int32(len(SchemaVersionHeader)) {
			return true
		}
	}
	return rec[SpanValueLen] >= 5 && data[rec[SpanValueOff]] == 0
}

// SpanSchema is ResolveSchema for a record read by ScanRecords: rec is its
// SpanRecordWords words, hdrs the words of its headers, data what they index.
func SpanSchema(data []byte, rec, hdrs []int32) SchemaRef {
	ref := SchemaRef{ID: -1, Version: -1}
	if len(hdrs) > 0 {
		idAt, verAt := -1, -1
		for j := 0; j+SpanHeaderWords <= len(hdrs); j += SpanHeaderWords {
			switch k := data[hdrs[j] : hdrs[j]+hdrs[j+1]]; string(k) {
			case SchemaIDHeader:
				idAt = j
			case SchemaVersionHeader:
				verAt = j
			}
		}
		if verAt >= 0 && hdrs[verAt+3] >= 0 { // a null value is no version
			if v, ok := parseInt32(data[hdrs[verAt+2] : hdrs[verAt+2]+hdrs[verAt+3]]); ok {
				ref.Version = v
			}
		}
		if idAt >= 0 {
			var v []byte
			if hdrs[idAt+3] >= 0 {
				v = data[hdrs[idAt+2] : hdrs[idAt+2]+hdrs[idAt+3]]
			}
			if id, ok := parseInt32(v); ok {
				ref.ID = id
				ref.Source = SchemaHeader
				return ref
			}
		}
	}
	if vl := rec[SpanValueLen]; vl >= 5 {
		vo := rec[SpanValueOff]
		if data[vo] == 0 {
			ref.ID = int32(be.Uint32(data[vo+1:]))
			ref.Source = SchemaValuePrefix
		}
	}
	return ref
}

// BatchData returns the records section of b ready to read: b.Records itself when the
// batch is uncompressed, else the decompressed bytes in the decoder's buffer (valid
// until the decoder decompresses again). Its errors are those of Records.
func (d *Decoder) BatchData(b *Batch) (data []byte, decompressed bool, err error) {
	return d.recordsData(b)
}
