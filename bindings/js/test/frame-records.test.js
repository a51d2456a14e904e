// RecordTable / RecordSet / Record / columns, the table builder, and decodeFetch,
// decodeProduce and encodeProduce: every record-batch vector and every Fetch response and
// Produce request conformance vector, against the binding's existing decode paths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load, fromBase64, toBase64, RecordTable, RecordTableBuilder, KwireDecodeError } from '../index.js';
import { Catalogue, parseVectorLine } from './lib/conformance.js';
import { checkDecoded, checkEncode, checkFrames, checkRecordVectorTable, checkSet } from './lib/frame-records.js';

const VECTORS = fileURLToPath(new URL('../../../conformance/vectors/', import.meta.url));
const kw = await load();
const cat = new Catalogue(kw.catalogue());
const recordVectors = readdirSync(VECTORS + 'records/').filter((f) => f.endsWith('.jsonl')).sort()
  .flatMap((f) => readFileSync(VECTORS + 'records/' + f, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l)));
const P62 = 2n ** 62n + 1n;

console.log(`kwire.wasm ${kw.hasFrameRecords() ? 'has' : 'lacks'} the frame-records calls: decodeFetch/decodeProduce/encodeProduce are checked through ${kw.hasFrameRecords() ? 'both paths' : 'the per-partition path only'}`);

test('every record-batch vector through decodeRecordTable (lazy records and columns)', () => {
  const fails = recordVectors.map((v) => [v.name, checkRecordVectorTable(kw, v, fromBase64)]).filter(([, m]) => m !== '');
  console.log(`${recordVectors.length} record vectors through the record table, ${fails.length} failed`);
  assert.ok(recordVectors.length >= 20);
  assert.deepEqual(fails, []);
});

test('every record-batch vector inside Fetch responses and Produce requests (decodeFetch, decodeProduce)', () => {
  const fails = recordVectors.map((v) => [v.name, checkFrames(kw, fromBase64(v.bytes), toBase64)]).filter(([, m]) => m !== '');
  assert.deepEqual(fails, []);
});

test('every record-batch vector re-encoded by encodeProduce', () => {
  let n = 0;
  const fails = [];
  for (const v of recordVectors) {
    const m = checkEncode(kw, v, fromBase64, toBase64);
    if (m === null) continue;
    n++;
    if (m !== '') fails.push([v.name, m]);
  }
  console.log(`${n} record vectors re-encoded through encodeProduce, ${fails.length} failed`);
  assert.ok(n >= 8, `only ${n} vectors re-encoded`);
  assert.deepEqual(fails, []);
});

for (const f of readdirSync(VECTORS).filter((f) => /^kafka-clients-.+\.jsonl$/.test(f)).sort()) {
  test(`every Produce request and Fetch response vector of ${f} through decodeProduce / decodeFetch`, () => {
    let checked = 0;
    let withRecords = 0;
    const fails = [];
    const lines = readFileSync(VECTORS + f, 'utf8').split('\n').filter((l) => l.trim() !== '');
    lines.forEach((line, i) => {
      const v = parseVectorLine(line, fromBase64);
      if (!((v.apiKey === 0 && v.kind === 'request') || (v.apiKey === 1 && v.kind === 'response'))) return;
      const hvs = kw.headerVersions(v.apiKey, v.version);
      const header = v.kind === 'request'
        ? kw.encodeMessage('RequestHeader', hvs.request, { requestApiKey: v.apiKey, requestApiVersion: v.version, correlationId: i, clientId: 'v' })
        : kw.encodeMessage('ResponseHeader', hvs.response, { correlationId: i });
      const frame = new Uint8Array(4 + header.length + v.bytes.length);
      new DataView(frame.buffer).setUint32(0, header.length + v.bytes.length);
      frame.set(header, 4);
      frame.set(v.bytes, 4 + header.length);
      try {
        if (v.kind === 'request') kw.decodeRequest(frame);
        else kw.decodeResponse(frame, 1, v.version);
      } catch {
        return; // a vector of a version whose frame the module refuses is the conformance suite's business
      }
      checked++;
      if (/"records":"/.test(line)) withRecords++;
      const m = checkDecoded(kw, frame, v.apiKey, v.version);
      if (m !== '') fails.push(`${v.id ?? v.name} v${v.version}: ${m}`);
    });
    console.log(`${f}: ${checked} Produce/Fetch vectors checked (${withRecords} with a records field), ${fails.length} failed`);
    assert.ok(checked > 200, `only ${checked} vectors`);
    assert.deepEqual(fails.slice(0, 10), []);
  });
}

test('int64 offsets, timestamps and producer ids stay exact in records and columns', () => {
  const batch = kw.encodeRecords([{ key: 'a', value: 'b', timestamp: P62 }, { key: null, value: null, timestamp: -P62 }],
    { baseOffset: P62, producerId: P62, producerEpoch: 0, baseSequence: 0 });
  const frame = kw.encodeResponse({ header: { correlationId: 1 }, body: { throttleTimeMs: 0, errorCode: 0, sessionId: 0,
    responses: [{ topic: 't', partitions: [{ partitionIndex: 0, errorCode: 0, highWatermark: '0', lastStableOffset: '0', logStartOffset: '0',
      abortedTransactions: [], preferredReadReplica: -1, records: toBase64(batch) }] }] } }, 1, 12);
  for (const fallback of [false, true]) {
    const f = kw.decodeFetch(frame, 12, { fallback });
    const set = f.partitions[0].records;
    const c = set.columns();
    assert.deepEqual([...c.offsets], [P62, P62 + 1n]);
    assert.deepEqual([...c.timestamps], [P62, -P62]);
    const rs = [...set];
    assert.equal(rs[0].producerId, P62);
    assert.equal(rs[1].offset, P62 + 1n);
    assert.equal(rs[1].key, null);
    assert.deepEqual([...c.keys.subarray(2, 4)], [0, -1]);
    assert.equal(f.partitions[0].topic, 't');
    assert.equal(f.partitions[0].partition, 0);
  }
});

test('RecordTableBuilder writes a table RecordTable reads back', () => {
  const b = new RecordTableBuilder();
  const recs = [
    { key: 'k1', value: new Uint8Array([1, 2, 3]), timestamp: P62, headers: [['h', 'x'], { key: 'n', value: null }] },
    { key: null, value: '', timestamp: 5 },
    { key: new Uint8Array(0), value: null, headers: [[new Uint8Array([0xff]), new Uint8Array([9])]] },
  ];
  assert.equal(b.addAll(recs), 0);
  const t = new RecordTable(b.build());
  assert.equal(t.length, 3);
  const [r0, r1, r2] = t;
  assert.equal(r0.timestamp, P62);
  assert.deepEqual([...r0.key], [107, 49]);
  assert.deepEqual([...r0.value], [1, 2, 3]);
  assert.deepEqual(r0.headers.map((h) => [h.key, h.value && [...h.value]]), [['h', [120]], ['n', null]]);
  assert.equal(r1.key, null);
  assert.equal(r1.value.length, 0);
  assert.equal(r1.timestamp, 5n);
  assert.equal(r2.timestamp, -1n);
  assert.equal(r2.key.length, 0);
  assert.equal(r2.value, null);
  assert.deepEqual([...r2.rawHeaders[0].key], [0xff]);
  assert.deepEqual([...t.columns().headerIndex], [0, 2, 2, 0, 2, 1]);
  assert.throws(() => b.add({ key: 1 }), TypeError);
  assert.throws(() => b.add({ timestamp: 2 ** 60 }), RangeError);
});

test('a corrupt record table is refused, not read out of bounds', () => {
  const good = new RecordTableBuilder();
  good.add({ key: 'k', value: 'v' });
  const bytes = good.build();
  const bad = bytes.slice();
  new DataView(bad.buffer).setInt32(40 + 36, 1 << 20, true); // value length past the end
  assert.throws(() => new RecordTable(bad), /bad record table/);
  const short = bytes.slice(0, 30);
  assert.throws(() => new RecordTable(short), /bad record table/);
});

test('decodeFetch keeps the frame and its errors', () => {
  const bad = new Uint8Array([0, 0, 0, 4, 0, 0, 0, 1]);
  assert.throws(() => kw.decodeFetch(bad, 12), KwireDecodeError);
  const frame = kw.encodeRequest({ header: { requestApiKey: 3, requestApiVersion: 12, correlationId: 1, clientId: 'x' }, body: { topics: [] } });
  assert.throws(() => kw.decodeProduce(frame), /api key 3/);
  // a records field that is not a record batch fails like decodeRecords
  const corrupt = kw.encodeRecords([{ key: 'k', value: 'value' }]);
  corrupt[corrupt.length - 3] ^= 0xff; // a byte of the value: the batch's CRC no longer matches
  const garbage = toBase64(corrupt);
  const resp = kw.encodeResponse({ header: { correlationId: 1 }, body: { throttleTimeMs: 0, errorCode: 0, sessionId: 0,
    responses: [{ topic: 't', partitions: [{ partitionIndex: 0, errorCode: 0, highWatermark: '0', lastStableOffset: '0', logStartOffset: '0',
      abortedTransactions: [], preferredReadReplica: -1, records: garbage }] }] } }, 1, 12);
  assert.equal(checkDecoded(kw, resp, 1, 12), '');
  for (const fallback of [false, true]) assert.throws(() => kw.decodeFetch(resp, 12, { fallback }), KwireDecodeError);
  assert.equal(checkSet(kw.decodeRecordTable(new Uint8Array(0)).slice(), [], 0), '');
});

test('decodeFetch: an uncompressed record is a view of the caller\'s frame, a compressed one is not', () => {
  const recs = [{ key: 'k', value: 'hello, input', headers: [['h', 'v']] }];
  for (const [compression, inInput] of [['none', true], ['lz4', false]]) {
    const batch = kw.encodeRecords(recs, { compression });
    const frame = kw.encodeResponse({ header: { correlationId: 1 }, body: { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [{ topic: 't', partitions: [
      { partitionIndex: 0, errorCode: 0, highWatermark: '1', lastStableOffset: '1', logStartOffset: '0', abortedTransactions: [], preferredReadReplica: -1, records: toBase64(batch) }] }] } }, 1, 12);
    const f = kw.decodeFetch(frame, 12);
    const set = f.partitions[0].records;
    const minor = kw.abiVersion().minor;
    assert.equal(set.table.layout, minor >= 4 ? 4 : minor >= 2 ? 3 : 2);
    const r = set.at(0);
    assert.equal(r.valueText, 'hello, input');
    assert.equal(r.keyText, 'k');
    const v = r.value;
    assert.equal(v.buffer === frame.buffer, inInput, `${compression}: value in the frame's buffer`);
    assert.equal(r.headers[0].value.buffer === frame.buffer, inInput);
    if (inInput) {
      // The very bytes: a change to the frame shows through the record.
      const at = v.byteOffset - frame.byteOffset;
      assert.deepEqual(frame.subarray(at, at + v.length), v);
      frame[at] = 'H'.charCodeAt(0);
      assert.equal(set.at(0).valueText, 'Hello, input');
      const c = set.columns();
      assert.equal(c.sources[0], 1);
      assert.equal(c.input, frame);
    }
    // options.copy: a table that holds its own bytes (the changed frame fails its CRC now).
    const g = kw.decodeFetch(frame, 12, { copy: true, skipCrc: true });
    assert.notEqual(g.partitions[0].records.at(0).value.buffer, frame.buffer);
    assert.equal(g.partitions[0].records.table.layout, minor >= 4 ? 4 : 2);
    assert.deepEqual([...g.partitions[0].records.columns().sources], [0]);
  }
});
