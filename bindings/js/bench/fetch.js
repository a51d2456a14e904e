// Benchmark: kwire's JavaScript binding against kafkajs on the same Fetch responses, in
// one Node process, alternating rounds, CPU time of the process.
//
// The task, on each side the cheapest way its public API allows: decode a Fetch v11
// response of 1000 records (2 partitions x 5 batches x 100 records, key ~10 bytes, value
// ~100 bytes, one header) and, for every record, read its offset, timestamp, key and
// value. Checksums (sum of offsets, sum of timestamps, total key bytes, total value bytes)
// must agree between all decoders, or the benchmark fails. Once per codec: none, gzip,
// snappy, lz4, zstd.
//
//   kafkajs          its Fetch v11 response decoder (what its consumer runs on each
//                    response), then every message of every partition; snappy, lz4 and
//                    zstd through pure-JS codecs registered the kafkajs way
//                    (kafkajs-snappy, and lz4js / fzstd adapters below)
//   kwire records    decodeFetch(frame, 11), then every Record of every partition
//                    (lazy objects: r.offset, r.timestamp, r.key, r.value)
//   kwire columns    decodeFetch(frame, 11), then each partition's columns(): offsets and
//                    timestamps from BigInt64Array (read as two int32 halves: exact below
//                    2^53), key and value lengths from the Int32Array (offset, length) pairs
//                    — no object per record
//
// Then the time of `await init()` in a fresh Node process (compiling kwire.wasm).
//
//   node bench/fetch.js [--rounds N] [--codecs none,gzip,...]
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { init, encodeRecords, encodeResponse, decodeFetch, toBase64 } from '../index.js';

const require = createRequire(import.meta.url);
const kafkajsFetchV11 = require('kafkajs/src/protocol/requests/fetch/v11/response');
const { CompressionCodecs, CompressionTypes } = require('kafkajs');
const SnappyCodec = require('kafkajs-snappy');
const lz4js = require('lz4js');
const fzstd = require('fzstd');
const kafkajsVersion = require('kafkajs/package.json').version;

// kafkajs ships gzip only; other codecs are registered by the application. These
// adapters only decompress (all a consumer needs).
CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec;
CompressionCodecs[CompressionTypes.LZ4] = () => ({
  async compress() { throw new Error('bench: compress not needed'); },
  async decompress(buf) { return Buffer.from(lz4js.decompress(buf)); },
});
CompressionCodecs[CompressionTypes.ZSTD] = () => ({
  async compress() { throw new Error('bench: compress not needed'); },
  async decompress(buf) { return Buffer.from(fzstd.decompress(buf)); },
});

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf('--' + name);
  return i >= 0 ? args[i + 1] : def;
};
const ROUNDS = Number(opt('rounds', 11));
const CODECS = opt('codecs', 'none,gzip,snappy,lz4,zstd').split(',');
const TARGET_RECORDS = 2;
const TARGET_COLUMNS = 5;

const kw = await init();

function buildFrame(codec) {
  const filler = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(3);
  let offset = 0;
  const partitions = [];
  for (let p = 0; p < 2; p++) {
    const chunks = [];
    for (let b = 0; b < 5; b++) {
      const recs = [];
      for (let i = 0; i < 100; i++) {
        const n = offset + i;
        recs.push({ key: `key-${n}`, value: `{"id":${n},"payload":"${filler.slice(n % 20, n % 20 + 80)}"}`,
          timestamp: 1700000000000 + n, headers: [['trace-id', `t-${n}`]] });
      }
      chunks.push(encodeRecords(recs, { baseOffset: offset, compression: codec, producerId: 1000 + p, producerEpoch: 0, baseSequence: offset }));
      offset += 100;
    }
    partitions.push({ partitionIndex: p, errorCode: 0, highWatermark: String(offset), lastStableOffset: String(offset), logStartOffset: '0',
      abortedTransactions: [], preferredReadReplica: -1, records: toBase64(Buffer.concat(chunks)) });
  }
  return encodeResponse({ header: { correlationId: 42 }, body: { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [{ topic: 'bench', partitions }] } }, 1, 11);
}

// Each decoder returns [records, sum of offsets, sum of timestamps, key bytes, value bytes].
async function kafkajsRead(payload) {
  const r = await kafkajsFetchV11.decode(payload);
  let n = 0, offs = 0, ts = 0, kb = 0, vb = 0;
  for (const t of r.responses) {
    for (const p of t.partitions) {
      for (const m of p.messages) {
        n++;
        offs += Number(m.offset);
        ts += Number(m.timestamp);
        if (m.key !== null) kb += m.key.length;
        if (m.value !== null) vb += m.value.length;
      }
    }
  }
  return [n, offs, ts, kb, vb];
}

function kwireRecords(frame) {
  const f = decodeFetch(frame, 11);
  let n = 0, offs = 0, ts = 0, kb = 0, vb = 0;
  for (const p of f.partitions) {
    for (const r of p.records) {
      n++;
      offs += Number(r.offset);
      ts += Number(r.timestamp);
      const k = r.key;
      const v = r.value;
      if (k !== null) kb += k.length;
      if (v !== null) vb += v.length;
    }
  }
  return [n, offs, ts, kb, vb];
}

function kwireColumns(frame) {
  const f = decodeFetch(frame, 11);
  let n = 0, offs = 0, ts = 0, kb = 0, vb = 0;
  for (const p of f.partitions) {
    const c = p.records.columns();
    const o32 = new Int32Array(c.offsets.buffer, c.offsets.byteOffset, 2 * c.length);
    const t32 = new Int32Array(c.timestamps.buffer, c.timestamps.byteOffset, 2 * c.length);
    const keys = c.keys;
    const values = c.values;
    for (let i = 0; i < c.length; i++) {
      offs += o32[2 * i + 1] * 4294967296 + (o32[2 * i] >>> 0);
      ts += t32[2 * i + 1] * 4294967296 + (t32[2 * i] >>> 0);
      const kl = keys[2 * i + 1];
      const vl = values[2 * i + 1];
      if (kl > 0) kb += kl;
      if (vl > 0) vb += vl;
    }
    n += c.length;
  }
  return [n, offs, ts, kb, vb];
}

// The export call alone (input copied in, kw_decode_response_frame_records, kw_free): the
// module's share of kwire's time, to tell it from the binding's. Not a decoder: no checksum.
function moduleAlone(frame) {
  const x = kw._x;
  const p = kw._putBytes(frame);
  const s = kw._scratch;
  const st = kw._call('kw_decode_response_frame_records', x.kw_decode_response_frame_records, p, frame.length, 1, 11, 0, 0, s, s + 4);
  const [out] = kw._out(st, 'kw_decode_response_frame_records');
  kw._call('kw_free', x.kw_free, out);
}

// timeIt returns CPU µs per call (user + system of this process).
async function timeIt(fn, iterations) {
  const c0 = process.cpuUsage();
  for (let i = 0; i < iterations; i++) await fn();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / iterations;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const rows = [];
let failed = false;
for (const codec of CODECS) {
  const frame = buildFrame(codec);
  const payload = Buffer.from(frame.buffer, frame.byteOffset + 8, frame.length - 8); // kafkajs: after size and correlation id
  const cases = [
    [`kafkajs ${kafkajsVersion}`, () => kafkajsRead(payload)],
    ['kwire records', () => kwireRecords(frame)],
    ['kwire columns', () => kwireColumns(frame)],
  ];
  const sums = [];
  for (const [, fn] of cases) sums.push(JSON.stringify(await fn()));
  if (kw.hasFrameRecords()) cases.push(['kwire.wasm call alone', () => moduleAlone(frame)]);
  if (new Set(sums).size !== 1 || JSON.parse(sums[0])[0] !== 1000) {
    console.error(`bench (${codec}): the decoders disagree: ${cases.map(([n], i) => `${n} ${sums[i]}`).join('; ')}`);
    failed = true;
    continue;
  }
  const iters = [];
  for (const [, fn] of cases) {
    await timeIt(fn, 20);
    iters.push(Math.max(10, Math.round(150_000 / Math.max(1, await timeIt(fn, 20)))));
  }
  const samples = cases.map(() => []);
  for (let r = 0; r < ROUNDS; r++) for (let c = 0; c < cases.length; c++) samples[c].push(await timeIt(cases[c][1], iters[c]));
  const cpu = samples.map(median);
  rows.push({ codec, bytes: frame.length, cpu, checksum: JSON.parse(sums[0]), module: cpu[3] });
}

console.log(`Fetch v11 response, 1000 records in 10 batches, Node ${process.version}, ${ROUNDS} alternating rounds, median CPU µs per response`);
console.log(`kwire path: ${kw.hasFrameRecords() ? 'kw_decode_response_frame_records (one record table, no base64)' : 'kw_decode_response_frame + kw_records_decode_table per partition (the module lacks the frame-records calls)'}`);
console.log('codec    bytes   kafkajs  kwire records (x kafkajs)  kwire columns (x kafkajs)');
let minRec = Infinity;
let minCol = Infinity;
for (const { codec, bytes, cpu } of rows) {
  const rr = cpu[0] / cpu[1];
  const rc = cpu[0] / cpu[2];
  minRec = Math.min(minRec, rr);
  minCol = Math.min(minCol, rc);
  console.log(`${codec.padEnd(7)}${String(bytes).padStart(7)}${cpu[0].toFixed(0).padStart(10)}${cpu[1].toFixed(0).padStart(15)} (${rr.toFixed(2)}x)${cpu[2].toFixed(0).padStart(17)} (${rc.toFixed(2)}x)`);
}
if (rows.length > 0 && rows[0].module !== undefined) {
  console.log('inside kwire.wasm (the export call alone, input copied in, output freed), µs and share of kwire columns: ' +
    rows.map(({ codec, cpu, module }) => `${codec} ${module.toFixed(0)} (${((100 * module) / cpu[2]).toFixed(0)}%)`).join(', '));
}
if (rows.length > 0) {
  console.log(`per-record objects: worst ${minRec.toFixed(2)}x kafkajs (target >= ${TARGET_RECORDS}x: ${minRec >= TARGET_RECORDS ? 'met' : 'NOT met'}); ` +
    `columns: worst ${minCol.toFixed(2)}x (target >= ${TARGET_COLUMNS}x: ${minCol >= TARGET_COLUMNS ? 'met' : 'NOT met'})`);
}

// `await init()` in a fresh process: compile and instantiate kwire.wasm.
{
  const index = new URL('../index.js', import.meta.url).href;
  const code = `const t0 = performance.now(); const { init } = await import(${JSON.stringify(index)}); const t1 = performance.now(); await init(); const t2 = performance.now(); console.log(JSON.stringify({ importMs: t1 - t0, initMs: t2 - t1 }));`;
  const times = [];
  for (let i = 0; i < 3; i++) {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', cwd: fileURLToPath(new URL('..', import.meta.url)) });
    if (r.status !== 0) throw new Error('bench: init() in a fresh process failed: ' + r.stderr);
    times.push(JSON.parse(r.stdout));
  }
  console.log(`await init() in a fresh Node process (kwire.wasm ${(kw._module ? WebAssembly.Module.exports(kw._module).length : 0)} exports): ` +
    `median ${median(times.map((t) => t.initMs)).toFixed(0)} ms (import of the package ${median(times.map((t) => t.importMs)).toFixed(0)} ms), 3 runs`);
}
if (failed) process.exit(1);
