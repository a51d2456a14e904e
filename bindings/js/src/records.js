// Reading the record table (kw_records_decode_table, layout in kwire.h) with plain
// little-endian loads: no JSON on the records fast path.

const COMPRESSIONS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
const SCHEMA_SOURCES = ['none', 'value-prefix', 'header'];
const HEADER_SIZE = 40;
const RECORD_MIN_STRIDE = 96;
const HEADER_MIN_STRIDE = 16;

const utf8 = new TextDecoder();

function timestampType(t) {
  return t === 0 ? 'CreateTime' : t === 1 ? 'LogAppendTime' : 'NoTimestampType';
}

// Header keys are short ASCII in practice: build them without a TextDecoder call.
function text(buf, off, len) {
  if (len <= 64) {
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

/**
 * readTable turns a record table into record objects.
 * @param {Uint8Array} buf the table, in memory the caller owns (never the module's)
 * @param {boolean} copy keys and values as copies (true) or as views into buf (false)
 * @param {boolean} int64String int64 fields as decimal strings instead of bigint
 */
export function readTable(buf, copy, int64String) {
  const size = buf.length;
  if (size < HEADER_SIZE || buf[0] !== 0x4b || buf[1] !== 0x57 || buf[2] !== 0x52 || buf[3] !== 0x54) {
    throw new Error('kwire: the record table has no KWRT header');
  }
  const dv = new DataView(buf.buffer, buf.byteOffset, size);
  const i32 = (at) => dv.getInt32(at, true);
  const layout = i32(4);
  const n = i32(8);
  const stride = i32(12);
  const recOff = i32(16);
  const hn = i32(20);
  const hstride = i32(24);
  const hOff = i32(28);
  const skippedBytes = i32(32);
  if (layout < 1 || i32(36) !== size || n < 0 || hn < 0 || stride < RECORD_MIN_STRIDE || hstride < HEADER_MIN_STRIDE ||
      recOff < HEADER_SIZE || hOff < HEADER_SIZE || recOff + n * stride > size || hOff + hn * hstride > size) {
    throw new Error(`kwire: bad record table geometry (layout ${layout}, ${n} records, ${hn} headers, ${size} bytes)`);
  }
  const span = (off, len, what) => {
    if (len === -1) return null;
    if (len < 0 || off < 0 || off + len > size) throw new Error(`kwire: record table ${what} (${off}, ${len}) outside the table`);
    return copy ? buf.slice(off, off + len) : buf.subarray(off, off + len);
  };
  const records = new Array(n);
  for (let i = 0; i < n; i++) {
    const at = recOff + i * stride;
    const first = i32(at + 40);
    const count = i32(at + 44);
    if (first < 0 || count < 0 || first + count > hn) throw new Error(`kwire: record ${i}: headers ${first}+${count} of ${hn}`);
    const headers = new Array(count);
    for (let j = 0; j < count; j++) {
      const h = hOff + (first + j) * hstride;
      const ko = i32(h);
      const kl = i32(h + 4);
      if (kl < 0 || ko < 0 || ko + kl > size) throw new Error(`kwire: record ${i}: header ${j} key outside the table`);
      headers[j] = { key: text(buf, ko, kl), value: span(i32(h + 8), i32(h + 12), 'header value') };
    }
    const flags = i32(at + 72);
    const offset = dv.getBigInt64(at, true);
    const timestamp = dv.getBigInt64(at + 8, true);
    const producerId = dv.getBigInt64(at + 16, true);
    records[i] = {
      offset: int64String ? offset.toString() : offset,
      timestamp: int64String ? timestamp.toString() : timestamp,
      timestampType: timestampType(i32(at + 68)),
      key: span(i32(at + 24), i32(at + 28), 'key'),
      value: span(i32(at + 32), i32(at + 36), 'value'),
      headers,
      producerId: int64String ? producerId.toString() : producerId,
      producerEpoch: i32(at + 56),
      sequence: i32(at + 48),
      leaderEpoch: i32(at + 52),
      magic: i32(at + 60),
      compression: COMPRESSIONS[i32(at + 64)] ?? String(i32(at + 64)),
      transactional: (flags & 1) !== 0,
      control: (flags & 2) !== 0,
      controlType: i32(at + 76),
      schemaSource: SCHEMA_SOURCES[i32(at + 80)] ?? String(i32(at + 80)),
      schemaId: i32(at + 84),
      schemaVersion: i32(at + 88),
    };
  }
  return { records, skippedBytes };
}
