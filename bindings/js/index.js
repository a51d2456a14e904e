// kwire for JavaScript: Kafka's wire protocol (request and response frames, message
// bodies, record batches) through kwire's WebAssembly module, in Node >= 20 and in
// browsers with the same code. Zero runtime dependencies.
//
//   import { init, decodeRequest } from 'kwire';
//   await init();                       // loads kwire.wasm next to this file
//   const { apiKey, header, body } = decodeRequest(frameBytes);
//
// Every call copies its input into the module's memory, calls one kw_ function of the
// flat ABI (capi/kwire.h in the kwire repository) and copies the result out; nothing
// the caller gets refers to the module's memory.

import { wasiImports, ProcExit } from './src/wasi.js';
import { errorFor, KwireError, KwireTrapError, KW_ERR_ARG } from './src/errors.js';
import { asBytes, fromBase64, toBase64 } from './src/base64.js';
import { readTable } from './src/records.js';
import { RecordTable, RecordSet, Record, BatchWords, TRUSTED } from './src/table.js';
import { RecordTableBuilder } from './src/builder.js';
import { produceVerdict } from './src/validate.js';
import { HOST_DECOMPRESSORS, HOST_FLAGS, hostCodecs, isBatchList } from './src/hostcodec.js';
import {
  KW_BATCH_COMPRESSION, KW_BATCH_DATA_LENGTH, KW_BATCH_DATA_OFFSET, KW_BATCH_LIST_COUNT, KW_BATCH_LIST_HEADER_SIZE, KW_BATCH_STRIDE,
  KW_RECORDS_COLUMNS,
} from './src/abi_gen.js';

export * from './src/errors.js';
export { toBase64, fromBase64 };
export { RecordTable, RecordSet, Record, RecordTableBuilder, BatchWords };
export { ApiKey, ErrorCode, RETRIABLE_ERROR_CODES, apiKeyName, errorCodeName } from './src/constants.js';
/** The package's version (package.json's). */
export { VERSION } from './src/version.js';

/** The ABI major and minor version this binding is written against. */
export const ABI_MAJOR = 1;
export const ABI_MINOR = 0;

/** Compression codecs, as in a batch's attributes. */
export const Compression = Object.freeze({ none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 });

/** kw_peek_request_header reads at most this much: 14 header bytes and a client id. */
const PEEK_MAX = 14 + 0x7fff;
/** Inputs up to this size are UTF-8-encoded straight into the module's memory. */
const ENCODE_INTO_MAX = 1 << 20;
const RECORDS_SKIP_CRC = 1;
/** KW_RECORDS_INPUT_SPANS (ABI 1.2): uncompressed records stay in the caller's frame. */
const RECORDS_INPUT_SPANS = 2;
/** The module's cap on what one compressed batch may decompress to when max_decompressed is 0. */
const DEFAULT_MAX_DECOMPRESSED = 100 << 20;
const MAX_ALLOC = 512 << 20;
const EMPTY = new Uint8Array(0);

const utf8enc = new TextEncoder();
const utf8dec = new TextDecoder();
const isNode = typeof process === 'object' && process !== null && typeof process.versions?.node === 'string';

// ---------------------------------------------------------------------------------
// Loading

let defaultModule = null; // Promise<WebAssembly.Module> of kwire.wasm next to this file

/**
 * compile compiles kwire.wasm from a source: undefined (the kwire.wasm shipped next to
 * this file), a URL or URL string (fetched; a file: URL is read from disk in Node), a
 * file path (Node), bytes, a Response (or a promise of one), or a compiled
 * WebAssembly.Module.
 */
export async function compile(source) {
  if (source === undefined) {
    defaultModule ??= compileURL(new URL('./kwire.wasm', import.meta.url));
    try {
      return await defaultModule;
    } catch (e) {
      defaultModule = null;
      throw e;
    }
  }
  if (source instanceof WebAssembly.Module) return source;
  if (source && typeof source.then === 'function') return compile(await source);
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return WebAssembly.compile(source);
  if (typeof Response === 'function' && source instanceof Response) return compileResponse(source);
  if (source instanceof URL) return compileURL(source);
  if (typeof source === 'string') {
    if (/^[a-z][a-z0-9+.-]*:/i.test(source) && !/^[a-z]:[\\/]/i.test(source)) return compileURL(new URL(source));
    if (isNode) {
      const { pathToFileURL } = await import(/* webpackIgnore: true */ /* @vite-ignore */ 'node:url');
      return compileURL(pathToFileURL(source));
    }
    return compileURL(new URL(source, globalThis.location?.href));
  }
  throw new TypeError('kwire: cannot load kwire.wasm from ' + Object.prototype.toString.call(source));
}

async function compileURL(url) {
  if (url.protocol === 'file:') {
    const fs = await import(/* webpackIgnore: true */ /* @vite-ignore */ 'node:fs/promises');
    return WebAssembly.compile(await fs.readFile(url));
  }
  return compileResponse(await fetch(url));
}

async function compileResponse(resp) {
  if (!resp.ok) throw new Error(`kwire: fetching ${resp.url || 'kwire.wasm'}: HTTP ${resp.status}`);
  const type = resp.headers.get('content-type') || '';
  if (typeof WebAssembly.compileStreaming === 'function' && type.split(';')[0].trim() === 'application/wasm') {
    return WebAssembly.compileStreaming(resp);
  }
  return WebAssembly.compile(await resp.arrayBuffer());
}

let defaultInstance = null;
let defaultLoading = null;

/**
 * init loads the instance the module-level functions (decodeRequest, ...) use and
 * returns it. Calling it again returns the same instance; pass a source (see compile)
 * the first time to load kwire.wasm from elsewhere.
 */
export function init(source, options) {
  if (defaultInstance) return Promise.resolve(defaultInstance);
  defaultLoading ??= Kwire.load(source, options).then(
    (k) => (defaultInstance = k),
    (e) => {
      defaultLoading = null;
      throw e;
    },
  );
  return defaultLoading;
}

/** load creates a new, independent instance (its own memory). */
export function load(source, options) {
  return Kwire.load(source, options);
}

function def() {
  if (defaultInstance === null) throw new Error('kwire: call `await init()` before using the module-level functions');
  return defaultInstance;
}

// ---------------------------------------------------------------------------------
// The instance

const INTERNAL = Symbol('kwire.internal');

/**
 * Kwire is one instance of kwire.wasm. It is not reentrant (a call never calls back
 * into user code); a program may create several, each with its own memory.
 */
export class Kwire {
  /** Compiles (once per source) and instantiates kwire.wasm. */
  static async load(source, options = {}) {
    const module = await compile(source);
    const k = new Kwire(INTERNAL, module, options);
    k._attach(await WebAssembly.instantiate(module, k._imports));
    return k;
  }

  constructor(token, module, options) {
    if (token !== INTERNAL) throw new TypeError('kwire: use `await Kwire.load()` (or load(), init())');
    this._module = module;
    this._onOutput = typeof options.onOutput === 'function' ? options.onOutput : null;
    this._stderr = '';
    this._imports = {
      wasi_snapshot_preview1: wasiImports(() => this._memory, (fd, text) => this._output(fd, text), options.env ?? {}),
    };
    this._x = null;
    this._memory = null;
    this._u8 = null;
    this._dv = null;
    this._scratch = 0;
    this._in = 0;
    this._inCap = 0;
    this._names = new Map();
    this._hostStats = { batches: 0, bytes: 0 };
    this._catalogue = null;
  }

  _output(fd, text) {
    if (fd === 2) this._stderr = (this._stderr + text).slice(-8192);
    if (this._onOutput) this._onOutput(fd, text);
  }

  _attach(instance) {
    const x = instance.exports;
    this._x = x;
    this._memory = x.memory;
    this._refresh();
    try {
      x._initialize();
    } catch (err) {
      this._x = null;
      const stderr = this._stderr.trim();
      throw new KwireTrapError(`kwire.wasm failed to initialize: ${err && err.message}${stderr ? ` (module output: ${stderr})` : ''}`, false, '_initialize', err);
    }
    this._refresh();
    const v = x.kw_abi_version();
    const major = v >>> 16;
    const minor = v & 0xffff;
    if (major !== ABI_MAJOR || minor < ABI_MINOR) {
      this._x = null;
      throw new Error(`kwire: kwire.wasm has ABI ${major}.${minor}; this binding needs ${ABI_MAJOR}.x with x >= ${ABI_MINOR}`);
    }
    this._abi = { major, minor };
    this._scratch = this._call('kw_alloc', x.kw_alloc, 40) >>> 0;
    if (this._scratch === 0) throw this._lastError(0, 'kw_alloc');
    this._in = 0;
    this._inCap = 0;
  }

  _refresh() {
    const b = this._memory.buffer;
    if (this._u8 === null || this._u8.buffer !== b) {
      this._u8 = new Uint8Array(b);
      this._dv = new DataView(b);
    }
  }

  // _call runs one export. Anything thrown while the module runs is a trap (or a
  // proc_exit): the instance's state is gone, so it is replaced.
  _call(name, f, a, b, c, d, e, g, h, i, j, k) {
    let r;
    try {
      r = f(a, b, c, d, e, g, h, i, j, k);
    } catch (err) {
      throw this._trapped(name, err);
    }
    this._refresh();
    return r;
  }

  _trapped(name, err) {
    const what = err instanceof ProcExit ? err.message : `kwire.wasm trapped in ${name}: ${err && err.message}`;
    const stderr = this._stderr.trim();
    this._x = null;
    this._stderr = '';
    let replaced = false;
    try {
      // Synchronous instantiation works in Node and in workers; a browser's main thread
      // may refuse it for a module this size, and then the instance stays unusable.
      this._attach(new WebAssembly.Instance(this._module, this._imports));
      replaced = true;
    } catch {
      this._x = null;
    }
    const text = what + (stderr ? ` (module output: ${stderr})` : '') +
      (replaced ? '; the instance was replaced by a fresh one' : '; the instance is unusable: create a new one with load()');
    return new KwireTrapError(text, replaced, name, err);
  }

  _exports() {
    const x = this._x;
    if (x === null) {
      throw new KwireTrapError('kwire: this instance trapped earlier and is unusable: create a new one with load()', false, '');
    }
    return x;
  }

  // _lastError reads kw_last_error_json after a failed call.
  _lastError(status, call) {
    const x = this._x;
    const s = this._scratch;
    let details = null;
    if (x !== null && s !== 0 && this._call('kw_last_error_json', x.kw_last_error_json, s, s + 4) === 0) {
      const p = this._dv.getUint32(s, true);
      const n = this._dv.getUint32(s + 4, true);
      try {
        details = JSON.parse(utf8dec.decode(this._u8.subarray(p, p + n)));
      } catch {
        details = null;
      }
    }
    if (status === 0) status = details && typeof details.status === 'number' ? details.status : KW_ERR_ARG;
    return errorFor(status, details, call);
  }

  // _reserve makes the input buffer at least n bytes long and returns its address.
  _reserve(n) {
    if (n > this._inCap) {
      const x = this._x;
      const cap = Math.max(n, 4096, Math.min(this._inCap * 2, 64 << 20));
      if (this._in !== 0) this._call('kw_free', x.kw_free, this._in);
      this._in = 0;
      this._inCap = 0;
      const p = this._call('kw_alloc', x.kw_alloc, cap) >>> 0;
      if (p === 0) throw this._lastError(0, 'kw_alloc');
      this._in = p;
      this._inCap = cap;
    }
    return this._in;
  }

  // The input buffer holds one call's inputs: an optional prefix (a message name) and
  // then the input proper. _reserve may replace the buffer, so it runs before any write.

  // _putBytes copies prefix and bytes into the input buffer; returns the address of bytes.
  _putBytes(bytes, prefix = EMPTY) {
    const p = this._reserve(prefix.length + bytes.length);
    const u8 = this._u8;
    if (prefix.length > 0) u8.set(prefix, p);
    u8.set(bytes, p + prefix.length);
    return p + prefix.length;
  }

  // _putText writes prefix and then str as UTF-8; returns [address, length] of the text.
  _putText(str, prefix = EMPTY) {
    if (str.length <= ENCODE_INTO_MAX) {
      const max = str.length * 3;
      const p = this._reserve(prefix.length + max);
      if (prefix.length > 0) this._u8.set(prefix, p);
      const at = p + prefix.length;
      return [at, utf8enc.encodeInto(str, this._u8.subarray(at, at + max)).written];
    }
    const b = utf8enc.encode(str);
    return [this._putBytes(b, prefix), b.length];
  }

  _name(name) {
    let b = this._names.get(name);
    if (b === undefined) {
      if (typeof name !== 'string') throw new TypeError('kwire: a message name must be a string');
      b = utf8enc.encode(name);
      if (this._names.size < 4096) this._names.set(name, b);
    }
    return b;
  }

  // _take returns the out buffer of a successful call as [address, length]; a failure
  // throws its error.
  _out(status, call) {
    if (status !== 0) throw this._lastError(status, call);
    const s = this._scratch;
    return [this._dv.getUint32(s, true), this._dv.getUint32(s + 4, true)];
  }

  _takeText(status, call) {
    const [p, n] = this._out(status, call);
    const text = utf8dec.decode(this._u8.subarray(p, p + n));
    this._call('kw_free', this._x.kw_free, p);
    return text;
  }

  _takeBytes(status, call) {
    const [p, n] = this._out(status, call);
    const out = this._u8.slice(p, p + n);
    this._call('kw_free', this._x.kw_free, p);
    return out;
  }

  // -------------------------------------------------------------------------------
  // Version and catalogue

  /** The ABI version of the loaded module: { major, minor }. */
  abiVersion() {
    this._exports();
    return { ...this._abi };
  }

  /** kw_api_catalogue, parsed (cached). */
  catalogue() {
    if (this._catalogue === null) {
      const x = this._exports();
      const s = this._scratch;
      this._catalogue = deepFreeze(JSON.parse(this._takeText(this._call('kw_api_catalogue', x.kw_api_catalogue, s, s + 4), 'kw_api_catalogue')));
    }
    return this._catalogue;
  }

  /** Every api the module knows, in api key order (the catalogue's "apis"). */
  apis() {
    return this.catalogue().apis;
  }

  /** The request and response header versions of (apiKey, apiVersion), by Kafka's rules. */
  headerVersions(apiKey, apiVersion) {
    const x = this._exports();
    const s = this._scratch;
    const st = this._call('kw_header_versions', x.kw_header_versions, apiKey, apiVersion, s, s + 4);
    const [request, response] = this._out(st, 'kw_header_versions');
    return { request, response };
  }

  // -------------------------------------------------------------------------------
  // Message bodies

  /** Decodes the body of message `name` at `version` into its JSON form. */
  decodeMessage(name, version, bytes) {
    const x = this._exports();
    const nb = this._name(name);
    const b = asBytes(bytes);
    const p = this._putBytes(b, nb);
    const s = this._scratch;
    const st = this._call('kw_decode_message', x.kw_decode_message, p - nb.length, nb.length, version, p, b.length, s, s + 4);
    return JSON.parse(this._takeText(st, 'kw_decode_message'));
  }

  /** Encodes message `name` (its JSON form, or JSON text) at `version`: the body only. */
  encodeMessage(name, version, message) {
    const x = this._exports();
    const nb = this._name(name);
    const text = typeof message === 'string' ? message : stringify(message);
    const [p, n] = this._putText(text, nb);
    const s = this._scratch;
    const st = this._call('kw_encode_message', x.kw_encode_message, p - nb.length, nb.length, version, p, n, s, s + 4);
    return this._takeBytes(st, 'kw_encode_message');
  }

  // -------------------------------------------------------------------------------
  // Frames

  /** Decodes a whole request frame (size prefix included). */
  decodeRequest(frame) {
    const x = this._exports();
    const b = asBytes(frame);
    const p = this._putBytes(b);
    const s = this._scratch;
    const st = this._call('kw_decode_request_frame', x.kw_decode_request_frame, p, b.length, s, s + 4);
    return JSON.parse(this._takeText(st, 'kw_decode_request_frame'));
  }

  /** Encodes { header, body } (as decodeRequest returns it) into a whole request frame. */
  encodeRequest(frame) {
    const x = this._exports();
    const [p, n] = this._putText(typeof frame === 'string' ? frame : stringify(frame));
    const s = this._scratch;
    const st = this._call('kw_encode_request_frame', x.kw_encode_request_frame, p, n, s, s + 4);
    return this._takeBytes(st, 'kw_encode_request_frame');
  }

  /** Decodes a whole response frame answering a request of (apiKey, apiVersion). */
  decodeResponse(frame, apiKey, apiVersion) {
    checkApi('decodeResponse', apiKey, apiVersion);
    const x = this._exports();
    const b = asBytes(frame);
    const p = this._putBytes(b);
    const s = this._scratch;
    const st = this._call('kw_decode_response_frame', x.kw_decode_response_frame, p, b.length, apiKey, apiVersion, s, s + 4);
    return JSON.parse(this._takeText(st, 'kw_decode_response_frame'));
  }

  /**
   * Encodes { header, body } as the response frame of (apiKey, apiVersion). When the
   * object carries apiKey and apiVersion (as decodeResponse returns it), they may be left out.
   */
  encodeResponse(frame, apiKey, apiVersion) {
    if (apiKey === undefined && frame && typeof frame === 'object') apiKey = frame.apiKey;
    if (apiVersion === undefined && frame && typeof frame === 'object') apiVersion = frame.apiVersion;
    if (!Number.isInteger(apiKey) || !Number.isInteger(apiVersion)) {
      throw new TypeError('kwire: encodeResponse needs the api key and version (arguments, or apiKey/apiVersion in the frame)');
    }
    const x = this._exports();
    const [p, n] = this._putText(typeof frame === 'string' ? frame : stringify(frame));
    const s = this._scratch;
    const st = this._call('kw_encode_response_frame', x.kw_encode_response_frame, p, n, apiKey, apiVersion, s, s + 4);
    return this._takeBytes(st, 'kw_encode_response_frame');
  }

  /**
   * Reads a request frame's size, api key, version, correlation id and client id without
   * decoding the rest. The frame may be incomplete past the client id.
   */
  peekHeader(frame) {
    const x = this._exports();
    const b = asBytes(frame);
    const n = Math.min(b.length, PEEK_MAX);
    const p = this._putBytes(b.length > n ? b.subarray(0, n) : b);
    const s = this._scratch;
    const st = this._call('kw_peek_request_header', x.kw_peek_request_header, p, n, s + 8);
    if (st !== 0) throw this._lastError(st, 'kw_peek_request_header');
    const dv = this._dv;
    const f = (i) => dv.getInt32(s + 8 + 4 * i, true);
    const clientIdOffset = f(5);
    const clientIdLength = f(6);
    return {
      frameSize: f(0),
      apiKey: f(1),
      apiVersion: f(2),
      correlationId: f(3),
      headerVersion: f(4),
      clientId: clientIdLength < 0 ? null : utf8dec.decode(b.subarray(clientIdOffset, clientIdOffset + clientIdLength)),
      clientIdOffset,
      clientIdLength,
    };
  }

  // -------------------------------------------------------------------------------
  // Records

  /**
   * Decodes every batch (and legacy message) of a records field: bytes, or the base64
   * text the JSON form holds. Keys and values are Uint8Array views into one buffer per
   * call (copy: false, the default) or copies of their own (copy: true); int64 fields
   * (offset, timestamp, producerId) are bigint, or decimal strings with int64: 'string'.
   */
  decodeRecords(records, options = {}) {
    if (records === null || records === undefined) return { records: [], skippedBytes: 0 };
    const b = typeof records === 'string' ? fromBase64(records) : asBytes(records);
    const flags = options.skipCrc ? RECORDS_SKIP_CRC : 0;
    const max = options.maxDecompressed ?? 0;
    const x = this._exports();
    const p = this._putBytes(b);
    const s = this._scratch;
    const st = this._call('kw_records_decode_table', x.kw_records_decode_table, p, b.length, flags, max, s, s + 4);
    const table = this._takeBytes(st, 'kw_records_decode_table');
    return readTable(table, options.copy === true, options.int64 === 'string');
  }

  /**
   * Decodes records to kw_records_decode_json's form (keys and values base64, int64 as
   * strings). Slower than decodeRecords; the form other hosts see.
   */
  decodeRecordsJSON(records, options = {}) {
    if (records === null || records === undefined) return { records: [], skippedBytes: 0 };
    const b = typeof records === 'string' ? fromBase64(records) : asBytes(records);
    const flags = options.skipCrc ? RECORDS_SKIP_CRC : 0;
    const x = this._exports();
    const p = this._putBytes(b);
    const s = this._scratch;
    const st = this._call('kw_records_decode_json', x.kw_records_decode_json, p, b.length, flags, options.maxDecompressed ?? 0, s, s + 4);
    return JSON.parse(this._takeText(st, 'kw_records_decode_json'));
  }

  /**
   * Builds one record batch (or legacy message set) the way Kafka's producer does and
   * returns its bytes. records: [{ key, value, timestamp, headers }], keys and values as
   * bytes, strings (UTF-8) or null; headers as [{ key, value }] or [key, value] pairs.
   * options: compression ('none', 'gzip', 'snappy', 'lz4', 'zstd' or its number), and the
   * batch fields of kw_records_encode (magic, baseOffset, producerId, ...).
   */
  encodeRecords(records, options = {}) {
    if (!Array.isArray(records)) throw new TypeError('kwire: encodeRecords needs an array of records');
    const { compression = 'none', ...batch } = options;
    const codec = typeof compression === 'number' ? compression : Compression[compression];
    if (codec === undefined) throw new TypeError(`kwire: unknown compression ${String(compression)}`);
    const json = { ...batch, records: records.map(recordJSON) };
    for (const k of ['baseOffset', 'producerId', 'logAppendTime']) {
      if (json[k] !== undefined) json[k] = int64JSON(json[k]);
    }
    const x = this._exports();
    const [p, n] = this._putText(stringify(json));
    const s = this._scratch;
    const st = this._call('kw_records_encode', x.kw_records_encode, p, n, codec, s, s + 4);
    return this._takeBytes(st, 'kw_records_encode');
  }

  /**
   * Decodes a records field (bytes or base64) into a RecordTable: lazy Record objects
   * and typed-array columns over one buffer, no object per record unless asked for.
   */
  decodeRecordTable(records, options = {}) {
    if (records === null || records === undefined) records = EMPTY;
    const b = typeof records === 'string' ? fromBase64(records) : asBytes(records);
    return new RecordTable(this._recordTableBytes(b, options), null, TRUSTED);
  }

  _recordTableBytes(b, options) {
    const flags = options.skipCrc ? RECORDS_SKIP_CRC : 0;
    const x = this._exports();
    const p = this._putBytes(b);
    const s = this._scratch;
    const st = this._call('kw_records_decode_table', x.kw_records_decode_table, p, b.length, flags, options.maxDecompressed ?? 0, s, s + 4);
    return this._takeBytes(st, 'kw_records_decode_table');
  }

  /**
   * Whether the loaded module has the frame-with-records calls
   * (kw_decode_*_frame_records, kw_encode_request_frame_records); without them
   * decodeFetch, decodeProduce and encodeProduce take the per-partition path.
   */
  hasFrameRecords() {
    const x = this._exports();
    return typeof x.kw_decode_response_frame_records === 'function' && typeof x.kw_decode_request_frame_records === 'function' &&
      typeof x.kw_encode_request_frame_records === 'function';
  }

  /**
   * Decodes a whole Fetch response frame answering a Fetch request of `apiVersion`. The
   * result is decodeResponse's object, except that each non-null records field is a
   * RecordSet (lazy records and typed-array columns over one record table), and
   * `partitions` lists {topic, partition, records} for every partition in frame order.
   * With ABI 1.4 the table has layout 4 (the records as columns: columns() are views of
   * it); options.layout 3, for tests only, asks for the record entries of layouts 2 and 3.
   */
  decodeFetch(frame, apiVersion, options = {}) {
    checkApi('decodeFetch', 1, apiVersion);
    return this._decodeFrameRecords(frame, 1, apiVersion, options);
  }

  /** Decodes a whole Produce request frame, records as in decodeFetch. */
  decodeProduce(frame, options = {}) {
    return this._decodeFrameRecords(frame, 0, -1, options);
  }

  _decodeFrameRecords(frame, apiKey, apiVersion, options) {
    const b = asBytes(frame);
    const flags = options.skipCrc ? RECORDS_SKIP_CRC : 0;
    const max = options.maxDecompressed ?? 0;
    const x = this._exports();
    let f;
    let table = null;
    if (options.fallback !== true && this.hasFrameRecords()) {
      const p = this._putBytes(b);
      const s = this._scratch;
      const name = apiKey === 0 ? 'kw_decode_request_frame_records' : 'kw_decode_response_frame_records';
      // ABI 1.2: a record stored uncompressed is not copied; its key, value and headers
      // are views of `b`, the caller's own frame (options.copy: views of a copy).
      const spans = this._abi.minor >= 2 && options.copy !== true;
      // ABI 1.4: the records as columns (layout 4), which Record and columns() read as
      // typed arrays over the table. options.layout below 4 (for tests) asks for the
      // record entries of layouts 2 and 3 instead.
      const columns = this._abi.minor >= 4 && !(options.layout < 4);
      const fl = (spans ? flags | RECORDS_INPUT_SPANS : flags) | (columns ? KW_RECORDS_COLUMNS : 0);
      // ABI 1.3: batches of a codec the host decompresses faster (node:zlib's gzip) come
      // back as a list, which the host decompresses and hands to the module.
      const host = options.hostDecompress !== false && this._abi.minor >= 3 ? HOST_FLAGS : 0;
      const st = apiKey === 0
        ? this._call(name, x.kw_decode_request_frame_records, p, b.length, fl | host, max, s, s + 4)
        : this._call(name, x.kw_decode_response_frame_records, p, b.length, apiKey, apiVersion, fl | host, max, s, s + 4);
      let bytes = this._takeBytes(st, name);
      if (host !== 0 && isBatchList(bytes)) bytes = this._inflated(b, bytes, apiKey === 0 ? -1 : apiKey, apiVersion, fl, max, name);
      table = new RecordTable(bytes, spans ? b : null, TRUSTED);
      if (table.layout < 2) throw new Error(`kwire: ${name} returned a layout ${table.layout} table (no frame JSON)`);
      f = JSON.parse(table.jsonText());
    } else {
      f = apiKey === 0 ? this.decodeRequest(b) : this.decodeResponse(b, apiKey, apiVersion);
    }
    if (f.apiKey !== apiKey) {
      throw new TypeError(`kwire: ${apiKey === 0 ? 'decodeProduce' : 'decodeFetch'} got a frame of api key ${f.apiKey}`);
    }
    const partitions = [];
    const invalidPartitions = [];
    const [topicsKey, partsKey, indexKey] = apiKey === 0 ? ['topicData', 'partitionData', 'index'] : ['responses', 'partitions', 'partitionIndex'];
    const topics = f.body[topicsKey] ?? [];
    for (let ti = 0; ti < topics.length; ti++) {
      const t = topics[ti];
      const topic = t.topicId ?? (apiKey === 0 ? t.name : t.topic);
      const parts = t[partsKey] ?? [];
      for (let pi = 0; pi < parts.length; pi++) {
        const p = parts[pi];
        const r = p.records;
        if (r === null || r === undefined) continue;
        let set;
        if (table !== null) {
          set = table.slice(r.firstRecord, r.recordCount, r.skippedBytes, r.size, r.invalid ?? null);
        } else {
          const raw = fromBase64(r);
          let t1;
          try {
            t1 = new RecordTable(this._recordTableBytes(raw, options), null, TRUSTED);
          } catch (err) {
            throw withPartition(err, `${topicsKey}[${ti}].${partsKey}[${pi}].records`, topic, p[indexKey]);
          }
          set = t1.slice(0, t1.length, t1.skippedBytes, raw.length, apiKey === 0 ? produceVerdict(f.apiVersion, raw) : null);
        }
        p.records = set;
        partitions.push({ topic, partition: p[indexKey], records: set, invalid: set.invalid });
        if (set.invalid !== null) invalidPartitions.push({ topic, partition: p[indexKey], ...set.invalid });
      }
    }
    f.partitions = partitions;
    if (apiKey === 0) f.invalidPartitions = invalidPartitions;
    return f;
  }

  // _inflated decompresses the batches of a batch list with the host's decompressors and
  // returns the table kw_decode_frame_records_inflated makes with them. A batch the host
  // cannot decompress (corrupt, past the cap) is left out: the module decompresses it,
  // and gives its own error. b is still in the input buffer.
  _inflated(b, list, key, apiVersion, flags, max, name) {
    const x = this._exports();
    const s = this._scratch;
    const limit = max > 0 ? max : DEFAULT_MAX_DECOMPRESSED;
    const w = new Int32Array(list.buffer, list.byteOffset, list.length >> 2);
    const offsets = [];
    const parts = [];
    let total = 0;
    for (let i = 0, n = w[KW_BATCH_LIST_COUNT >> 2]; i < n; i++) {
      const e = (KW_BATCH_LIST_HEADER_SIZE + i * KW_BATCH_STRIDE) >> 2;
      const at = w[e + (KW_BATCH_DATA_OFFSET >> 2)];
      const inflate = HOST_DECOMPRESSORS.get(w[e + (KW_BATCH_COMPRESSION >> 2)]);
      const out = inflate === undefined ? null : inflate(b.subarray(at, at + w[e + (KW_BATCH_DATA_LENGTH >> 2)]), limit);
      if (out === null) continue;
      offsets.push(at);
      parts.push(out);
      total += out.length;
    }
    if (b.length + 4 + 8 * parts.length + total > MAX_ALLOC) {
      // Too much to hand over in one input: the module decompresses every batch.
      parts.length = 0;
      offsets.length = 0;
      total = 0;
    }
    this._hostStats.batches += parts.length;
    this._hostStats.bytes += total;
    const p0 = this._in;
    const p = this._reserve(b.length + 4 + 8 * parts.length + total); // a new buffer when too small
    const u8 = this._u8;
    const dv = this._dv;
    if (p !== p0) u8.set(b, p);
    // The inflated input: int32 count, (offset, length) pairs, the bytes.
    const q = p + b.length;
    dv.setInt32(q, parts.length, true);
    let at = q + 4 + 8 * parts.length;
    for (let i = 0; i < parts.length; i++) {
      dv.setInt32(q + 4 + 8 * i, offsets[i], true);
      dv.setInt32(q + 8 + 8 * i, parts[i].length, true);
      u8.set(parts[i], at);
      at += parts[i].length;
    }
    const st = this._call(name, x.kw_decode_frame_records_inflated, p, b.length, key, apiVersion, flags, max, q, at - q, s, s + 4);
    return this._takeBytes(st, name);
  }

  /** The codecs whose batches this host decompresses itself in decodeFetch and decodeProduce ('gzip' in Node). */
  hostCodecs() {
    this._exports();
    return this._abi.minor >= 3 ? hostCodecs() : [];
  }

  /** How many batches (and decompressed bytes) the host has decompressed for this instance so far. */
  hostDecompressed() {
    return { ...this._hostStats };
  }

  /**
   * Encodes a Produce request frame ({header, body}, as encodeRequest takes it) in which
   * each partition's records field may be null, bytes or base64 text (a records field as
   * it goes on the wire), a RecordSet (its records, written as one new batch), or a batch
   * to build: {records: [...] | RecordSet, compression, magic, baseOffset, producerId,
   * producerEpoch, baseSequence, transactional, partitionLeaderEpoch, timestampType,
   * logAppendTime, level} (encodeRecords' options). With the frame-with-records calls,
   * every batch's records go to the module in one record table (no JSON, no base64);
   * without them each batch is built with encodeRecords first.
   */
  encodeProduce(frame, options = {}) {
    if (frame === null || typeof frame !== 'object') throw new TypeError('kwire: encodeProduce needs {header, body}');
    const fast = options.fallback !== true && this.hasFrameRecords();
    const builder = fast ? new RecordTableBuilder() : null;
    const body = { ...frame.body };
    body.topicData = (frame.body?.topicData ?? []).map((t) => ({
      ...t,
      partitionData: (t.partitionData ?? []).map((p) => {
        const r = p.records;
        if (r === null || r === undefined || typeof r === 'string') return p;
        if (ArrayBuffer.isView(r) || r instanceof ArrayBuffer) return { ...p, records: toBase64(asBytes(r)) };
        const spec = r instanceof RecordSet ? { records: r } : r;
        if (spec === null || typeof spec !== 'object' || (!Array.isArray(spec.records) && !(spec.records instanceof RecordSet))) {
          throw new TypeError('kwire: a records field must be null, bytes, base64 text, a RecordSet or {records, compression, ...}');
        }
        const { records, compression = 'none', ...batch } = spec;
        const codec = typeof compression === 'number' ? compression : Compression[compression];
        const cname = COMPRESSION_NAMES[codec];
        if (cname === undefined) throw new TypeError(`kwire: unknown compression ${String(compression)}`);
        if (!fast) return { ...p, records: toBase64(this.encodeRecords(Array.from(records, plainRecord), { compression: codec, ...batch })) };
        const first = builder.addAll(records);
        const ref = { firstRecord: first, recordCount: builder.length - first, compression: cname, ...batch };
        for (const k of ['baseOffset', 'producerId', 'logAppendTime']) if (ref[k] !== undefined) ref[k] = int64JSON(ref[k]);
        return { ...p, records: ref };
      }),
    }));
    const f = { ...frame, body };
    delete f.partitions;
    if (!fast) return this.encodeRequest(f);
    const table = builder.build();
    const x = this._exports();
    const text = stringify(f);
    const jb = utf8enc.encode(text);
    const p = this._putBytes(table, jb);
    const s = this._scratch;
    const st = this._call('kw_encode_request_frame_records', x.kw_encode_request_frame_records, p - jb.length, jb.length, p, table.length, s, s + 4);
    return this._takeBytes(st, 'kw_encode_request_frame_records');
  }
}

const COMPRESSION_NAMES = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

// checkApi refuses a call without a numeric api key and version: a response does not
// say which version it answers, and a forgotten one would decode as v0 and fail
// somewhere misleading.
function checkApi(call, apiKey, apiVersion) {
  if (!Number.isInteger(apiKey) || !Number.isInteger(apiVersion)) {
    throw new TypeError(`kwire: ${call} needs the api key and the version of the request it answers (integers), got ${String(apiKey)} and ${String(apiVersion)}`);
  }
}

// withPartition names the topic and partition in a records error of the per-partition path.
function withPartition(err, path, topic, partition) {
  if (!(err instanceof KwireError)) return err;
  const d = err.details ?? {};
  const text = `kwire: topic ${topic} partition ${partition}: ${err.text.replace(/^kwire: /, '')}`;
  return errorFor(err.status, { ...d, text, path: d.path ? `${path} (${d.path})` : path, topic, partition }, err.call);
}

// plainRecord: a Record of a RecordSet (lazy getters) as encodeRecords' input.
function plainRecord(r) {
  if (r instanceof Record) return { key: r.key, value: r.value, timestamp: r.timestamp, headers: r.rawHeaders.map((h) => [utf8dec.decode(h.key), h.value]) };
  return r;
}

function recordJSON(r, i) {
  if (r === null || typeof r !== 'object') throw new TypeError(`kwire: record ${i} is not an object`);
  const out = { key: bytesJSON(r.key), value: bytesJSON(r.value) };
  if (r.timestamp !== undefined) out.timestamp = int64JSON(r.timestamp);
  if (r.headers !== undefined) {
    out.headers = r.headers.map((h) => {
      const [key, value] = Array.isArray(h) ? h : [h.key, h.value];
      if (typeof key !== 'string') throw new TypeError(`kwire: record ${i}: a header key must be a string`);
      return { key, value: bytesJSON(value) };
    });
  }
  return out;
}

function bytesJSON(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return toBase64(utf8enc.encode(v));
  return toBase64(asBytes(v));
}

function int64JSON(v) {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new RangeError(`kwire: ${v} is not an exact integer; pass a bigint or a string`);
    return String(v);
  }
  if (typeof v === 'string') return v;
  if (v instanceof Date) return String(v.getTime());
  throw new TypeError('kwire: an int64 must be a bigint, an integer number, a decimal string or a Date');
}

// stringify is JSON.stringify with the JSON form's two extra rules: a bigint is written
// as a decimal string (int64), and negative zero stays "-0" (JSON.stringify writes 0,
// which would turn a float64 -0.0 into +0.0). The replacer marks -0 with a string no
// kwire value can be (a JSON object key or string equal to it fails to encode instead).
const NEG_ZERO = '\u0000kwire:-0\u0000';
const NEG_ZERO_JSON = JSON.stringify(NEG_ZERO);
function replacer(_k, x) {
  if (x === 0) return 1 / x < 0 ? NEG_ZERO : 0;
  return typeof x === 'bigint' ? x.toString() : x;
}
function stringify(v) {
  const text = JSON.stringify(v, replacer);
  if (text === undefined) throw new TypeError('kwire: nothing to encode');
  return text.includes('kwire:-0') ? text.replaceAll(NEG_ZERO_JSON, '-0') : text;
}

function deepFreeze(v) {
  if (v && typeof v === 'object') {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze(v[k]);
  }
  return v;
}

// ---------------------------------------------------------------------------------
// Module-level functions over the instance init() loaded

/** See Kwire.decodeRequest. */
export const decodeRequest = (frame) => def().decodeRequest(frame);
/** See Kwire.encodeRequest. */
export const encodeRequest = (frame) => def().encodeRequest(frame);
/** See Kwire.decodeResponse. */
export const decodeResponse = (frame, apiKey, apiVersion) => def().decodeResponse(frame, apiKey, apiVersion);
/** See Kwire.encodeResponse. */
export const encodeResponse = (frame, apiKey, apiVersion) => def().encodeResponse(frame, apiKey, apiVersion);
/** See Kwire.peekHeader. */
export const peekHeader = (frame) => def().peekHeader(frame);
/** See Kwire.decodeMessage. */
export const decodeMessage = (name, version, bytes) => def().decodeMessage(name, version, bytes);
/** See Kwire.encodeMessage. */
export const encodeMessage = (name, version, message) => def().encodeMessage(name, version, message);
/** See Kwire.decodeRecords. */
export const decodeRecords = (records, options) => def().decodeRecords(records, options);
/** See Kwire.decodeRecordsJSON. */
export const decodeRecordsJSON = (records, options) => def().decodeRecordsJSON(records, options);
/** See Kwire.encodeRecords. */
export const encodeRecords = (records, options) => def().encodeRecords(records, options);
/** See Kwire.decodeRecordTable. */
export const decodeRecordTable = (records, options) => def().decodeRecordTable(records, options);
/** See Kwire.decodeFetch. */
export const decodeFetch = (frame, apiVersion, options) => def().decodeFetch(frame, apiVersion, options);
/** See Kwire.decodeProduce. */
export const decodeProduce = (frame, options) => def().decodeProduce(frame, options);
/** See Kwire.encodeProduce. */
export const encodeProduce = (frame, options) => def().encodeProduce(frame, options);
/** See Kwire.apis. */
export const apis = () => def().apis();
/** See Kwire.catalogue. */
export const catalogue = () => def().catalogue();
/** See Kwire.headerVersions. */
export const headerVersions = (apiKey, apiVersion) => def().headerVersions(apiKey, apiVersion);

// ---------------------------------------------------------------------------------
// Sessions (src/session.js): one Kafka connection's client side. Session.create and
// Session.connect use the instance init() loads unless given one.

import { setDefaultLoader } from './src/session.js';
export { Session, ConnectionClosedError, ResponseError, TimeoutError, AuthenticationError } from './src/session.js';
export { ReconnectingSession } from './src/reconnect.js';
setDefaultLoader(() => init());
