// RecordTableBuilder: a record table (layout 1 of capi/kwire.h) written by the host, the
// records input of kw_encode_request_frame_records. Also read back by RecordTable.

import { asBytes } from './base64.js';
import { Record } from './table.js';

const HEADER = 40;
const STRIDE = 96;
const HSTRIDE = 16;
const utf8enc = new TextEncoder();

function bytesOf(v, what) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return utf8enc.encode(v);
  try {
    return asBytes(v);
  } catch {
    throw new TypeError(`kwire: ${what} must be bytes, a string or null`);
  }
}

function int64Of(v, what) {
  if (v === undefined || v === null) return -1n;
  if (typeof v === 'bigint') return BigInt.asIntN(64, v) === v ? v : rangeError(what);
  if (typeof v === 'number') return Number.isSafeInteger(v) ? BigInt(v) : rangeError(what);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return int64Of(BigInt(v), what);
  if (v instanceof Date) return BigInt(v.getTime());
  throw new TypeError(`kwire: ${what} must be a bigint, a safe integer, a decimal string or a Date`);
}

function rangeError(what) {
  throw new RangeError(`kwire: ${what} is not an exact int64`);
}

/**
 * RecordTableBuilder collects records ({key, value, timestamp, headers}, keys and values
 * as bytes, strings or null, headers as {key, value} or [key, value]; a record from a
 * decoded RecordSet works too) and writes them as one record table.
 */
export class RecordTableBuilder {
  constructor() {
    this._recs = []; // [timestamp bigint, key, value, firstHeader, headerCount]
    this._hdrs = []; // [key bytes, value bytes|null]
    this._bytes = 0;
  }

  /** The number of records added so far (the index the next one gets). */
  get length() {
    return this._recs.length;
  }

  /** Adds one record and returns its index. */
  add(r) {
    const i = this._recs.length;
    if (r === null || typeof r !== 'object') throw new TypeError(`kwire: record ${i} is not an object`);
    const key = bytesOf(r.key, `record ${i}: key`);
    const value = bytesOf(r.value, `record ${i}: value`);
    const ts = int64Of(r.timestamp, `record ${i}: timestamp`);
    const first = this._hdrs.length;
    const hs = r instanceof Record ? r.rawHeaders : (r.headers ?? []);
    for (const h of hs) {
      const [k, v] = Array.isArray(h) ? h : [h.key, h.value];
      if (k === null || k === undefined) throw new TypeError(`kwire: record ${i}: a header key must be a string or bytes`);
      const kb = bytesOf(k, `record ${i}: header key`);
      const vb = bytesOf(v, `record ${i}: header value`);
      this._hdrs.push([kb, vb]);
      this._bytes += kb.length + (vb ? vb.length : 0);
    }
    this._recs.push([ts, key, value, first, hs.length]);
    this._bytes += (key ? key.length : 0) + (value ? value.length : 0);
    return i;
  }

  /** Adds every record of an iterable and returns the index of the first. */
  addAll(records) {
    const first = this._recs.length;
    for (const r of records) this.add(r);
    return first;
  }

  /** The table's bytes (layout 1). */
  build() {
    const n = this._recs.length;
    const hn = this._hdrs.length;
    const hOff = HEADER + n * STRIDE;
    let d = hOff + hn * HSTRIDE;
    const total = d + this._bytes;
    if (total > 0x7fffffff) throw new RangeError('kwire: a record table above 2 GiB');
    const buf = new Uint8Array(total);
    const dv = new DataView(buf.buffer);
    buf.set([0x4b, 0x57, 0x52, 0x54]);
    const head = [1, n, STRIDE, HEADER, hn, HSTRIDE, hOff, 0, total];
    head.forEach((v, k) => dv.setInt32(4 + 4 * k, v, true));
    const put = (b) => {
      if (b === null) return [0, -1];
      buf.set(b, d);
      d += b.length;
      return [d - b.length, b.length];
    };
    for (let i = 0; i < n; i++) {
      const [ts, key, value, first, count] = this._recs[i];
      const at = HEADER + i * STRIDE;
      dv.setBigInt64(at, BigInt(i), true); // offset: the record's index (the encoder assigns offsets)
      dv.setBigInt64(at + 8, ts, true);
      dv.setBigInt64(at + 16, -1n, true);
      const [ko, kl] = put(key);
      const [vo, vl] = put(value);
      const ints = [ko, kl, vo, vl, first, count, -1, -1, -1, 2, 0, ts === -1n ? -1 : 0, 0, -1, 0, -1, -1, 0];
      ints.forEach((v, k) => dv.setInt32(at + 24 + 4 * k, v, true));
    }
    for (let j = 0; j < hn; j++) {
      const [k, v] = this._hdrs[j];
      const at = hOff + j * HSTRIDE;
      const [ko, kl] = put(k);
      const [vo, vl] = put(v);
      dv.setInt32(at, ko, true);
      dv.setInt32(at + 4, kl, true);
      dv.setInt32(at + 8, vo, true);
      dv.setInt32(at + 12, vl, true);
    }
    return buf;
  }
}
