// Benchmark: kwire's JavaScript binding against kafkajs decoding the same Fetch
// response of 1000 records (two partitions, ten record batches of 100 records, each
// record with a key, a ~100-byte value and one header), in one Node process.
//
// Both sides decode everything down to each record's key, value and headers:
//   kwire:   decodeResponse(frame, 1, 11) then decodeRecords(partition.records) per partition
//   kafkajs: its Fetch v11 response decoder (kafkajs/src/protocol/requests/fetch/v11/response)
//            on the frame after the size and correlation id, as its connection passes it
// Rounds alternate between the decoders; each figure is the median over the rounds of the
// time per decode, as CPU time of the process and as wall time. On a loaded machine read
// the ratios (CPU time first), not the absolute times.
//
//   node bench/fetch.js [--rounds N] [--codec none|gzip]
import { createRequire } from 'node:module';
import { init, encodeRecords, encodeResponse, decodeResponse, decodeRecords, toBase64, fromBase64 } from '../index.js';

const require = createRequire(import.meta.url);
const kafkajsFetchV11 = require('kafkajs/src/protocol/requests/fetch/v11/response');
const kafkajsVersion = require('kafkajs/package.json').version;

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf('--' + name);
  return i >= 0 ? args[i + 1] : def;
};
const ROUNDS = Number(opt('rounds', 15));
const CODEC = opt('codec', 'none');
const TARGET = 2;

const kw = await init();

// ---- the Fetch response --------------------------------------------------------------
const PARTITIONS = 2;
const BATCHES = 5; // per partition
const PER_BATCH = 100;
const filler = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(3);
let offset = 0;
const partitions = [];
for (let p = 0; p < PARTITIONS; p++) {
  const chunks = [];
  for (let b = 0; b < BATCHES; b++) {
    const recs = [];
    for (let i = 0; i < PER_BATCH; i++) {
      const n = offset + i;
      recs.push({ key: `key-${n}`, value: `{"id":${n},"payload":"${filler.slice(n % 20, n % 20 + 80)}"}`,
        timestamp: 1700000000000 + n, headers: [['trace-id', `t-${n}`]] });
    }
    chunks.push(encodeRecords(recs, { baseOffset: offset, compression: CODEC, producerId: 1000 + p, producerEpoch: 0, baseSequence: offset }));
    offset += PER_BATCH;
  }
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) (all.set(c, at), (at += c.length));
  partitions.push({ partitionIndex: p, errorCode: 0, highWatermark: String(offset), lastStableOffset: String(offset), logStartOffset: '0',
    abortedTransactions: [], preferredReadReplica: -1, records: toBase64(all) });
}
const frame = encodeResponse({ header: { correlationId: 42 }, body: { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [{ topic: 'bench', partitions }] } }, 1, 11);
const payload = Buffer.from(frame.buffer, frame.byteOffset + 8, frame.length - 8); // kafkajs: after size and correlation id

// ---- the two decoders ----------------------------------------------------------------
function kwireDecode(copy) {
  const f = decodeResponse(frame, 1, 11);
  let n = 0;
  for (const t of f.body.responses) {
    for (const p of t.partitions) {
      const { records } = decodeRecords(p.records, { copy });
      p.records = records;
      n += records.length;
    }
  }
  return n;
}

async function kafkajsDecode() {
  const r = await kafkajsFetchV11.decode(payload);
  let n = 0;
  for (const t of r.responses) for (const p of t.partitions) n += p.messages.length;
  return n;
}

// ---- both decode the same records ----------------------------------------------------
{
  const a = decodeResponse(frame, 1, 11);
  const b = await kafkajsFetchV11.decode(payload);
  const ka = a.body.responses[0].partitions.flatMap((p) => decodeRecords(p.records).records);
  const kb = b.responses[0].partitions.flatMap((p) => p.messages);
  if (ka.length !== 1000 || kb.length !== 1000) throw new Error(`records decoded: kwire ${ka.length}, kafkajs ${kb.length}`);
  for (const i of [0, 1, 499, 999]) {
    const x = ka[i];
    const y = kb[i];
    const same = String(x.offset) === y.offset && String(x.timestamp) === y.timestamp &&
      Buffer.from(x.key).equals(y.key) && Buffer.from(x.value).equals(y.value) &&
      Buffer.from(x.headers[0].value).equals(y.headers[x.headers[0].key]);
    if (!same) throw new Error(`record ${i} differs between kwire and kafkajs`);
  }
}

// ---- timing --------------------------------------------------------------------------
// timeIt returns [wall µs, CPU µs] per decode. CPU time (this process, all threads) is
// what a loaded machine distorts least: waiting for a core is not counted.
async function timeIt(fn, iterations) {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await fn();
  const wall = Number(process.hrtime.bigint() - t0) / 1e3 / iterations;
  const c = process.cpuUsage(c0);
  return [wall, (c.user + c.system) / iterations];
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const cases = [
  ['kwire (views)', () => kwireDecode(false)],
  ['kwire (copies)', () => kwireDecode(true)],
  [`kafkajs ${kafkajsVersion}`, kafkajsDecode],
];
// warm up and size the rounds to ~200 ms per case
const iters = [];
for (const [, fn] of cases) {
  await timeIt(fn, 50);
  const [us] = await timeIt(fn, 50);
  iters.push(Math.max(20, Math.round(200_000 / us)));
}
const samples = cases.map(() => []);
for (let r = 0; r < ROUNDS; r++) {
  for (let c = 0; c < cases.length; c++) samples[c].push(await timeIt(cases[c][1], iters[c]));
}
const wall = samples.map((xs) => median(xs.map((x) => x[0])));
const cpu = samples.map((xs) => median(xs.map((x) => x[1])));
const k = cases.length - 1; // kafkajs

console.log(`Fetch v11 response, ${frame.length} bytes, 1000 records in ${PARTITIONS * BATCHES} batches (${CODEC}), Node ${process.version}, ${ROUNDS} alternating rounds`);
console.log('decoder'.padEnd(18) + 'wall µs'.padStart(10) + 'CPU µs'.padStart(10) + '  speed vs kafkajs: by CPU time, by wall time (medians)');
cases.forEach(([name], c) => {
  console.log(name.padEnd(18) + wall[c].toFixed(0).padStart(10) + cpu[c].toFixed(0).padStart(10) + `  ${(cpu[k] / cpu[c]).toFixed(2)}x, ${(wall[k] / wall[c]).toFixed(2)}x`);
});
const ratio = cpu[k] / cpu[0];
console.log(`ratio: kwire (views) decodes ${ratio.toFixed(2)}x as fast as kafkajs by CPU time (${(wall[k] / wall[0]).toFixed(2)}x by wall time); target >= ${TARGET}x: ${ratio >= TARGET ? 'met' : 'NOT met'}`);

// Where kwire's time goes (CPU µs per Fetch decode): the two public calls, and inside them
// the module's own exports (kw_decode_response_frame; kw_records_decode_table for both
// partitions), called directly on the instance's input buffer.
{
  const f0 = decodeResponse(frame, 1, 11);
  const recs = f0.body.responses[0].partitions.map((p) => fromBase64(p.records));
  const x = kw._x;
  const s = kw._scratch;
  const rawCall = (fn, bytes, ...args) => {
    const p = kw._putBytes(bytes);
    const st = fn(p, bytes.length, ...args, s, s + 4);
    kw._refresh();
    const [o] = kw._out(st, 'bench');
    x.kw_free(o);
  };
  const phases = [
    ['decodeResponse', () => decodeResponse(frame, 1, 11)],
    ['  kw_decode_response_frame', () => rawCall(x.kw_decode_response_frame, frame, 1, 11)],
    ['decodeRecords (both partitions)', () => f0.body.responses[0].partitions.forEach((p) => decodeRecords(p.records))],
    ['  kw_records_decode_table', () => recs.forEach((r) => rawCall(x.kw_records_decode_table, r, 0, 0))],
  ];
  const out = phases.map(() => []);
  for (let r = 0; r < 9; r++) for (let i = 0; i < phases.length; i++) out[i].push((await timeIt(phases[i][1], 30))[1]);
  console.log('kwire (views), CPU µs per decode: ' + phases.map(([n], i) => `${n.trim()} ${median(out[i]).toFixed(0)}`).join(', '));
}
