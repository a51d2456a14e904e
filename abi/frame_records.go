package abi

import (
	"encoding/binary"
	"errors"
	"strconv"
	"sync"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/codec/records/recordsjson"
	"github.com/kwire/kwire/codec/transcode"
)

// Record table layout 2 (kw_decode_*_frame_records): layout 1's header fields at the
// same offsets, then the frame's JSON. The bytes of keys, values and headers come right
// after the header, in the order the records were decoded, so each is copied once; the
// record and header entries follow them.
const (
	TableLayoutFrame     = 2
	TableHeaderSizeFrame = 48
)

// frameTable builds a layout-2 table while a frame is transcoded: the records hook
// appends record bytes straight into out (after the header) and remembers the entries.
type frameTable struct {
	out     []byte // the table being built: header, then data
	start   int    // offset of the table in out
	recs    []tableRec
	hdrs    []span2
	opts    records.Options
	dec     *records.Decoder
	json    []byte
	recErr  error
	framer  transcode.Framer
	hookErr *Error
}

var frameTables = sync.Pool{New: func() any {
	t := new(frameTable)
	t.framer.Decode.Records = t.hook
	return t
}}

// addBytes copies b into the data area; it returns the offset from the table start,
// or (0, -1) for nil.
func (t *frameTable) addBytes(b []byte) (int32, int32) {
	if b == nil {
		return 0, -1
	}
	off := len(t.out) - t.start
	t.out = append(t.out, b...)
	return int32(off), int32(len(b))
}

// hook decodes one records field into the table and writes its reference.
func (t *frameTable) hook(dst []byte, recs []byte, path func() string) ([]byte, error) {
	first := len(t.recs)
	skipped, err := t.dec.ForEachMessage(recs, "", 0, func(m *records.Message) error {
		t.recs, t.hdrs = appendRecord(m, t.addBytes, t.recs, t.hdrs)
		return nil
	})
	if err != nil {
		e := fromRecords(err, false)
		e.Path = path() + " (" + e.Path + ")"
		e.Text = "kwire: " + path() + ": " + err.Error()
		t.hookErr = e
		return dst, e
	}
	if len(t.out)-t.start > MaxAlloc {
		t.hookErr = newErr(StatusTooLarge, "kwire: record table exceeds the output limit of "+decimal(MaxAlloc)+" bytes")
		return dst, t.hookErr
	}
	dst = append(dst, `{"firstRecord":`...)
	dst = strconv.AppendInt(dst, int64(first), 10)
	dst = append(dst, `,"recordCount":`...)
	dst = strconv.AppendInt(dst, int64(len(t.recs)-first), 10)
	dst = append(dst, `,"skippedBytes":`...)
	dst = strconv.AppendInt(dst, int64(skipped), 10)
	dst = append(dst, `,"size":`...)
	dst = strconv.AppendInt(dst, int64(len(recs)), 10)
	return append(dst, '}'), nil
}

func (t *frameTable) reset() {
	t.out, t.json, t.recs, t.hdrs, t.hookErr = nil, t.json[:0], t.recs[:0], t.hdrs[:0], nil
	if cap(t.json) > 4<<20 {
		t.json = nil
	}
}

// decodeFrameRecords runs one frame decode with records going into a layout-2 table.
func decodeFrameRecords(dst []byte, frame []byte, flags, maxDecompressed int32, decode func(t *frameTable) ([]byte, error)) (out []byte, err error) {
	defer guard(&err)
	opts, e := recordOptions(flags, maxDecompressed)
	if e != nil {
		return dst, e
	}
	t := frameTables.Get().(*frameTable)
	d := decoders.Get().(*records.Decoder)
	d.Options = opts
	t.dec = d
	defer func() {
		d.Options = records.Options{}
		decoders.Put(d)
		t.dec = nil
		t.reset()
		frameTables.Put(t)
	}()
	// Record bytes are at most the frame's size (more only when decompressed).
	t.start = len(dst)
	t.out = reserve(dst, TableHeaderSizeFrame+len(frame)+len(frame)/8+256)
	t.out = append(t.out, make([]byte, TableHeaderSizeFrame)...)
	json, err := decode(t)
	if t.hookErr != nil {
		return dst, t.hookErr
	}
	if err != nil {
		return dst, classify(err)
	}
	t.json = json
	return t.finish()
}

// finish appends the entries and the JSON and fills in the header.
func (t *frameTable) finish() ([]byte, error) {
	for (len(t.out)-t.start)%8 != 0 {
		t.out = append(t.out, 0)
	}
	recsOff := len(t.out) - t.start
	hdrsOff := recsOff + len(t.recs)*TableRecordStride
	jsonOff := hdrsOff + len(t.hdrs)*TableHeaderStride
	total := jsonOff + len(t.json)
	if total > MaxAlloc {
		return nil, newErr(StatusTooLarge, "kwire: record table of "+decimal(total)+" bytes exceeds the output limit")
	}
	t.out = append(t.out, make([]byte, jsonOff-recsOff)...)
	t.out = append(t.out, t.json...)
	b := t.out[t.start:]
	// Skipped bytes are per records field, in the JSON references.
	writeTableHeader(b, TableLayoutFrame, len(t.recs), recsOff, len(t.hdrs), hdrsOff, 0, total)
	binary.LittleEndian.PutUint32(b[40:], uint32(jsonOff))
	binary.LittleEndian.PutUint32(b[44:], uint32(len(t.json)))
	writeEntries(b, recsOff, hdrsOff, t.recs, t.hdrs, 0)
	out := t.out
	t.out = nil
	return out, nil
}

// DecodeRequestFrameRecords is kw_decode_request_frame_records.
func DecodeRequestFrameRecords(dst []byte, frame []byte, flags, maxDecompressed int32) ([]byte, error) {
	return decodeFrameRecords(dst, frame, flags, maxDecompressed, func(t *frameTable) ([]byte, error) {
		return t.framer.AppendRequestFrameJSON(t.json[:0], frame)
	})
}

// DecodeResponseFrameRecords is kw_decode_response_frame_records.
func DecodeResponseFrameRecords(dst []byte, frame []byte, apiKey, version, flags, maxDecompressed int32) ([]byte, error) {
	if e := checkAPI(apiKey, version, false); e != nil {
		return dst, e
	}
	return decodeFrameRecords(dst, frame, flags, maxDecompressed, func(t *frameTable) ([]byte, error) {
		return t.framer.AppendResponseFrameJSON(t.json[:0], frame, int16(apiKey), int16(version))
	})
}

// tableReader reads records back from a record table a host passes in (layout 1 or 2).
type tableReader struct {
	b                        []byte
	count, stride, recsOff   int
	hcount, hstride, hdrsOff int
}

func readTable(b []byte) (*tableReader, error) {
	if len(b) < 40 || string(b[:4]) != TableMagic {
		return nil, errors.New(`not a record table (want the magic "KWRT" and a 40-byte header)`)
	}
	le := binary.LittleEndian
	get := func(at int) int { return int(int32(le.Uint32(b[at:]))) }
	t := &tableReader{b: b, count: get(8), stride: get(12), recsOff: get(16), hcount: get(20), hstride: get(24), hdrsOff: get(28)}
	if layout := get(4); layout < 1 {
		return nil, errors.New("record table layout " + strconv.Itoa(layout) + " is unknown")
	}
	if t.count < 0 || t.stride < TableRecordStride || t.recsOff < 0 || t.hcount < 0 || t.hstride < TableHeaderStride || t.hdrsOff < 0 ||
		t.recsOff > len(b) || t.count > (len(b)-t.recsOff)/t.stride || t.hdrsOff > len(b) || t.hcount > (len(b)-t.hdrsOff)/t.hstride {
		return nil, errors.New("record table header does not fit the buffer")
	}
	return t, nil
}

// span returns the bytes at (off, n) of the table: nil for n == -1.
func (t *tableReader) span(off, n int, what string) ([]byte, error) {
	if n == -1 {
		return nil, nil
	}
	if n < 0 || off < 0 || off > len(t.b) || n > len(t.b)-off {
		return nil, errors.New(what + " lies outside the record table")
	}
	return t.b[off : off+n : off+n], nil
}

// records returns records first .. first+count-1 of the table.
func (t *tableReader) records(first, count int) ([]records.Record, error) {
	if first > t.count || count > t.count-first {
		return nil, errors.New("records " + strconv.Itoa(first) + ".." + strconv.Itoa(first+count-1) + " are not in the table (" + strconv.Itoa(t.count) + " records)")
	}
	le := binary.LittleEndian
	get := func(at int) int { return int(int32(le.Uint32(t.b[at:]))) }
	out := make([]records.Record, count)
	for i := range out {
		at := t.recsOff + (first+i)*t.stride
		r := &out[i]
		r.Timestamp = int64(le.Uint64(t.b[at+8:]))
		var err error
		if r.Key, err = t.span(get(at+24), get(at+28), "a key"); err != nil {
			return nil, err
		}
		if r.Value, err = t.span(get(at+32), get(at+36), "a value"); err != nil {
			return nil, err
		}
		fh, hc := get(at+40), get(at+44)
		if hc < 0 || fh < 0 || fh > t.hcount || hc > t.hcount-fh {
			return nil, errors.New("a record's headers are not in the table")
		}
		for j := 0; j < hc; j++ {
			h := t.hdrsOff + (fh+j)*t.hstride
			k, err := t.span(get(h), get(h+4), "a header key")
			if err != nil {
				return nil, err
			}
			if k == nil {
				return nil, errors.New("a header key is null")
			}
			v, err := t.span(get(h+8), get(h+12), "a header value")
			if err != nil {
				return nil, err
			}
			r.Headers = append(r.Headers, records.Header{Key: k, Value: v})
		}
	}
	return out, nil
}

// EncodeRequestFrameRecords is kw_encode_request_frame_records.
func EncodeRequestFrameRecords(dst []byte, json []byte, table []byte) (out []byte, err error) {
	defer guard(&err)
	var tr *tableReader
	if len(table) > 0 {
		if tr, err = readTable(table); err != nil {
			return dst, newErr(StatusArg, "kwire: "+err.Error())
		}
	}
	f := transcode.Framer{Encode: transcode.EncodeOptions{Records: func(obj []byte) ([]byte, error) {
		ref, err := recordsjson.ParseTableRef(obj)
		if err != nil {
			var je *codec.JSONError
			if errors.As(err, &je) {
				return nil, errors.New(je.Path + ": " + je.Cause())
			}
			return nil, err
		}
		if tr == nil {
			return nil, errors.New("a records reference needs a record table, and none was given")
		}
		recs, err := tr.records(ref.FirstRecord, ref.RecordCount)
		if err != nil {
			return nil, err
		}
		ref.Records = recs
		b, err := ref.Append(nil, ref.Compression)
		if err != nil {
			return nil, err
		}
		return b, nil
	}}}
	out, err = f.AppendRequestFrame(reserve(dst, len(json)/2+len(table)+64), json)
	if err != nil {
		return dst, classify(err)
	}
	return out, nil
}
