// Type checks of index.d.ts (tsc --noEmit, `make js-test`): what must compile does, and
// each @ts-expect-error line must be an error.
import {
  init, load, decodeRequest, decodeResponse, encodeRequest, encodeResponse, decodeMessage, encodeMessage,
  decodeRecords, encodeRecords, peekHeader, apis, KwireError, KwireDecodeError,
  decodeFetch, decodeProduce, encodeProduce, RecordTableBuilder, BatchWords, type RecordSet, type Columns,
  type ProduceRequestDecoded, type FetchResponseDecoded, type InitProducerIdResponseDecoded, type AnyRequestFrame, type Int64,
  ApiKey, ErrorCode, errorCodeName, type ProduceVerdict,
} from '../../index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectType<T extends true>(): void {}

async function main(bytes: Uint8Array) {
  const kw = await init();
  const other = await load(new URL('https://example.com/kwire.wasm'));
  void other;

  // decodeRequest narrows by api key
  const f: AnyRequestFrame = decodeRequest(bytes);
  if (f.apiKey === 0) {
    expectType<Equal<typeof f.body, ProduceRequestDecoded>>();
    const records: string | null | undefined = f.body.topicData?.[0]?.partitionData?.[0]?.records;
    void records;
    // under --strict, fields of every version are present: no `?.` needed
    const topics: unknown[] = f.body.topicData;
    const acks: number = f.body.acks;
    const index: number | undefined = f.body.topicData[0]?.partitionData[0]?.index;
    // a Produce topic's name is absent from v13 (topic ids): optional
    // @ts-expect-error: name may be undefined
    const name: string = f.body.topicData[0]!.name;
    void topics, acks, index, name;
  }
  // named api keys and error codes
  const fetchKey: 1 = ApiKey.Fetch;
  const utop: 3 = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  const ename: string | undefined = errorCodeName(87);
  void fetchKey, utop, ename;
  // decodeResponse is typed by its api key argument
  const r = decodeResponse(bytes, 1, 12);
  expectType<Equal<typeof r.body, FetchResponseDecoded>>();
  const r2 = kw.decodeResponse(bytes, 22, 4);
  expectType<Equal<typeof r2.body, InitProducerIdResponseDecoded>>();

  // bodies by name
  const m = decodeMessage('InitProducerIdResponse', 4, bytes);
  expectType<Equal<typeof m, InitProducerIdResponseDecoded>>();
  const pid: Int64 | undefined = m.producerId;
  void pid;
  encodeMessage('InitProducerIdResponse', 4, { producerId: '4611686018427387905', producerEpoch: 1 });
  // @ts-expect-error: not a message name
  decodeMessage('NoSuchMessage', 0, bytes);
  // @ts-expect-error: producerEpoch is an int16 number
  encodeMessage('InitProducerIdResponse', 4, { producerEpoch: 'one' });

  // frames
  const frame: Uint8Array = encodeRequest({ header: { requestApiKey: 0, requestApiVersion: 9, correlationId: 1, clientId: 'c' }, body: { acks: -1 } });
  encodeResponse(r);
  encodeResponse({ header: { correlationId: 1 }, body: {} }, 1, 12);
  // @ts-expect-error: a response needs its api key and version
  encodeResponse({ header: { correlationId: 1 }, body: {} });
  const p = peekHeader(frame);
  const cid: string | null = p.clientId;
  void cid;

  // records
  const recs = decodeRecords(bytes);
  const off: bigint = recs.records[0].offset;
  const key: Uint8Array | null = recs.records[0].key;
  void off, key;
  const srecs = decodeRecords('AAAA', { int64: 'string', copy: true });
  const soff: string = srecs.records[0].offset;
  void soff;
  encodeRecords([{ key: 'k', value: new Uint8Array(1), timestamp: 1n, headers: [['h', null], { key: 'x', value: 'y' }] }],
    { compression: 'zstd', producerId: 2n ** 62n + 1n });
  // @ts-expect-error: not a codec
  encodeRecords([], { compression: 'brotli' });

  for (const a of apis()) {
    const n: number = a.apiKey;
    void n;
  }
  try {
    decodeRequest(bytes);
  } catch (e) {
    if (e instanceof KwireDecodeError) {
      const s: number = e.status;
      const t: string = e.text;
      const path: string | undefined = e.path;
      void s, t, path;
    }
    if (e instanceof KwireError) void e.category;
  }

  // decodeFetch: RecordSets with lazy records and columns
  const fr = decodeFetch(bytes, 12);
  for (const p of fr.partitions) {
    const set: RecordSet = p.records;
    for (const rec of set) {
      const o: bigint = rec.offset;
      const v: Uint8Array | null = rec.value;
      void o, v;
    }
    const c: Columns = set.columns();
    const offs: BigInt64Array = c.offsets;
    const keys: Int32Array = c.keys;
    void offs, keys;
    // layout 4's batch table: a record's batch fields through batchIndex
    for (let i = 0; i < c.length; i++) {
      const e = (c.batchIndex[i] ?? 0) * c.batchStride;
      const magic: number | undefined = c.batches[e + BatchWords.magic];
      const pid: bigint | undefined = c.batches64[(e + BatchWords.producerId) >> 1];
      const ctl: number | undefined = c.controlTypes[i];
      const schemaId: number | undefined = c.schemas[3 * i + 1];
      void magic, pid, ctl, schemaId;
    }
  }
  // for tests: the record entries of layout 3 instead of the columns
  void decodeFetch(bytes, 12, { layout: 3 });
  // host decompression: on by default, off per call; which codecs, and how much so far
  const fm = decodeFetch(bytes, 12, { hostDecompress: false, maxDecompressed: 1 << 20 });
  const kwi = await load();
  const codecs: Array<'gzip' | 'zstd'> = kwi.hostCodecs();
  const hd: number = kwi.hostDecompressed().batches;
  void fm, codecs, hd;
  const pr = fr.body.responses?.[0]?.partitions?.[0]?.records;
  if (pr) expectType<Equal<typeof pr, RecordSet>>();
  // @ts-expect-error: the records of decodeFetch are not base64 text
  const notText: string | null | undefined = fr.body.responses?.[0]?.partitions?.[0]?.records;
  void notText;
  const pp = decodeProduce(bytes);
  const verdict: ProduceVerdict | null = pp.partitions[0]?.invalid ?? null;
  const firstBad: number | undefined = pp.invalidPartitions[0]?.errorCode;
  void verdict, firstBad;
  const b = new RecordTableBuilder();
  b.add({ key: 'k', value: null, timestamp: 1n });
  encodeProduce({ header: pp.header, body: { acks: -1, timeoutMs: 1000, topicData: [{ name: 't', partitionData: [
    { index: 0, records: { records: [{ key: 'k', value: 'v' }], compression: 'zstd', producerId: 5n } },
    { index: 1, records: pp.partitions[0]?.records ?? null },
    { index: 2, records: new Uint8Array(0) },
  ] }] } });
  // @ts-expect-error: not a codec
  encodeProduce({ header: pp.header, body: { topicData: [{ partitionData: [{ index: 0, records: { records: [], compression: 'brotli' } }] }] } });
}
void main;
