// Record table layout 4 (ABI 1.4, KW_RECORDS_COLUMNS): decodeFetch and decodeProduce read
// the records as columns, typed arrays over the table. Whatever the frame holds (every
// record vector, Fetch and Produce, with and without the host's decompressor, spoilt
// batches, decompression bombs), the records, the columns and the errors must be exactly
// those of layout 3 ({ layout: 3 }, the record entries). columns() of a layout-4 table
// are views of the table, and a table that is not the module's is checked as layouts 1-3
// are.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load, fromBase64, toBase64, RecordTable, BatchWords } from '../index.js';
import {
  KW_TABLE_BATCHES_OFFSET, KW_TABLE_BATCH_COUNT, KW_TABLE_BATCH_STRIDE, KW_TABLE_COL_BATCH_INDEX, KW_TABLE_COL_KEYS, KW_TABLE_COL_OFFSETS,
  KW_TABLE_COL_SCHEMAS, KW_TABLE_COL_SOURCES, KW_TABLE_HEADERS_OFFSET, KW_TABLE_RECORD_STRIDE, KW_RB_STRIDE,
} from '../src/abi_gen.js';
import { FETCH_VERSIONS, PRODUCE_VERSIONS, compareLayouts, fetchBody, produceBody } from './lib/frame-records.js';

const VECTORS = fileURLToPath(new URL('../../../conformance/vectors/records/', import.meta.url));
const kw = await load();
const recordVectors = readdirSync(VECTORS).filter((f) => f.endsWith('.jsonl')).sort()
  .flatMap((f) => readFileSync(VECTORS + f, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l)));
const OPTIONS = [{}, { hostDecompress: false }, { copy: true }, { skipCrc: true }, { copy: true, hostDecompress: false }];

const fetchFrame = (version, fields) => kw.encodeResponse({ header: { correlationId: 5 }, body: fetchBody(version, fields) }, 1, version);
const produceFrame = (version, fields) =>
  kw.encodeRequest({ header: { requestApiKey: 0, requestApiVersion: version, correlationId: 6, clientId: 'c' }, body: produceBody(version, fields) });

// Layouts 4 and 3 on a records field in a Fetch v12 frame (and a Produce v9 one), with
// each set of options; '' when all agree.
function sameOnField(bytes, options = OPTIONS) {
  const b64 = toBase64(bytes);
  for (const [what, frame, key, v] of [['Fetch v12', fetchFrame(12, [b64, null, b64]), 1, 12], ['Produce v9', produceFrame(9, [b64]), 0, 9]]) {
    for (const o of options) {
      const m = compareLayouts(kw, frame, key, v, o, BatchWords);
      if (m !== '') return `${what} ${JSON.stringify(o)}: ${m}`;
    }
  }
  return '';
}

test('the module has ABI 1.4: decodeFetch and decodeProduce read layout 4', () => {
  assert.ok(kw.abiVersion().minor >= 4);
  const frame = fetchFrame(12, [toBase64(kw.encodeRecords([{ key: 'k', value: 'v' }]))]);
  assert.equal(kw.decodeFetch(frame, 12).partitions[0].records.table.layout, 4);
  assert.equal(kw.decodeFetch(frame, 12, { layout: 3 }).partitions[0].records.table.layout, 3);
  assert.equal(kw.decodeFetch(frame, 12, { layout: 3, copy: true }).partitions[0].records.table.layout, 2);
});

test('every record vector in Fetch and Produce frames: layout 4 gives the records, columns and errors of layout 3', () => {
  let n = 0;
  const fails = [];
  for (const v of recordVectors) {
    const b64 = v.bytes;
    for (const ver of FETCH_VERSIONS) {
      for (const o of OPTIONS) {
        const m = compareLayouts(kw, fetchFrame(ver, [b64, null, b64]), 1, ver, o, BatchWords);
        n++;
        if (m !== '') fails.push(`${v.name} Fetch v${ver} ${JSON.stringify(o)}: ${m}`);
      }
    }
    for (const ver of PRODUCE_VERSIONS) {
      for (const o of OPTIONS) {
        const m = compareLayouts(kw, produceFrame(ver, [b64, null, b64]), 0, ver, o, BatchWords);
        n++;
        if (m !== '') fails.push(`${v.name} Produce v${ver} ${JSON.stringify(o)}: ${m}`);
      }
    }
  }
  console.log(`${recordVectors.length} record vectors, ${n} frames decoded in both layouts, ${fails.length} differ`);
  assert.ok(recordVectors.length >= 20);
  assert.deepEqual(fails.slice(0, 10), []);
});

test('every codec, several batches and partitions, legacy messages, sequences that wrap: the same in both layouts', () => {
  const recs = (k) => Array.from({ length: 7 }, (_, i) => ({ key: i === 3 ? null : `k${k}-${i}`, value: i === 5 ? null : `value ${k} ${i} `.repeat(i + 1),
    headers: i % 2 ? [['h', `x${i}`], ['schema', null]] : [], timestamp: 1700000000000 + i }));
  for (const compression of ['none', 'gzip', 'snappy', 'lz4', 'zstd']) {
    const a = kw.encodeRecords(recs(1), { compression, baseOffset: 10n, producerId: 7n, producerEpoch: 2, baseSequence: 2147483645, partitionLeaderEpoch: 4 });
    const b = kw.encodeRecords(recs(2), { compression, baseOffset: 17n, transactional: true, producerId: 8n, producerEpoch: 0, baseSequence: 0 });
    const c = kw.encodeRecords(recs(3).map((r) => ({ ...r, headers: [] })), { compression: compression === 'zstd' ? 'none' : compression, magic: 1, baseOffset: 30n });
    const both = new Uint8Array(a.length + b.length);
    both.set(a);
    both.set(b, a.length);
    for (const field of [both, c, a.subarray(0, a.length - 5)]) assert.equal(sameOnField(field), '', compression);
    const f = kw.decodeFetch(fetchFrame(12, [toBase64(both)]), 12);
    const seqs = Array.from(f.partitions[0].records, (r) => r.sequence);
    assert.deepEqual(seqs, [2147483645, 2147483646, 2147483647, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6], compression);
    const cols = f.partitions[0].records.columns();
    assert.deepEqual([...cols.batchIndex], [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1]);
    assert.equal(cols.batches[cols.batchStride + BatchWords.flags], 1, 'the second batch is transactional');
    assert.equal(cols.batches64[(cols.batchStride + BatchWords.producerId) >> 1], 8n);
  }
});

test("spoilt batches (flips, cuts, bombs past maxDecompressed): layout 4 gives layout 3's records or error", () => {
  const recs = Array.from({ length: 30 }, (_, i) => ({ key: `k${i}`, value: `value ${i} `.repeat(15), headers: [['h', `x${i}`]] }));
  let n = 0;
  let refused = 0;
  for (const compression of ['none', 'gzip', 'snappy', 'lz4', 'zstd']) {
    const batch = kw.encodeRecords(recs, { compression });
    const step = Math.max(1, Math.floor(batch.length / 40));
    for (let at = 0; at < batch.length; at += step) {
      for (const x of [0x01, 0x80]) {
        const b = batch.slice();
        b[at] ^= x;
        for (const o of [{ skipCrc: true }, { skipCrc: true, hostDecompress: false }, {}]) {
          const frame = fetchFrame(12, [toBase64(b)]);
          assert.equal(compareLayouts(kw, frame, 1, 12, o, BatchWords), '', `${compression} byte ${at} ^ ${x} ${JSON.stringify(o)}`);
          try {
            kw.decodeFetch(frame, 12, o);
          } catch {
            refused++;
          }
          n++;
        }
      }
    }
    for (let cut = 1; cut < batch.length; cut += Math.max(1, Math.floor(batch.length / 15))) {
      assert.equal(sameOnField(batch.subarray(0, batch.length - cut), [{}, { hostDecompress: false }]), '', `${compression} cut by ${cut}`);
      n += 4;
    }
    // A bomb: 256 KiB of zeros, refused past a 64 KiB cap, read under a cap of what it needs.
    const bomb = kw.encodeRecords([{ key: null, value: new Uint8Array(256 << 10) }], { compression });
    for (const max of [64 << 10, (256 << 10) + 64]) {
      assert.equal(sameOnField(bomb, [{ maxDecompressed: max }, { maxDecompressed: max, hostDecompress: false }]), '', `${compression} bomb at ${max}`);
    }
    if (compression !== 'none') assert.throws(() => kw.decodeFetch(fetchFrame(12, [toBase64(bomb)]), 12, { maxDecompressed: 64 << 10 }), { name: 'KwireTooLargeError' });
  }
  console.log(`${n} spoilt frames decoded in both layouts (${refused} refused)`);
  assert.ok(refused > 0 && refused < n);
});

test('columns() of a layout-4 table are views of the table (no copy); a RecordSet\'s are subarrays of them', () => {
  const batch = kw.encodeRecords(Array.from({ length: 5 }, (_, i) => ({ key: `k${i}`, value: `v${i}`, headers: [['h', 'x']] })), { compression: 'lz4' });
  const f = kw.decodeFetch(fetchFrame(12, [toBase64(batch), toBase64(batch)]), 12);
  const t = f.partitions[0].records.table;
  assert.equal(t.layout, 4);
  assert.equal(t.data.byteOffset % 8, 0);
  const c = t.columns();
  assert.equal(t.columns(), c, 'made once');
  const arrays = ['offsets', 'timestamps', 'keys', 'values', 'headerIndex', 'headers', 'sources', 'controlTypes', 'schemas', 'batchIndex', 'batches', 'batches64'];
  for (const k of arrays) {
    assert.equal(c[k].buffer, t.data.buffer, `${k} shares the table's ArrayBuffer`);
    assert.ok(c[k].byteOffset >= t.data.byteOffset && c[k].byteOffset + c[k].byteLength <= t.data.byteOffset + t.data.length, `${k} lies in the table`);
    assert.equal(c[k].byteOffset % 8, 0, `${k} 8-aligned`);
  }
  assert.ok(c.offsets instanceof BigInt64Array && c.timestamps instanceof BigInt64Array && c.batches64 instanceof BigInt64Array);
  assert.ok(c.sources instanceof Uint8Array && c.keys instanceof Int32Array && c.batches instanceof Int32Array);
  assert.equal(c.offsets.length, 10);
  assert.equal(c.schemas.length, 30);
  assert.equal(c.batchStride, KW_RB_STRIDE >> 2);
  // A change to the table shows through the column: the same memory.
  const dv = new DataView(t.data.buffer, t.data.byteOffset);
  const at = dv.getInt32(KW_TABLE_COL_OFFSETS, true);
  assert.equal(dv.getBigInt64(at + 8, true), c.offsets[1]);
  const s = f.partitions[1].records.columns();
  for (const k of arrays) assert.equal(s[k].buffer, t.data.buffer, `set ${k}`);
  assert.equal(s.offsets.byteOffset, c.offsets.byteOffset + 5 * 8);
  assert.deepEqual([...s.offsets], [0n, 1n, 2n, 3n, 4n]);
  assert.equal(s.schemas.length, 15);
  assert.equal(s.batches, c.batches);
  assert.deepEqual([...s.batchIndex], [1, 1, 1, 1, 1]);
});

// A layout-4 table the module made, for the checks of an untrusted one below.
function sample() {
  const batch = kw.encodeRecords([{ key: 'k', value: 'v', headers: [['h', 'x']] }, { key: null, value: 'w' }], { compression: 'gzip' });
  const frame = fetchFrame(12, [toBase64(batch)]);
  const t = kw.decodeFetch(frame, 12).partitions[0].records.table;
  return { bytes: t.data.slice(), frame };
}

test('a layout-4 table made elsewhere is checked: geometry, columns, spans, batches', () => {
  const { bytes, frame } = sample();
  const good = new RecordTable(bytes.slice(), frame);
  assert.equal(good.layout, 4);
  assert.deepEqual(Array.from(good, (r) => r.valueText), ['v', 'w']);
  // Not 8-aligned in its buffer: read from a copy that is.
  const shifted = new Uint8Array(bytes.length + 4);
  shifted.set(bytes, 4);
  const t2 = new RecordTable(shifted.subarray(4), frame);
  assert.equal(t2.data.byteOffset % 8, 0);
  assert.notEqual(t2.data.buffer, shifted.buffer);
  assert.deepEqual(Array.from(t2, (r) => r.toObject()), Array.from(good, (r) => r.toObject()));
  const t3 = new RecordTable(Buffer.from(shifted.buffer, 4, bytes.length), frame); // a Node Buffer, not 8-aligned
  assert.equal(t3.data.byteOffset % 8, 0);
  assert.deepEqual(Array.from(t3, (r) => r.toObject()), Array.from(good, (r) => r.toObject()));
  const dv = new DataView(bytes.buffer);
  const i32 = (at) => dv.getInt32(at, true);
  const spoilt = (sets) => {
    const b = bytes.slice();
    const d = new DataView(b.buffer);
    for (const [at, v, size = 4] of sets) (size === 1 ? d.setUint8(at, v) : d.setInt32(at, v, true));
    return b;
  };
  const keys = i32(KW_TABLE_COL_KEYS);
  const bad = [
    ['record stride not 0', [[KW_TABLE_RECORD_STRIDE, 96]], /geometry \(layout 4/],
    ['headers not 8-aligned', [[KW_TABLE_HEADERS_OFFSET, i32(KW_TABLE_HEADERS_OFFSET) + 4]], /geometry/],
    ['offsets column not at records_offset', [[KW_TABLE_COL_OFFSETS, i32(KW_TABLE_COL_OFFSETS) + 8]], /columns/],
    ['a column not 8-aligned', [[KW_TABLE_COL_SCHEMAS, i32(KW_TABLE_COL_SCHEMAS) + 4]], /columns/],
    ['a column past the end', [[KW_TABLE_COL_SOURCES, bytes.length - 1]], /columns/],
    ['a column in the header', [[KW_TABLE_COL_BATCH_INDEX, 88]], /columns/],
    ['batch stride below 56', [[KW_TABLE_BATCH_STRIDE, 48]], /columns/],
    ['batches past the end', [[KW_TABLE_BATCH_COUNT, 1 << 20]], /columns/],
    ['batch offset negative', [[KW_TABLE_BATCHES_OFFSET, -8]], /columns/],
    ['key past the end', [[keys + 4, 1 << 20]], /record 0: key/],
    ['value length -2', [[i32(72) + 12, -2]], /record 1: key .* value \(\d+, -2\)/],
    ['header run past the headers', [[i32(76) + 4, 5]], /record 0: .* headers 0\+5 of 1/],
    ['batch index past the batches', [[i32(KW_TABLE_COL_BATCH_INDEX) + 4, 3]], /record 1: batch 3 of 1/],
    ['source 7', [[i32(KW_TABLE_COL_SOURCES), 7, 1]], /record 0: source 7/],
    ['header value past the end', [[i32(KW_TABLE_HEADERS_OFFSET) + 12, 1 << 20]], /header 0: key/],
  ];
  for (const [what, sets, msg] of bad) {
    assert.throws(() => new RecordTable(spoilt(sets), frame), { message: msg }, what);
  }
  // A record whose spans index the input, in a table given none.
  const plain = fetchFrame(12, [toBase64(kw.encodeRecords([{ key: 'k', value: 'v' }]))]);
  const own = kw.decodeFetch(plain, 12).partitions[0].records.table.data.slice();
  assert.equal(new RecordTable(own, plain).at(0).valueText, 'v');
  assert.throws(() => new RecordTable(own), { message: /record 0: source 1 in a layout-4 table without its input/ });
  // Nothing past the checks reads outside: every field of every record of a good table.
  assert.equal(good.at(1).key, null);
  assert.deepEqual(good.at(0).headers.map((h) => h.key), ['h']);
});

test('views keep the class of the buffer they are of (a Node Buffer frame gives Buffer views), as in layout 3', () => {
  const recs = [{ key: 'k', value: 'hello', headers: [['h', 'x']] }];
  for (const compression of ['none', 'lz4']) {
    const frame = Buffer.from(fetchFrame(12, [toBase64(kw.encodeRecords(recs, { compression }))]));
    const classes = (opts) => {
      const r = kw.decodeFetch(frame, 12, opts).partitions[0].records.at(0);
      return [r.key, r.value, r.headers[0].value, r.rawHeaders[0].key].map((v) => v.constructor.name).join();
    };
    assert.equal(classes({}), classes({ layout: 3 }), compression);
    assert.equal(classes({}), compression === 'none' ? 'Buffer,Buffer,Buffer,Buffer' : 'Uint8Array,Uint8Array,Uint8Array,Uint8Array');
  }
  const { bytes, frame } = sample();
  const r = new RecordTable(Buffer.from(bytes), frame).at(0);
  assert.equal(r.value.constructor.name, 'Buffer');
  assert.equal(r.valueText, 'v');
});

test('encodeProduce of layout-4 RecordSets writes the bytes it writes from layout-3 ones', () => {
  const batch = kw.encodeRecords(Array.from({ length: 6 }, (_, i) => ({ key: i % 2 ? null : `k${i}`, value: `v${i}`, headers: [['h', `${i}`]], timestamp: 1000 + i })));
  const fetch = fetchFrame(12, [toBase64(batch), toBase64(batch)]);
  const produce = (opts) => {
    const f = kw.decodeFetch(fetch, 12, opts);
    return toBase64(kw.encodeProduce({ header: { requestApiKey: 0, requestApiVersion: 9, correlationId: 3, clientId: 'e' },
      body: produceBody(9, f.partitions.map((p) => ({ records: p.records, compression: 'none', baseOffset: 0n, producerId: -1n }))) }));
  };
  assert.equal(produce({}), produce({ layout: 3 }));
  assert.equal(produce({ copy: true }), produce({ layout: 3 }));
});
