package abi

import (
	"encoding/binary"
	"errors"
	"strconv"
	"sync"

	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/internal/recordsjson"
)

// Record table layout 1 (see kw_records_decode_table in kwire.h).
const (
	TableMagic        = "KWRT"
	TableLayout       = 1
	TableHeaderSize   = 40
	TableRecordStride = 96
	TableHeaderStride = 16
)

var decoders = sync.Pool{New: func() any { return records.NewDecoder(records.Options{}) }}

func recordOptions(flags, maxDecompressed int32) (records.Options, *Error) {
	if flags&^FlagSkipCRC != 0 {
		return records.Options{}, newErr(StatusArg, "kwire: unknown record flags 0x"+hexadecimal(flags))
	}
	if maxDecompressed < 0 {
		return records.Options{}, newErr(StatusArg, "kwire: negative max_decompressed "+decimal(maxDecompressed))
	}
	return records.Options{MaxDecompressedSize: int(maxDecompressed), SkipCRC: flags&FlagSkipCRC != 0}, nil
}

// forEach decodes every message of src with a pooled decoder.
func forEach(src []byte, flags, maxDecompressed int32, fn func(m *records.Message)) (int, *Error) {
	opts, e := recordOptions(flags, maxDecompressed)
	if e != nil {
		return 0, e
	}
	d := decoders.Get().(*records.Decoder)
	d.Options = opts
	skipped, err := d.ForEachMessage(src, "", 0, func(m *records.Message) error {
		fn(m)
		return nil
	})
	d.Options = records.Options{}
	decoders.Put(d)
	if err != nil {
		return 0, fromRecords(err, false)
	}
	return skipped, nil
}

// RecordsDecodeJSON is kw_records_decode_json, appended to dst.
func RecordsDecodeJSON(dst []byte, in []byte, flags, maxDecompressed int32) (out []byte, err error) {
	defer guard(&err)
	b := append(dst, `{"records":[`...)
	first := true
	skipped, e := forEach(in, flags, maxDecompressed, func(m *records.Message) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = recordsjson.AppendMessage(b, m)
	})
	if e != nil {
		return dst, e
	}
	b = append(b, `],"skippedBytes":`...)
	b = strconv.AppendInt(b, int64(skipped), 10)
	b = append(b, '}')
	if len(b)-len(dst) > MaxAlloc {
		return dst, newErr(StatusTooLarge, "kwire: records JSON of "+decimal(len(b)-len(dst))+" bytes exceeds the output limit")
	}
	return b, nil
}

// tableScratch holds the pieces of a record table while it is built.
type tableScratch struct {
	recs []tableRec
	hdrs []span2
	data []byte
}

type span2 struct{ kOff, kLen, vOff, vLen int32 }

type tableRec struct {
	offset, timestamp, producerID int64
	kv                            span2
	firstHeader, headerCount      int32
	sequence, leaderEpoch, epoch  int32
	magic, compression, tsType    int32
	flags, control                int32
	schemaSource, schemaID, schVe int32
}

var tables = sync.Pool{New: func() any { return new(tableScratch) }}

// addBytes copies b into the data area and returns its (offset, length) relative to
// the data area; nil is (0, -1).
func (t *tableScratch) addBytes(b []byte) (int32, int32) {
	if b == nil {
		return 0, -1
	}
	off := len(t.data)
	t.data = append(t.data, b...)
	return int32(off), int32(len(b))
}

// RecordsDecodeTable is kw_records_decode_table, appended to dst.
func RecordsDecodeTable(dst []byte, in []byte, flags, maxDecompressed int32) (out []byte, err error) {
	defer guard(&err)
	t := tables.Get().(*tableScratch)
	defer func() {
		t.recs, t.hdrs, t.data = t.recs[:0], t.hdrs[:0], t.data[:0]
		if cap(t.data) > 4<<20 {
			t.data = nil
		}
		tables.Put(t)
	}()
	skipped, e := forEach(in, flags, maxDecompressed, func(m *records.Message) {
		t.recs, t.hdrs = appendRecord(m, t.addBytes, t.recs, t.hdrs)
	})
	if e != nil {
		return dst, e
	}
	recsOff := TableHeaderSize
	hdrsOff := recsOff + len(t.recs)*TableRecordStride
	dataOff := hdrsOff + len(t.hdrs)*TableHeaderStride
	total := dataOff + len(t.data)
	if total > MaxAlloc {
		return dst, newErr(StatusTooLarge, "kwire: record table of "+decimal(total)+" bytes exceeds the output limit")
	}
	start := len(dst)
	out = append(dst, make([]byte, dataOff)...)
	out = append(out, t.data...)
	b := out[start:]
	writeTableHeader(b, TableLayout, len(t.recs), recsOff, len(t.hdrs), hdrsOff, skipped, total)
	writeEntries(b, recsOff, hdrsOff, t.recs, t.hdrs, int32(dataOff))
	return out, nil
}

// appendRecord adds one record's entry, its headers' entries and its bytes (through add)
// to a table being built.
func appendRecord(m *records.Message, add func([]byte) (int32, int32), recs []tableRec, hdrs []span2) ([]tableRec, []span2) {
	r := tableRec{offset: m.Offset, timestamp: m.Timestamp, producerID: m.ProducerID,
		firstHeader: int32(len(hdrs)), headerCount: int32(len(m.Headers)),
		sequence: m.Sequence, leaderEpoch: m.LeaderEpoch, epoch: int32(m.ProducerEpoch),
		magic: int32(m.Magic), compression: int32(m.Compression), tsType: int32(m.TimestampType),
		control:      recordsjson.ControlType(m),
		schemaSource: int32(m.Schema.Source), schemaID: m.Schema.ID, schVe: m.Schema.Version}
	if m.Transactional {
		r.flags |= 1
	}
	if m.Control {
		r.flags |= 2
	}
	r.kv.kOff, r.kv.kLen = add(m.Key)
	r.kv.vOff, r.kv.vLen = add(m.Value)
	for _, h := range m.Headers {
		var s span2
		k := h.Key
		if k == nil {
			k = []byte{}
		}
		s.kOff, s.kLen = add(k)
		s.vOff, s.vLen = add(h.Value)
		hdrs = append(hdrs, s)
	}
	return append(recs, r), hdrs
}

// writeTableHeader writes the 40-byte header that layouts 1 and 2 share.
func writeTableHeader(b []byte, layout, nrecs, recsOff, nhdrs, hdrsOff, skipped, total int) {
	le := binary.LittleEndian
	copy(b, TableMagic)
	for i, v := range [...]int{layout, nrecs, TableRecordStride, recsOff, nhdrs, TableHeaderStride, hdrsOff, skipped, total} {
		le.PutUint32(b[4+4*i:], uint32(int32(v)))
	}
}

// writeEntries writes the record and header entries of a table (layout 1 and 2 share
// their format); the spans of the data area are moved by base (null spans stay 0, -1).
// Plain stores, no closures: Go's WebAssembly backend does not inline those.
func writeEntries(b []byte, recsOff, hdrsOff int, recs []tableRec, hdrs []span2, base int32) {
	le := binary.LittleEndian
	for i := range recs {
		r := &recs[i]
		e := b[recsOff+i*TableRecordStride : recsOff+(i+1)*TableRecordStride]
		le.PutUint64(e[0:], uint64(r.offset))
		le.PutUint64(e[8:], uint64(r.timestamp))
		le.PutUint64(e[16:], uint64(r.producerID))
		le.PutUint32(e[24:], uint32(rebase(r.kv.kOff, r.kv.kLen, base)))
		le.PutUint32(e[28:], uint32(r.kv.kLen))
		le.PutUint32(e[32:], uint32(rebase(r.kv.vOff, r.kv.vLen, base)))
		le.PutUint32(e[36:], uint32(r.kv.vLen))
		le.PutUint32(e[40:], uint32(r.firstHeader))
		le.PutUint32(e[44:], uint32(r.headerCount))
		le.PutUint32(e[48:], uint32(r.sequence))
		le.PutUint32(e[52:], uint32(r.leaderEpoch))
		le.PutUint32(e[56:], uint32(r.epoch))
		le.PutUint32(e[60:], uint32(r.magic))
		le.PutUint32(e[64:], uint32(r.compression))
		le.PutUint32(e[68:], uint32(r.tsType))
		le.PutUint32(e[72:], uint32(r.flags))
		le.PutUint32(e[76:], uint32(r.control))
		le.PutUint32(e[80:], uint32(r.schemaSource))
		le.PutUint32(e[84:], uint32(r.schemaID))
		le.PutUint32(e[88:], uint32(r.schVe))
		le.PutUint32(e[92:], 0)
	}
	for j := range hdrs {
		h := &hdrs[j]
		e := b[hdrsOff+j*TableHeaderStride : hdrsOff+(j+1)*TableHeaderStride]
		le.PutUint32(e[0:], uint32(rebase(h.kOff, h.kLen, base)))
		le.PutUint32(e[4:], uint32(h.kLen))
		le.PutUint32(e[8:], uint32(rebase(h.vOff, h.vLen, base)))
		le.PutUint32(e[12:], uint32(h.vLen))
	}
}

// rebase moves a span's offset by base; a null span (n == -1) has offset 0.
func rebase(off, n, base int32) int32 {
	if n < 0 {
		return 0
	}
	return base + off
}

// RecordsEncode is kw_records_encode, appended to dst.
func RecordsEncode(dst []byte, json []byte, compression int32) (out []byte, err error) {
	defer guard(&err)
	if compression < 0 || compression > int32(records.CompressionZstd) {
		return dst, newErr(StatusArg, "kwire: unknown compression "+decimal(compression))
	}
	s, err := recordsjson.ParseBatchSpec(json)
	if err != nil {
		return dst, classify(err)
	}
	out, err = s.Append(dst, records.Compression(compression))
	if err != nil {
		var he *recordsjson.LegacyHeadersError
		if errors.As(err, &he) {
			p := "$.records[" + strconv.Itoa(he.Record) + "].headers"
			return dst, &Error{Status: StatusArg, Text: he.Error(), Message: "records", Version: -1, Path: p, Offset: -1}
		}
		return dst, fromRecords(err, true)
	}
	return out, nil
}
