// The record table (kw_records_decode_table, layout 1; the frame calls' layouts 2 and 3,
// which add the frame JSON, and layout 4, the same records as columns) as objects that
// read it lazily: RecordTable owns one copy of the table, RecordSet is a run of its
// records (a partition's records field), Record one record, and Columns the table's
// fields as typed arrays (for layout 4, views of the table's own columns). Layout in
// capi/kwire.h.

import {
  KW_RB_BASE_OFFSET, KW_RB_BASE_SEQUENCE, KW_RB_COMPRESSION, KW_RB_FIRST_RECORD, KW_RB_FLAGS, KW_RB_LEADER_EPOCH, KW_RB_MAGIC,
  KW_RB_PRODUCER_EPOCH, KW_RB_PRODUCER_ID, KW_RB_RECORD_COUNT, KW_RB_SOURCE, KW_RB_STRIDE, KW_RB_TIMESTAMP_TYPE,
} from './abi_gen.js';
import {
  COMPRESSIONS, HDR, LAYOUT_COLUMNS, LITTLE_ENDIAN, REC, SCHEMA_SOURCES, SOURCE_INPUT, SOURCE_TABLE, TIMESTAMP_TYPES,
  decodeText, outside, readColumns, readGeometry, tableError, text,
} from './layout.js';

/** Marks a table that kwire.wasm returned (see RecordTable's constructor); not exported by the package. */
export const TRUSTED = Symbol('kwire.trusted-table');

// The record entry's fields as int32 word indexes (REC's byte offsets / 4).
const W = Object.freeze(Object.fromEntries(Object.entries(REC).map(([k, v]) => [k, v >> 2])));

/**
 * The fields of a batch entry (Columns.batches, layout 4's batch table; KW_RB_* of
 * capi/kwire.h) as int32 word indexes: batch b's field f is batches[b * batchStride + f].
 * The two int64 fields are also batches64[(b * batchStride + f) / 2] (baseOffset,
 * producerId); batches[... + f] is then their low half.
 */
export const BatchWords = Object.freeze({
  baseOffset: KW_RB_BASE_OFFSET >> 2, producerId: KW_RB_PRODUCER_ID >> 2, firstRecord: KW_RB_FIRST_RECORD >> 2,
  recordCount: KW_RB_RECORD_COUNT >> 2, baseSequence: KW_RB_BASE_SEQUENCE >> 2, leaderEpoch: KW_RB_LEADER_EPOCH >> 2,
  producerEpoch: KW_RB_PRODUCER_EPOCH >> 2, magic: KW_RB_MAGIC >> 2, compression: KW_RB_COMPRESSION >> 2,
  timestampType: KW_RB_TIMESTAMP_TYPE >> 2, flags: KW_RB_FLAGS >> 2, source: KW_RB_SOURCE >> 2,
});
const B = BatchWords;
const RB_WORDS = KW_RB_STRIDE >> 2;

/**
 * RecordTable: one record table, in a Uint8Array the table owns (a copy made when the
 * call returned, never the module's memory). Every record entry and header entry is
 * checked against the buffer when the table is created, so the accessors below only load.
 * A layout-4 table is read through typed arrays over its columns, which need it 8-aligned
 * in its ArrayBuffer: a table that is not is copied first.
 */
export class RecordTable {
  /**
   * @param {Uint8Array} buf the table
   * @param {Uint8Array | null} input the frame a layout-3 (or layout-4) table was decoded
   *   from: the spans of its records marked SOURCE_INPUT index it (it is not copied: the
   *   caller must not change it while the records are read)
   */
  constructor(buf, input = null, trusted = undefined) {
    let g = readGeometry(buf);
    if (g.layout === LAYOUT_COLUMNS && buf.byteOffset % 8 !== 0) {
      buf = new Uint8Array(buf); // a copy in a buffer of its own, at offset 0 (Buffer's slice would not copy)
      g = readGeometry(buf);
    }
    const { dv, size, layout, head, n, stride, recOff, hn, hstride, hOff, skippedBytes } = g;
    /** The table's bytes: keys, values and header spans are offsets into it (or into input, see sources). */
    this.data = buf;
    /** The input frame the spans of SOURCE_INPUT records index (layouts 3 and 4), else null. */
    this.input = layout >= 3 ? input : null;
    if (layout === 3 && input === null) throw tableError('a layout-3 table needs the frame it was decoded from');
    this.layout = layout;
    /** The size of a partial batch at the end of the input, skipped (as Kafka's readers do). */
    this.skippedBytes = skippedBytes;
    this.length = n;
    this.headerCount = hn;
    this._dv = dv;
    this._stride = stride;
    this._recOff = recOff;
    this._hstride = hstride;
    this._hOff = hOff;
    this._columns = null;
    this._jsonOffset = -1;
    this._jsonLength = 0;
    // Layout 4: typed arrays over the columns, the batch table and the header entries.
    this._o64 = null; // offsets (BigInt64Array [n])
    this._o32 = null; // the same, as int32 halves
    this._t64 = null; // timestamps
    this._keys = null; // Int32Array [2n]
    this._vals = null;
    this._hidx = null;
    this._bidx = null; // Int32Array [n]
    this._src = null; // Uint8Array [n]
    this._ctl = null; // Int32Array [n]
    this._sch = null; // Int32Array [3n]
    this._b32 = null; // the batch table, as int32 words
    this._b64 = null; // and as int64
    this._bs = 0; // the batch stride in int32 words
    this._bn = 0; // batch entries
    this._h32 = null; // the header entries, as int32 words
    this._hs = 0; // the header stride in int32 words
    // The ArrayBuffer of data and of input when each is a plain Uint8Array over the whole
    // of its buffer (as every table the module returns is): views are then made with
    // new Uint8Array(buffer, offset, length), which costs less than subarray and cannot
    // leave the bytes either. A subclass (a Node Buffer) keeps subarray, so views keep
    // its class, and so does a view of part of a buffer, so views never leave it.
    this._dAB = null;
    this._iAB = null;
    if (layout >= 2) {
      const jo = dv.getInt32(40, true);
      const jl = dv.getInt32(44, true);
      if (jo < head || jl < 0 || jo + jl > size) throw tableError(`frame JSON (${jo}, ${jl}) outside the table`);
      this._jsonOffset = jo;
      this._jsonLength = jl;
    }
    if (layout === LAYOUT_COLUMNS) {
      this._viewColumns(readColumns(dv, n));
      if (wholeBuffer(buf)) this._dAB = buf.buffer;
      if (this.input !== null && wholeBuffer(this.input)) this._iAB = this.input.buffer;
    }
    // A table the module just returned is not checked entry by entry: the module's own
    // tests and fuzz targets hold its spans to its buffers, and a subarray cannot leave
    // its buffer anyway. Any other table is.
    if (trusted !== TRUSTED) this._check();
  }

  // _viewColumns makes the typed arrays of a layout-4 table (c: readColumns' offsets).
  _viewColumns(c) {
    if (!LITTLE_ENDIAN) throw tableError('a big-endian host is not supported');
    const ab = this.data.buffer;
    const at = this.data.byteOffset;
    const n = this.length;
    this._o64 = new BigInt64Array(ab, at + c.offsets, n);
    this._o32 = new Int32Array(ab, at + c.offsets, 2 * n);
    this._t64 = new BigInt64Array(ab, at + c.timestamps, n);
    this._keys = new Int32Array(ab, at + c.keys, 2 * n);
    this._vals = new Int32Array(ab, at + c.values, 2 * n);
    this._hidx = new Int32Array(ab, at + c.headerIndex, 2 * n);
    this._bidx = new Int32Array(ab, at + c.batchIndex, n);
    this._src = new Uint8Array(ab, at + c.sources, n);
    this._ctl = new Int32Array(ab, at + c.controlTypes, n);
    this._sch = new Int32Array(ab, at + c.schemas, 3 * n);
    this._bs = c.bstride >> 2;
    this._bn = c.bn;
    this._b32 = new Int32Array(ab, at + c.batches, c.bn * this._bs);
    this._b64 = new BigInt64Array(ab, at + c.batches, (c.bn * this._bs) >> 1);
    this._hs = this._hstride >> 2;
    this._h32 = new Int32Array(ab, at + this._hOff, this.headerCount * this._hs);
  }

  _check() {
    const { data, length: n } = this;
    if (this.layout === LAYOUT_COLUMNS) {
      this._checkColumns();
      return;
    }
    if (data.byteOffset % 4 === 0 && this._recOff % 4 === 0 && this._stride % 4 === 0 && this._hOff % 4 === 0 && this._hstride % 4 === 0) {
      this._checkAligned();
      return;
    }
    this._checkDataView(n);
  }

  // _check over int32 words (every table the module returns is 8-aligned): one load a
  // field, no DataView call.
  _checkAligned() {
    const { data, length: n, headerCount: hn } = this;
    const w = new Int32Array(data.buffer, data.byteOffset, data.length >> 2);
    const inputSize = this.input === null ? -1 : this.input.length;
    const size0 = data.length;
    const rs = this._stride >> 2;
    const hs = this._hstride >> 2;
    const h0 = this._hOff >> 2;
    for (let i = 0, e = this._recOff >> 2; i < n; i++, e += rs) {
      const ko = w[e + W.keyOffset], kl = w[e + W.keyLength], vo = w[e + W.valueOffset], vl = w[e + W.valueLength];
      const fh = w[e + W.firstHeader], hc = w[e + W.headerCount], src = w[e + W.source];
      const size = src === SOURCE_TABLE ? size0 : src === SOURCE_INPUT ? inputSize : -1;
      if (size < 0) throw tableError(`record ${i}: source ${src} in a layout-${this.layout} table`);
      if ((kl !== -1 && outside(ko, kl, size)) || (vl !== -1 && outside(vo, vl, size)) || outside(fh, hc, hn)) {
        throw tableError(`record ${i}: key (${ko}, ${kl}) value (${vo}, ${vl}) headers ${fh}+${hc} of ${hn}`);
      }
      for (let j = fh, h = h0 + fh * hs; j < fh + hc; j++, h += hs) {
        const hko = w[h], hkl = w[h + 1], hvo = w[h + 2], hvl = w[h + 3];
        if (outside(hko, hkl, size) || (hvl !== -1 && outside(hvo, hvl, size))) {
          throw tableError(`header ${j}: key (${hko}, ${hkl}) value (${hvo}, ${hvl})`);
        }
      }
    }
  }

  // _check of a layout-4 table: every record's spans, header run and batch, and every
  // header entry a record names, as in _checkAligned.
  _checkColumns() {
    const { data, length: n, headerCount: hn, _keys: keys, _vals: vals, _hidx: hidx, _bidx: bidx, _src: src, _h32: h32, _hs: hs, _bn: bn } = this;
    const inputSize = this.input === null ? -1 : this.input.length;
    const size0 = data.length;
    for (let i = 0; i < n; i++) {
      const i2 = 2 * i;
      const ko = keys[i2], kl = keys[i2 + 1], vo = vals[i2], vl = vals[i2 + 1], fh = hidx[i2], hc = hidx[i2 + 1], s = src[i], b = bidx[i];
      const size = s === SOURCE_TABLE ? size0 : s === SOURCE_INPUT ? inputSize : -1;
      if (size < 0) throw tableError(`record ${i}: source ${s} in a layout-${this.layout} table${s === SOURCE_INPUT ? ' without its input' : ''}`);
      if ((kl !== -1 && outside(ko, kl, size)) || (vl !== -1 && outside(vo, vl, size)) || outside(fh, hc, hn)) {
        throw tableError(`record ${i}: key (${ko}, ${kl}) value (${vo}, ${vl}) headers ${fh}+${hc} of ${hn}`);
      }
      if (b < 0 || b >= bn) throw tableError(`record ${i}: batch ${b} of ${bn}`);
      for (let j = fh, h = fh * hs; j < fh + hc; j++, h += hs) {
        const hko = h32[h], hkl = h32[h + 1], hvo = h32[h + 2], hvl = h32[h + 3];
        if (outside(hko, hkl, size) || (hvl !== -1 && outside(hvo, hvl, size))) {
          throw tableError(`header ${j}: key (${hko}, ${hkl}) value (${hvo}, ${hvl})`);
        }
      }
    }
  }

  _checkDataView(n) {
    const { _dv: dv, data, headerCount: hn } = this;
    const inputSize = this.input === null ? -1 : this.input.length;
    for (let i = 0, at = this._recOff; i < n; i++, at += this._stride) {
      const ko = dv.getInt32(at + REC.keyOffset, true);
      const kl = dv.getInt32(at + REC.keyLength, true);
      const vo = dv.getInt32(at + REC.valueOffset, true);
      const vl = dv.getInt32(at + REC.valueLength, true);
      const fh = dv.getInt32(at + REC.firstHeader, true);
      const hc = dv.getInt32(at + REC.headerCount, true);
      const src = dv.getInt32(at + REC.source, true);
      const size = src === SOURCE_TABLE ? data.length : src === SOURCE_INPUT ? inputSize : -1;
      if (size < 0) throw tableError(`record ${i}: source ${src} in a layout-${this.layout} table`);
      if ((kl !== -1 && outside(ko, kl, size)) || (vl !== -1 && outside(vo, vl, size)) || outside(fh, hc, hn)) {
        throw tableError(`record ${i}: key (${ko}, ${kl}) value (${vo}, ${vl}) headers ${fh}+${hc} of ${hn}`);
      }
      for (let j = fh, h = this._hOff + fh * this._hstride; j < fh + hc; j++, h += this._hstride) {
        const hko = dv.getInt32(h + HDR.keyOffset, true);
        const hkl = dv.getInt32(h + HDR.keyLength, true);
        const hvo = dv.getInt32(h + HDR.valueOffset, true);
        const hvl = dv.getInt32(h + HDR.valueLength, true);
        if (outside(hko, hkl, size) || (hvl !== -1 && outside(hvo, hvl, size))) {
          throw tableError(`header ${j}: key (${hko}, ${hkl}) value (${hvo}, ${hvl})`);
        }
      }
    }
  }

  // The buffer the spans of the record entry at `at` index.
  _bytesOf(at) {
    return this.input !== null && this._dv.getInt32(at + REC.source, true) === SOURCE_INPUT ? this.input : this.data;
  }

  /** The frame JSON text a layout-2 table carries (null for layout 1). */
  jsonText() {
    if (this._jsonOffset < 0) return null;
    return decodeText(this.data, this._jsonOffset, this._jsonLength);
  }

  /** Record i (a lazy view: its fields are read from the table when asked for). */
  at(i) {
    if (!Number.isInteger(i) || i < 0 || i >= this.length) throw new RangeError(`kwire: record ${i} of ${this.length}`);
    return this._record(i);
  }

  // Record i, unchecked.
  _record(i) {
    return this._o64 !== null ? new ColumnRecord(this, i) : new Record(this, this._recOff + i * this._stride);
  }

  /** Records first .. first+count-1 as a RecordSet. */
  slice(first = 0, count = this.length - first, skippedBytes = 0, size = -1, invalid = null) {
    if (!Number.isInteger(first) || !Number.isInteger(count) || first < 0 || count < 0 || first + count > this.length) {
      throw tableError(`records ${first}+${count} of ${this.length}`);
    }
    return new RecordSet(this, first, count, skippedBytes, size, invalid);
  }

  [Symbol.iterator]() {
    return records(this, 0, this.length);
  }

  /**
   * Every record's fields as typed arrays (built once, on first call): no object per
   * record. See Columns.
   */
  columns() {
    this._columns ??= buildColumns(this);
    return this._columns;
  }
}

function* records(t, first, count) {
  if (t._o64 !== null) {
    for (let i = first, end = first + count; i < end; i++) yield new ColumnRecord(t, i);
    return;
  }
  const stride = t._stride;
  for (let at = t._recOff + first * stride, end = at + count * stride; at < end; at += stride) yield new Record(t, at);
}

/**
 * RecordSet: `length` records of a table starting at `first` — a partition's records
 * field. Iterable (lazy Record objects), indexable with at(i), and columns() gives the
 * same records as typed arrays (subarrays of the table's columns).
 */
export class RecordSet {
  constructor(table, first, length, skippedBytes, size, invalid) {
    this.table = table;
    this.first = first;
    this.length = length;
    /** Bytes of a partial batch at the end of this records field, skipped. */
    this.skippedBytes = skippedBytes;
    /** The size in bytes of the records field on the wire (-1 when not known). */
    this.size = size;
    /**
     * For a partition of a Produce request (v3 on): null when its records pass Kafka's
     * validateRecords, else the broker's verdict { errorCode, error, reason } (e.g. 87,
     * 'INVALID_RECORD', 'Produce v9 needs one record batch per partition, found none').
     */
    this.invalid = invalid ?? null;
  }

  at(i) {
    if (!Number.isInteger(i) || i < 0 || i >= this.length) throw new RangeError(`kwire: record ${i} of ${this.length}`);
    return this.table._record(this.first + i);
  }

  [Symbol.iterator]() {
    return records(this.table, this.first, this.length);
  }

  /** The records as plain objects (decodeRecords' form), for callers that want arrays. */
  toArray() {
    return Array.from(this, (r) => r.toObject());
  }

  columns() {
    const c = this.table.columns();
    const a = this.first;
    const b = a + this.length;
    return {
      length: this.length,
      data: c.data,
      input: c.input,
      sources: c.sources.subarray(a, b),
      offsets: c.offsets.subarray(a, b),
      timestamps: c.timestamps.subarray(a, b),
      keys: c.keys.subarray(2 * a, 2 * b),
      values: c.values.subarray(2 * a, 2 * b),
      headerIndex: c.headerIndex.subarray(2 * a, 2 * b),
      headers: c.headers,
      controlTypes: c.controlTypes.subarray(a, b),
      schemas: c.schemas.subarray(3 * a, 3 * b),
      batchIndex: c.batchIndex.subarray(a, b),
      batches: c.batches,
      batches64: c.batches64,
      batchStride: c.batchStride,
    };
  }

  toJSON() {
    const ref = { firstRecord: this.first, recordCount: this.length, skippedBytes: this.skippedBytes, size: this.size };
    if (this.invalid !== null) ref.invalid = this.invalid;
    return ref;
  }
}

/**
 * Record: one entry of a record table, read on access. int64 fields are bigint; key,
 * value and header values are Uint8Array views into the table's buffer (null when null).
 */
export class Record {
  constructor(table, at) {
    this._t = table;
    this._at = at;
  }

  get offset() {
    return this._t._dv.getBigInt64(this._at, true);
  }

  get timestamp() {
    return this._t._dv.getBigInt64(this._at + REC.timestamp, true);
  }

  get producerId() {
    return this._t._dv.getBigInt64(this._at + REC.producerId, true);
  }

  get key() {
    return this._span(REC.keyOffset);
  }

  get value() {
    return this._span(REC.valueOffset);
  }

  /** [{key: string, value: Uint8Array | null}] in wire order (header keys as UTF-8 text). */
  get headers() {
    return this._headers(text);
  }

  /** [{key: Uint8Array, value: Uint8Array | null}]: header keys as their exact bytes. */
  get rawHeaders() {
    return this._headers(view);
  }

  // The (offset, length) pair at off of the entry as a view of the table; null for length -1.
  _span(off) {
    const dv = this._t._dv;
    const n = dv.getInt32(this._at + off + 4, true);
    if (n === -1) return null;
    const o = dv.getInt32(this._at + off, true);
    return this._t._bytesOf(this._at).subarray(o, o + n);
  }

  /** The key as UTF-8 text (invalid bytes become U+FFFD); null when the key is null. */
  get keyText() {
    const k = this.key;
    return k === null ? null : decodeText(k, 0, k.length);
  }

  /** The value as UTF-8 text (invalid bytes become U+FFFD); null when the value is null. */
  get valueText() {
    const v = this.value;
    return v === null ? null : decodeText(v, 0, v.length);
  }

  // The record's headers in wire order, each key made by key(data, offset, length).
  _headers(key) {
    const t = this._t;
    const dv = t._dv;
    const data = t._bytesOf(this._at);
    const first = dv.getInt32(this._at + REC.firstHeader, true);
    const count = dv.getInt32(this._at + REC.headerCount, true);
    const out = new Array(count);
    for (let j = 0; j < count; j++) {
      const h = t._hOff + (first + j) * t._hstride;
      const vl = dv.getInt32(h + HDR.valueLength, true);
      const vo = dv.getInt32(h + HDR.valueOffset, true);
      out[j] = { key: key(data, dv.getInt32(h + HDR.keyOffset, true), dv.getInt32(h + HDR.keyLength, true)), value: vl === -1 ? null : data.subarray(vo, vo + vl) };
    }
    return out;
  }

  get sequence() {
    return this._i(REC.sequence);
  }

  get leaderEpoch() {
    return this._i(REC.leaderEpoch);
  }

  get producerEpoch() {
    return this._i(REC.producerEpoch);
  }

  get magic() {
    return this._i(REC.magic);
  }

  get compression() {
    const c = this._i(REC.compression);
    return COMPRESSIONS[c] ?? String(c);
  }

  get timestampType() {
    return TIMESTAMP_TYPES[this._i(REC.timestampType) + 1] ?? 'NoTimestampType';
  }

  get transactional() {
    return (this._i(REC.flags) & 1) !== 0;
  }

  get control() {
    return (this._i(REC.flags) & 2) !== 0;
  }

  get controlType() {
    return this._i(REC.controlType);
  }

  get schemaSource() {
    const s = this._i(REC.schemaSource);
    return SCHEMA_SOURCES[s] ?? String(s);
  }

  get schemaId() {
    return this._i(REC.schemaId);
  }

  get schemaVersion() {
    return this._i(REC.schemaVersion);
  }

  _i(off) {
    return this._t._dv.getInt32(this._at + off, true);
  }

  /** Every field as a plain object (the form decodeRecords returns, views). */
  toObject() {
    return {
      offset: this.offset, timestamp: this.timestamp, timestampType: this.timestampType, key: this.key, value: this.value,
      headers: this.headers, producerId: this.producerId, producerEpoch: this.producerEpoch, sequence: this.sequence,
      leaderEpoch: this.leaderEpoch, magic: this.magic, compression: this.compression, transactional: this.transactional,
      control: this.control, controlType: this.controlType, schemaSource: this.schemaSource, schemaId: this.schemaId,
      schemaVersion: this.schemaVersion,
    };
  }
}

/**
 * ColumnRecord: a record of a layout-4 table, read on access from its columns (typed
 * arrays; _at is the record's index) and from its batch's entry. The same fields as
 * Record.
 */
class ColumnRecord extends Record {
  get offset() {
    return this._t._o64[this._at];
  }

  get timestamp() {
    return this._t._t64[this._at];
  }

  get producerId() {
    const t = this._t;
    return t._b64[(t._bidx[this._at] * t._bs + B.producerId) >> 1];
  }

  get key() {
    return this._pair(this._t._keys);
  }

  get value() {
    return this._pair(this._t._vals);
  }

  // The (offset, length) pair of the record in a column as a view; null for length -1.
  _pair(pairs) {
    const i = this._at;
    const n = pairs[2 * i + 1];
    if (n === -1) return null;
    return viewOf(this._t, this._t._src[i], pairs[2 * i], n);
  }

  _headers(key) {
    const t = this._t;
    const i = this._at;
    const src = t._src[i];
    const data = src === SOURCE_INPUT ? t.input : t.data;
    const first = t._hidx[2 * i];
    const count = t._hidx[2 * i + 1];
    const h32 = t._h32;
    const hs = t._hs;
    const out = new Array(count);
    for (let j = 0, h = first * hs; j < count; j++, h += hs) {
      const vl = h32[h + 3];
      out[j] = { key: key(data, h32[h], h32[h + 1]), value: vl === -1 ? null : viewOf(t, src, h32[h + 2], vl) };
    }
    return out;
  }

  // Word w of the record's batch entry.
  _b(w) {
    const t = this._t;
    return t._b32[t._bidx[this._at] * t._bs + w];
  }

  /** Its batch's base sequence plus its offset delta, wrapping past 2^31-1 to 0 as Kafka's producer does; -1 when the batch has none. */
  get sequence() {
    const t = this._t;
    const e = t._bidx[this._at] * t._bs;
    const base = t._b32[e + B.baseSequence];
    if (base < 0) return -1;
    // The delta as int32: the low halves of the two offsets suffice.
    const delta = (t._o32[2 * this._at] - t._b32[e + B.baseOffset]) | 0;
    const room = (0x7fffffff - delta) | 0;
    return base > room ? (delta - ((0x7fffffff - base) | 0) - 1) | 0 : (base + delta) | 0;
  }

  get leaderEpoch() {
    return this._b(B.leaderEpoch);
  }

  get producerEpoch() {
    return this._b(B.producerEpoch);
  }

  get magic() {
    return this._b(B.magic);
  }

  get compression() {
    const c = this._b(B.compression);
    return COMPRESSIONS[c] ?? String(c);
  }

  get timestampType() {
    return TIMESTAMP_TYPES[this._b(B.timestampType) + 1] ?? 'NoTimestampType';
  }

  get transactional() {
    return (this._b(B.flags) & 1) !== 0;
  }

  get control() {
    return (this._b(B.flags) & 2) !== 0;
  }

  get controlType() {
    return this._t._ctl[this._at];
  }

  get schemaSource() {
    const s = this._t._sch[3 * this._at];
    return SCHEMA_SOURCES[s] ?? String(s);
  }

  get schemaId() {
    return this._t._sch[3 * this._at + 1];
  }

  get schemaVersion() {
    return this._t._sch[3 * this._at + 2];
  }
}

// viewOf: bytes o .. o+n-1 of the buffer a layout-4 table's source src names, as a view.
function viewOf(t, src, o, n) {
  if (src === SOURCE_INPUT) return t._iAB !== null ? new Uint8Array(t._iAB, o, n) : t.input.subarray(o, o + n);
  return t._dAB !== null ? new Uint8Array(t._dAB, o, n) : t.data.subarray(o, o + n);
}

// Whether b is a plain Uint8Array (no subclass) over the whole of its ArrayBuffer.
function wholeBuffer(b) {
  return Object.getPrototypeOf(b) === Uint8Array.prototype && b.byteOffset === 0 && b.byteLength === b.buffer.byteLength;
}

/**
 * buildColumns gives a table's fields as typed arrays, for layout 4 views of its own
 * columns (no copy), for layouts 1-3 gathered from the strided entries:
 *   offsets, timestamps   BigInt64Array [n]
 *   keys, values          Int32Array [2n]: (offset into data, length); length -1 = null
 *   headerIndex           Int32Array [2n]: (first header, header count) of each record
 *   headers               Int32Array [4h]: (key offset, key length, value offset, value length)
 *   sources               Uint8Array [n]: where record i's spans (and its headers') point:
 *                         SOURCE_TABLE (0) data, SOURCE_INPUT (1) input
 *   controlTypes          Int32Array [n]: -1 unless a control record
 *   schemas               Int32Array [3n]: (schema source, schema id, schema version)
 *   batchIndex            Int32Array [n]: record i's batch entry
 *   batches               Int32Array [batchStride per batch]: the batch entries, fields at
 *                         BatchWords; batches64 the same bytes as BigInt64Array. In layouts
 *                         1-3 each record is a batch entry of its own (made here).
 *   data                  Uint8Array: the table
 *   input                 Uint8Array | null: the frame of a layout-3 or -4 table (null before)
 */
function buildColumns(t) {
  const n = t.length;
  const data = t.data;
  if (t._o64 !== null) {
    const headers = t._hs === 4 ? t._h32 : gatherHeaders(t._h32, t._hs, t.headerCount);
    return Object.freeze({ length: n, data, input: t.input, sources: t._src, offsets: t._o64, timestamps: t._t64, keys: t._keys,
      values: t._vals, headerIndex: t._hidx, headers, controlTypes: t._ctl, schemas: t._sch, batchIndex: t._bidx, batches: t._b32,
      batches64: t._b64, batchStride: t._bs });
  }
  const hn = t.headerCount;
  const offsets = new BigInt64Array(n);
  const timestamps = new BigInt64Array(n);
  const keys = new Int32Array(2 * n);
  const values = new Int32Array(2 * n);
  const headerIndex = new Int32Array(2 * n);
  const sources = new Uint8Array(n);
  const controlTypes = new Int32Array(n);
  const schemas = new Int32Array(3 * n);
  const batchIndex = new Int32Array(n);
  const batches = new Int32Array(RB_WORDS * n);
  let headers;
  const aligned = data.byteOffset % 4 === 0 && t._recOff % 4 === 0 && t._stride % 4 === 0 && t._hOff % 4 === 0 && t._hstride % 4 === 0;
  // A record's batch entry (layouts 1-3): the record's own fields.
  const batch = (i, word, e) => {
    const b = RB_WORDS * i;
    batches[b + B.baseOffset] = word(e, W.offset);
    batches[b + B.baseOffset + 1] = word(e, W.offset + 1);
    batches[b + B.producerId] = word(e, W.producerId);
    batches[b + B.producerId + 1] = word(e, W.producerId + 1);
    batches[b + B.firstRecord] = i;
    batches[b + B.recordCount] = 1;
    batches[b + B.baseSequence] = word(e, W.sequence);
    batches[b + B.leaderEpoch] = word(e, W.leaderEpoch);
    batches[b + B.producerEpoch] = word(e, W.producerEpoch);
    batches[b + B.magic] = word(e, W.magic);
    batches[b + B.compression] = word(e, W.compression);
    batches[b + B.timestampType] = word(e, W.timestampType);
    batches[b + B.flags] = word(e, W.flags);
    batches[b + B.source] = word(e, W.source);
    batchIndex[i] = i;
    controlTypes[i] = word(e, W.controlType);
    schemas[3 * i] = word(e, W.schemaSource);
    schemas[3 * i + 1] = word(e, W.schemaId);
    schemas[3 * i + 2] = word(e, W.schemaVersion);
  };
  if (aligned) {
    const i32 = new Int32Array(data.buffer, data.byteOffset, data.length >> 2);
    const o32 = new Int32Array(offsets.buffer);
    const t32 = new Int32Array(timestamps.buffer);
    const s = t._stride >> 2;
    const word = (e, w) => i32[e + w];
    for (let i = 0, e = t._recOff >> 2; i < n; i++, e += s) {
      const i2 = 2 * i;
      o32[i2] = i32[e];
      o32[i2 + 1] = i32[e + 1];
      t32[i2] = i32[e + 2];
      t32[i2 + 1] = i32[e + 3];
      keys[i2] = i32[e + 6];
      keys[i2 + 1] = i32[e + 7];
      values[i2] = i32[e + 8];
      values[i2 + 1] = i32[e + 9];
      headerIndex[i2] = i32[e + 10];
      headerIndex[i2 + 1] = i32[e + 11];
      sources[i] = i32[e + W.source];
      batch(i, word, e);
    }
    headers = t._hstride === 16 ? i32.slice(t._hOff >> 2, (t._hOff >> 2) + 4 * hn) : gatherHeaders(i32.subarray(t._hOff >> 2), t._hstride >> 2, hn);
  } else {
    const dv = t._dv;
    const word = (at, w) => dv.getInt32(at + 4 * w, true);
    for (let i = 0, at = t._recOff; i < n; i++, at += t._stride) {
      offsets[i] = dv.getBigInt64(at, true);
      timestamps[i] = dv.getBigInt64(at + 8, true);
      for (let k = 0; k < 2; k++) {
        keys[2 * i + k] = dv.getInt32(at + 24 + 4 * k, true);
        values[2 * i + k] = dv.getInt32(at + 32 + 4 * k, true);
        headerIndex[2 * i + k] = dv.getInt32(at + 40 + 4 * k, true);
      }
      sources[i] = dv.getInt32(at + REC.source, true);
      batch(i, word, at);
    }
    headers = new Int32Array(4 * hn);
    for (let j = 0, at = t._hOff; j < hn; j++, at += t._hstride) {
      for (let k = 0; k < 4; k++) headers[4 * j + k] = dv.getInt32(at + 4 * k, true);
    }
  }
  // Little-endian hosts only above: the table is little-endian, and so are typed arrays
  // on every platform JavaScript runs on today; checked once here all the same.
  if (n > 0 && offsets[0] !== t._dv.getBigInt64(t._recOff, true)) throw tableError('a big-endian host is not supported');
  return Object.freeze({ length: n, data, input: t.input, sources, offsets, timestamps, keys, values, headerIndex, headers,
    controlTypes, schemas, batchIndex, batches, batches64: new BigInt64Array(batches.buffer), batchStride: RB_WORDS });
}

// The header entries of stride hs words as four words each.
function gatherHeaders(h32, hs, hn) {
  const headers = new Int32Array(4 * hn);
  for (let j = 0, e = 0; j < hn; j++, e += hs) {
    headers[4 * j] = h32[e];
    headers[4 * j + 1] = h32[e + 1];
    headers[4 * j + 2] = h32[e + 2];
    headers[4 * j + 3] = h32[e + 3];
  }
  return headers;
}

function view(buf, off, len) {
  return buf.subarray(off, off + len);
}
