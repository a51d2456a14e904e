// Reading the record table (kw_records_decode_table, layout in kwire.h) with plain
// little-endian loads: no JSON on the records fast path.

import { COMPRESSIONS, SCHEMA_SOURCES, TIMESTAMP_TYPES, outside, readGeometry, tableError, text } from './layout.js';

/**
 * readTable turns a record table into record objects.
 * @param {Uint8Array} buf the table, in memory the caller owns (never the module's)
 * @param {boolean} copy keys and values as copies (true) or as views into buf (false)
 * @param {boolean} int64String int64 fields as decimal strings instead of bigint
 */
export function readTable(buf, copy, int64String) {
  const { dv, size, layout, n, stride, recOff, hn, hstride, hOff, skippedBytes } = readGeometry(buf);
  if (layout >= 4) throw tableError(`a layout-${layout} table has no record entries (RecordTable reads it)`);
  // Records of one batch share their producer id, and headers usually repeat their
  // keys: the previous value is reused when the bytes are the same.
  let pidLo = 0;
  let pidHi = 0;
  let pid = null;
  let lastKeyOff = -1;
  let lastKeyLen = -1;
  let lastKey = '';
  const records = new Array(n);
  for (let i = 0; i < n; i++) {
    const at = recOff + i * stride;
    const first = dv.getInt32(at + 40, true);
    const count = dv.getInt32(at + 44, true);
    if (outside(first, count, hn)) throw tableError(`record ${i}: headers ${first}+${count} of ${hn}`);
    const headers = new Array(count);
    for (let j = 0; j < count; j++) {
      const h = hOff + (first + j) * hstride;
      const ko = dv.getInt32(h, true);
      const kl = dv.getInt32(h + 4, true);
      if (outside(ko, kl, size)) throw tableError(`record ${i}: header ${j} key outside the table`);
      let key;
      if (kl === lastKeyLen && sameBytes(buf, ko, lastKeyOff, kl)) {
        key = lastKey;
      } else {
        key = text(buf, ko, kl);
        lastKeyOff = ko;
        lastKeyLen = kl;
        lastKey = key;
      }
      headers[j] = { key, value: span(buf, size, copy, dv.getInt32(h + 8, true), dv.getInt32(h + 12, true)) };
    }
    const lo = dv.getUint32(at + 16, true);
    const hi = dv.getInt32(at + 20, true);
    if (pid === null || lo !== pidLo || hi !== pidHi) {
      pidLo = lo;
      pidHi = hi;
      pid = int64String ? dv.getBigInt64(at + 16, true).toString() : dv.getBigInt64(at + 16, true);
    }
    const flags = dv.getInt32(at + 72, true);
    const compression = dv.getInt32(at + 64, true);
    const schemaSource = dv.getInt32(at + 80, true);
    records[i] = {
      offset: int64String ? dv.getBigInt64(at, true).toString() : dv.getBigInt64(at, true),
      timestamp: int64String ? dv.getBigInt64(at + 8, true).toString() : dv.getBigInt64(at + 8, true),
      timestampType: TIMESTAMP_TYPES[dv.getInt32(at + 68, true) + 1] ?? 'NoTimestampType',
      key: span(buf, size, copy, dv.getInt32(at + 24, true), dv.getInt32(at + 28, true)),
      value: span(buf, size, copy, dv.getInt32(at + 32, true), dv.getInt32(at + 36, true)),
      headers,
      producerId: pid,
      producerEpoch: dv.getInt32(at + 56, true),
      sequence: dv.getInt32(at + 48, true),
      leaderEpoch: dv.getInt32(at + 52, true),
      magic: dv.getInt32(at + 60, true),
      compression: COMPRESSIONS[compression] ?? String(compression),
      transactional: (flags & 1) !== 0,
      control: (flags & 2) !== 0,
      controlType: dv.getInt32(at + 76, true),
      schemaSource: SCHEMA_SOURCES[schemaSource] ?? String(schemaSource),
      schemaId: dv.getInt32(at + 84, true),
      schemaVersion: dv.getInt32(at + 88, true),
    };
  }
  return { records, skippedBytes };
}

// span returns bytes [off, off+len) of buf as a view or a copy; null for length -1.
function span(buf, size, copy, off, len) {
  if (len === -1) return null;
  if (outside(off, len, size)) throw tableError(`span (${off}, ${len}) outside the table`);
  return copy ? buf.slice(off, off + len) : buf.subarray(off, off + len);
}

function sameBytes(buf, a, b, len) {
  for (let i = 0; i < len; i++) if (buf[a + i] !== buf[b + i]) return false;
  return true;
}
