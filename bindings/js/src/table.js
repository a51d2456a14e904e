// The record table (kw_records_decode_table, layout 1; the frame calls' layout 2, which
// adds the frame JSON) as objects that read it lazily: RecordTable owns one copy of the
// table, RecordSet is a run of its records (a partition's records field), Record one
// entry, and Columns the table's fields as typed arrays. Layout in capi/kwire.h.

import { COMPRESSIONS, HDR, REC, SCHEMA_SOURCES, SOURCE_INPUT, SOURCE_TABLE, TIMESTAMP_TYPES, decodeText, outside, readGeometry, tableError, text } from './layout.js';

/** Marks a table that kwire.wasm returned (see RecordTable's constructor); not exported by the package. */
export const TRUSTED = Symbol('kwire.trusted-table');

// The record entry's fields as int32 word indexes (REC's byte offsets / 4).
const W = Object.freeze(Object.fromEntries(Object.entries(REC).map(([k, v]) => [k, v >> 2])));

/**
 * RecordTable: one record table, in a Uint8Array the table owns (a copy made when the
 * call returned, never the module's memory). Every record entry and header entry is
 * checked against the buffer when the table is created, so the accessors below only load.
 */
export class RecordTable {
  /**
   * @param {Uint8Array} buf the table
   * @param {Uint8Array | null} input the frame a layout-3 table was decoded from: the
   *   spans of its records marked SOURCE_INPUT index it (it is not copied: the caller
   *   must not change it while the records are read)
   */
  constructor(buf, input = null, trusted = undefined) {
    const { dv, size, layout, head, n, stride, recOff, hn, hstride, hOff, skippedBytes } = readGeometry(buf);
    /** The table's bytes: keys, values and header spans are offsets into it (or into input, see sources). */
    this.data = buf;
    /** The input frame the spans of SOURCE_INPUT records index (layout 3), else null. */
    this.input = layout >= 3 ? input : null;
    if (layout >= 3 && input === null) throw tableError('a layout-3 table needs the frame it was decoded from');
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
    if (layout >= 2) {
      const jo = dv.getInt32(40, true);
      const jl = dv.getInt32(44, true);
      if (jo < head || jl < 0 || jo + jl > size) throw tableError(`frame JSON (${jo}, ${jl}) outside the table`);
      this._jsonOffset = jo;
      this._jsonLength = jl;
    }
    // A table the module just returned is not checked entry by entry: the module's own
    // tests and fuzz targets hold its spans to its buffers, and a subarray cannot leave
    // its buffer anyway. Any other table is.
    if (trusted !== TRUSTED) this._check();
  }

  _check() {
    const { data, length: n } = this;
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
    return new Record(this, this._recOff + i * this._stride);
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
    return new Record(this.table, this.table._recOff + (this.first + i) * this.table._stride);
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
 * buildColumns gathers the strided entries into dense typed arrays:
 *   offsets, timestamps   BigInt64Array [n]
 *   keys, values          Int32Array [2n]: (offset into data, length); length -1 = null
 *   headerIndex           Int32Array [2n]: (first header, header count) of each record
 *   headers               Int32Array [4h]: (key offset, key length, value offset, value length)
 *   sources               Uint8Array [n]: where record i's spans (and its headers') point:
 *                         SOURCE_TABLE (0) data, SOURCE_INPUT (1) input
 *   data                  Uint8Array: the table
 *   input                 Uint8Array | null: the frame of a layout-3 table (null before)
 */
function buildColumns(t) {
  const n = t.length;
  const hn = t.headerCount;
  const data = t.data;
  const offsets = new BigInt64Array(n);
  const timestamps = new BigInt64Array(n);
  const keys = new Int32Array(2 * n);
  const values = new Int32Array(2 * n);
  const headerIndex = new Int32Array(2 * n);
  const sources = new Uint8Array(n);
  let headers;
  const aligned = data.byteOffset % 4 === 0 && t._recOff % 4 === 0 && t._stride % 4 === 0 && t._hOff % 4 === 0 && t._hstride % 4 === 0;
  if (aligned) {
    const i32 = new Int32Array(data.buffer, data.byteOffset, data.length >> 2);
    const o32 = new Int32Array(offsets.buffer);
    const t32 = new Int32Array(timestamps.buffer);
    const s = t._stride >> 2;
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
    }
    if (t._hstride === 16) {
      headers = i32.slice(t._hOff >> 2, (t._hOff >> 2) + 4 * hn);
    } else {
      headers = new Int32Array(4 * hn);
      for (let j = 0, e = t._hOff >> 2, s2 = t._hstride >> 2; j < hn; j++, e += s2) {
        headers[4 * j] = i32[e];
        headers[4 * j + 1] = i32[e + 1];
        headers[4 * j + 2] = i32[e + 2];
        headers[4 * j + 3] = i32[e + 3];
      }
    }
  } else {
    const dv = t._dv;
    for (let i = 0, at = t._recOff; i < n; i++, at += t._stride) {
      offsets[i] = dv.getBigInt64(at, true);
      timestamps[i] = dv.getBigInt64(at + 8, true);
      for (let k = 0; k < 2; k++) {
        keys[2 * i + k] = dv.getInt32(at + 24 + 4 * k, true);
        values[2 * i + k] = dv.getInt32(at + 32 + 4 * k, true);
        headerIndex[2 * i + k] = dv.getInt32(at + 40 + 4 * k, true);
      }
      sources[i] = dv.getInt32(at + REC.source, true);
    }
    headers = new Int32Array(4 * hn);
    for (let j = 0, at = t._hOff; j < hn; j++, at += t._hstride) {
      for (let k = 0; k < 4; k++) headers[4 * j + k] = dv.getInt32(at + 4 * k, true);
    }
  }
  // Little-endian hosts only above: the table is little-endian, and so are typed arrays
  // on every platform JavaScript runs on today; checked once here all the same.
  if (n > 0 && offsets[0] !== t._dv.getBigInt64(t._recOff, true)) throw tableError('a big-endian host is not supported');
  return Object.freeze({ length: n, data, input: t.input, sources, offsets, timestamps, keys, values, headerIndex, headers });
}

function view(buf, off, len) {
  return buf.subarray(off, off + len);
}
