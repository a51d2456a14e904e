// What the two readers of the record table share (src/records.js reads it into plain
// objects for decodeRecords, src/table.js into lazy RecordTable views): its names, its
// header and geometry checks, the bounds check of a span, and header-key text.
// Layout in capi/kwire.h.

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
 * 'no KWRT header' or 'geometry' error otherwise.
 * @param {Uint8Array} buf the table
 */
export function readGeometry(buf) {
  const size = buf.length;
  if (size < HEADER_SIZE_1 || buf[0] !== 0x4b || buf[1] !== 0x57 || buf[2] !== 0x52 || buf[3] !== 0x54) {
    throw tableError('no KWRT header');
  }
  const dv = new DataView(buf.buffer, buf.byteOffset, size);
  const layout = dv.getInt32(4, true);
  const n = dv.getInt32(8, true);
  const stride = dv.getInt32(12, true);
  const recOff = dv.getInt32(16, true);
  const hn = dv.getInt32(20, true);
  const hstride = dv.getInt32(24, true);
  const hOff = dv.getInt32(28, true);
  const head = layout >= 2 ? HEADER_SIZE_2 : HEADER_SIZE_1;
  if (layout < 1 || size < head || dv.getInt32(36, true) !== size || n < 0 || hn < 0 || stride < RECORD_MIN_STRIDE ||
      hstride < HEADER_MIN_STRIDE || recOff < head || hOff < head || recOff + n * stride > size || hOff + hn * hstride > size) {
    throw tableError(`geometry (layout ${layout}, ${n} records, ${hn} headers, ${size} bytes)`);
  }
  return { dv, size, layout, head, n, stride, recOff, hn, hstride, hOff, skippedBytes: dv.getInt32(32, true) };
}

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
