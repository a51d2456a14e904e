// Kafka's validateRecords for one Produce partition, for the per-partition path
// (options.fallback, or a module without the frame-records calls): the same rules and
// verdicts as the module's (records.ValidateProduceRecords in the Go codec).

import { ErrorCode } from './constants.js';

const LOG_OVERHEAD = 12;
const MAGIC_AT = 16;
const ATTRIBUTES_AT = 21;

/**
 * The verdict on the records bytes of a Produce partition at `version`: null when they
 * pass, else { errorCode, error, reason }.
 */
export function produceVerdict(version, b) {
  if (version < 3 || b === null || b === undefined) return null;
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const v = `Produce v${version}`;
  const bad = (code, error, reason) => ({ errorCode: code, error, reason });
  let pos = 0;
  let batches = 0;
  while (pos < b.length && batches < 2) {
    const left = b.length - pos;
    if (left < LOG_OVERHEAD) break;
    const length = dv.getInt32(pos + 8);
    if (length < 14) return bad(ErrorCode.CORRUPT_MESSAGE, 'CORRUPT_MESSAGE', `record size ${length} is less than the minimum record overhead (14), at byte ${pos}`);
    if (left < MAGIC_AT + 1) break;
    const magic = dv.getInt8(pos + MAGIC_AT);
    if (magic < 0 || magic > 2) return bad(ErrorCode.CORRUPT_MESSAGE, 'CORRUPT_MESSAGE', `invalid magic ${magic} at byte ${pos + MAGIC_AT}`);
    if (length > left - LOG_OVERHEAD) break;
    if (batches === 0) {
      if (magic !== 2) return bad(ErrorCode.INVALID_RECORD, 'INVALID_RECORD', `${v} allows only record batches of magic 2, found magic ${magic}`);
      if (version < 7 && left >= ATTRIBUTES_AT + 2) {
        const c = dv.getUint16(pos + ATTRIBUTES_AT) & 7;
        if (c === 4) return bad(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, 'UNSUPPORTED_COMPRESSION_TYPE', `${v} may not use zstd compression (from v7 on)`);
        if (c > 4) return bad(ErrorCode.UNKNOWN_SERVER_ERROR, 'UNKNOWN_SERVER_ERROR', `compression id ${c} is unknown`);
      }
    }
    batches++;
    pos += LOG_OVERHEAD + length;
  }
  if (batches === 0) {
    let reason = `${v} needs one record batch per partition, found none`;
    if (b.length > 0) reason += ` complete (${b.length} bytes of a partial batch)`;
    return bad(ErrorCode.INVALID_RECORD, 'INVALID_RECORD', reason);
  }
  if (batches === 1) return null;
  return bad(ErrorCode.INVALID_RECORD, 'INVALID_RECORD', `${v} allows exactly one record batch per partition, found more`);
}
