package abi

import (
	"encoding/binary"
	"errors"
	"strconv"
	"sync"
	"unsafe"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/internal/recordscan"
	"github.com/kwire/kwire/internal/recordsjson"
	"github.com/kwire/kwire/internal/transcode"
)

// Record table layouts 2 and 3 (kw_decode_*_frame_records): layout 1's header fields
// at the same offsets, then the frame's JSON. The data area after the header holds the
// records sections of batches (decompressed when they were compressed), each copied
// once; the record and header entries follow it. Layout 3 (KW_RECORDS_INPUT_SPANS)
// copies no record that was stored uncompressed: such a record's entry says so
// (TableSourceInput) and its spans index the input frame.
const (
	TableLayoutFrame     = 2
	TableLayoutInput     = 3
	TableHeaderSizeFrame = 48
)

// Where a record's spans (key, value, its headers) point, at +TableRecSource of its entry.
const (
	TableRecSource   = 92
	TableSourceTable = 0 // the table
	TableSourceInput = 1 // the input frame (layout 3)
)

// frameTable builds a layout-2 or layout-3 table while a frame is transcoded: the
// records hook scans each batch into entries (ents, hents) and copies into out only
// what must be copied.
type frameTable struct {
	out   []byte // the table being built: header, then the data area
	start int    // offset of the table in out
	// the records so far, written by finish as columns (layout 4, columns set) or as
	// entries (layouts 2 and 3)
	recordColumns
	columns    bool
	spans      []int32 // one batch's record spans (recordscan.Scan)
	hspans     []int32 // one batch's header spans
	frame      []byte  // the input frame (its offsets are layout 3's input spans)
	inputSpans bool
	// produce is the version of the Produce request being decoded, -1 for any other
	// frame: its records fields get Kafka's validateRecords verdict.
	produce int16
	dec     *records.Decoder
	json    []byte
	framer  transcode.Framer
	hookErr *Error
	// inflated holds the batches the host decompressed (kw_decode_frame_records_inflated),
	// read through decompressedFn, the method value made once.
	inflated       []inflatedBatch
	decompressedFn func([]byte) ([]byte, bool)
	// hostCodecs (bit c for codec c) are the codecs the host decompresses itself
	// (FlagHost*); once a batch of one is found the call only lists them (listing) into
	// list, nlist entries, and returns that list instead of a table.
	hostCodecs uint8
	listing    bool
	list       []byte
	nlist      int
}

var frameTables = sync.Pool{New: func() any {
	t := new(frameTable)
	t.framer.Decode.Records = t.hook
	t.decompressedFn = t.decompressed
	return t
}}

// hook decodes one records field into the table and writes its reference.
func (t *frameTable) hook(dst []byte, recs []byte, path func() string) ([]byte, error) {
	if t.hostCodecs != 0 {
		if t.hostBatches(recs) {
			t.listing = true
		}
		if t.listing {
			return append(dst, "null"...), nil // the output is the batch list, not this JSON
		}
	}
	first := t.nrec
	skipped, err := t.addField(recs)
	if err != nil {
		e := fromRecords(err, false)
		// Offsets count from the start of the frame (but inside decompressed data).
		var re *records.Error
		if at := offsetIn(t.frame, recs); at >= 0 && errors.As(err, &re) && !re.Decompressed {
			e.Offset += at
		}
		e.Path = path() + " (" + e.Path + ")"
		e.Text = "kwire: " + path() + ": " + recordsText(err, e.Offset)
		t.hookErr = e
		return dst, e
	}
	if len(t.out)-t.start+t.entryBytes(t.columns) > MaxAlloc {
		t.hookErr = newErr(StatusTooLarge, "kwire: record table exceeds the output limit of "+decimal(MaxAlloc)+" bytes")
		return dst, t.hookErr
	}
	dst = append(dst, `{"firstRecord":`...)
	dst = strconv.AppendInt(dst, int64(first), 10)
	dst = append(dst, `,"recordCount":`...)
	dst = strconv.AppendInt(dst, int64(t.nrec-first), 10)
	dst = append(dst, `,"skippedBytes":`...)
	dst = strconv.AppendInt(dst, int64(skipped), 10)
	dst = append(dst, `,"size":`...)
	dst = strconv.AppendInt(dst, int64(len(recs)), 10)
	if t.produce >= 0 {
		if v := records.ValidateProduceRecords(t.produce, recs); !v.OK() {
			dst = appendVerdict(dst, v)
		}
	}
	return append(dst, '}'), nil
}

// appendVerdict appends the "invalid" key of a records reference: Kafka's verdict on a
// Produce partition's records (records.ValidateProduceRecords).
func appendVerdict(dst []byte, v records.ProduceVerdict) []byte {
	dst = append(dst, `,"invalid":{"errorCode":`...)
	dst = strconv.AppendInt(dst, int64(v.Code), 10)
	dst = append(dst, `,"error":`...)
	dst = recordsjson.AppendString(dst, v.Code.String())
	dst = append(dst, `,"reason":`...)
	dst = recordsjson.AppendString(dst, v.Reason)
	return append(dst, '}')
}

// recordsText is a records error's text with its byte offset counted from the frame:
// the records package counts from the records field.
func recordsText(err error, frameOffset int) string {
	var re *records.Error
	if !errors.As(err, &re) || re.Decompressed {
		return err.Error()
	}
	saved := re.Offset
	re.Offset = frameOffset
	text := err.Error()
	re.Offset = saved
	return text
}

// addField adds the records of one records field: batches through the scan, anything
// else (legacy messages, control batches, whatever the scan refuses) through the
// Decoder. An error is always the Decoder's, for the whole field, so that it names the
// same batch, record, field and offset as kw_records_decode_json.
func (t *frameTable) addField(recs []byte) (skipped int, err error) {
	inOff := -1
	if t.inputSpans {
		inOff = offsetIn(t.frame, recs)
	}
	for pos := 0; pos < len(recs); {
		size, magic, err := records.PeekEntry(recs[pos:])
		if err != nil {
			return 0, t.explain(recs)
		}
		if size == 0 {
			return len(recs) - pos, nil
		}
		entry := recs[pos : pos+size]
		at := -1
		if inOff >= 0 {
			at = inOff + pos
		}
		if magic != 2 || readerOnly || !t.scanBatch(entry, at) {
			if _, err := t.dec.ForEachMessage(entry, "", 0, t.addMessage); err != nil {
				return 0, t.explain(recs)
			}
		}
		pos += size
	}
	return 0, nil
}

// readerOnly turns the scan off (tests compare the two paths).
var readerOnly = false

// explain reads a records field with the Decoder for its error.
func (t *frameTable) explain(recs []byte) error {
	_, err := t.dec.ForEachMessage(recs, "", 0, func(*records.Message) error { return nil })
	if err == nil {
		err = errors.New("kwire: internal error: the record scan refused records the reader accepts")
	}
	return err
}

// offsetIn returns the offset of sub in b when sub lies inside b, else -1.
func offsetIn(b, sub []byte) int {
	if len(sub) == 0 || len(b) == 0 {
		return -1
	}
	d := uintptr(unsafe.Pointer(unsafe.SliceData(sub))) - uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if d > uintptr(len(b)) || uintptr(len(sub)) > uintptr(len(b))-d || d > 1<<31-1 {
		return -1
	}
	return int(d)
}

// scanBatch adds the records of one magic 2 batch through recordscan.Scan and
// reports whether it could; on false nothing was added. at is the batch's offset in
// the input frame when its uncompressed records may stay there (layout 3), else -1.
func (t *frameTable) scanBatch(entry []byte, at int) bool {
	b, _, err := records.ParseBatch(entry, t.dec.SkipCRC)
	if err != nil || b.IsControl() {
		return false
	}
	data, decompressed, err := t.dec.BatchData(&b)
	if err != nil {
		return false
	}
	n := int(b.NumRecords) // ParseBatch and BatchData bound it by the data's size
	if cap(t.spans) < n*recordscan.SpanRecordWords {
		t.spans = make([]int32, n*recordscan.SpanRecordWords)
	}
	spans := t.spans[:n*recordscan.SpanRecordWords]
	if len(t.hspans) < 64 {
		t.hspans = make([]int32, 64*recordscan.SpanHeaderWords)
	}
	pos, nrec, nhdr := 0, 0, 0
	for nrec < n {
		next, k, h, ok := recordscan.Scan(data, pos, spans[nrec*recordscan.SpanRecordWords:], t.hspans[nhdr*recordscan.SpanHeaderWords:])
		if !ok {
			return false
		}
		pos, nrec, nhdr = next, nrec+k, nhdr+h
		if nrec < n {
			if pos >= len(data) {
				return false // fewer records than the batch says
			}
			more := make([]int32, 2*len(t.hspans))
			copy(more, t.hspans[:nhdr*recordscan.SpanHeaderWords])
			t.hspans = more
		}
	}
	if pos != len(data) {
		return false
	}
	source, base := int32(TableSourceTable), 0
	if at >= 0 && !decompressed {
		source, base = TableSourceInput, at+records.BatchHeaderSize
	} else {
		base = len(t.out) - t.start
		t.out = append(t.out, data...)
	}
	t.writeBatch(&b, data, spans, t.hspans[:nhdr*recordscan.SpanHeaderWords], int32(base), source)
	return true
}

// addMessage adds one record the Decoder read, its bytes copied into the data area.
func (t *frameTable) addMessage(m *records.Message) error {
	t.addDecoded(m, t.addBytes)
	return nil
}

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

// grow extends b by n zeroed bytes, reusing its capacity.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), 2*cap(b)+n)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

func (t *frameTable) reset() {
	t.out, t.json, t.hookErr, t.frame = nil, t.json[:0], nil, nil
	t.hostCodecs, t.listing, t.list, t.nlist = 0, false, t.list[:0], 0
	t.recordColumns.reset()
	t.columns = false
	if cap(t.json) > 4<<20 {
		t.json = nil
	}
	if cap(t.spans) > 1<<20 {
		t.spans = nil
	}
	if cap(t.hspans) > 1<<20 {
		t.hspans = nil
	}
}

// decodeFrameRecords runs one frame decode with records going into a layout-2 or
// layout-3 table.
func decodeFrameRecords(dst []byte, frame []byte, flags, maxDecompressed int32, inflated []inflatedBatch, decode func(t *frameTable) ([]byte, error)) (out []byte, err error) {
	defer guard(&err)
	opts, e := recordOptions(flags&^(FlagInputSpans|FlagColumns|flagsHost), maxDecompressed)
	if e != nil {
		return dst, e
	}
	t := frameTables.Get().(*frameTable)
	if inflated == nil {
		t.hostCodecs = uint8(flags & flagsHost >> 7) // bit c for codec c
	}
	d := decoders.Get().(*records.Decoder)
	d.Options = opts
	t.dec = d
	t.frame = frame
	t.produce = -1
	t.inputSpans = flags&FlagInputSpans != 0
	t.columns = flags&FlagColumns != 0
	t.rows = !t.columns
	if len(inflated) > 0 {
		t.inflated = inflated
		d.Options.Decompressed = t.decompressedFn
	}
	defer func() {
		t.inflated = nil
		d.Options = records.Options{}
		decoders.Put(d)
		t.dec = nil
		t.reset()
		frameTables.Put(t)
	}()
	t.start = len(dst)
	if t.inputSpans {
		// Uncompressed records stay in the frame: the table holds decompressed bytes only,
		// and grows when it must.
		t.out = reserve(dst, TableHeaderSizeFrame+len(frame)/8+256)
	} else {
		// Record bytes are at most the frame's size (more only when decompressed).
		t.out = reserve(dst, TableHeaderSizeFrame+len(frame)+len(frame)/8+256)
	}
	if t.columns {
		t.out = grow(t.out, TableHeaderSizeColumns)
	} else {
		t.out = grow(t.out, TableHeaderSizeFrame)
	}
	json, err := decode(t)
	if t.listing && (err != nil || t.hookErr != nil) {
		// Records fields after the first listed batch were not read: the one-call decode
		// says what fails first.
		return decodeFrameRecords(dst, frame, flags&^flagsHost, maxDecompressed, nil, decode)
	}
	if t.hookErr != nil {
		return dst, t.hookErr
	}
	if err != nil {
		return dst, classify(err)
	}
	if t.listing {
		out := t.batchList(t.out[:t.start])
		t.out = nil
		return out, nil
	}
	t.json = json
	return t.finish()
}

// finish appends the entries (or the columns) and the JSON and fills in the header.
func (t *frameTable) finish() ([]byte, error) {
	t.out = pad8(t.out, t.start)
	if total := len(t.out) - t.start + t.entryBytes(t.columns) + 8*8 + len(t.json); total > MaxAlloc {
		return nil, newErr(StatusTooLarge, "kwire: record table of "+decimal(total)+" bytes exceeds the output limit")
	}
	layout, recsOff := TableLayoutFrame, len(t.out)-t.start
	if t.columns {
		layout = TableLayoutColumns
		t.out = t.appendColumns(t.out, t.start)
		recsOff = int(binary.LittleEndian.Uint32(t.out[t.start+ColOffsets:]))
	} else {
		if t.inputSpans {
			layout = TableLayoutInput
		}
		t.out = t.appendEntries(t.out)
	}
	hdrsOff := len(t.out) - t.start
	t.out = append(t.out, t.hents...)
	jsonOff := len(t.out) - t.start
	t.out = append(t.out, t.json...)
	total := len(t.out) - t.start
	b := t.out[t.start:]
	// Skipped bytes are per records field, in the JSON references.
	writeTableHeader(b, layout, t.nrec, recsOff, t.nhdr, hdrsOff, 0, total)
	if t.columns {
		binary.LittleEndian.PutUint32(b[12:], 0) // record_stride: no record entries
	}
	binary.LittleEndian.PutUint32(b[40:], uint32(jsonOff))
	binary.LittleEndian.PutUint32(b[44:], uint32(len(t.json)))
	out := t.out
	t.out = nil
	return out, nil
}

// DecodeRequestFrameRecords is kw_decode_request_frame_records.
func DecodeRequestFrameRecords(dst []byte, frame []byte, flags, maxDecompressed int32) ([]byte, error) {
	return decodeRequestFrameRecords(dst, frame, flags, maxDecompressed, nil)
}

func decodeRequestFrameRecords(dst []byte, frame []byte, flags, maxDecompressed int32, inflated []inflatedBatch) ([]byte, error) {
	return decodeFrameRecords(dst, frame, flags, maxDecompressed, inflated, func(t *frameTable) ([]byte, error) {
		if len(frame) >= 8 && binary.BigEndian.Uint16(frame[4:]) == 0 { // a Produce request
			t.produce = int16(binary.BigEndian.Uint16(frame[6:]))
		}
		return t.framer.AppendRequestFrameJSON(t.json[:0], frame)
	})
}

// DecodeResponseFrameRecords is kw_decode_response_frame_records.
func DecodeResponseFrameRecords(dst []byte, frame []byte, apiKey, version, flags, maxDecompressed int32) ([]byte, error) {
	return decodeResponseFrameRecords(dst, frame, apiKey, version, flags, maxDecompressed, nil)
}

func decodeResponseFrameRecords(dst []byte, frame []byte, apiKey, version, flags, maxDecompressed int32, inflated []inflatedBatch) ([]byte, error) {
	if e := checkAPI(apiKey, version, false); e != nil {
		return dst, e
	}
	out, err := decodeFrameRecords(dst, frame, flags, maxDecompressed, inflated, func(t *frameTable) ([]byte, error) {
		return t.framer.AppendResponseFrameJSON(t.json[:0], frame, int16(apiKey), int16(version))
	})
	// A records field misread at a wrong version fails in the records hook, past the
	// transcoder's own hint: look for the version here too.
	if e, ok := err.(*Error); ok && e.Hint == nil && e.Status == StatusDecode {
		var f transcode.Framer
		if h := f.ResponseVersionHint(frame, int16(apiKey), int16(version)); h != nil {
			e.Hint = h
			e.Text += "; " + h.String()
		}
	}
	return out, err
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
	} else if layout == TableLayoutColumns {
		return nil, errors.New("a layout-4 record table (columns) is not taken here: decode without KW_RECORDS_COLUMNS for a table to encode from")
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
		if get(at+TableRecSource) != TableSourceTable {
			return nil, errors.New("record " + strconv.Itoa(first+i) + " points into the frame its table was decoded from (a layout-3 table); encode from a table that holds its bytes")
		}
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
