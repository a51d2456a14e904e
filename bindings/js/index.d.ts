// Type declarations of kwire's JavaScript binding. The message types (the JSON form of
// every Kafka message) are generated into messages.d.ts; this file types the API over them.

import type {
  FetchResponseDecoded,
  FetchResponseFetchableTopicResponseDecoded,
  FetchResponsePartitionDataDecoded,
  MessageName,
  MessagesByName,
  MessagesByNameDecoded,
  RequestHeader,
  RequestHeaderDecoded,
  RequestsByKey,
  RequestsByKeyDecoded,
  ResponseHeader,
  ResponseHeaderDecoded,
  ResponsesByKey,
  ResponsesByKeyDecoded,
  ProduceRequestDecoded,
  ProduceRequestTopicProduceDataDecoded,
  ProduceRequestPartitionProduceDataDecoded,
  ProduceRequestPartitionProduceData,
  ProduceRequest,
  ProduceRequestTopicProduceData,
} from './messages.js';

export type * from './messages.js';
export { ApiKey, ErrorCode, RETRIABLE_ERROR_CODES, apiKeyName, errorCodeName } from './src/constants.js';

/** Bytes the binding reads: a Uint8Array (a Node Buffer is one), any typed array or DataView, or an ArrayBuffer. */
export type BytesLike = Uint8Array | ArrayBufferView | ArrayBuffer;

/** Where kwire.wasm comes from (see compile). */
export type WasmSource =
  | URL
  | string
  | ArrayBuffer
  | ArrayBufferView
  | Response
  | WebAssembly.Module
  | PromiseLike<Response | ArrayBuffer | ArrayBufferView | WebAssembly.Module>;

export interface LoadOptions {
  /** Receives what the module writes to stdout (fd 1) and stderr (fd 2); normally nothing. */
  onOutput?: (fd: number, text: string) => void;
}

/** Api keys with a request type. */
export type RequestApiKey = keyof RequestsByKey;
/** Api keys with a response type. */
export type ResponseApiKey = keyof ResponsesByKey;

/**
 * A decoded request frame, as kw_decode_request_frame writes it. Fields that every
 * version of the message has are typed as present (`body.topicData`); the others are
 * optional (`name` of a Produce topic is absent from v13, which names topics by id).
 */
export interface RequestFrame<K extends RequestApiKey = RequestApiKey> {
  apiKey: K;
  apiVersion: number;
  headerVersion: number;
  header: RequestHeaderDecoded;
  body: RequestsByKeyDecoded[K];
}

/** Any request frame: narrow it by `apiKey` (`if (f.apiKey === 0) f.body.topicData`). */
export type AnyRequestFrame = { [K in RequestApiKey]: RequestFrame<K> }[RequestApiKey];

/** A decoded response frame, as kw_decode_response_frame writes it (fields typed as in RequestFrame). */
export interface ResponseFrame<K extends ResponseApiKey = ResponseApiKey> {
  apiKey: K;
  apiVersion: number;
  headerVersion: number;
  header: ResponseHeaderDecoded;
  body: ResponsesByKeyDecoded[K];
}

/** What encodeRequest reads: the api key and version come from header.requestApiKey and header.requestApiVersion. */
export interface RequestFrameInput<K extends RequestApiKey = RequestApiKey> {
  apiKey?: K;
  apiVersion?: number;
  headerVersion?: number;
  header: RequestHeader;
  body: RequestsByKey[K];
}

/** What encodeResponse reads. */
export interface ResponseFrameInput<K extends ResponseApiKey = ResponseApiKey> {
  apiKey?: K;
  apiVersion?: number;
  headerVersion?: number;
  header: ResponseHeader;
  body: ResponsesByKey[K];
}

/** What peekHeader reads from the first bytes of a request frame. */
export interface PeekedHeader {
  /** The size prefix: bytes after it. */
  frameSize: number;
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  /** 0, 1 or 2, by Kafka's rules. */
  headerVersion: number;
  /** null when absent (header v0) or null on the wire. */
  clientId: string | null;
  /** Byte offset of the client id in the frame (-1 when absent). */
  clientIdOffset: number;
  /** Its length in bytes (-1 when null or absent). */
  clientIdLength: number;
}

export type CompressionName = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';
export type TimestampType = 'CreateTime' | 'LogAppendTime' | 'NoTimestampType';
export type SchemaSource = 'none' | 'value-prefix' | 'header';

/** One record of decodeRecords. I is bigint, or string with int64: 'string'. */
export interface DecodedRecord<I extends bigint | string = bigint> {
  offset: I;
  timestamp: I;
  timestampType: TimestampType;
  /** null when the key is null (an empty key is an empty array). */
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: { key: string; value: Uint8Array | null }[];
  producerId: I;
  producerEpoch: number;
  sequence: number;
  leaderEpoch: number;
  magic: number;
  compression: CompressionName;
  transactional: boolean;
  control: boolean;
  /** The control record's type (0 ABORT, 1 COMMIT, ...), else -1. */
  controlType: number;
  schemaSource: SchemaSource;
  schemaId: number;
  schemaVersion: number;
}

export interface DecodeRecordsOptions {
  /**
   * false (default): keys, values and header values are views into one buffer per call
   * (holding any of them keeps that buffer alive). true: each is a copy of its own.
   */
  copy?: boolean;
  /** 'bigint' (default) or 'string': the type of offset, timestamp and producerId. */
  int64?: 'bigint' | 'string';
  /** Do not verify batch checksums. */
  skipCrc?: boolean;
  /** Cap on what one compressed batch may decompress to, in bytes (0: 100 MiB). */
  maxDecompressed?: number;
}

export interface DecodedRecords<I extends bigint | string = bigint> {
  records: DecodedRecord<I>[];
  /** Size of a partial batch at the end of the input, which Kafka's readers skip. */
  skippedBytes: number;
}

/** kw_records_decode_json's form: bytes as base64, int64 as decimal strings. */
export interface DecodedRecordsJSON {
  records: {
    offset: string;
    timestamp: string;
    timestampType: TimestampType;
    key: string | null;
    value: string | null;
    headers: { key: string; value: string | null }[];
    producerId: string;
    producerEpoch: number;
    sequence: number;
    leaderEpoch: number;
    magic: number;
    compression: CompressionName;
    transactional: boolean;
    control: boolean;
    controlType: number;
    schemaSource: SchemaSource;
    schemaId: number;
    schemaVersion: number;
  }[];
  skippedBytes: number;
}

/** An int64 on input: a bigint, a safe integer, or a decimal string. */
export type Int64Input = bigint | number | string;
/** Record bytes on input: bytes, a string (written as UTF-8), or null. */
export type RecordBytesInput = BytesLike | string | null | undefined;

export interface RecordInput {
  key?: RecordBytesInput;
  value?: RecordBytesInput;
  timestamp?: Int64Input | Date;
  headers?: ({ key: string; value?: RecordBytesInput } | [string, RecordBytesInput])[];
}

export interface EncodeRecordsOptions {
  compression?: CompressionName | 0 | 1 | 2 | 3 | 4;
  /** 2 (default), or 0/1 for a legacy message set. */
  magic?: 0 | 1 | 2;
  baseOffset?: Int64Input;
  partitionLeaderEpoch?: number;
  producerId?: Int64Input;
  producerEpoch?: number;
  baseSequence?: number;
  transactional?: boolean;
  timestampType?: 'CreateTime' | 'LogAppendTime';
  logAppendTime?: Int64Input;
  /** Compression level on the codec's scale; 0 = the codec's default. */
  level?: number;
}

export interface ApiInfo {
  apiKey: number;
  name: string;
  request: string;
  response: string;
  minVersion: number;
  maxVersion: number;
  flexibleMin: number;
  latestVersionUnstable: boolean;
  listeners: string[];
}

export interface MessageInfo {
  name: string;
  apiKey: number;
  kind: 'request' | 'response' | 'header' | 'data';
  minVersion: number;
  maxVersion: number;
  flexibleMin: number;
  deprecatedMin: number;
  deprecatedMax: number;
  latestVersionUnstable: boolean;
  releases: string[];
  renames: { path: string; old: string; new: string }[];
  superseded: { release: string; version: number }[];
}

export interface CatalogueInfo {
  abiVersion: string;
  specReleases: string[];
  apis: readonly ApiInfo[];
  messages: readonly MessageInfo[];
}

/**
 * A JSON-form message on input: int64 fields as decimal strings (a bigint anywhere in the
 * object is written as one too), bytes and records as base64.
 */
export type MessageInput<N extends MessageName> = MessagesByName[N];

// ---- record tables: lazy records and columns ---------------------------------------

/** One record of a record table, read on access. */
export declare class Record {
  private constructor();
  readonly offset: bigint;
  readonly timestamp: bigint;
  readonly producerId: bigint;
  /**
   * A view, null when the key is null (empty is an empty array). In a table of
   * decodeFetch / decodeProduce (layouts 3 and 4) the view of a record stored uncompressed is
   * of the caller's own frame (no copy: do not change the frame while reading); else of
   * the table's buffer.
   */
  readonly key: Uint8Array | null;
  readonly value: Uint8Array | null;
  /** The key as UTF-8 text (invalid bytes become U+FFFD); null when null. */
  readonly keyText: string | null;
  /** The value as UTF-8 text (invalid bytes become U+FFFD); null when null. */
  readonly valueText: string | null;
  /** In wire order, duplicates kept; keys as UTF-8 text (invalid bytes become U+FFFD). */
  readonly headers: { key: string; value: Uint8Array | null }[];
  /** The headers with their keys as the exact bytes of the batch. */
  readonly rawHeaders: { key: Uint8Array; value: Uint8Array | null }[];
  readonly timestampType: TimestampType;
  readonly producerEpoch: number;
  readonly sequence: number;
  readonly leaderEpoch: number;
  readonly magic: number;
  readonly compression: CompressionName;
  readonly transactional: boolean;
  readonly control: boolean;
  readonly controlType: number;
  readonly schemaSource: SchemaSource;
  readonly schemaId: number;
  readonly schemaVersion: number;
  /** Every field as a plain object (decodeRecords' form, views). */
  toObject(): DecodedRecord<bigint>;
}

/**
 * Records as typed arrays, no object per record. Record i: offsets[i], timestamps[i];
 * its spans index buf = (sources[i] === 1 ? input : data): its key is
 * buf.subarray(keys[2i], keys[2i] + keys[2i+1]) (null when keys[2i+1] is -1), its value
 * likewise with values; its headers are entries headerIndex[2i] .. headerIndex[2i] +
 * headerIndex[2i+1] - 1 of headers, four int32 each (key offset, key length, value
 * offset, value length; value length -1 = null), also indexing buf. Its batch's fields
 * are batch entry batchIndex[i]: see batches. int64 values are exact.
 *
 * For a layout-4 table (decodeFetch / decodeProduce with ABI 1.4) every array is a view
 * of the table's own buffer (no copy); for layouts 1-3 they are gathered on the first
 * call, each record then a batch entry of its own.
 */
export interface Columns {
  readonly length: number;
  /** The table's bytes: the spans of records whose source is 0 index it. */
  readonly data: Uint8Array;
  /** The caller's frame (layouts 3 and 4): the spans of records whose source is 1 index it; else null. */
  readonly input: Uint8Array | null;
  /** Per record: 0 its spans index data, 1 they index input (an uncompressed record of a layout-3 or layout-4 table). */
  readonly sources: Uint8Array;
  readonly offsets: BigInt64Array;
  readonly timestamps: BigInt64Array;
  readonly keys: Int32Array;
  readonly values: Int32Array;
  readonly headerIndex: Int32Array;
  readonly headers: Int32Array;
  /** Per record: the control record's type, -1 unless a control record. */
  readonly controlTypes: Int32Array;
  /** Three per record: schema source (0 none, 1 value prefix, 2 header), schema id, schema version. */
  readonly schemas: Int32Array;
  /** Per record: its batch entry (an index into the table's batches). */
  readonly batchIndex: Int32Array;
  /**
   * The table's batch entries, batchStride int32 words each: batch b's field f is
   * batches[b * batchStride + BatchWords[f]] (compression 0 none .. 4 zstd; timestampType
   * -1 none, 0 CreateTime, 1 LogAppendTime; flags bit 0 transactional, bit 1 control). A
   * record's sequence is baseSequence + (offsets[i] - baseOffset), wrapping past 2^31-1 to
   * 0 as Kafka's producer does; -1 when baseSequence is -1.
   */
  readonly batches: Int32Array;
  /** The same bytes as batches: baseOffset and producerId of batch b at (b * batchStride + BatchWords.baseOffset / .producerId) / 2. */
  readonly batches64: BigInt64Array;
  /** The int32 words of one batch entry. */
  readonly batchStride: number;
}

/** The fields of a batch entry (Columns.batches) as int32 word indexes (capi/kwire.h's KW_RB_* / 4). */
export declare const BatchWords: Readonly<{
  baseOffset: number;
  producerId: number;
  firstRecord: number;
  recordCount: number;
  baseSequence: number;
  leaderEpoch: number;
  producerEpoch: number;
  magic: number;
  compression: number;
  timestampType: number;
  flags: number;
  source: number;
}>;

/** A run of records of one table: a partition's records field. */
export declare class RecordSet implements Iterable<Record> {
  private constructor();
  readonly table: RecordTable;
  /** Index of its first record in the table. */
  readonly first: number;
  readonly length: number;
  /** Bytes of a partial batch at the end of the records field, skipped as Kafka's readers do. */
  readonly skippedBytes: number;
  /** The records field's size on the wire in bytes (-1 when not known). */
  readonly size: number;
  /** For a Produce partition (v3 on): null, or why a broker refuses these records. */
  readonly invalid: ProduceVerdict | null;
  at(i: number): Record;
  [Symbol.iterator](): Iterator<Record>;
  /** Typed arrays over these records (subarrays of the table's columns; data, headers, batches and batches64 are the table's). */
  columns(): Columns;
  /** The records as plain objects. */
  toArray(): DecodedRecord<bigint>[];
  toJSON(): { firstRecord: number; recordCount: number; skippedBytes: number; size: number; invalid?: ProduceVerdict };
}

/** One record table (capi/kwire.h's layout), in a buffer of its own. */
export declare class RecordTable implements Iterable<Record> {
  /**
   * Reads (and checks) a record table's bytes; a layout-3 table, and a layout-4 one with
   * input spans, needs the frame it was decoded from. A layout-4 table not 8-aligned in
   * its buffer is copied first.
   */
  constructor(bytes: Uint8Array, input?: Uint8Array | null);
  readonly data: Uint8Array;
  /** The frame a layout-3 or layout-4 table's input spans index (null for layouts 1 and 2). */
  readonly input: Uint8Array | null;
  readonly layout: number;
  readonly length: number;
  readonly headerCount: number;
  readonly skippedBytes: number;
  /** The frame JSON of a layout-2, -3 or -4 table (null for layout 1). */
  jsonText(): string | null;
  at(i: number): Record;
  slice(first?: number, count?: number, skippedBytes?: number, size?: number, invalid?: ProduceVerdict | null): RecordSet;
  [Symbol.iterator](): Iterator<Record>;
  /** Every record's fields as typed arrays (views of a layout-4 table; else built on the first call; then cached). */
  columns(): Columns;
}

/** Writes a record table on the host side: the records input of encodeProduce's table path. */
export declare class RecordTableBuilder {
  constructor();
  readonly length: number;
  /** Adds a record and returns its index. */
  add(record: RecordInput | Record): number;
  /** Adds every record and returns the index of the first. */
  addAll(records: Iterable<RecordInput | Record>): number;
  /** The table's bytes (layout 1). */
  build(): Uint8Array;
}

export interface DecodeFrameRecordsOptions {
  /** Do not verify batch checksums. */
  skipCrc?: boolean;
  /** Cap on what one compressed batch may decompress to, in bytes (0: 100 MiB). */
  maxDecompressed?: number;
  /** Use the per-partition path even when the module has the frame-records calls. */
  fallback?: boolean;
  /**
   * Copy every record into the table (layout 2) instead of leaving records stored
   * uncompressed in the frame (layout 3, the default with ABI 1.2): for callers that
   * reuse or change the frame's buffer while they still read the records.
   */
  copy?: boolean;
  /**
   * false: the module decompresses every batch. By default (ABI 1.3) batches of a codec
   * the host decompresses natively (hostCodecs(): gzip in Node) are decompressed by the
   * host and handed to the module; the records, errors and the maxDecompressed cap are
   * the same either way.
   */
  hostDecompress?: boolean;
  /**
   * For tests only: 3 asks for the record entries of layouts 2 and 3 instead of layout 4
   * (the columns, the default with ABI 1.4); the records are the same.
   */
  layout?: 3 | 4;
}

/** Replaces the records field of a partition type by a RecordSet. */
type WithRecordSet<P> = Omit<P, 'records'> & { records: RecordSet | null };

/** Kafka's verdict on a Produce partition's records that a broker refuses (ValidateProduceRecords). */
export interface ProduceVerdict {
  /** Kafka's error code: 87 INVALID_RECORD, 76 UNSUPPORTED_COMPRESSION_TYPE, 2 CORRUPT_MESSAGE, -1. */
  errorCode: number;
  /** Kafka's name of the error code. */
  error: string;
  reason: string;
}

export interface PartitionRecords {
  /** The topic name, or its topic id (base64) from the versions that carry ids. */
  topic: string;
  partition: number;
  records: RecordSet;
  /** For a Produce request: null, or why a broker refuses this partition's records. */
  invalid: ProduceVerdict | null;
}

/** decodeFetch's result: decodeResponse's frame with RecordSets for records. */
export interface FetchFrame {
  apiKey: 1;
  apiVersion: number;
  headerVersion: number;
  header: ResponseHeaderDecoded;
  body: Omit<FetchResponseDecoded, 'responses'> & {
    responses: (Omit<FetchResponseFetchableTopicResponseDecoded, 'partitions'> & { partitions: WithRecordSet<FetchResponsePartitionDataDecoded>[] })[];
  };
  /** Every partition with a non-null records field, in frame order. */
  partitions: PartitionRecords[];
}

/** decodeProduce's result: decodeRequest's frame with RecordSets for records. */
export interface ProduceFrame {
  apiKey: 0;
  apiVersion: number;
  headerVersion: number;
  header: RequestHeaderDecoded;
  body: Omit<ProduceRequestDecoded, 'topicData'> & {
    topicData: (Omit<ProduceRequestTopicProduceDataDecoded, 'partitionData'> & { partitionData: WithRecordSet<ProduceRequestPartitionProduceDataDecoded>[] })[];
  };
  partitions: PartitionRecords[];
  /** The partitions a broker would refuse, by Kafka's validateRecords (v3 on); empty when none. */
  invalidPartitions: (ProduceVerdict & { topic: string; partition: number })[];
}

/** A batch encodeProduce builds: its records and encodeRecords' options. */
export interface BatchInput extends EncodeRecordsOptions {
  records: (RecordInput | Record)[] | RecordSet;
}

/** encodeProduce's input: a records field is null, bytes or base64, a RecordSet, or a batch to build. */
export interface ProduceFrameInput {
  header: RequestHeader;
  body: Omit<ProduceRequest, 'topicData'> & {
    topicData?: (Omit<ProduceRequestTopicProduceData, 'partitionData'> & {
      partitionData?: (Omit<ProduceRequestPartitionProduceData, 'records'> & { records?: string | BytesLike | RecordSet | BatchInput | null })[];
    })[];
  };
}

export interface EncodeProduceOptions {
  /** Build each batch with encodeRecords even when the module has kw_encode_request_frame_records. */
  fallback?: boolean;
}

/** One instance of kwire.wasm (its own memory). Not reentrant; calls are synchronous. */
export declare class Kwire {
  private constructor();
  /** Compiles (once per source) and instantiates kwire.wasm. */
  static load(source?: WasmSource, options?: LoadOptions): Promise<Kwire>;

  abiVersion(): { major: number; minor: number };
  catalogue(): Readonly<CatalogueInfo>;
  apis(): readonly ApiInfo[];
  headerVersions(apiKey: number, apiVersion: number): { request: number; response: number };

  decodeMessage<N extends MessageName>(name: N, version: number, bytes: BytesLike): MessagesByNameDecoded[N];
  encodeMessage<N extends MessageName>(name: N, version: number, message: MessageInput<N> | string): Uint8Array;

  decodeRequest(frame: BytesLike): AnyRequestFrame;
  encodeRequest<K extends RequestApiKey>(frame: RequestFrameInput<K> | string): Uint8Array;
  decodeResponse<K extends ResponseApiKey>(frame: BytesLike, apiKey: K, apiVersion: number): ResponseFrame<K>;
  encodeResponse<K extends ResponseApiKey>(frame: ResponseFrameInput<K> & { apiKey: K; apiVersion: number }): Uint8Array;
  encodeResponse<K extends ResponseApiKey>(frame: ResponseFrameInput<K> | string, apiKey: K, apiVersion: number): Uint8Array;
  peekHeader(frame: BytesLike): PeekedHeader;

  decodeRecords(records: BytesLike | string | null | undefined, options?: DecodeRecordsOptions & { int64?: 'bigint' }): DecodedRecords<bigint>;
  decodeRecords(records: BytesLike | string | null | undefined, options: DecodeRecordsOptions & { int64: 'string' }): DecodedRecords<string>;
  decodeRecordsJSON(records: BytesLike | string | null | undefined, options?: Omit<DecodeRecordsOptions, 'copy' | 'int64'>): DecodedRecordsJSON;
  encodeRecords(records: RecordInput[], options?: EncodeRecordsOptions): Uint8Array;

  decodeRecordTable(records: BytesLike | string | null | undefined, options?: Omit<DecodeRecordsOptions, 'copy' | 'int64'>): RecordTable;
  /** Whether the module exports the frame-records calls (else decodeFetch & co. go per partition). */
  hasFrameRecords(): boolean;
  /** The codecs decodeFetch and decodeProduce decompress with the host's own code ('gzip' in Node; none in browsers). */
  hostCodecs(): Array<'gzip' | 'zstd'>;
  /** Batches, and decompressed bytes, that the host decompressed for this instance so far. */
  hostDecompressed(): { batches: number; bytes: number };
  decodeFetch(frame: BytesLike, apiVersion: number, options?: DecodeFrameRecordsOptions): FetchFrame;
  decodeProduce(frame: BytesLike, options?: DecodeFrameRecordsOptions): ProduceFrame;
  encodeProduce(frame: ProduceFrameInput, options?: EncodeProduceOptions): Uint8Array;
}

/** Compiles kwire.wasm: next to this file by default, or from the given source. */
export declare function compile(source?: WasmSource): Promise<WebAssembly.Module>;
/** Loads the instance the module-level functions use (once; later calls return it). */
export declare function init(source?: WasmSource, options?: LoadOptions): Promise<Kwire>;
/** Creates a new, independent instance. */
export declare function load(source?: WasmSource, options?: LoadOptions): Promise<Kwire>;

/** The package's version, as in its package.json ("0.1.0"). */
export declare const VERSION: string;
export declare const ABI_MAJOR: number;
export declare const ABI_MINOR: number;
export declare const Compression: Readonly<{ none: 0; gzip: 1; snappy: 2; lz4: 3; zstd: 4 }>;

export declare function decodeMessage<N extends MessageName>(name: N, version: number, bytes: BytesLike): MessagesByNameDecoded[N];
export declare function encodeMessage<N extends MessageName>(name: N, version: number, message: MessageInput<N> | string): Uint8Array;
export declare function decodeRequest(frame: BytesLike): AnyRequestFrame;
export declare function encodeRequest<K extends RequestApiKey>(frame: RequestFrameInput<K> | string): Uint8Array;
export declare function decodeResponse<K extends ResponseApiKey>(frame: BytesLike, apiKey: K, apiVersion: number): ResponseFrame<K>;
export declare function encodeResponse<K extends ResponseApiKey>(frame: ResponseFrameInput<K> & { apiKey: K; apiVersion: number }): Uint8Array;
export declare function encodeResponse<K extends ResponseApiKey>(frame: ResponseFrameInput<K> | string, apiKey: K, apiVersion: number): Uint8Array;
export declare function peekHeader(frame: BytesLike): PeekedHeader;
export declare function decodeRecords(records: BytesLike | string | null | undefined, options?: DecodeRecordsOptions & { int64?: 'bigint' }): DecodedRecords<bigint>;
export declare function decodeRecords(records: BytesLike | string | null | undefined, options: DecodeRecordsOptions & { int64: 'string' }): DecodedRecords<string>;
export declare function decodeRecordsJSON(records: BytesLike | string | null | undefined, options?: Omit<DecodeRecordsOptions, 'copy' | 'int64'>): DecodedRecordsJSON;
export declare function encodeRecords(records: RecordInput[], options?: EncodeRecordsOptions): Uint8Array;
export declare function decodeRecordTable(records: BytesLike | string | null | undefined, options?: Omit<DecodeRecordsOptions, 'copy' | 'int64'>): RecordTable;
export declare function decodeFetch(frame: BytesLike, apiVersion: number, options?: DecodeFrameRecordsOptions): FetchFrame;
export declare function decodeProduce(frame: BytesLike, options?: DecodeFrameRecordsOptions): ProduceFrame;
export declare function encodeProduce(frame: ProduceFrameInput, options?: EncodeProduceOptions): Uint8Array;
export declare function apis(): readonly ApiInfo[];
export declare function catalogue(): Readonly<CatalogueInfo>;
export declare function headerVersions(apiKey: number, apiVersion: number): { request: number; response: number };

export declare function toBase64(bytes: BytesLike): string;
export declare function fromBase64(text: string): Uint8Array;

// ---- errors ------------------------------------------------------------------------

export declare const KW_OK: 0;
export declare const KW_ERR_ARG: -1;
export declare const KW_ERR_DECODE: -2;
export declare const KW_ERR_ENCODE: -3;
export declare const KW_ERR_JSON: -4;
export declare const KW_ERR_UNKNOWN_API: -5;
export declare const KW_ERR_VERSION: -6;
export declare const KW_ERR_TOO_LARGE: -7;
export declare const KW_ERR_NOMEM: -8;
export declare const KW_ERR_UNSUPPORTED: -9;
export declare const KW_ERR_INTERNAL: -10;

/** kw_last_error_json of a failed call. */
export interface ErrorDetails {
  status: number;
  category: string;
  text: string;
  message?: string;
  version?: number;
  path?: string;
  offset?: number;
  /** A response decoded at a wrong version: the one version that decodes it. */
  hint?: { message: string; version: number; text: string };
  /** The per-partition path of decodeFetch/decodeProduce: the partition whose records failed. */
  topic?: string;
  partition?: number;
}

/** Every error of a kwire call. */
export declare class KwireError extends Error {
  /** The ABI's negative status (KW_ERR_*). */
  readonly status: number;
  /** arg, decode, encode, json, unknown_api, version, too_large, nomem, unsupported, internal. */
  readonly category: string;
  /** The library's error text (kw_last_error); also the message. */
  readonly text: string;
  readonly details: ErrorDetails;
  /** The kw_ function that failed. */
  readonly call: string;
  readonly messageName: string | undefined;
  readonly version: number | undefined;
  readonly path: string | undefined;
  readonly offset: number | undefined;
  /** "the bytes decode as FetchResponse v12: was the request v12?", when a response decodes at exactly one other version. */
  readonly hint: string | undefined;
  /** The version of the hint. */
  readonly hintVersion: number | undefined;
  /** The topic whose records failed (per-partition path). */
  readonly topic: string | undefined;
  /** The partition whose records failed (per-partition path). */
  readonly partition: number | undefined;
}
export declare class KwireArgError extends KwireError {}
export declare class KwireDecodeError extends KwireError {}
export declare class KwireEncodeError extends KwireError {}
export declare class KwireJSONError extends KwireError {}
export declare class KwireUnknownApiError extends KwireError {}
export declare class KwireVersionError extends KwireError {}
export declare class KwireTooLargeError extends KwireError {}
export declare class KwireNoMemError extends KwireError {}
export declare class KwireUnsupportedError extends KwireError {}
export declare class KwireInternalError extends KwireError {}
/** The module trapped; `replaced` tells whether the instance was replaced by a fresh one. */
export declare class KwireTrapError extends KwireError {
  readonly replaced: boolean;
}
export declare function errorFor(status: number, details: ErrorDetails | null, call: string): KwireError;

// ---------------------------------------------------------------------------------
// Sessions (src/session.js): one Kafka connection's client side over kw_session_*.

/** The session configuration kw_session_new reads, and the hooks of the JS session. */
export interface SessionOptions {
  /** The request header's client id (default "kwire"). */
  clientId?: string;
  /** The largest response frame accepted (default 100 MiB); a larger size prefix closes the session. */
  maxFrameSize?: number;
  /**
   * ApiVersions' clientSoftwareName (default "kwire-js"), written into every ApiVersions
   * request (v3+) that leaves it empty. Kafka accepts letters, digits, '-' and '.',
   * beginning and ending with a letter or digit; another value is refused before sending.
   */
  clientSoftwareName?: string;
  /** ApiVersions' clientSoftwareVersion (default VERSION, the package's version), likewise. */
  clientSoftwareVersion?: string;
  /** The ApiVersions version of the first negotiation request (default: kwire's highest). */
  bootstrapVersion?: number;
  /** Called once when the session closes, with the error it closed with. */
  onClose?: (error: ConnectionClosedError) => void;
  /** The timeout of every request (ms; default 0: none); request()'s timeoutMs overrides it. */
  requestTimeoutMs?: number;
}

/** SASL with a user and password: PLAIN, or SCRAM (RFC 5802/7677, over node:crypto). */
export interface SaslPassword {
  mechanism: 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
  username: string;
  password: string;
}

/** SASL OAUTHBEARER (RFC 7628): token is called at every authentication, re-authentications included. */
export interface SaslOAuthBearer {
  mechanism: 'OAUTHBEARER';
  /** Returns the token (a JWT, without "Bearer "). */
  token: () => string | Promise<string>;
  /** Optional SASL extensions (key=value pairs of the client response). */
  extensions?: { [key: string]: string };
}

export type SaslOptions = SaslPassword | SaslOAuthBearer;

/** Session.create's options: the instance to use (default: the one init() loads). */
export interface SessionCreateOptions extends SessionOptions {
  kwire?: Kwire;
}

/** Session.connect's options. */
export interface SessionConnectOptions extends SessionCreateOptions {
  /** Bounds the connect and the negotiation (default 30000). */
  timeoutMs?: number;
  /** false: return before negotiating (call negotiate() yourself). */
  negotiate?: boolean;
  /** Extra options for net.connect (host and port come from the arguments). */
  socket?: { [option: string]: unknown };
  /** Connect with node:tls: true, or tls.connect's options ({ ca, servername, ... }). */
  tls?: boolean | { [option: string]: unknown };
  /** Authenticate after negotiating (and re-authenticate when the broker grants a session lifetime). */
  sasl?: SaslOptions;
}

/** Session.connect's single-argument form. */
export interface SessionConnectTarget extends SessionConnectOptions {
  host: string;
  port: number;
}

/** A response as the session hands it over: the body in the JSON form. */
export interface SessionResponse<K extends ResponseApiKey = ResponseApiKey> {
  correlationId: number;
  apiKey: K;
  apiVersion: number;
  /** The version the body is written in (ApiVersions' UNSUPPORTED_VERSION answers are v0). */
  bodyVersion: number;
  headerVersion: number;
  negotiation: 'none' | 'done' | 'retry';
  body: ResponsesByKey[K];
}

/** What a request's body may be: its JSON form (bytes fields as bytes or base64, int64 as bigint, number or string), or JSON text. */
export type SessionRequestBody<K extends RequestApiKey> = RequestsByKey[K] | { [field: string]: unknown } | string;

export interface SessionRequestOptions {
  /** The version to send (default: the negotiated one). */
  version?: number;
  /** The broker does not answer (Produce with acks=0): the promise resolves with null once written. */
  noResponse?: boolean;
  /** Reject with TimeoutError after this many ms (default: the session's requestTimeoutMs); the late response is dropped. */
  timeoutMs?: number;
}

/** What a session counted itself. */
export interface SessionStats {
  /** Late responses of timed-out requests, read and dropped. */
  dropped: number;
  /** SaslAuthenticate requests sent (every step of every authentication). */
  saslAuthenticates: number;
  /** Re-authentications completed. */
  reauthentications: number;
  /** The session lifetime the broker granted at the last authentication (0: none). */
  sessionLifetimeMs: number;
}

export interface SessionCounters {
  bytesSent: number;
  bytesReceived: number;
  requestsSent: number;
  responsesReceived: number;
  pending: number;
  negotiated: boolean;
  /** Part of a response frame has been fed. */
  buffered: boolean;
}

/** The session is over; `cause` holds the underlying error (a KwireTooLargeError, the socket's error, ...). */
export declare class ConnectionClosedError extends Error {}

/** A request got no response within its timeout; the session goes on. */
export declare class TimeoutError extends Error {}

/** The broker refused the mechanism or the credentials, or the exchange broke its rules. */
export declare class AuthenticationError extends Error {
  readonly mechanism: string;
  /** Kafka's error code (58 SASL_AUTHENTICATION_FAILED, 33 UNSUPPORTED_SASL_MECHANISM, ...); 0 when kwire found the fault. */
  readonly errorCode: number;
  /** The broker's error message, or null. */
  readonly brokerMessage: string | null;
}

/** The response to one request could not be used; the session goes on. */
export declare class ResponseError extends Error {
  readonly response: { correlationId: number; apiKey: number; apiVersion: number; headerVersion: number; error: string };
  readonly correlationId: number;
  readonly apiKey: number;
  readonly apiVersion: number;
}

/** The part of node:net's Socket the session's users read (Session.connect's socket). */
export interface SessionSocket {
  readonly bytesRead: number;
  readonly bytesWritten: number;
  readonly destroyed: boolean;
  destroy(error?: Error): unknown;
}

/** One Kafka connection's client side: a write function out, feed() in. */
export declare class Session {
  constructor(kwire: Kwire, write: (bytes: Uint8Array) => void | Promise<void>, options?: SessionOptions);
  static create(write: (bytes: Uint8Array) => void | Promise<void>, options?: SessionCreateOptions): Promise<Session>;
  /** Opens a node:net connection, negotiated unless options.negotiate is false. */
  static connect(host: string, port: number, options?: SessionConnectOptions): Promise<Session>;
  static connect(target: SessionConnectTarget): Promise<Session>;
  /** The node:net Socket of Session.connect (typed structurally: no dependency on Node's types). */
  socket?: SessionSocket;
  readonly closed: boolean;
  readonly negotiated: boolean;
  /** The ApiVersions versions the negotiation sent, in order. */
  readonly negotiationVersions: number[];
  /** The error the session closed with, or null. */
  readonly error: ConnectionClosedError | null;
  negotiate(): Promise<void>;
  request<K extends RequestApiKey & ResponseApiKey>(apiKey: K, body: SessionRequestBody<K>, options?: SessionRequestOptions & { noResponse?: false }): Promise<SessionResponse<K>>;
  request<K extends RequestApiKey>(apiKey: K, body: SessionRequestBody<K>, options: SessionRequestOptions & { noResponse: true }): Promise<null>;
  versionFor(apiKey: number): number;
  counters(): SessionCounters;
  /** Authenticates (after negotiate()); Session.connect's sasl option calls it. */
  authenticate(sasl: SaslOptions): Promise<{ sessionLifetimeMs: number }>;
  stats(): SessionStats;
  /** Bytes read from the connection, in any chunking. */
  feed(bytes: BytesLike): void;
  /** The stream ended: pending requests reject with ConnectionClosedError. */
  end(): void;
  close(reason?: unknown): void;
  free(): void;
}

/** ReconnectingSession's backoff: initialDelayMs * multiplier^n, capped at maxDelayMs, +-jitter. */
export interface ReconnectOptions {
  initialDelayMs?: number;
  maxDelayMs?: number;
  multiplier?: number;
  /** The random spread around each delay, as a fraction (default 0.2). */
  jitter?: number;
  maxAttempts?: number;
}

export interface ReconnectingSessionOptions extends SessionConnectOptions {
  reconnect?: ReconnectOptions;
  /** Called after each new connection. */
  onReconnect?: (session: Session, attempt: number) => void;
}

/** A Session.connect that reconnects (negotiating and authenticating again); requests in flight on a dead connection reject, never resent. */
export declare class ReconnectingSession {
  static connect(host: string, port: number, options?: ReconnectingSessionOptions): Promise<ReconnectingSession>;
  static connect(target: ReconnectingSessionOptions & { host: string; port: number }): Promise<ReconnectingSession>;
  /** The current session (a new one after each reconnection). */
  readonly session: Session;
  /** Connections made after the first. */
  readonly reconnects: number;
  readonly closed: boolean;
  request<K extends RequestApiKey & ResponseApiKey>(apiKey: K, body: SessionRequestBody<K>, options?: SessionRequestOptions & { noResponse?: false }): Promise<SessionResponse<K>>;
  request<K extends RequestApiKey>(apiKey: K, body: SessionRequestBody<K>, options: SessionRequestOptions & { noResponse: true }): Promise<null>;
  close(reason?: unknown): void;
}
