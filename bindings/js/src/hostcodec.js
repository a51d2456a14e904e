// The host's own decompressors, used in place of the module's where they are faster: the
// frame-records calls with KW_RECORDS_HOST_* flags list the batches of those codecs, and
// kw_decode_frame_records_inflated reads what the host made of them (capi/kwire.h).
//
// In Node: node:zlib's gunzip for gzip (native zlib: on the bench's frames, decodeFetch
// with it is 1.17x as fast as with the module's inflate kernel on 200-600 B values, and
// 0.87x to 1.27x on ~100 B ones), and zstd where the running Node has
// zlib.zstdDecompressSync (22.15 and later; Node 20 has none, and the module
// decompresses). Snappy and LZ4 stay in the
// module: its kernels run them about as fast as native code, and Node has neither.
// Browsers offer only asynchronous decompression (DecompressionStream), which a
// synchronous decode cannot wait for: there the module decompresses everything.
//
// A decompressor returns the decompressed bytes when the input is exactly one valid
// stream (concatenated gzip members count as one, as Kafka's reader reads them) of at
// most max bytes, and null otherwise: the batch is then left to the module, whose
// decompressor gives its own error or its own verdict. So a host decompressor can only
// make a decode faster, never change what it returns.

import {
  KW_BATCH_LIST_HEADER_SIZE, KW_BATCH_LIST_MAGIC, KW_COMPRESSION_GZIP, KW_COMPRESSION_LZ4, KW_COMPRESSION_SNAPPY, KW_COMPRESSION_ZSTD,
  KW_RECORDS_HOST_GZIP, KW_RECORDS_HOST_LZ4, KW_RECORDS_HOST_SNAPPY, KW_RECORDS_HOST_ZSTD,
} from './abi_gen.js';

const nodeZlib = typeof process === 'object' && process !== null && typeof process.getBuiltinModule === 'function'
  ? process.getBuiltinModule('node:zlib')
  : null;

// kBufferMaxLength bounds maxOutputLength; the module's limit is far below it anyway.
const maxOutput = (max) => Math.min(max, nodeZlib?.constants?.kMaxLength ?? 2 ** 31 - 1);

function viaZlib(fn) {
  return (data, max) => {
    let r;
    try {
      r = fn(data, { info: true, maxOutputLength: maxOutput(max) });
    } catch {
      return null; // corrupt, cut short, or past max: the module's decompressor says which
    }
    // Trailing bytes that do not start another member are corrupt to Kafka; zlib may
    // stop before them without complaint.
    if (r.engine.bytesWritten !== data.length || r.buffer.length > max) return null;
    return new Uint8Array(r.buffer.buffer, r.buffer.byteOffset, r.buffer.length);
  };
}

/**
 * The decompressors of this host by KW_COMPRESSION_* code (1 gzip, 4 zstd): each
 * (Uint8Array, max) => Uint8Array | null.
 */
export const HOST_DECOMPRESSORS = Object.freeze(new Map([
  ...(nodeZlib !== null ? [[KW_COMPRESSION_GZIP, viaZlib(nodeZlib.gunzipSync)]] : []),
  ...(typeof nodeZlib?.zstdDecompressSync === 'function' ? [[KW_COMPRESSION_ZSTD, viaZlib(nodeZlib.zstdDecompressSync)]] : []),
]));

const NAMES = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

const HOST_FLAG_OF = new Map([
  [KW_COMPRESSION_GZIP, KW_RECORDS_HOST_GZIP], [KW_COMPRESSION_SNAPPY, KW_RECORDS_HOST_SNAPPY],
  [KW_COMPRESSION_LZ4, KW_RECORDS_HOST_LZ4], [KW_COMPRESSION_ZSTD, KW_RECORDS_HOST_ZSTD],
]);

/** The KW_RECORDS_HOST_* flags of the codecs above. */
export const HOST_FLAGS = [...HOST_DECOMPRESSORS.keys()].reduce((f, c) => f | HOST_FLAG_OF.get(c), 0);

const LIST_MAGIC = [...KW_BATCH_LIST_MAGIC].map((c) => c.charCodeAt(0));

/** Whether a frame-records call's output is a batch list (KW_BATCH_LIST_MAGIC), not a table. */
export function isBatchList(out) {
  return out.length >= KW_BATCH_LIST_HEADER_SIZE && LIST_MAGIC.every((c, i) => out[i] === c);
}

/** The names of the codecs this host decompresses itself ('gzip', 'zstd'). */
export function hostCodecs() {
  return [...HOST_DECOMPRESSORS.keys()].map((c) => NAMES[c]);
}
