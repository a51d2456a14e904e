// Host decompression (ABI 1.3): decodeFetch and decodeProduce decompress the batches of a
// codec the host has natively (node:zlib's gzip) themselves and hand them to the module.
// Whatever the batches hold (every record vector, byte flips, cuts, trailing bytes,
// decompression bombs), the records or the error must be exactly those of the module's
// own decompression ({hostDecompress: false}).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { load, fromBase64, toBase64 } from '../index.js';

const VECTORS = fileURLToPath(new URL('../../../conformance/vectors/records/', import.meta.url));
const kw = await load();
const recordVectors = readdirSync(VECTORS).filter((f) => f.endsWith('.jsonl')).sort()
  .flatMap((f) => readFileSync(VECTORS + f, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l)));

function fetchFrame(records) {
  const part = (i) => ({ partitionIndex: i, errorCode: 0, highWatermark: '9', lastStableOffset: '9', logStartOffset: '0', abortedTransactions: [],
    preferredReadReplica: -1, records: records === null ? null : toBase64(records) });
  return kw.encodeResponse({ header: { correlationId: 3 }, body: { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [{ topic: 't', partitions: [part(0), part(1)] }] } }, 1, 12);
}

// The outcome of one decode: every record of every partition, or the error.
function outcome(frame, options) {
  let f;
  try {
    f = kw.decodeFetch(frame, 12, options);
  } catch (e) {
    return `${e.constructor.name} ${e.status} ${e.message} ${JSON.stringify(e.details ?? null)}`;
  }
  const show = (x) => (x === null ? 'null' : Buffer.from(x).toString('hex'));
  return f.partitions.map((p) => [...p.records].map((r) => {
    const o = r.toObject();
    return JSON.stringify({ ...o, key: show(o.key), value: show(o.value), headers: o.headers.map((h) => [h.key, show(h.value)]) }, (k, v) => (typeof v === 'bigint' ? String(v) : v));
  }).join('\n') + `|${p.records.skippedBytes}`).join('\n--\n');
}

function same(frame, what, options = {}) {
  const host = outcome(frame, { ...options });
  const module = outcome(frame, { ...options, hostDecompress: false });
  assert.equal(host, module, what);
  return host;
}

test('the host decompresses gzip in Node; the module has the two calls', () => {
  assert.deepEqual(kw.hostCodecs().includes('gzip'), true, `host codecs: ${kw.hostCodecs()}`);
  assert.ok(kw.abiVersion().minor >= 3);
});

test('every record vector: the same records with and without the host decompressor', () => {
  let gz = 0;
  for (const v of recordVectors) {
    const b = fromBase64(v.bytes);
    same(fetchFrame(b), v.name);
    same(fetchFrame(b), v.name + ' (skipCrc)', { skipCrc: true });
    same(fetchFrame(b), v.name + ' (copy)', { copy: true });
    if (/gzip/i.test(v.name)) gz++;
  }
  assert.ok(gz >= 2, `${gz} gzip vectors`);
});

test('the host path is taken: gzip batches are counted, other codecs and refused batches are not', () => {
  const recs = [{ key: 'k', value: 'v'.repeat(300) }];
  const count = () => kw.hostDecompressed().batches;
  for (const [codec, host] of [['gzip', 1], ['snappy', 0], ['lz4', 0], ['zstd', kw.hostCodecs().includes('zstd') ? 1 : 0], ['none', 0]]) {
    const frame = fetchFrame(kw.encodeRecords(recs, { compression: codec }));
    const before = count();
    kw.decodeFetch(frame, 12);
    assert.equal(count() - before, 2 * host, `${codec}: two partitions`);
    kw.decodeFetch(frame, 12, { hostDecompress: false });
    const capped = count();
    // Past the cap the host gives the batch up, and the module says why.
    if (codec === 'none') kw.decodeFetch(frame, 12, { maxDecompressed: 10 });
    else assert.throws(() => kw.decodeFetch(frame, 12, { maxDecompressed: 10 }), { name: 'KwireTooLargeError' });
    assert.equal(count(), capped, `${codec}: nothing decompressed by the host past the cap, or with hostDecompress: false`);
  }
});

test("spoilt gzip batches: flips, cuts and trailing bytes give the module's own error or records", () => {
  const recs = Array.from({ length: 40 }, (_, i) => ({ key: `k${i}`, value: `value ${i} `.repeat(20), headers: [['h', `x${i}`]] }));
  const batch = kw.encodeRecords(recs, { compression: 'gzip' });
  let errors = 0;
  let n = 0;
  const step = Math.max(1, Math.floor(batch.length / 120));
  for (let at = 0; at < batch.length; at += step) {
    for (const x of [0x01, 0x80]) {
      const b = batch.slice();
      b[at] ^= x;
      const out = same(fetchFrame(b), `byte ${at} ^ ${x}`, { skipCrc: true });
      if (out.startsWith('Kwire')) errors++;
      n++;
    }
  }
  for (let cut = 1; cut < 80; cut += 7) {
    same(fetchFrame(batch.subarray(0, batch.length - cut)), `cut by ${cut}`);
  }
  // A batch whose gzip stream has bytes after its member, or a second member: the CRC is
  // not checked so that the records section is read as it stands.
  const body = batch.subarray(61);
  const withTail = (tail) => {
    const b = new Uint8Array(batch.length + tail.length);
    b.set(batch);
    b.set(tail, batch.length);
    new DataView(b.buffer).setInt32(8, b.length - 12);
    return b;
  };
  const zeros = same(fetchFrame(withTail(new Uint8Array(8))), 'zero bytes after the member', { skipCrc: true });
  assert.match(zeros, /^Kwire/, 'trailing zeros are corrupt to Kafka');
  same(fetchFrame(withTail(body)), 'a second gzip member', { skipCrc: true });
  console.log(`${n} flipped batches (${errors} refused), 12 cut, 2 with trailing bytes`);
  assert.ok(errors > 0 && errors < n);
});

test('a gzip bomb is refused at maxDecompressed, as the module refuses it', () => {
  // 1 record of a 4 MiB value of zeros: 4 KiB compressed.
  const batch = kw.encodeRecords([{ key: null, value: new Uint8Array(4 << 20) }], { compression: 'gzip' });
  assert.ok(batch.length < 16 << 10);
  const frame = fetchFrame(batch);
  const capped = same(frame, 'a 4 MiB batch at a 1 MiB cap', { maxDecompressed: 1 << 20 });
  assert.match(capped, /KwireTooLargeError|too large|more than/i);
  const before = kw.hostDecompressed().batches;
  const exact = same(frame, 'at a cap of what it needs', { maxDecompressed: (4 << 20) + 64 });
  assert.doesNotMatch(exact, /^Kwire/);
  assert.equal(kw.hostDecompressed().batches - before, 2, 'the host decompressed both partitions under the cap');
});

test('a gzip batch compressed by another producer (node:zlib, several members) reads the same', () => {
  // Records compressed here by node:zlib, as kafkajs and @platformatic/kafka compress them:
  // the batch is rebuilt around another compressor's bytes, its CRC left unchecked.
  const batch = kw.encodeRecords(Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })), { compression: 'none' });
  const plain = batch.subarray(61);
  for (const z of [gzipSync(plain, { level: 1 }), Buffer.concat([gzipSync(plain.subarray(0, 30)), gzipSync(plain.subarray(30))])]) {
    const b = new Uint8Array(61 + z.length);
    b.set(batch.subarray(0, 61));
    b.set(z, 61);
    const dv = new DataView(b.buffer);
    dv.setInt32(8, b.length - 12);
    dv.setInt16(21, dv.getInt16(21) | 1); // attributes: gzip
    const out = same(fetchFrame(b), 'node:zlib gzip', { skipCrc: true });
    assert.doesNotMatch(out, /^Kwire/);
    assert.equal(out.split('\n').length, 2 * 10 + 1);
  }
});

test("zstd: a host codec exactly where node:zlib has zstdDecompressSync; spoilt and oversized zstd batches give the module's own error or records", async () => {
  const zlib = await import('node:zlib');
  const native = typeof zlib.zstdDecompressSync === 'function';
  assert.equal(kw.hostCodecs().includes('zstd'), native, `node ${process.version}: host codecs ${kw.hostCodecs()}`);
  const recs = Array.from({ length: 40 }, (_, i) => ({ key: `k${i}`, value: `value ${i} `.repeat(20), headers: [['h', `x${i}`]] }));
  const batch = kw.encodeRecords(recs, { compression: 'zstd' });
  const before = kw.hostDecompressed().batches;
  same(fetchFrame(batch), 'a zstd batch');
  assert.equal(kw.hostDecompressed().batches - before, native ? 2 : 0, 'zstd batches the host decompressed');
  let errors = 0;
  let n = 0;
  const step = Math.max(1, Math.floor(batch.length / 120));
  for (let at = 61; at < batch.length; at += step) {
    const b = batch.slice();
    b[at] ^= 0x04;
    if (same(fetchFrame(b), `byte ${at} ^ 4`, { skipCrc: true }).startsWith('Kwire')) errors++;
    n++;
  }
  for (let cut = 1; cut < 60; cut += 7) same(fetchFrame(batch.subarray(0, batch.length - cut)), `cut by ${cut}`);
  const bomb = kw.encodeRecords([{ key: null, value: new Uint8Array(4 << 20) }], { compression: 'zstd' });
  assert.match(same(fetchFrame(bomb), 'a 4 MiB zstd batch at a 1 MiB cap', { maxDecompressed: 1 << 20 }), /KwireTooLargeError|too large|more than/i);
  console.log(`zstd on node ${process.version} (${native ? 'host' : 'module'}): ${n} flipped batches (${errors} refused), 9 cut, a bomb refused`);
  assert.ok(errors > 0);
});
