package abi

import (
	"encoding/binary"
	"unsafe"

	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/internal/recordscan"
)

// Record table layout 4 (KW_RECORDS_COLUMNS, ABI 1.4): the records' fields as columns,
// one contiguous array per field, so that a host reads a field of every record as one
// typed array (JavaScript) or one memoryview cast (Python) over the table, with no loop
// over records. Batch-level fields are held once per batch, in a batch table, and each
// record names its batch. The table header is layout 2's 48 bytes, then the offsets of
// the batch table and of each column (kwire.h, "layout 4"). Every array starts 8-aligned.
const (
	TableLayoutColumns     = 4
	TableHeaderSizeColumns = 96

	ColBatchCount   = 48 // i32: entries in the batch table
	ColBatchStride  = 52 // i32: bytes per batch entry (RBStride)
	ColBatches      = 56 // i32: offset of batch entry 0
	ColOffsets      = 60 // i64[n]: each record's offset
	ColTimestamps   = 64 // i64[n]
	ColKeys         = 68 // i32[2n]: (offset, length) of each key; length -1: null
	ColValues       = 72 // i32[2n]: (offset, length) of each value
	ColHeaderIndex  = 76 // i32[2n]: (first header entry, header count)
	ColBatchIndex   = 80 // i32[n]: the record's batch entry
	ColSources      = 84 // u8[n]: KW_SOURCE_* of the record's spans
	ColControlTypes = 88 // i32[n]: -1 unless a control record
	ColSchemas      = 92 // i32[3n]: (schema source, id, version)

	// A batch entry. A legacy message (magic 0 or 1), and a magic-2 record read by the
	// record decoder instead of the scan, is a batch of its own.
	RBBaseOffset    = 0  // i64
	RBProducerID    = 8  // i64: -1 when none
	RBFirstRecord   = 16 // i32
	RBRecordCount   = 20 // i32
	RBBaseSequence  = 24 // i32: -1 when none; a record's is base + its offset delta (wrapping as Kafka does)
	RBLeaderEpoch   = 28 // i32
	RBProducerEpoch = 32 // i32
	RBMagic         = 36 // i32
	RBCompression   = 40 // i32
	RBTimestampType = 44 // i32
	RBFlags         = 48 // i32: bit 0 transactional, bit 1 control
	RBSource        = 52 // i32: KW_SOURCE_* of its records
	RBStride        = 56
)

// colBatch is one batch entry while a table is built.
type colBatch struct {
	baseOffset, producerID             int64
	first, count, baseSeq, leaderEpoch int32
	epoch, magic, compression, tsType  int32
	flags, source                      int32
}

// recordColumns holds a frame's records as columns while its table is built; finish
// writes them as columns (layout 4) or as entries (layouts 2 and 3).
type recordColumns struct {
	offs, tss        []int64
	keys, vals, hidx []int32 // pairs
	bidx, ctl        []int32
	sch              []int32 // triples
	srcs             []byte
	batches          []colBatch
	hents            []byte // header entries, TableHeaderStride bytes each
	nrec, nhdr       int
	// rows: the records go into record entries (ents, layouts 2 and 3; rows.go), not
	// into the columns
	rows bool
	ents []byte
}

func (c *recordColumns) reset() {
	c.offs, c.tss, c.srcs, c.batches, c.hents = c.offs[:0], c.tss[:0], c.srcs[:0], c.batches[:0], c.hents[:0]
	for _, s := range [...]*[]int32{&c.keys, &c.vals, &c.hidx, &c.bidx, &c.ctl, &c.sch} {
		*s = (*s)[:0]
	}
	c.nrec, c.nhdr, c.rows, c.ents = 0, 0, false, c.ents[:0]
	if cap(c.offs) > 1<<20 { // records; keep no more than a large frame's columns
		*c = recordColumns{hents: c.hents, ents: c.ents}
	}
	if cap(c.hents) > 8<<20 {
		c.hents = nil
	}
	if cap(c.ents) > 8<<20 {
		c.ents = nil
	}
}

// entryBytes is the size the entries or columns of the records so far will take.
func (c *recordColumns) entryBytes(columns bool) int {
	if c.rows {
		return len(c.ents) + len(c.hents)
	}
	if columns {
		return c.nrec*64 + len(c.batches)*RBStride + len(c.hents)
	}
	return c.nrec*TableRecordStride + len(c.hents)
}

// extend grows s by n elements (their values are written next), reusing its capacity.
// Not inlined: addRecords calls it ten times, once per batch.
//
//go:noinline
func extend[T any](s []T, n int) []T {
	if cap(s)-len(s) < n {
		ns := make([]T, len(s), 2*cap(s)+n)
		copy(ns, s)
		s = ns
	}
	return s[:len(s)+n]
}

// addRecords makes room for n more records and returns the index of the first.
func (c *recordColumns) addRecords(n int) int {
	r0 := c.nrec
	c.offs, c.tss, c.srcs = extend(c.offs, n), extend(c.tss, n), extend(c.srcs, n)
	// The int32 columns, with their words per record (a loop: the module's size).
	for _, col := range [...]struct {
		s     *[]int32
		words int
	}{{&c.keys, 2}, {&c.vals, 2}, {&c.hidx, 2}, {&c.bidx, 1}, {&c.ctl, 1}, {&c.sch, 3}} {
		*col.s = extend(*col.s, col.words*n)
	}
	c.nrec += n
	return r0
}

// writeBatch adds the records of one scanned batch: as columns, or (rows) as the record
// entries of layouts 2 and 3. Plain stores, no calls per record but for the rare schema
// headers; one loop for both forms, whose branch per record costs less than a second
// copy of the loop costs the module's size.
func (c *recordColumns) writeBatch(b *records.Batch, data []byte, spans, hspans []int32, base, source int32) {
	n := len(spans) / recordscan.SpanRecordWords
	var flags int32
	if b.IsTransactional() {
		flags = 1
	}
	logAppend := b.TimestampType() == records.LogAppendTime
	// The batch's fields, once: the stores below could alias *b for the compiler.
	baseOffset, baseTS, maxTS, pid := b.BaseOffset, b.BaseTimestamp, b.MaxTimestamp, uint64(b.ProducerID)
	baseSeq, epoch, leaderEpoch := b.BaseSequence, uint32(int32(b.ProducerEpoch)), uint32(b.PartitionLeaderEpoch)
	compression, tsType := uint32(b.Compression()), uint32(b.TimestampType())
	rows := c.rows
	var (
		offs, tss                        []int64
		keys, vals, hidx, bidx, ctl, sch []int32
		srcs, ents                       []byte
		bi                               int32
	)
	if rows {
		e0 := len(c.ents)
		c.ents = grow(c.ents, n*TableRecordStride)
		ents = c.ents[e0:]
		c.nrec += n
	} else {
		r0 := c.addRecords(n)
		c.batches = append(c.batches, colBatch{baseOffset: baseOffset, producerID: int64(pid), first: int32(r0), count: int32(n),
			baseSeq: baseSeq, leaderEpoch: int32(leaderEpoch), epoch: int32(epoch), magic: 2,
			compression: int32(compression), tsType: int32(tsType), flags: flags, source: source})
		bi = int32(len(c.batches) - 1)
		offs, tss = c.offs[r0:r0+n], c.tss[r0:r0+n]
		keys, vals, hidx = c.keys[2*r0:2*(r0+n)], c.vals[2*r0:2*(r0+n)], c.hidx[2*r0:2*(r0+n)]
		bidx, ctl, sch, srcs = c.bidx[r0:r0+n], c.ctl[r0:r0+n], c.sch[3*r0:3*(r0+n)], c.srcs[r0:r0+n]
	}
	h0 := len(c.hents)
	c.hents = grow(c.hents, len(hspans)/recordscan.SpanHeaderWords*TableHeaderStride)
	hents := c.hents[h0:]
	le := binary.LittleEndian
	fh := int32(c.nhdr)
	hp := 0
	for i := 0; i < n; i++ {
		s := spans[i*recordscan.SpanRecordWords : i*recordscan.SpanRecordWords+recordscan.SpanRecordWords : i*recordscan.SpanRecordWords+recordscan.SpanRecordWords]
		od := s[recordscan.SpanOffsetDelta]
		ts := maxTS
		if !logAppend {
			ts = baseTS + int64(uint64(uint32(s[recordscan.SpanTSDeltaLo]))|uint64(uint32(s[recordscan.SpanTSDeltaHi]))<<32)
		}
		ko, kl := s[recordscan.SpanKeyOff]+base, s[recordscan.SpanKeyLen]
		if kl < 0 {
			ko = 0
		}
		vo, vl := s[recordscan.SpanValueOff]+base, s[recordscan.SpanValueLen]
		if vl < 0 {
			vo = 0
		}
		nh := s[recordscan.SpanHeaders]
		hs := hspans[hp : hp+int(nh)*recordscan.SpanHeaderWords]
		sr := records.SchemaRef{ID: -1, Version: -1}
		// recordscan.MayHaveSchema, inline (a call per record costs more than the test).
		maybe := vl >= 5 && data[s[recordscan.SpanValueOff]] == 0
		for j := 1; j < len(hs) && !maybe; j += recordscan.SpanHeaderWords {
			maybe = hs[j] == int32(len(records.SchemaIDHeader)) || hs[j] == int32(len(records.SchemaVersionHeader))
		}
		if maybe {
			sr = recordscan.SpanSchema(data, s, hs)
		}
		if rows {
			e := ents[i*TableRecordStride : i*TableRecordStride+TableRecordStride : i*TableRecordStride+TableRecordStride]
			le.PutUint64(e[0:], uint64(baseOffset+int64(od)))
			le.PutUint64(e[8:], uint64(ts))
			le.PutUint64(e[16:], pid)
			le.PutUint32(e[24:], uint32(ko))
			le.PutUint32(e[28:], uint32(kl))
			le.PutUint32(e[32:], uint32(vo))
			le.PutUint32(e[36:], uint32(vl))
			le.PutUint32(e[40:], uint32(fh))
			le.PutUint32(e[44:], uint32(nh))
			le.PutUint32(e[48:], uint32(records.RecordSequence(baseSeq, od)))
			le.PutUint32(e[52:], leaderEpoch)
			le.PutUint32(e[56:], epoch)
			le.PutUint32(e[60:], 2)
			le.PutUint32(e[64:], compression)
			le.PutUint32(e[68:], tsType)
			le.PutUint32(e[72:], uint32(flags))
			le.PutUint32(e[76:], 0xffffffff)
			le.PutUint32(e[80:], uint32(sr.Source))
			le.PutUint32(e[84:], uint32(sr.ID))
			le.PutUint32(e[88:], uint32(sr.Version))
			le.PutUint32(e[92:], uint32(source))
		} else {
			// One bounds check per pair and triple.
			k, v, h, sc := keys[2*i:2*i+2:2*i+2], vals[2*i:2*i+2:2*i+2], hidx[2*i:2*i+2:2*i+2], sch[3*i:3*i+3:3*i+3]
			offs[i] = baseOffset + int64(od)
			tss[i] = ts
			k[0], k[1] = ko, kl
			v[0], v[1] = vo, vl
			h[0], h[1] = fh, nh
			bidx[i], ctl[i], srcs[i] = bi, -1, byte(source)
			sc[0], sc[1], sc[2] = int32(sr.Source), sr.ID, sr.Version
		}
		hp = writeHeaderEntries(hents, hs, hp, base)
		fh += nh
	}
	c.nhdr = int(fh)
}

// addDecoded adds one record the Decoder read, its bytes copied by add: a record entry
// (rows), or a batch of its own in the columns.
func (c *recordColumns) addDecoded(m *records.Message, add func([]byte) (int32, int32)) {
	var r [1]tableRec
	var hdrs []span2
	if len(m.Headers) > 0 {
		hdrs = make([]span2, 0, len(m.Headers))
	}
	recs, hdrs := appendRecord(m, add, r[:0], hdrs)
	e := &recs[0]
	if c.rows {
		e.firstHeader = int32(c.nhdr)
		e0 := len(c.ents)
		c.ents = grow(c.ents, TableRecordStride)
		writeEntries(c.ents[e0:], 0, 0, recs, nil, 0)
		c.nrec++
	} else {
		i := c.addRecords(1)
		c.batches = append(c.batches, colBatch{baseOffset: e.offset, producerID: e.producerID, first: int32(i), count: 1,
			baseSeq: e.sequence, leaderEpoch: e.leaderEpoch, epoch: e.epoch, magic: e.magic,
			compression: e.compression, tsType: e.tsType, flags: e.flags, source: TableSourceTable})
		c.offs[i], c.tss[i] = e.offset, e.timestamp
		c.keys[2*i], c.keys[2*i+1] = e.kv.kOff, e.kv.kLen
		c.vals[2*i], c.vals[2*i+1] = e.kv.vOff, e.kv.vLen
		c.hidx[2*i], c.hidx[2*i+1] = int32(c.nhdr), int32(len(hdrs))
		c.bidx[i], c.ctl[i], c.srcs[i] = int32(len(c.batches)-1), e.control, TableSourceTable
		c.sch[3*i], c.sch[3*i+1], c.sch[3*i+2] = e.schemaSource, e.schemaID, e.schVe
	}
	h0 := len(c.hents)
	c.hents = grow(c.hents, len(hdrs)*TableHeaderStride)
	writeEntries(c.hents[h0:], 0, 0, nil, hdrs, 0)
	c.nhdr += len(hdrs)
}

// appendEntries appends the record entries of layouts 2 and 3 (written as the records
// were read, rows.go).
func (c *recordColumns) appendEntries(out []byte) []byte {
	return append(out, c.ents...)
}

// appendColumns appends the batch table and the columns of layout 4 (each 8-aligned;
// out's length is 8-aligned from the table start), and writes their offsets into the
// header of the table that starts at out[start].
func (c *recordColumns) appendColumns(out []byte, start int) []byte {
	le := binary.LittleEndian
	var at [(ColSchemas-ColBatches)/4 + 1]int // offsets of ColBatches .. ColSchemas
	mark := func(field int) { at[(field-ColBatches)/4] = len(out) - start }
	mark(ColBatches)
	e0 := len(out)
	out = grow(out, len(c.batches)*RBStride)
	for i := range c.batches {
		b := &c.batches[i]
		e := out[e0+i*RBStride : e0+(i+1)*RBStride : e0+(i+1)*RBStride]
		le.PutUint64(e[RBBaseOffset:], uint64(b.baseOffset))
		le.PutUint64(e[RBProducerID:], uint64(b.producerID))
		for j, v := range [...]int32{b.first, b.count, b.baseSeq, b.leaderEpoch, b.epoch, b.magic, b.compression, b.tsType, b.flags, b.source} {
			le.PutUint32(e[RBFirstRecord+4*j:], uint32(v))
		}
	}
	mark(ColOffsets)
	out = appendLE(out, c.offs)
	mark(ColTimestamps)
	out = appendLE(out, c.tss)
	for _, col := range [...]struct {
		field int
		s     []int32
	}{{ColKeys, c.keys}, {ColValues, c.vals}, {ColHeaderIndex, c.hidx}, {ColBatchIndex, c.bidx}, {ColControlTypes, c.ctl}, {ColSchemas, c.sch}} {
		mark(col.field)
		out = pad8(appendLE(out, col.s), start)
	}
	mark(ColSources)
	out = pad8(append(out, c.srcs...), start)
	hdr := out[start : start+TableHeaderSizeColumns]
	le.PutUint32(hdr[ColBatchCount:], uint32(len(c.batches)))
	le.PutUint32(hdr[ColBatchStride:], RBStride)
	for i, v := range at {
		le.PutUint32(hdr[ColBatches+4*i:], uint32(v))
	}
	return out
}

// pad8 pads out with zeros to a multiple of 8 bytes from start.
func pad8(out []byte, start int) []byte {
	for (len(out)-start)%8 != 0 {
		out = append(out, 0)
	}
	return out
}

// appendLE appends the integers of s, little-endian.
func appendLE[T int32 | int64](out []byte, s []T) []byte {
	if len(s) == 0 {
		return out
	}
	size := int(unsafe.Sizeof(s[0]))
	if littleEndian {
		return append(out, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*size)...)
	}
	for _, v := range s {
		if size == 8 {
			out = binary.LittleEndian.AppendUint64(out, uint64(v))
		} else {
			out = binary.LittleEndian.AppendUint32(out, uint32(v))
		}
	}
	return out
}
