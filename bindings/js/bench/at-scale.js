// At-scale benchmark: one 50 MB Fetch v12 response (4 partitions x 12 batches x 1000
// records of 1 KiB, uncompressed: Kafka's default fetch.max.bytes) decoded with
// decodeFetch and every record's value read, against native Go (codec.DecodeResponseFrame
// + records.Decoder.ForEachFetchMessage, run by `go run ./bindings/js/bench/goscale` on
// the same frame). Prints the CPU time per decode (best and median of the rounds after the
// first, which grows the module's memory; the time inside kwire.wasm apart) and the
// memory: the process's resident set growth over its size before the first decode, and
// the module's linear memory, after each of the rounds (run with --expose-gc: a GC runs
// between rounds, so growth that stays is growth that is kept).
//
//   node --expose-gc bench/at-scale.js --frame FILE [--go go] [--rounds 6]
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init, encodeRecords, encodeResponse, decodeFetch, toBase64 } from '../index.js';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf('--' + name);
  return i >= 0 ? args[i + 1] : def;
};
const FRAME_FILE = resolve(opt('frame', 'fetch-50mb.bin'));
const GO = opt('go', 'go');
const ROUNDS = Number(opt('rounds', 6));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TARGET_X_GO = 5;
const TARGET_X_FRAME = 3;

const kw = await init();
const mb = (n) => (n / 1048576).toFixed(0);

// ---- kwire, in a process of its own (--measure): the frame read from the file, a fresh
// instance, so the memory figures are those of decoding alone ----------------------------
function decodeAndRead(frame) {
  const f = decodeFetch(frame, 12);
  let n = 0, offs = 0, kb = 0, vb = 0;
  for (const p of f.partitions) {
    for (const r of p.records) {
      n++;
      offs += Number(r.offset);
      const k = r.key;
      if (k !== null) kb += k.length;
      vb += r.value.length;
    }
  }
  return { records: n, offsetSum: offs, keyBytes: kb, valueBytes: vb };
}

if (args.includes('--measure')) {
  const frame = readFileSync(FRAME_FILE);
  globalThis.gc?.();
  const rss0 = process.memoryUsage().rss;
  const times = [];
  const mem = [];
  let sums = null;
  // Time inside kwire.wasm (the export calls), to tell the module's share from the binding's.
  let inModule = 0;
  const call = kw._call;
  kw._call = function (...a) {
    const t = performance.now();
    try {
      return call.apply(this, a);
    } finally {
      inModule += performance.now() - t;
    }
  };
  const cpuTimes = [];
  const moduleTimes = [];
  for (let r = 0; r < ROUNDS; r++) {
    inModule = 0;
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    sums = decodeAndRead(frame);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const c = process.cpuUsage(c0);
    cpuTimes.push((c.user + c.system) / 1000);
    moduleTimes.push(inModule);
    const rss = process.memoryUsage().rss - rss0;
    globalThis.gc?.();
    mem.push({ rss, wasm: kw._memory.buffer.byteLength });
  }
  console.log(JSON.stringify({ times, cpuTimes, moduleTimes, mem, sums, frameBytes: frame.length, path: kw.hasFrameRecords() ? 'frame-records' : 'per partition (base64 in the frame JSON)' }));
  process.exit(0);
}

// ---- the frame --------------------------------------------------------------------
const value = new Uint8Array(1024);
for (let i = 0; i < value.length; i++) value[i] = 97 + (i % 26);
const partitions = [];
let offset = 0;
for (let p = 0; p < 4; p++) {
  const batches = [];
  for (let b = 0; b < 12; b++) {
    const recs = [];
    for (let i = 0; i < 1000; i++) recs.push({ key: `k${offset + i}`, value, timestamp: 1700000000000 + offset + i });
    batches.push(encodeRecords(recs, { baseOffset: offset }));
    offset += 1000;
  }
  partitions.push({ partitionIndex: p, errorCode: 0, highWatermark: String(offset), lastStableOffset: String(offset), logStartOffset: '0',
    abortedTransactions: [], preferredReadReplica: -1, records: toBase64(Buffer.concat(batches)) });
}
let frame = encodeResponse({ header: { correlationId: 1 }, body: { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [{ topic: 'scale', partitions }] } }, 1, 12);
partitions.length = 0;
mkdirSync(dirname(FRAME_FILE), { recursive: true });
writeFileSync(FRAME_FILE, frame);

// ---- native Go on the same frame ------------------------------------------------------
const go = spawnSync(GO, ['run', './bindings/js/bench/goscale', '-frame', FRAME_FILE, '-version', '12'], { cwd: ROOT, encoding: 'utf8' });
if (go.status !== 0) throw new Error('bench: the Go side failed: ' + go.stderr);
const goRes = JSON.parse(go.stdout);

const child = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--measure', '--frame', FRAME_FILE, '--rounds', String(ROUNDS)],
  { encoding: 'utf8', maxBuffer: 1 << 20 });
if (child.status !== 0) throw new Error('bench: the measuring process failed: ' + child.stderr);
const { times, cpuTimes, moduleTimes, mem, sums, path } = JSON.parse(child.stdout);
const want = { records: goRes.records, offsetSum: goRes.offsetSum, keyBytes: goRes.keyBytes, valueBytes: goRes.valueBytes };
if (JSON.stringify(sums) !== JSON.stringify(want)) {
  console.error(`bench: kwire read ${JSON.stringify(sums)}, Go ${JSON.stringify(want)}`);
  process.exit(1);
}
const peak = Math.max(...mem.map((m) => m.rss));
console.log(`At scale: Fetch v12 response of ${mb(frame.length)} MB (4 partitions x 12 batches x 1000 records of 1 KiB, none), every value read; kwire path: ${path}`);
console.log(`  native Go (${goRes.go}, DecodeResponseFrame + ForEachFetchMessage, GOMAXPROCS 1): CPU best ${goRes.cpuBestMs.toFixed(1)} ms, median ${goRes.cpuMedianMs.toFixed(1)} ms; wall best ${goRes.bestMs.toFixed(1)} ms`);
const medOf = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
// The first decode grows the module's memory (and the process's); rounds 2.. are the steady state.
const steady = (xs) => (xs.length > 1 ? xs.slice(1) : xs);
const cpuBest = Math.min(...steady(cpuTimes));
const xGo = cpuBest / goRes.cpuBestMs;
console.log(`  kwire JS (decodeFetch + r.value of every record), rounds 2..${ROUNDS}: CPU best ${cpuBest.toFixed(0)} ms, median ${medOf(steady(cpuTimes)).toFixed(0)} ms ` +
  `= ${xGo.toFixed(1)}x Go's CPU (target <= ${TARGET_X_GO}x: ${xGo <= TARGET_X_GO ? 'met' : 'NOT met'}); first decode ${cpuTimes[0].toFixed(0)} ms CPU (the module's memory grows)`);
console.log(`    wall best ${Math.min(...steady(times)).toFixed(0)} ms; inside kwire.wasm (wall, export calls): best ${Math.min(...steady(moduleTimes)).toFixed(0)} ms ` +
  `(${(Math.min(...steady(moduleTimes)) / goRes.bestMs).toFixed(1)}x Go's wall by itself)`);
console.log(`  memory after each decode (resident growth over the process before it / the module's linear memory), MB: ${mem.map((m) => `${mb(m.rss)}/${mb(m.wasm)}`).join(', ')}`);
console.log(`  peak resident growth ${mb(peak)} MB = ${(peak / frame.length).toFixed(1)}x the frame (target <= ${TARGET_X_FRAME}x: ${peak <= TARGET_X_FRAME * frame.length ? 'met' : 'NOT met'}); ` +
  `growth from the second decode to the last: ${mb(mem[mem.length - 1].rss - mem[Math.min(1, mem.length - 1)].rss)} MB`);
frame = null;
