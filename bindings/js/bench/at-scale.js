// At-scale benchmark: one 48 MB Fetch v12 response (4 partitions x 12 batches x 1000
// records of 1 KiB, uncompressed: about Kafka's default fetch.max.bytes) decoded with
// decodeFetch and every record's value read, against native Go (codec.DecodeResponseFrame
// + records.Decoder.ForEachFetchMessage, run by `go run ./bindings/js/bench/goscale` on
// the same frame). Prints the CPU time per decode (median and best of the rounds after
// the first, which grows the module's memory; the CPU inside kwire.wasm apart, with
// abi.DecodeResponseFrameRecords in native Go, `bench/goabi`, beside it) and the memory:
// the process's peak resident set during each decode (Linux's VmHWM, reset after each
// round) over its size before the first decode, which already holds the frame, so the
// frame's own bytes are not counted; and the module's linear memory. Run with --expose-gc:
// a full collection runs between rounds (its CPU is reported apart, not in the decode's).
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
const TARGET_X_GO = 3; // the 48 MB Fetch, every record read: JS CPU within 3x of native Go
const TARGET_X_FRAME = 2;

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

// Resident set now and its peak since the last reset, from /proc/self/status; writing 5 to
// /proc/self/clear_refs resets the peak to the current size. Without them (not Linux),
// the resident set after each decode stands in for the peak, and the report says so.
function statusBytes(field) {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}
function resetPeak() {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return statusBytes('VmHWM') !== null;
  } catch {
    return false;
  }
}

if (args.includes('--measure')) {
  const frame = readFileSync(FRAME_FILE);
  globalThis.gc?.();
  const rss0 = process.memoryUsage().rss;
  const peakKnown = resetPeak();
  const times = [];
  const mem = [];
  let sums = null;
  // CPU time inside kwire.wasm (the export calls: a few per decode), to tell the module's
  // share from the binding's.
  let inModule = 0;
  const call = kw._call;
  if (typeof call === 'function') kw._call = function (...a) {
    const c = process.cpuUsage();
    try {
      return call.apply(this, a);
    } finally {
      const d = process.cpuUsage(c);
      inModule += (d.user + d.system) / 1000;
    }
  };
  const cpuTimes = [];
  const gcTimes = [];
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
    const peak = peakKnown ? statusBytes('VmHWM') - rss0 : rss;
    const g0 = process.cpuUsage();
    globalThis.gc?.();
    const g = process.cpuUsage(g0);
    gcTimes.push((g.user + g.system) / 1000);
    mem.push({ rss, peak, wasm: kw._memory.buffer.byteLength });
    if (peakKnown) resetPeak();
  }
  console.log(JSON.stringify({ times, cpuTimes, gcTimes, moduleTimes, mem, peakKnown, sums, frameBytes: frame.length,
    path: kw.hasFrameRecords() ? 'frame-records' : 'per partition (base64 in the frame JSON)' }));
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
if (go.status !== 0) throw new Error(`bench: the Go side failed (${go.error?.message ?? 'exit ' + go.status}): ${go.stderr}`);
const goRes = JSON.parse(go.stdout);
const goAbi = spawnSync(GO, ['run', './bindings/js/bench/goabi', '-version', '12', '-rounds', '7', FRAME_FILE], { cwd: ROOT, encoding: 'utf8' });
if (goAbi.status !== 0) throw new Error(`bench: goabi failed (${goAbi.error?.message ?? 'exit ' + goAbi.status}): ${goAbi.stderr}`);
const abiRes = JSON.parse(goAbi.stdout);

const child = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--measure', '--frame', FRAME_FILE, '--rounds', String(ROUNDS)],
  { encoding: 'utf8', maxBuffer: 1 << 20 });
if (child.status !== 0) throw new Error('bench: the measuring process failed: ' + child.stderr);
const { times, cpuTimes, gcTimes, moduleTimes, mem, peakKnown, sums, path } = JSON.parse(child.stdout);
const want = { records: goRes.records, offsetSum: goRes.offsetSum, keyBytes: goRes.keyBytes, valueBytes: goRes.valueBytes };
if (JSON.stringify(sums) !== JSON.stringify(want) || abiRes.records !== goRes.records) {
  console.error(`bench: kwire read ${JSON.stringify(sums)}, Go ${JSON.stringify(want)}, Go's record table ${abiRes.records} records`);
  process.exit(1);
}
const medOf = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
// The first decode grows the module's memory (and the process's); rounds 2.. are the steady state.
const steady = (xs) => (xs.length > 1 ? xs.slice(1) : xs);
const peak = Math.max(...mem.map((m) => m.peak));
console.log(`At scale: Fetch v12 response of ${mb(frame.length)} MB (4 partitions x 12 batches x 1000 records of 1 KiB, none), every value read; kwire path: ${path}`);
console.log(`  native Go (${goRes.go}, DecodeResponseFrame + ForEachFetchMessage, GOMAXPROCS 1): CPU median ${goRes.cpuMedianMs.toFixed(1)} ms, best ${goRes.cpuBestMs.toFixed(1)} ms; wall best ${goRes.bestMs.toFixed(1)} ms`);
const cpuMed = medOf(steady(cpuTimes));
const xGo = cpuMed / goRes.cpuMedianMs;
console.log(`  kwire JS (decodeFetch + r.value of every record), rounds 2..${ROUNDS}: CPU median ${cpuMed.toFixed(0)} ms, best ${Math.min(...steady(cpuTimes)).toFixed(0)} ms ` +
  `= ${xGo.toFixed(1)}x Go's CPU, medians (target <= ${TARGET_X_GO}x: ${xGo <= TARGET_X_GO ? 'met' : 'NOT met'}); first decode ${cpuTimes[0].toFixed(0)} ms CPU (the module's memory grows)`);
console.log(`    a full collection after each decode (forced, not in the figure above): median ${medOf(steady(gcTimes)).toFixed(0)} ms CPU`);
const modMed = medOf(steady(moduleTimes));
console.log(`    wall median ${medOf(steady(times)).toFixed(0)} ms; inside kwire.wasm (CPU, export calls): ` +
  (modMed > 0 ? `median ${modMed.toFixed(0)} ms, ${(modMed / (abiRes.cpuMedianUs / 1000)).toFixed(1)}x` : 'not measured (the binding has no _call to wrap);') +
  ` abi.DecodeResponseFrameRecords in native Go: ${(abiRes.cpuMedianUs / 1000).toFixed(1)} ms CPU, median`);
console.log(`  memory per decode, MB (${peakKnown ? 'peak resident growth during it' : 'resident growth after it (no VmHWM here: not the peak)'} / the module's linear memory): ` +
  `${mem.map((m) => `${mb(m.peak)}/${mb(m.wasm)}`).join(', ')}`);
console.log(`  peak resident growth ${mb(peak)} MB = ${(peak / frame.length).toFixed(1)}x the frame (target <= ${TARGET_X_FRAME}x: ${peak <= TARGET_X_FRAME * frame.length ? 'met' : 'NOT met'}); ` +
  `resident growth after the last decode ${mb(mem[mem.length - 1].rss)} MB, after the second ${mb(mem[Math.min(1, mem.length - 1)].rss)} MB`);
frame = null;
