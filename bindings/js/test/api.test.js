// The binding's API: frames, bodies, peek, records, int64 exactness, errors, memory
// growth, instances, traps, and a quiet start in Node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as kwire from '../index.js';
import { Catalogue, checkVector, jsonDiff, parseVectorLine } from './lib/conformance.js';
import { checkTrailingBytes, fromHex, METADATA_V13_TRAILING_HEX } from './lib/interop.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const produceFrame = readFileSync(ROOT + 'examples/data/produce-request.bin');
const fetchFrame = readFileSync(ROOT + 'examples/data/fetch-response.bin');
const P62 = 2n ** 62n + 1n; // 4611686018427387905: not representable as a double
const te = new TextEncoder();
const td = new TextDecoder();

test('module-level functions refuse to run before init()', () => {
  assert.throws(() => kwire.decodeRequest(produceFrame), /await init\(\)/);
});

const kw = await kwire.init();

test('init() returns one shared instance; load() makes independent ones', async () => {
  assert.equal(await kwire.init(), kw);
  const other = await kwire.load();
  assert.notEqual(other, kw);
  assert.deepEqual(other.decodeRequest(produceFrame), kw.decodeRequest(produceFrame));
  assert.deepEqual(kw.abiVersion(), { major: kwire.ABI_MAJOR, minor: kw.abiVersion().minor });
  assert.ok(kw.abiVersion().minor >= kwire.ABI_MINOR);
});

test('load() accepts a path, a URL, bytes and a compiled module', async () => {
  const url = new URL('../kwire.wasm', import.meta.url);
  const bytes = readFileSync(url);
  for (const src of [fileURLToPath(url), url, url.href, bytes, bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length), await kwire.compile(url)]) {
    const k = await kwire.load(src);
    assert.equal(k.peekHeader(produceFrame).correlationId, 7);
  }
  await assert.rejects(kwire.load(ROOT + 'no-such-file.wasm'), /ENOENT/);
});

test('decodeRequest / encodeRequest: the sample Produce frame, and back to the same bytes', () => {
  const f = kwire.decodeRequest(produceFrame);
  assert.deepEqual(Object.keys(f), ['apiKey', 'apiVersion', 'headerVersion', 'header', 'body']);
  assert.equal(f.apiKey, 0);
  assert.equal(f.apiVersion, 9);
  assert.equal(f.headerVersion, 2);
  assert.equal(f.header.correlationId, 7);
  assert.equal(f.header.clientId, 'kwire-example');
  assert.equal(f.body.topicData[0].name, 'orders');
  assert.equal(typeof f.body.topicData[0].partitionData[0].records, 'string'); // base64, as the JSON form says
  assert.deepEqual(kwire.encodeRequest(f), new Uint8Array(produceFrame));
  // without the envelope's own fields, from JSON text, and after an edit
  assert.deepEqual(kwire.encodeRequest({ header: f.header, body: f.body }), new Uint8Array(produceFrame));
  assert.deepEqual(kwire.encodeRequest(JSON.stringify(f)), new Uint8Array(produceFrame));
  const edited = kwire.decodeRequest(kwire.encodeRequest({ ...f, header: { ...f.header, correlationId: 99 } }));
  assert.equal(edited.header.correlationId, 99);
  assert.equal(jsonDiff(f.body, edited.body), null);
});

test('decodeResponse / encodeResponse: the sample Fetch frame', () => {
  const f = kwire.decodeResponse(fetchFrame, 1, 12);
  assert.equal(f.apiKey, 1);
  assert.equal(f.apiVersion, 12);
  assert.equal(f.header.correlationId, 8);
  assert.equal(f.body.responses[0].topic, 'events');
  assert.equal(f.body.responses[0].partitions.length, 4);
  assert.deepEqual(kwire.encodeResponse(f), new Uint8Array(fetchFrame));
  assert.deepEqual(kwire.encodeResponse({ header: f.header, body: f.body }, 1, 12), new Uint8Array(fetchFrame));
  assert.throws(() => kwire.encodeResponse({ header: f.header, body: f.body }), TypeError);
});

test('inputs may be Buffers, subarrays with an offset, ArrayBuffers and DataViews', () => {
  const padded = new Uint8Array(produceFrame.length + 7);
  padded.set(produceFrame, 5);
  const want = kwire.decodeRequest(produceFrame);
  assert.deepEqual(kwire.decodeRequest(padded.subarray(5, 5 + produceFrame.length)), want);
  assert.deepEqual(kwire.decodeRequest(new Uint8Array(produceFrame).buffer), want);
  assert.deepEqual(kwire.decodeRequest(new DataView(padded.buffer, 5, produceFrame.length)), want);
  assert.throws(() => kwire.decodeRequest('not bytes'), TypeError);
});

test('peekHeader reads the header of a whole frame and of its first bytes only', () => {
  const want = { frameSize: produceFrame.length - 4, apiKey: 0, apiVersion: 9, correlationId: 7, headerVersion: 2,
    clientId: 'kwire-example', clientIdOffset: 14, clientIdLength: 13 };
  assert.deepEqual(kwire.peekHeader(produceFrame), want);
  assert.deepEqual(kwire.peekHeader(produceFrame.subarray(0, 27)), want);
  assert.throws(() => kwire.peekHeader(produceFrame.subarray(0, 20)), kwire.KwireDecodeError); // client id cut
  assert.throws(() => kwire.peekHeader(produceFrame.subarray(0, 11)), kwire.KwireDecodeError);
});

test('decodeMessage / encodeMessage by name and version', () => {
  const body = { throttleTimeMs: 5, errorCode: 0, producerId: '12', producerEpoch: 3 };
  for (const v of [0, 2, 4, 5]) {
    const bytes = kwire.encodeMessage('InitProducerIdResponse', v, body);
    const back = kwire.decodeMessage('InitProducerIdResponse', v, bytes);
    assert.equal(jsonDiff(body, back), null, `v${v}`);
  }
  // JSON text works as input too
  assert.deepEqual(kwire.encodeMessage('InitProducerIdResponse', 4, JSON.stringify(body)), kwire.encodeMessage('InitProducerIdResponse', 4, body));
});

test('int64 is exact: a producer id of 2^62+1 round-trips through bodies, frames and records', () => {
  // a message body: int64 as a decimal string, or a bigint on input
  const s = P62.toString();
  const b1 = kwire.encodeMessage('InitProducerIdResponse', 4, { producerId: s, producerEpoch: 1 });
  const b2 = kwire.encodeMessage('InitProducerIdResponse', 4, { producerId: P62, producerEpoch: 1 });
  assert.deepEqual(b1, b2);
  const dv = new DataView(b1.buffer, b1.byteOffset);
  assert.equal(dv.getBigInt64(6), P62, 'the wire holds 0x4000000000000001 after throttleTimeMs and errorCode');
  assert.equal(kwire.decodeMessage('InitProducerIdResponse', 4, b1).producerId, s);
  assert.equal(BigInt(kwire.decodeMessage('InitProducerIdResponse', 4, b1).producerId), P62);
  // a number that a double cannot hold exactly is refused rather than rounded
  assert.throws(() => kwire.encodeRecords([], { producerId: Number(P62) }), RangeError);

  // a record batch inside a Produce request frame
  const batch = kwire.encodeRecords([{ key: 'k', value: 'v', timestamp: 1700000000000n }],
    { producerId: P62, producerEpoch: 7, baseSequence: 0, baseOffset: 2n ** 53n + 3n });
  const frame = kwire.encodeRequest({
    header: { requestApiKey: 0, requestApiVersion: 9, correlationId: 1, clientId: 'c' },
    body: { acks: -1, timeoutMs: 1000, topicData: [{ name: 't', partitionData: [{ index: 0, records: kwire.toBase64(batch) }] }] },
  });
  const rec = kwire.decodeRequest(frame).body.topicData[0].partitionData[0].records;
  const { records } = kwire.decodeRecords(rec);
  assert.equal(records[0].producerId, P62);
  assert.equal(records[0].offset, 2n ** 53n + 3n);
  assert.equal(records[0].timestamp, 1700000000000n);
  assert.equal(kwire.decodeRecords(rec, { int64: 'string' }).records[0].producerId, s);
  assert.equal(kwire.decodeRecordsJSON(rec).records[0].producerId, s);
});

test('decodeRecords: views by default, copies on request; base64 input; null', () => {
  const batch = kwire.encodeRecords([
    { key: 'a', value: 'first', headers: [{ key: 'h1', value: 'x' }, ['h2', null]], timestamp: 1 },
    { key: null, value: new Uint8Array([0, 1, 2]), timestamp: 2 },
    { key: new Uint8Array(0), value: null, timestamp: 3 },
  ], { compression: 'lz4' });
  const views = kwire.decodeRecords(batch);
  const copies = kwire.decodeRecords(batch, { copy: true });
  for (const { records } of [views, copies]) {
    assert.equal(records.length, 3);
    assert.equal(td.decode(records[0].key), 'a');
    assert.equal(td.decode(records[0].value), 'first');
    assert.deepEqual(records[0].headers.map((h) => [h.key, h.value && td.decode(h.value)]), [['h1', 'x'], ['h2', null]]);
    assert.equal(records[1].key, null);
    assert.deepEqual([...records[1].value], [0, 1, 2]);
    assert.deepEqual(records[2].key, new Uint8Array(0));
    assert.equal(records[2].value, null);
    assert.equal(records[0].compression, 'lz4');
    assert.equal(records[0].offset, 0n);
    assert.equal(records[2].offset, 2n);
    assert.equal(records[2].timestamp, 3n);
  }
  // views share one buffer (the table's); copies own theirs
  assert.equal(views.records[0].key.buffer, views.records[0].value.buffer);
  assert.notEqual(copies.records[0].key.buffer, copies.records[0].value.buffer);
  assert.equal(copies.records[0].value.buffer.byteLength, 5);
  assert.deepEqual(kwire.decodeRecords(kwire.toBase64(batch)).records.length, 3);
  assert.deepEqual(kwire.decodeRecords(null), { records: [], skippedBytes: 0 });
  assert.throws(() => kwire.decodeRecords('not base64!'), TypeError);
});

test('encodeRecords: every compression codec, legacy magic, bad options', () => {
  const recs = Array.from({ length: 50 }, (_, i) => ({ key: `k${i}`, value: 'v'.repeat(i), timestamp: 1000 + i }));
  for (const c of ['none', 'gzip', 'snappy', 'lz4', 'zstd', 0, 1, 2, 3, 4]) {
    const { records } = kwire.decodeRecords(kwire.encodeRecords(recs, { compression: c }));
    assert.equal(records.length, 50);
    assert.equal(records[49].compression, typeof c === 'number' ? ['none', 'gzip', 'snappy', 'lz4', 'zstd'][c] : c);
    assert.equal(td.decode(records[49].value), 'v'.repeat(49));
  }
  const legacy = kwire.decodeRecords(kwire.encodeRecords(recs.map(({ key, value, timestamp }) => ({ key, value, timestamp })), { magic: 1, compression: 'gzip' }));
  assert.equal(legacy.records[0].magic, 1);
  assert.throws(() => kwire.encodeRecords(recs, { compression: 'brotli' }), TypeError);
  assert.throws(() => kwire.encodeRecords('x'), TypeError);
});

test('errors: one Error subclass per status, with the status, the library text and details', () => {
  const cases = [
    [() => kwire.decodeResponse(fetchFrame.subarray(0, 30), 1, 12), kwire.KwireDecodeError, -2, 'decode'],
    [() => kwire.decodeMessage('ProduceRequest', 9, produceFrame.subarray(30, 40)), kwire.KwireDecodeError, -2, 'decode'],
    [() => kwire.encodeMessage('MetadataRequest', 0, { allowAutoTopicCreation: false }), kwire.KwireEncodeError, -3, 'encode'],
    [() => kwire.encodeMessage('ProduceRequest', 9, { topicData: [{ name: 'a', partitionData: [{ index: 0, bogus: 1 }] }] }), kwire.KwireJSONError, -4, 'json'],
    [() => kwire.encodeMessage('ProduceRequest', 9, '{"acks": '), kwire.KwireJSONError, -4, 'json'],
    [() => kwire.decodeMessage('NoSuchMessage', 0, new Uint8Array(0)), kwire.KwireUnknownApiError, -5, 'unknown_api'],
    [() => kwire.decodeResponse(fetchFrame, 9999, 0), kwire.KwireUnknownApiError, -5, 'unknown_api'],
    [() => kwire.decodeMessage('ProduceRequest', 999, new Uint8Array(0)), kwire.KwireVersionError, -6, 'version'],
    [() => kwire.headerVersions(0, 999), kwire.KwireVersionError, -6, 'version'],
    [() => kwire.peekHeader(new Uint8Array([0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0])), kwire.KwireTooLargeError, -7, 'too_large'],
    [() => kwire.encodeRecords([{ value: 'x' }], { compression: 9 }), kwire.KwireArgError, -1, 'arg'],
    [() => kwire.encodeRecords([{ value: 'x' }], { compression: 'zstd', magic: 1 }), kwire.KwireUnsupportedError, -9, 'unsupported'],
  ];
  for (const [f, cls, status, category] of cases) {
    let err;
    assert.throws(f, (e) => ((err = e), true));
    assert.ok(err instanceof cls, `${err && err.name}: ${err && err.message}`);
    assert.ok(err instanceof kwire.KwireError && err instanceof Error);
    assert.equal(err.name, cls.name);
    assert.equal(err.status, status);
    assert.equal(err.category, category);
    assert.ok(err.text.startsWith('kwire: '), err.text);
    assert.equal(err.message, err.text);
    assert.match(err.call, /^kw_/);
    assert.equal(err.details.status, status);
    // the instance stays usable after every error
    assert.equal(kwire.peekHeader(produceFrame).correlationId, 7);
  }
  // details: the path and offset the library reports
  assert.throws(() => kwire.encodeMessage('ProduceRequest', 9, { topicData: [{ name: 'a', partitionData: [{ index: 0, bogus: 1 }] }] }), (e) => {
    assert.equal(e.path, '$.topicData[0].partitionData[0].bogus');
    assert.equal(typeof e.offset, 'number');
    assert.equal(e.messageName, 'ProduceRequest');
    return true;
  });
  assert.throws(() => kwire.decodeMessage('FetchResponse', 12, fetchFrame.subarray(8, 60)), (e) => {
    assert.ok(e instanceof kwire.KwireDecodeError);
    assert.equal(e.messageName, 'FetchResponse');
    assert.equal(e.version, 12);
    assert.ok(e.offset > 0 && e.offset <= 52, `offset ${e.offset}`);
    assert.ok(e.path.length > 0);
    return true;
  });
});

test('a float64 -0.0 survives decodeMessage -> object -> encodeMessage', () => {
  const msg = { entries: [{ entity: [{ entityType: 'user', entityName: 'u' }], ops: [{ key: 'k', value: -0, remove: false }] }], validateOnly: false };
  const bytes = kwire.encodeMessage('AlterClientQuotasRequest', 1, msg);
  const back = kwire.decodeMessage('AlterClientQuotasRequest', 1, bytes);
  assert.ok(Object.is(back.entries[0].ops[0].value, -0));
  assert.deepEqual(kwire.encodeMessage('AlterClientQuotasRequest', 1, back), bytes);
  const plus = kwire.encodeMessage('AlterClientQuotasRequest', 1, { ...msg, entries: [{ ...msg.entries[0], ops: [{ key: 'k', value: 0, remove: false }] }] });
  assert.notDeepEqual(plus, bytes);
});

test('interop: a request body followed by extra bytes (librdkafka 2.16 MetadataRequest v13) decodes, shows _trailingBytes and re-encodes; responses stay strict', () => {
  assert.deepEqual(checkTrailingBytes(kw, kwire.KwireDecodeError), []);
  const f = kwire.decodeRequest(fromHex(METADATA_V13_TRAILING_HEX));
  assert.equal(f.body._trailingBytes, 'AAEC');
  // The check itself fails when the bytes are not kept.
  const lossy = { ...kw, decodeRequest: (b) => { const g = kw.decodeRequest(b); delete g.body._trailingBytes; return g; } };
  Object.setPrototypeOf(lossy, Object.getPrototypeOf(kw));
  assert.notDeepEqual(checkTrailingBytes(lossy, kwire.KwireDecodeError), []);
});

test('memory growth between calls: large inputs and outputs stay correct', () => {
  const value = new Uint8Array(64 * 1024).map((_, i) => i * 7);
  const recs = Array.from({ length: 256 }, (_, i) => ({ key: `key-${i}`, value, timestamp: i })); // 16 MiB of values
  const memBefore = kw._memory.buffer.byteLength;
  const batch = kwire.encodeRecords(recs);
  const { records } = kwire.decodeRecords(batch);
  assert.ok(kw._memory.buffer.byteLength > memBefore, 'the module memory grew');
  assert.equal(records.length, 256);
  assert.deepEqual(records[255].value, value);
  assert.equal(td.decode(records[200].key), 'key-200');
  // and small calls still work afterwards
  assert.equal(kwire.decodeRequest(produceFrame).header.clientId, 'kwire-example');
});

test('memory stays flat over thousands of calls (the module collects its garbage under this WASI layer)', async () => {
  const k = await kwire.load();
  const cycle = () => {
    const f = k.decodeResponse(fetchFrame, 1, 12);
    for (const p of f.body.responses[0].partitions) k.decodeRecords(p.records);
    k.encodeResponse(f);
  };
  // The module's Go heap settles at about 20 MB after a few thousand cycles (its collector
  // paces itself); then it stays flat.
  for (let i = 0; i < 5000; i++) cycle();
  const before = k._memory.buffer.byteLength;
  for (let i = 0; i < 4000; i++) cycle();
  // each cycle allocates several kilobytes of outputs: a leak of even one of them per
  // cycle would add well over 10 MB; the heap may still settle by a page or two
  const grown = k._memory.buffer.byteLength - before;
  assert.ok(grown <= 2 << 20, `memory grew by ${grown} bytes over 4000 cycles (from ${before})`);
});

test('a trap discards the instance and replaces it with a fresh one', async () => {
  const k = await kwire.load();
  // calling _initialize twice is a misuse the Go runtime answers with a fatal error (a trap)
  let err;
  assert.throws(() => k._call('_initialize', k._x._initialize), (e) => ((err = e), true));
  assert.ok(err instanceof kwire.KwireTrapError && err instanceof kwire.KwireError);
  assert.equal(err.status, kwire.KW_ERR_INTERNAL);
  assert.equal(err.replaced, true);
  assert.match(err.message, /trapped in _initialize/);
  assert.ok(err.cause instanceof WebAssembly.RuntimeError);
  assert.equal(k.decodeRequest(produceFrame).header.correlationId, 7);
});

test('catalogue, apis and header versions', () => {
  const apis = kwire.apis();
  assert.deepEqual(apis.map((a) => a.apiKey), [...apis.map((a) => a.apiKey)].sort((a, b) => a - b));
  assert.deepEqual({ ...apis.find((a) => a.apiKey === 0), listeners: undefined, maxVersion: undefined, minVersion: undefined, flexibleMin: undefined, latestVersionUnstable: undefined },
    { apiKey: 0, name: 'Produce', request: 'ProduceRequest', response: 'ProduceResponse', listeners: undefined, maxVersion: undefined, minVersion: undefined, flexibleMin: undefined, latestVersionUnstable: undefined });
  assert.ok(apis.length > 50);
  assert.ok(Object.isFrozen(apis));
  assert.ok(kwire.catalogue().messages.some((m) => m.name === 'RequestHeader'));
  // Kafka's two special cases
  assert.deepEqual(kwire.headerVersions(18, 3), { request: 2, response: 0 });
  assert.deepEqual(kwire.headerVersions(7, 0), { request: 0, response: 0 });
  assert.deepEqual(kwire.headerVersions(1, 12), { request: 2, response: 1 });
});

test('base64 helpers', () => {
  const b = new Uint8Array(300).map((_, i) => i);
  assert.deepEqual(kwire.fromBase64(kwire.toBase64(b)), b);
  assert.equal(kwire.toBase64(te.encode('kwire')), 'a3dpcmU=');
  for (const bad of ['a3dpcmU', 'a3dp cmU=', 'a3dp-mU=', 'a3dpcm==x']) assert.throws(() => kwire.fromBase64(bad), TypeError, bad);
});

test('the conformance checks fail on a corrupted vector', () => {
  const line = readFileSync(ROOT + 'conformance/vectors/kafka-clients-4.4.0.jsonl', 'utf8').split('\n').find((l) => l.includes('"name":"ProduceRequest"') && l.includes('random-2'));
  const v = parseVectorLine(line, kwire.fromBase64);
  const cat = new Catalogue(kwire.catalogue());
  assert.deepEqual(checkVector(kw, cat, v), []);
  const bad = { ...v, bytes: v.bytes.slice() };
  bad.bytes[bad.bytes.length - 1] ^= 1;
  assert.ok(checkVector(kw, cat, bad).length >= 2);
  const badJSON = { ...v, json: { ...v.json, acks: (v.json.acks ?? 0) + 1 } };
  assert.deepEqual(checkVector(kw, cat, badJSON).map((f) => f.check), ['decode']);
});

test('loading in Node prints nothing (no WASI experimental warning)', () => {
  const script = `import { init } from ${JSON.stringify(new URL('../index.js', import.meta.url).href)};
    const k = await init();
    process.stdout.write(String(k.peekHeader(new Uint8Array(${JSON.stringify([...produceFrame.subarray(0, 27)])})).correlationId));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, '7');
  assert.equal(r.stderr, '');
});
