// What the two readers of the record table share (src/records.js reads it into plain
// objects for decodeRecords, src/table.js into lazy RecordTable views): its names, its
// header and geometry checks, the bounds check of a span, and header-key text.
// Layout in capi/kwire.h.

import {
  KW_RB_STRIDE, KW_TABLE_BATCHES_OFFSET, KW_TABLE_BATCH_COUNT, KW_TABLE_BATCH_STRIDE, KW_TABLE_COL_BATCH_INDEX,
  KW_TABLE_COL_CONTROL_TYPES, KW_TABLE_COL_HEADER_INDEX, KW_TABLE_COL_KEYS, KW_TABLE_COL_OFFSETS, KW_TABLE_COL_SCHEMAS,
  KW_TABLE_COL_SOURCES, KW_TABLE_COL_TIMESTAMPS, KW_TABLE_COL_VALUES, KW_TABLE_HEADER_SIZE_4, KW_TABLE_LAYOUT,
  KW_TABLE_RECORDS_OFFSET, KW_TABLE_RECORD_COUNT, KW_TABLE_RECORD_STRIDE, KW_TABLE_HEADER_COUNT, KW_TABLE_HEADER_STRIDE,
  KW_TABLE_HEADERS_OFFSET, KW_TABLE_SKIPPED_BYTES, KW_TABLE_TOTAL_SIZE,
} from './abi_gen.js';

export const COMPRESSIONS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
export const SCHEMA_SOURCES = ['none', 'value-prefix', 'header'];
export const TIMESTAMP_TYPES = ['NoTimestampType', 'CreateTime', 'LogAppendTime'];
// Offsets of the fields of a record entry and a header entry (KW_REC_*, KW_HDR_* in
// capi/kwire.h; test/layout.test.js holds them to the header).
export const REC = Object.freeze({
  offset: 0, timestamp: 8, producerId: 16, keyOffset: 24, keyLength: 28, valueOffset: 32, valueLength: 36,
  firstHeader: 40, headerCount: 44, sequence: 48, leaderEpoch: 52, producerEpoch: 56, magic: 60, compression: 64,
  timestampType: 68, flags: 72, controlType: 76, schemaSource: 80, schemaId: 84, schemaVersion: 88, source: 92,
});
export const HDR = Object.freeze({ keyOffset: 0, keyLength: 4, valueOffset: 8, valueLength: 12 });
/** KW_SOURCE_TABLE / KW_SOURCE_INPUT: where a record's spans point. */
export const SOURCE_TABLE = 0;
export const SOURCE_INPUT = 1;
const HEADER_SIZE_1 = 40; // table header of layout 1
const HEADER_SIZE_2 = 48; // layout 2: + json_offset, json_length
/** Layout 4 (KW_RECORDS_COLUMNS, ABI 1.4): the records' fields as columns. */
export const LAYOUT_COLUMNS = 4;
const RECORD_MIN_STRIDE = 96;
const HEADER_MIN_STRIDE = 16;

const utf8 = new TextDecoder();

export function tableError(msg) {
  return new Error('kwire: bad record table: ' + msg);
}

/**
 * outside reports whether [off, off+len) is not within [0, size) (a negative len
 * included): the bounds check of every span of the table, and of a run of entries.
 */
export function outside(off, len, size) {
  return len < 0 || off < 0 || off + len > size;
}

/**
 * readGeometry checks the table header of buf (magic, total size, counts, strides and
 * where the record and header entries lie) and returns what it holds; throws the
 * 'no KWRT header' or 'geometry' error otherwise. A layout-4 table's columns and batch
 * table are checked by readColumns.
 * @param {Uint8Array} buf the table
 */
export function readGeometry(buf) {
  const size = buf.length;
  if (size < HEADER_SIZE_1 || buf[0] !== 0x4b || buf[1] !== 0x57 || buf[2] !== 0x52 || buf[3] !== 0x54) {
    throw tableError('no KWRT header');
  }
  const dv = new DataView(buf.buffer, buf.byteOffset, size);
  const layout = dv.getInt32(KW_TABLE_LAYOUT, true);
  const n = dv.getInt32(KW_TABLE_RECORD_COUNT, true);
  const stride = dv.getInt32(KW_TABLE_RECORD_STRIDE, true);
  const recOff = dv.getInt32(KW_TABLE_RECORDS_OFFSET, true);
  const hn = dv.getInt32(KW_TABLE_HEADER_COUNT, true);
  const hstride = dv.getInt32(KW_TABLE_HEADER_STRIDE, true);
  const hOff = dv.getInt32(KW_TABLE_HEADERS_OFFSET, true);
  const head = layout >= LAYOUT_COLUMNS ? KW_TABLE_HEADER_SIZE_4 : layout >= 2 ? HEADER_SIZE_2 : HEADER_SIZE_1;
  // Layout 4 has no record entries (record_stride 0, records_offset the offsets column),
  // and every array of it starts 8-aligned.
  const entriesOk = layout >= LAYOUT_COLUMNS
    ? layout === LAYOUT_COLUMNS && stride === 0 && recOff % 8 === 0 && hOff % 8 === 0 && hstride % 4 === 0
    : stride >= RECORD_MIN_STRIDE && recOff + n * stride <= size;
  if (layout < 1 || size < head || dv.getInt32(KW_TABLE_TOTAL_SIZE, true) !== size || n < 0 || hn < 0 || !entriesOk ||
      hstride < HEADER_MIN_STRIDE || recOff < head || hOff < head || hOff + hn * hstride > size) {
    throw tableError(`geometry (layout ${layout}, ${n} records, ${hn} headers, ${size} bytes)`);
  }
  return { dv, size, layout, head, n, stride, recOff, hn, hstride, hOff, skippedBytes: dv.getInt32(KW_TABLE_SKIPPED_BYTES, true) };
}

/**
 * readColumns checks where a layout-4 table's batch table and columns lie (each within
 * the table, after its header, 8-aligned; the offsets column at records_offset) and
 * returns their byte offsets; throws the 'columns' error otherwise. buf must start
 * 8-aligned in its ArrayBuffer.
 * @param {DataView} dv the table
 * @param {number} n its record count
 */
export function readColumns(dv, n) {
  const size = dv.byteLength;
  const at = (field) => dv.getInt32(field, true);
  const bn = at(KW_TABLE_BATCH_COUNT);
  const bstride = at(KW_TABLE_BATCH_STRIDE);
  const c = {
    bn, bstride, batches: at(KW_TABLE_BATCHES_OFFSET), offsets: at(KW_TABLE_COL_OFFSETS), timestamps: at(KW_TABLE_COL_TIMESTAMPS),
    keys: at(KW_TABLE_COL_KEYS), values: at(KW_TABLE_COL_VALUES), headerIndex: at(KW_TABLE_COL_HEADER_INDEX),
    batchIndex: at(KW_TABLE_COL_BATCH_INDEX), sources: at(KW_TABLE_COL_SOURCES), controlTypes: at(KW_TABLE_COL_CONTROL_TYPES),
    schemas: at(KW_TABLE_COL_SCHEMAS),
  };
  // Each array: [its offset, its size in bytes].
  const arrays = [[c.batches, bn * bstride], [c.offsets, 8 * n], [c.timestamps, 8 * n], [c.keys, 8 * n], [c.values, 8 * n],
    [c.headerIndex, 8 * n], [c.batchIndex, 4 * n], [c.sources, n], [c.controlTypes, 4 * n], [c.schemas, 12 * n]];
  let ok = bn >= 0 && bstride >= KW_RB_STRIDE && bstride % 8 === 0 && c.offsets === at(KW_TABLE_RECORDS_OFFSET);
  for (const [off, len] of arrays) ok &&= off >= KW_TABLE_HEADER_SIZE_4 && off % 8 === 0 && !outside(off, len, size);
  if (!ok) {
    throw tableError(`columns (${n} records, ${bn} batches of ${bstride} bytes, arrays at ${arrays.map((a) => a[0]).join(' ')}, ${size} bytes)`);
  }
  return c;
}

/** Whether typed arrays are little-endian here, as the table is (true on every platform JavaScript runs on today). */
export const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// Header keys are short ASCII in practice: build them without a TextDecoder call.
export function text(buf, off, len) {
  if (len <= 32) {
    let s = '';
    for (let i = off, end = off + len; i < end; i++) {
      const c = buf[i];
      if (c >= 0x80) return utf8.decode(buf.subarray(off, off + len));
      s += String.fromCharCode(c);
    }
    return s;
  }
  return utf8.decode(buf.subarray(off, off + len));
}

/** The whole of [off, off+len) of buf as text (TextDecoder). */
export function decodeText(buf, off, len) {
  return utf8.decode(buf.subarray(off, off + len));
}
