// Type checks of index.d.ts (tsc --noEmit, `make js-test`): what must compile does, and
// each @ts-expect-error line must be an error.
import {
  init, load, decodeRequest, decodeResponse, encodeRequest, encodeResponse, decodeMessage, encodeMessage,
  decodeRecords, encodeRecords, peekHeader, apis, KwireError, KwireDecodeError,
  type ProduceRequest, type FetchResponse, type InitProducerIdResponse, type AnyRequestFrame, type Int64,
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
    expectType<Equal<typeof f.body, ProduceRequest>>();
    const records: string | null | undefined = f.body.topicData?.[0]?.partitionData?.[0]?.records;
    void records;
  }
  // decodeResponse is typed by its api key argument
  const r = decodeResponse(bytes, 1, 12);
  expectType<Equal<typeof r.body, FetchResponse>>();
  const r2 = kw.decodeResponse(bytes, 22, 4);
  expectType<Equal<typeof r2.body, InitProducerIdResponse>>();

  // bodies by name
  const m = decodeMessage('InitProducerIdResponse', 4, bytes);
  expectType<Equal<typeof m, InitProducerIdResponse>>();
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
}
void main;
