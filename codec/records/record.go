package records

import (
	"math"

	"github.com/kwire/kwire/internal/wire"
)

// Header is one record header. Key and Value alias the decoded input (or the
// decoder's decompression buffer). Value is nil for a null value; Kafka forbids
// null header keys, so Key is never nil after decoding (it may be empty).
type Header struct {
	Key   []byte
	Value []byte
}

// Record is one record of a magic 2 batch. Key and Value are nil when null and
// non-nil (possibly empty) otherwise. Headers keep wire order and duplicates.
type Record struct {
	Attributes     int8
	TimestampDelta int64
	OffsetDelta    int32
	Key            []byte
	Value          []byte
	Headers        []Header

	// Offset and Timestamp are computed by the decoder from the batch: the
	// offset is BaseOffset+OffsetDelta; the timestamp is the batch's
	// MaxTimestamp for LogAppendTime batches, else BaseTimestamp+TimestampDelta.
	// The encoder ignores them.
	Offset    int64
	Timestamp int64

	hdrStart, hdrEnd int32 // used while materialising
}

// Options tune decoding. The zero value is the default.
type Options struct {
	// MaxDecompressedSize caps what one compressed batch or legacy wrapper may
	// decompress to; 0 means DefaultMaxDecompressedSize. Past the cap decoding
	// fails with ErrTooLarge, having held at most about the cap in memory.
	MaxDecompressedSize int
	// SkipCRC turns off checksum verification (CRC32C for magic 2, CRC32 for
	// legacy messages).
	SkipCRC bool
	// Decompressed, when set, is asked first for the records section of each compressed
	// magic-2 batch (after its checksum is checked): it returns the section's
	// decompressed bytes and true when the caller decompressed it already (a host's own
	// zlib, say), or false to have the decoder decompress it. Bytes it returns are read
	// as the decoder's own would be; MaxDecompressedSize applies to them too. Legacy
	// wrappers are always decompressed by the decoder.
	Decompressed func(compressed []byte) ([]byte, bool)
}

func (o *Options) limit() int {
	if o.MaxDecompressedSize > 0 {
		return o.MaxDecompressedSize
	}
	return DefaultMaxDecompressedSize
}

// Decoder decodes record batches. It owns one decompression buffer, reused from
// batch to batch: records of a compressed batch alias it and stay valid only
// until the decoder decodes the next compressed batch. Records of an
// uncompressed batch alias the caller's input. A Decoder is not safe for
// concurrent use; its zero value is ready to use.
type Decoder struct {
	Options
	buf  []byte
	hdrs []Header
	it   RecordIter
	msg  Message
}

// NewDecoder returns a decoder with the given options.
func NewDecoder(opts Options) *Decoder { return &Decoder{Options: opts} }

// RecordIter walks the records of one batch lazily, without materialising them.
type RecordIter struct {
	base         int64
	baseTS       int64
	maxTS        int64
	logAppend    bool
	data         []byte
	decompressed bool
	dataOff      int
	pos          int
	last         int // where the record Next last read starts
	i, n         int
	hdrs         []Header
	err          error
	owner        *Decoder
}

// Records decompresses b if needed and returns an iterator over its records.
// The iterator and the headers it yields are reused: a Record's Headers are
// valid until the next call to Next.
func (d *Decoder) Records(b *Batch) (*RecordIter, error) {
	data, decompressed, err := d.recordsData(b)
	if err != nil {
		return nil, err
	}
	it := &d.it
	*it = RecordIter{
		base:         b.BaseOffset,
		baseTS:       b.BaseTimestamp,
		maxTS:        b.MaxTimestamp,
		logAppend:    b.Attributes&AttrLogAppendTime != 0,
		data:         data,
		decompressed: decompressed,
		n:            int(b.NumRecords),
		hdrs:         d.hdrs[:0],
		owner:        d,
	}
	if !decompressed {
		it.dataOff = BatchHeaderSize
	}
	return it, nil
}

// BatchData returns the records section of b ready to read: b.Records itself when the
// batch is uncompressed, else the decompressed bytes in the decoder's buffer (valid
// until the decoder decompresses again). Its errors are those of Records.
func (d *Decoder) BatchData(b *Batch) (data []byte, decompressed bool, err error) {
	return d.recordsData(b)
}

func (d *Decoder) recordsData(b *Batch) ([]byte, bool, error) {
	c := b.Compression()
	if c == CompressionNone {
		return b.Records, false, nil
	}
	limit := d.limit()
	if d.Decompressed != nil && c <= CompressionZstd {
		if out, ok := d.Decompressed(b.Records); ok {
			if len(out) > limit {
				return nil, true, newErr(b.BaseOffset, -1, "records", BatchHeaderSize, detail(ErrTooLarge, "more than %d bytes", limit))
			}
			return checkCount(b, out)
		}
	}
	out, err := decompress(d.buf, c, b.Records, limit, 2)
	if cap(out) > cap(d.buf) {
		d.buf = out[:0]
	}
	if err != nil {
		return nil, true, newErr(b.BaseOffset, -1, "records", BatchHeaderSize, err)
	}
	return checkCount(b, out)
}

// checkCount returns a batch's decompressed records section after checking that its
// record count can fit in it.
func checkCount(b *Batch, out []byte) ([]byte, bool, error) {
	if int64(b.NumRecords)*minRecordSize > int64(len(out)) {
		return nil, true, newErr(b.BaseOffset, -1, "recordCount", offNumRecords, detail(ErrCorrupt, "%d records cannot fit in %d decompressed bytes", b.NumRecords, len(out)))
	}
	return out, true, nil
}

// Next decodes the next record into r and reports whether there was one. At the
// end, or on error, it returns false; Err tells which.
func (it *RecordIter) Next(r *Record) bool {
	if it.err != nil {
		return false
	}
	if it.i >= it.n {
		if it.pos != len(it.data) && it.data != nil {
			it.err = it.fail(it.n, "records", it.pos, detail(ErrCorrupt, "%d bytes after the last of %d records", len(it.data)-it.pos, it.n))
			it.data = nil
		}
		return false
	}
	it.last = it.pos
	pos, hdrs, field, at, cause := decodeRecord(it.data, it.pos, r, it.hdrs[:0])
	it.hdrs = hdrs
	if cause != nil {
		it.err = it.fail(it.i, field, at, cause)
		return false
	}
	it.pos = pos
	r.Offset = it.base + int64(r.OffsetDelta)
	if it.logAppend {
		r.Timestamp = it.maxTS
	} else {
		r.Timestamp = it.baseTS + r.TimestampDelta
	}
	it.i++
	if it.i == it.n && it.owner != nil && cap(it.hdrs) > cap(it.owner.hdrs) {
		it.owner.hdrs = it.hdrs[:0]
	}
	return true
}

// Err returns the error that stopped iteration, if any.
func (it *RecordIter) Err() error { return it.err }

// Index is the index of the next record.
func (it *RecordIter) Index() int { return it.i }

// Len is the number of records in the batch.
func (it *RecordIter) Len() int { return it.n }

func (it *RecordIter) fail(i int, field string, at int, cause error) error {
	e := newErr(it.base, i, field, at+it.dataOff, cause)
	e.Decompressed = it.decompressed
	return e
}

// decodeRecord reads one record at data[pos:]. On failure it returns the field,
// the byte offset and the cause.
func decodeRecord(data []byte, pos int, r *Record, hdrs []Header) (int, []Header, string, int, error) {
	start := pos
	length, p, ok := wire.Varint(data, pos)
	if !ok {
		return pos, hdrs, "length", start, truncOrLong(data, pos)
	}
	if length < minRecordSize-1 || int64(length) > int64(len(data)-p) {
		if length >= 0 && int64(length) > int64(len(data)-p) {
			return pos, hdrs, "length", start, detail(ErrTruncated, "record length %d, %d bytes left", length, len(data)-p)
		}
		return pos, hdrs, "length", start, detail(ErrCorrupt, "record length %d", length)
	}
	end := p + int(length)
	rec := data[:end]
	pos = p
	r.Attributes = int8(rec[pos])
	pos++
	if r.TimestampDelta, pos, ok = wire.Varlong(rec, pos); !ok {
		return pos, hdrs, "timestampDelta", pos, truncOrLong(rec, pos)
	}
	if r.OffsetDelta, pos, ok = wire.Varint(rec, pos); !ok {
		return pos, hdrs, "offsetDelta", pos, truncOrLong(rec, pos)
	}
	var at int
	var cause error
	at = pos
	if r.Key, pos, cause = readBytes(rec, pos); cause != nil {
		return pos, hdrs, "key", at, cause
	}
	at = pos
	if r.Value, pos, cause = readBytes(rec, pos); cause != nil {
		return pos, hdrs, "value", at, cause
	}
	at = pos
	var nh int32
	if nh, pos, ok = wire.Varint(rec, pos); !ok {
		return pos, hdrs, "headers", at, truncOrLong(rec, pos)
	}
	if nh < 0 {
		return pos, hdrs, "headers", at, detail(ErrCorrupt, "negative header count %d", nh)
	}
	if int64(nh)*2 > int64(end-pos) {
		return pos, hdrs, "headers", at, detail(ErrCorrupt, "%d headers cannot fit in %d bytes", nh, end-pos)
	}
	first := len(hdrs)
	for h := 0; h < int(nh); h++ {
		at = pos
		var kl int32
		if kl, pos, ok = wire.Varint(rec, pos); !ok {
			return pos, hdrs, headerField(h, "key"), at, truncOrLong(rec, pos)
		}
		if kl < 0 {
			return pos, hdrs, headerField(h, "key"), at, detail(ErrCorrupt, "null header key (length %d)", kl)
		}
		if int64(kl) > int64(end-pos) {
			return pos, hdrs, headerField(h, "key"), at, detail(ErrTruncated, "header key length %d, %d bytes left", kl, end-pos)
		}
		k := rec[pos : pos+int(kl) : pos+int(kl)]
		pos += int(kl)
		at = pos
		var v []byte
		if v, pos, cause = readBytes(rec, pos); cause != nil {
			return pos, hdrs, headerField(h, "value"), at, cause
		}
		hdrs = append(hdrs, Header{Key: k, Value: v})
	}
	if pos != end {
		return pos, hdrs, "length", start, detail(ErrCorrupt, "record length %d, but its fields take %d", length, pos-p)
	}
	if nh == 0 {
		r.Headers = nil
	} else {
		r.Headers = hdrs[first:len(hdrs):len(hdrs)]
	}
	return pos, hdrs, "", 0, nil
}

// readBytes reads a varint length and that many bytes; a negative length is
// null, as Kafka reads it.
func readBytes(b []byte, pos int) ([]byte, int, error) {
	n, p, ok := wire.Varint(b, pos)
	if !ok {
		return nil, p, truncOrLong(b, pos)
	}
	if n < 0 {
		return nil, p, nil
	}
	if int64(n) > int64(len(b)-p) {
		return nil, p, detail(ErrTruncated, "length %d, %d bytes left", n, len(b)-p)
	}
	return b[p : p+int(n) : p+int(n)], p + int(n), nil
}

func truncOrLong(b []byte, pos int) error {
	for i := pos; i < len(b) && i < pos+10; i++ {
		if b[i] < 0x80 {
			return detail(ErrCorrupt, "varint too long")
		}
	}
	if len(b)-pos >= 10 {
		return detail(ErrCorrupt, "varint too long")
	}
	return detail(ErrTruncated, "varint runs past the end")
}

func headerField(i int, part string) string {
	return "headers[" + itoa(int64(i)) + "]." + part
}

// AppendRecords decodes every record of b and appends them to dst. Headers of
// all records share one allocation; keys, values and header data alias the
// input (or the decoder's buffer for a compressed batch).
func (d *Decoder) AppendRecords(dst []Record, b *Batch) ([]Record, error) {
	it, err := d.Records(b)
	if err != nil {
		return dst, err
	}
	if cap(dst)-len(dst) < it.n {
		nd := make([]Record, len(dst), len(dst)+it.n)
		copy(nd, dst)
		dst = nd
	}
	first := len(dst)
	var slab []Header
	for {
		var r Record
		if !it.Next(&r) {
			break
		}
		r.hdrStart = int32(len(slab))
		slab = append(slab, r.Headers...)
		r.hdrEnd = int32(len(slab))
		dst = append(dst, r)
	}
	if err := it.Err(); err != nil {
		return dst[:first], err
	}
	for i := first; i < len(dst); i++ {
		r := &dst[i]
		if r.hdrEnd > r.hdrStart {
			r.Headers = slab[r.hdrStart:r.hdrEnd:r.hdrEnd]
		} else {
			r.Headers = nil
		}
		r.hdrStart, r.hdrEnd = 0, 0
	}
	return dst, nil
}

// ---- encoding ----

// Encoder writes batches and legacy message sets. It keeps a scratch buffer for
// records before compression; codecs come from shared pools. Not safe for
// concurrent use; the zero value is ready.
type Encoder struct {
	// Level is the compression level on the codec's own scale (see
	// compression.*.level in Kafka): 0 is the codec's default.
	Level int
	// RawSnappy writes snappy as one raw block instead of the xerial framing
	// Java clients write. Kafka's reader takes both.
	RawSnappy bool
	scratch   []byte
}

func recordBodySize(r *Record) (int, bool) {
	n := 1 + sizeVarlong(r.TimestampDelta) + sizeVarint(r.OffsetDelta)
	n += bytesSize(r.Key) + bytesSize(r.Value)
	if len(r.Headers) > math.MaxInt32 {
		return 0, false
	}
	n += sizeVarint(int32(len(r.Headers)))
	for i := range r.Headers {
		h := &r.Headers[i]
		n += sizeVarint(int32(len(h.Key))) + len(h.Key) + bytesSize(h.Value)
	}
	return n, n <= math.MaxInt32 && n > 0
}

func bytesSize(b []byte) int {
	if b == nil {
		return 1
	}
	return sizeVarint(int32(len(b))) + len(b)
}

func appendBytesVar(dst, b []byte) []byte {
	if b == nil {
		return append(dst, 1) // zigzag(-1)
	}
	dst = appendVarint(dst, int32(len(b)))
	return append(dst, b...)
}

// AppendRecord appends one record in the magic 2 format.
func AppendRecord(dst []byte, r *Record) ([]byte, error) {
	for i := range r.Headers {
		if len(r.Headers[i].Key) > math.MaxInt32 || len(r.Headers[i].Value) > math.MaxInt32 {
			return dst, detail(ErrCorrupt, "header %d too large", i)
		}
	}
	if len(r.Key) > math.MaxInt32 || len(r.Value) > math.MaxInt32 {
		return dst, detail(ErrCorrupt, "record too large")
	}
	n, ok := recordBodySize(r)
	if !ok {
		return dst, detail(ErrCorrupt, "record too large")
	}
	dst = appendVarint(dst, int32(n))
	dst = append(dst, byte(r.Attributes))
	dst = appendVarlong(dst, r.TimestampDelta)
	dst = appendVarint(dst, r.OffsetDelta)
	dst = appendBytesVar(dst, r.Key)
	dst = appendBytesVar(dst, r.Value)
	dst = appendVarint(dst, int32(len(r.Headers)))
	for i := range r.Headers {
		h := &r.Headers[i]
		dst = appendVarint(dst, int32(len(h.Key)))
		dst = append(dst, h.Key...)
		dst = appendBytesVar(dst, h.Value)
	}
	return dst, nil
}

// AppendBatch appends a magic 2 batch holding recs to dst. Every header field is
// taken from b except Magic (2), NumRecords (len(recs)), Length and CRC, which
// are computed and stored back into b. The records are compressed with
// b.Compression(). Use SetDeltas first to derive the offset and timestamp
// fields from the records the way Kafka's producer does.
func (e *Encoder) AppendBatch(dst []byte, b *Batch, recs []Record) ([]byte, error) {
	c := b.Compression()
	if c > CompressionZstd {
		return dst, newErr(b.BaseOffset, -1, "attributes", offAttributes, detail(ErrUnsupported, "compression codec %d", int(c)))
	}
	if len(recs) > math.MaxInt32 {
		return dst, newErr(b.BaseOffset, -1, "recordCount", offNumRecords, detail(ErrCorrupt, "%d records", len(recs)))
	}
	start := len(dst)
	b.Magic = 2
	b.NumRecords = int32(len(recs))
	dst = b.AppendHeader(dst)
	var err error
	if c == CompressionNone {
		for i := range recs {
			if dst, err = AppendRecord(dst, &recs[i]); err != nil {
				return dst[:start], newErr(b.BaseOffset, i, "record", len(dst)-start, err)
			}
		}
	} else {
		s := e.scratch[:0]
		for i := range recs {
			if s, err = AppendRecord(s, &recs[i]); err != nil {
				return dst[:start], newErr(b.BaseOffset, i, "record", len(s), err)
			}
		}
		e.scratch = s[:0]
		if dst, err = compress(dst, c, s, e.Level, 2, e.RawSnappy); err != nil {
			return dst[:start], newErr(b.BaseOffset, -1, "records", BatchHeaderSize, err)
		}
	}
	size := len(dst) - start
	if size-LogOverhead > math.MaxInt32 {
		return dst[:start], newErr(b.BaseOffset, -1, "length", offLength, detail(ErrCorrupt, "batch of %d bytes", size))
	}
	b.Length = int32(size - LogOverhead)
	be.PutUint32(dst[start+offLength:], uint32(b.Length))
	b.CRC = CRC32C(dst[start+offAttributes:])
	be.PutUint32(dst[start+offCRC:], b.CRC)
	b.Records = dst[start+BatchHeaderSize : len(dst) : len(dst)]
	return dst, nil
}

// SetDeltas prepares a batch the way Kafka's producer does: record i gets
// OffsetDelta i and a TimestampDelta from its Timestamp relative to the first
// record's; the batch gets BaseTimestamp (the first timestamp), MaxTimestamp and
// LastOffsetDelta. With no records, BaseTimestamp and MaxTimestamp become -1.
func (b *Batch) SetDeltas(recs []Record) {
	if len(recs) == 0 {
		b.BaseTimestamp, b.MaxTimestamp, b.LastOffsetDelta = -1, -1, 0
		return
	}
	base := recs[0].Timestamp
	maxTS := base
	for i := range recs {
		r := &recs[i]
		r.OffsetDelta = int32(i)
		r.TimestampDelta = r.Timestamp - base
		if r.Timestamp > maxTS {
			maxTS = r.Timestamp
		}
	}
	b.BaseTimestamp = base
	b.MaxTimestamp = maxTS
	b.LastOffsetDelta = int32(len(recs) - 1)
}
