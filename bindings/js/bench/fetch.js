// Benchmark: kwire's JavaScript binding against kafkajs and @platformatic/kafka on the
// same Fetch responses, in one Node process, alternating rounds, CPU time of the process;
// and kwire.wasm's export alone against the same function in native Go.
//
// The task, on each side the cheapest way its code allows: decode a Fetch v11 response of
// 1000 records (2 partitions x 5 batches x 100 records, key ~10 bytes, one header) and,
// for every record, read its offset, timestamp, key and value. Two frames: values of
// ~100 bytes (the frame of earlier runs) and values of 200-600 bytes (lengths drawn from
// a seeded generator, so every run builds the same frame). Checksums (records, sum of
// offsets, sum of timestamps, total key bytes, total value bytes) must agree between all
// decoders, or the benchmark fails. Once per codec: none, gzip, snappy, lz4, zstd.
//
//   kafkajs          its Fetch v11 response decoder (what its consumer runs on each
//                    response), then every message of every partition; snappy, lz4 and
//                    zstd through pure-JS codecs registered the kafkajs way
//                    (kafkajs-snappy, and lz4js / fzstd adapters below). It never checks
//                    a batch's CRC.
//   @platformatic/kafka
//                    fetchV11.parseResponse over a Reader of the response body (what its
//                    connection hands each Fetch response to), then every record of
//                    every batch; offset and timestamp as the batch's first (converted
//                    from bigint once per batch) plus the record's delta. Keys and values
//                    are Buffer views of the response (or of the decompressed batch). It
//                    reads a batch's CRC field and never checks it. gzip through
//                    node:zlib, snappy and lz4 through its own wasm codecs; Node 20's zlib
//                    has no zstd, so its zstd entry's decompressSync is replaced by fzstd
//                    (the decompressor kafkajs gets here too).
//   kwire records    decodeFetch(frame, 11), then every Record of every partition
//                    (lazy objects: r.offset, r.timestamp, r.key, r.value); CRC-32C of
//                    every batch checked, and again with {skipCrc: true}
//   kwire columns    decodeFetch(frame, 11), then each partition's columns(): offsets and
//                    timestamps from BigInt64Array (read as two int32 halves: exact below
//                    2^53), key and value lengths from the Int32Array (offset, length) pairs
//                    — no object per record; CRC checked, and with {skipCrc: true}
//   kwire.wasm call  kw_decode_response_frame_records alone (input copied into the
//                    module's memory, the call, kw_free of its output; CRC checked), and
//                    abi.DecodeResponseFrameRecords, the same function in native Go, on the
//                    same frame (`go run ./bindings/js/bench/goabi` on the frame files)
//
//   the floor       for each compressed frame, every decompressor this Node has for the
//                    codec (node:zlib, fzstd, lz4js, @platformatic/kafka's wasm codecs),
//                    alone on the frame's compressed records sections, nothing decoded;
//                    the fastest is the floor that kwire columns are held to
//
// Then the time of `await init()` in a fresh Node process (compiling kwire.wasm).
//
//   node bench/fetch.js [--rounds N] [--sample-ms MS] [--codecs none,gzip,...] [--frames small,mixed]
//                       [--out DIR] [--go GO] [--wasm FILE] [--purego FILE]
//
// Profile mode: the kwire case in a loop under the inspector's CPU profiler, then the
// top 15 functions by self time (wasm functions inside the export included):
//
//   node bench/fetch.js --profile [--codecs none] [--frames small] [--case records|columns]
//                       [--skip-crc] [--seconds S] [--wasm FILE]
//
// kwire.wasm as built (-ldflags '-s -w') has no name section, so its functions show as
// wasm-function[N]; --wasm loads another build, e.g. one with names:
//   GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o /tmp/kwire-names.wasm ./wasm
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { init, load, encodeRecords, encodeResponse, decodeFetch, toBase64 } from '../index.js';
import { KW_RECORDS_COLUMNS, KW_RECORDS_INPUT_SPANS } from '../src/abi_gen.js';

const require = createRequire(import.meta.url);
const kafkajsFetchV11 = require('kafkajs/src/protocol/requests/fetch/v11/response');
const { CompressionCodecs, CompressionTypes } = require('kafkajs');
const SnappyCodec = require('kafkajs-snappy');
const lz4js = require('lz4js');
const fzstd = require('fzstd');
const kafkajsVersion = require('kafkajs/package.json').version;
const platformatic = await import('@platformatic/kafka');
const platformaticVersion = JSON.parse(readFileSync(new URL('../node_modules/@platformatic/kafka/package.json', import.meta.url), 'utf8')).version;

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
// @platformatic/kafka decompresses zstd with node:zlib's zstdDecompressSync, which Node 20
// lacks; its codec table is one object per codec, so the decompressor is swapped there.
const platformaticZstdNative = platformatic.compressionsAlgorithms.zstd.available;
if (!platformaticZstdNative) {
  platformatic.compressionsAlgorithms.zstd.decompressSync = (buf) => {
    const u = fzstd.decompress(buf);
    return Buffer.from(u.buffer, u.byteOffset, u.length);
  };
}

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf('--' + name);
  return i >= 0 ? args[i + 1] : def;
};
const PROFILE = args.includes('--profile');
const ROUNDS = Number(opt('rounds', 9));
const SAMPLE_US = 1000 * Number(opt('sample-ms', 50));
const CODECS = opt('codecs', PROFILE ? 'none' : 'none,gzip,snappy,lz4,zstd').split(',');
const FRAMES = opt('frames', PROFILE ? 'small' : 'small,mixed').split(',');
const WASM = opt('wasm', undefined);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const OUT = resolve(opt('out', join(ROOT, 'build', 'bench')));
const GO = opt('go', 'go');

const TARGET_RECORDS_KAFKAJS = 4;
const TARGET_COLUMNS_KAFKAJS = 10;
const TARGET_COLUMNS_PLATFORMATIC = 5;
const TARGET_MODULE_NONE = 3;
const TARGET_MODULE_COMPRESSED = 4;
// Records at the decompressor's speed: every codec, both frames.
const TARGET_COLUMNS_PLATFORMATIC_ANY = 2;
const TARGET_RECORDS_PLATFORMATIC = 1;
const TARGET_COLUMNS_FLOOR = 1.3;
// The module's own inflate and zstd (kernels in WebAssembly) against native Go.
const TARGET_MODULE_INFLATE_ZSTD = 2.5;

for (const c of CODECS) if (!['none', 'gzip', 'snappy', 'lz4', 'zstd'].includes(c)) throw new Error(`bench: unknown codec ${c}`);
for (const f of FRAMES) if (!['small', 'mixed'].includes(f)) throw new Error(`bench: unknown frame ${f} (small, mixed)`);

const kw = await init(WASM === undefined ? undefined : resolve(WASM));

// ---- the frames -----------------------------------------------------------------------

// mulberry32: a small seeded generator, so the mixed frame is the same on every run.
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ('order customer item price quantity status shipped pending region north south east west ' +
  'warehouse sku currency eur usd total discount tax created updated event click view cart checkout ' +
  'session device mobile desktop browser referrer campaign true false null').split(' ');

// small: value {"id":n,"payload":"<80 characters>"} (~100 bytes), as in earlier runs.
// mixed: value a JSON-ish text of words, its length uniform in 200..600 bytes.
function buildFrame(codec, kind) {
  const filler = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(3);
  const rand = generator(0x6b77);
  const mixedValue = (n) => {
    const len = 200 + Math.floor(rand() * 401);
    let s = `{"id":${n},"text":"`;
    while (s.length < len) s += WORDS[Math.floor(rand() * WORDS.length)] + ' ';
    return s.slice(0, len - 2) + '"}';
  };
  let offset = 0;
  const sections = []; // each batch's records section (compressed, when it is)
  let minValue = Infinity;
  let maxValue = 0;
  const partitions = [];
  for (let p = 0; p < 2; p++) {
    const chunks = [];
    for (let b = 0; b < 5; b++) {
      const recs = [];
      for (let i = 0; i < 100; i++) {
        const n = offset + i;
        const value = kind === 'small' ? `{"id":${n},"payload":"${filler.slice(n % 20, n % 20 + 80)}"}` : mixedValue(n);
        minValue = Math.min(minValue, value.length);
        maxValue = Math.max(maxValue, value.length);
        recs.push({ key: `key-${n}`, value, timestamp: 1700000000000 + n, headers: [['trace-id', `t-${n}`]] });
      }
      chunks.push(encodeRecords(recs, { baseOffset: offset, compression: codec, producerId: 1000 + p, producerEpoch: 0, baseSequence: offset }));
      sections.push(chunks[chunks.length - 1].subarray(61));
      offset += 100;
    }
    partitions.push({ partitionIndex: p, errorCode: 0, highWatermark: String(offset), lastStableOffset: String(offset), logStartOffset: '0',
      abortedTransactions: [], preferredReadReplica: -1, records: toBase64(Buffer.concat(chunks)) });
  }
  const frame = encodeResponse({ header: { correlationId: 42 }, body: { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [{ topic: 'bench', partitions }] } }, 1, 11);
  return { frame, minValue, maxValue, sections };
}

// The floor: each decompressor this Node has for a codec (native where it exists), alone
// on a frame's compressed records sections, nothing decoded. The fastest is the floor.
const zlib = await import('node:zlib');
function hostDecompressors(codec) {
  const pk = platformatic.compressionsAlgorithms[codec];
  const buf = (b) => Buffer.from(b.buffer, b.byteOffset, b.length); // its codecs take Buffers
  const all = {
    gzip: [['node:zlib gunzipSync', (b) => zlib.gunzipSync(b)]],
    snappy: pk?.decompressSync ? [['@platformatic/kafka snappy', (b) => pk.decompressSync(buf(b))]] : [],
    lz4: [['lz4js', (b) => lz4js.decompress(b)], ...(pk?.decompressSync ? [['@platformatic/kafka lz4', (b) => pk.decompressSync(buf(b))]] : [])],
    zstd: [['fzstd', (b) => fzstd.decompress(b)], ...(typeof zlib.zstdDecompressSync === 'function' ? [['node:zlib zstdDecompressSync', (b) => zlib.zstdDecompressSync(b)]] : [])],
  };
  return all[codec] ?? [];
}

// ---- the decoders: each returns [records, sum of offsets, sum of timestamps, key bytes, value bytes]

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

// payload: the response after its size and correlation id, as the client's connection
// hands it to the parser (Fetch v11 has a v0 response header: nothing else to skip).
function platformaticRead(payload) {
  const r = platformatic.fetchV11.parseResponse(42, 1, 11, platformatic.Reader.from(payload));
  let n = 0, offs = 0, ts = 0, kb = 0, vb = 0;
  for (const t of r.responses) {
    for (const p of t.partitions) {
      if (p.records === null) continue;
      for (const batch of p.records) {
        const firstOffset = Number(batch.firstOffset);
        const firstTimestamp = Number(batch.firstTimestamp);
        for (const rec of batch.records) {
          n++;
          offs += firstOffset + rec.offsetDelta;
          ts += firstTimestamp + Number(rec.timestampDelta);
          if (rec.key !== null) kb += rec.key.length;
          if (rec.value !== null) vb += rec.value.length;
        }
      }
    }
  }
  return [n, offs, ts, kb, vb];
}

const CRC = {};
const NO_CRC = { skipCrc: true };

function kwireRecords(frame, options) {
  const f = decodeFetch(frame, 11, options);
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

function kwireColumns(frame, options) {
  const f = decodeFetch(frame, 11, options);
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

// The export call alone, on the exports of an instance of its own (the binding's helpers
// are not used, so this keeps working whatever the binding does around the call, and the
// instance decodeFetch uses never sees its memory grow under it): the frame copied into a
// buffer of the module, kw_decode_response_frame_records (CRC checked), kw_free of the
// output. Returns the records of the table, for a check; not a decoder (no checksum).
function moduleCall(instance) {
  const x = instance._x;
  if (x === null || typeof x !== 'object' || typeof x.kw_decode_response_frame_records !== 'function') return null;
  // The flags decodeFetch passes: KW_RECORDS_INPUT_SPANS from ABI 1.2 on, and
  // KW_RECORDS_COLUMNS (layout 4) from ABI 1.4 on.
  const minor = x.kw_abi_version() & 0xffff;
  const FLAGS = (minor >= 2 ? KW_RECORDS_INPUT_SPANS : 0) | (minor >= 4 ? KW_RECORDS_COLUMNS : 0);
  let inPtr = 0;
  let inCap = 0;
  const slots = x.kw_alloc(8) >>> 0;
  if (slots === 0) throw new Error('bench: kw_alloc(8) failed');
  return (frame) => {
    if (frame.length > inCap) {
      if (inPtr !== 0) x.kw_free(inPtr);
      inPtr = x.kw_alloc(frame.length) >>> 0;
      if (inPtr === 0) throw new Error(`bench: kw_alloc(${frame.length}) failed`);
      inCap = frame.length;
    }
    new Uint8Array(x.memory.buffer, inPtr, frame.length).set(frame);
    const st = x.kw_decode_response_frame_records(inPtr, frame.length, 1, 11, FLAGS, 0, slots, slots + 4);
    if (st !== 0) throw new Error(`bench: kw_decode_response_frame_records returned ${st}`);
    const dv = new DataView(x.memory.buffer);
    const out = dv.getUint32(slots, true);
    const records = dv.getInt32(out + 8, true);
    x.kw_free(out);
    return records;
  };
}

// ---- timing ---------------------------------------------------------------------------

// timeIt returns CPU µs per call (user + system of this process, every thread).
async function timeIt(fn, iterations, isAsync) {
  const c0 = process.cpuUsage();
  if (isAsync) for (let i = 0; i < iterations; i++) await fn();
  else for (let i = 0; i < iterations; i++) fn();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / iterations;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

// calibrate warms fn up and returns the calls that fill about SAMPLE_US of CPU.
async function calibrate(fn, isAsync) {
  let per = 0;
  for (let pass = 0; pass < 2; pass++) {
    const c0 = process.cpuUsage();
    let n = 0;
    let used = 0;
    while (n < 3 || used < SAMPLE_US / 4) {
      if (isAsync) await fn();
      else fn();
      n++;
      const c = process.cpuUsage(c0);
      used = c.user + c.system;
    }
    per = used / n;
  }
  return Math.max(3, Math.round(SAMPLE_US / Math.max(1, per)));
}

const KIND_LABEL = { small: 'values ~100 B', mixed: 'values 200-600 B' };

// ---- profile mode ---------------------------------------------------------------------

if (PROFILE) {
  const { Session } = await import('node:inspector/promises');
  const caseName = opt('case', 'records');
  if (caseName !== 'records' && caseName !== 'columns') throw new Error('bench: --case records or columns');
  const options = args.includes('--skip-crc') ? NO_CRC : CRC;
  const seconds = Number(opt('seconds', 3));
  const wasmFile = WASM === undefined ? fileURLToPath(new URL('../kwire.wasm', import.meta.url)) : resolve(WASM);
  const named = WebAssembly.Module.customSections(new WebAssembly.Module(readFileSync(wasmFile)), 'name').length > 0;
  console.log(`profile: kwire ${caseName} (decodeFetch${options.skipCrc ? ' with skipCrc' : ', CRC checked'}) in a loop, ${seconds} s per frame, ` +
    `V8's sampling profiler (node:inspector), Node ${process.version}; kwire.wasm: ${wasmFile}`);
  if (!named) {
    console.log('  this kwire.wasm has no name section (built with -ldflags \'-s -w\'): its functions show as wasm-function[N]. ' +
      'For names: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o /tmp/kwire-names.wasm ./wasm, then --wasm /tmp/kwire-names.wasm');
  }
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  for (const kind of FRAMES) {
    for (const codec of CODECS) {
      const { frame } = buildFrame(codec, kind);
      const fn = caseName === 'records' ? () => kwireRecords(frame, options) : () => kwireColumns(frame, options);
      for (let i = 0; i < 50; i++) fn();
      await session.post('Profiler.start');
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      let calls = 0;
      while (performance.now() - t0 < seconds * 1000) {
        for (let i = 0; i < 10; i++) fn();
        calls += 10;
      }
      const c = process.cpuUsage(c0);
      const { profile } = await session.post('Profiler.stop');
      // Self time by samples: every sample counts the same (under load the sampler's
      // intervals stretch at random, so counts are the fairer weight); ms are the shares
      // of the loop's CPU time.
      const byId = new Map(profile.nodes.map((n) => [n.id, n]));
      const self = new Map();
      let inWasm = 0;
      for (const id of profile.samples) {
        const { callFrame: f } = byId.get(id);
        const isWasm = f.url.startsWith('wasm://');
        const where = isWasm ? 'wasm' : f.url === '' ? '(V8/Node)' : `${f.url.replace(/^.*\/bindings\/js\//, '').replace(/^.*\/node_modules\//, '')}:${f.lineNumber + 1}`;
        const key = `${f.functionName || '(anonymous)'}\u0000${where}`;
        self.set(key, (self.get(key) ?? 0) + 1);
        if (isWasm) inWasm++;
      }
      const total = profile.samples.length;
      const cpuMs = (c.user + c.system) / 1000;
      console.log(`\n${KIND_LABEL[kind]}, ${codec}: ${calls} calls, ${((c.user + c.system) / calls).toFixed(0)} µs CPU per call; ` +
        `${total} samples, ${(100 * inWasm / total).toFixed(0)}% of them in wasm functions`);
      console.log('  self ms  share  where                    function');
      for (const [key, k] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
        const [name, where] = key.split('\u0000');
        console.log(`${((cpuMs * k) / total).toFixed(0).padStart(9)}${((100 * k) / total).toFixed(1).padStart(6)}%  ${where.padEnd(25)}${name}`);
      }
    }
  }
  session.disconnect();
  process.exit(0);
}

// ---- the frames, the checks, native Go --------------------------------------------------

const moduleAlone = moduleCall(await load(WASM === undefined ? undefined : resolve(WASM)));
// The same module built with -tags kwire_purego (no WebAssembly kernels), when given.
const PUREGO = opt('purego', undefined);
const moduleAlonePure = PUREGO === undefined ? null : moduleCall(await load(resolve(PUREGO)));
const frames = [];
mkdirSync(OUT, { recursive: true });
for (const kind of FRAMES) {
  for (const codec of CODECS) {
    const { frame, minValue, maxValue, sections } = buildFrame(codec, kind);
    const file = join(OUT, `fetch-v11-${kind}-${codec}.bin`);
    writeFileSync(file, frame);
    frames.push({ kind, codec, frame, file, minValue, maxValue, sections });
  }
}

// Native Go, on one frame file: run right after that frame's JavaScript rounds, so both
// sides are timed within seconds of each other on this (shared) machine.
let goVersion = '';
function goNative(file) {
  const go = spawnSync(GO, ['run', './bindings/js/bench/goabi', '-version', '11', '-rounds', '11', '-ms', '30', file], { cwd: ROOT, encoding: 'utf8' });
  if (go.status !== 0) throw new Error(`bench: the Go side failed (${go.error?.message ?? 'exit ' + go.status}): ${go.stderr}`);
  const r = JSON.parse(go.stdout);
  goVersion = r.go;
  return r;
}

// The CRC claims, tried: one value byte of an uncompressed frame flipped (the batch's
// CRC no longer matches, the structure is intact). Each decoder either decodes it or throws.
async function crcProbe(frame) {
  const bad = Buffer.from(frame);
  const at = bad.indexOf('{"id":500,');
  if (at < 0) throw new Error('bench: record 500 not found in the frame');
  bad[at + 12] ^= 1;
  const payload = bad.subarray(8);
  const tryIt = async (fn) => {
    try {
      await fn();
      return 'decodes it';
    } catch (e) {
      return /crc/i.test(String(e?.message)) ? 'rejects it (CRC)' : `rejects it (${String(e?.message).slice(0, 80)})`;
    }
  };
  return {
    kafkajs: await tryIt(() => kafkajsRead(payload)),
    platformatic: await tryIt(() => platformaticRead(payload)),
    kwire: await tryIt(() => kwireRecords(bad, CRC)),
    kwireSkip: await tryIt(() => kwireRecords(bad, NO_CRC)),
  };
}
const noneFrame = frames.find((f) => f.codec === 'none');
const probe = noneFrame !== undefined ? await crcProbe(noneFrame.frame) : null;

let failed = false;
const results = [];
for (const fr of frames) {
  const { kind, codec, frame } = fr;
  const payload = Buffer.from(frame.buffer, frame.byteOffset + 8, frame.length - 8); // after size and correlation id
  const cases = [
    { name: `kafkajs ${kafkajsVersion}`, fn: () => kafkajsRead(payload), isAsync: true, check: true },
    { name: `@platformatic/kafka ${platformaticVersion}`, fn: () => platformaticRead(payload), check: true },
    { name: 'kwire records', fn: () => kwireRecords(frame, CRC), check: true },
    { name: 'kwire records skipCrc', fn: () => kwireRecords(frame, NO_CRC), check: true },
    { name: 'kwire columns', fn: () => kwireColumns(frame, CRC), check: true },
    { name: 'kwire columns skipCrc', fn: () => kwireColumns(frame, NO_CRC), check: true },
  ];
  if (moduleAlone !== null) cases.push({ name: 'kwire.wasm call alone', fn: () => moduleAlone(frame) });
  if (moduleAlone !== null && moduleAlonePure !== null) cases.push({ name: 'kwire.wasm (kwire_purego) call alone', fn: () => moduleAlonePure(frame) });
  const floorFrom = cases.length;
  let floorBytes = -1;
  for (const [name, fn] of hostDecompressors(codec)) {
    let bytes;
    try {
      bytes = fr.sections.reduce((n, b) => n + fn(b).length, 0);
    } catch (e) {
      console.error(`  (${name} cannot decompress the ${codec} sections: ${e.message})`);
      continue;
    }
    if (floorBytes >= 0 && bytes !== floorBytes) {
      console.error(`bench (${kind}, ${codec}): ${name} decompresses ${bytes} bytes, another ${floorBytes}`);
      failed = true;
    }
    floorBytes = bytes;
    cases.push({ name, floor: true, fn: () => fr.sections.reduce((n, b) => n + fn(b).length, 0) });
  }
  const sums = [];
  for (const c of cases.filter((c) => c.check)) sums.push(JSON.stringify(await c.fn()));
  const tableRecords = moduleAlone !== null ? moduleAlone(frame) : 1000;
  if (new Set(sums).size !== 1 || JSON.parse(sums[0])[0] !== 1000 || tableRecords !== 1000) {
    console.error(`bench (${kind}, ${codec}): the decoders disagree: ${cases.filter((c) => c.check).map((c, i) => `${c.name} ${sums[i]}`).join('; ')}; ` +
      `records in the export's table ${tableRecords}`);
    failed = true;
    continue;
  }
  const iters = [];
  for (const c of cases) iters.push(await calibrate(c.fn, c.isAsync));
  const samples = cases.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < cases.length; i++) samples[i].push(await timeIt(cases[i].fn, iters[i], cases[i].isAsync));
  }
  const cpu = samples.map(median);
  const goRes = goNative(fr.file);
  if (goRes.records !== 1000) {
    console.error(`bench (${kind}, ${codec}): Go's record table has ${goRes.records} records`);
    failed = true;
    continue;
  }
  const spread = samples.map((xs, i) => ({ x: Math.max(...xs) / Math.min(...xs), name: cases[i].name }));
  const floors = cases.slice(floorFrom).map((c, i) => ({ name: c.name, us: cpu[floorFrom + i] }));
  const floor = floors.length === 0 ? undefined : floors.reduce((a, b) => (b.us < a.us ? b : a));
  results.push({ ...fr, cpu, spread, module: moduleAlone !== null ? cpu[6] : undefined, pure: moduleAlonePure !== null ? cpu[7] : undefined, goUs: goRes.cpuMedianUs, floor, floors });
}

// ---- the report -----------------------------------------------------------------------

const fmt = (us) => us.toFixed(0);
const x = (a, b) => `${(a / b).toFixed(2)}x`;
console.log(`Fetch v11 responses of 1000 records (2 partitions x 5 batches x 100, key ~10 B, one header), Node ${process.version}, ` +
  `${ROUNDS} alternating rounds of ~${SAMPLE_US / 1000} ms CPU per case, median CPU µs per response (user + system)`);
console.log(`CRC checks: kafkajs ${kafkajsVersion} never checks a batch's CRC; @platformatic/kafka ${platformaticVersion} reads the CRC field and never checks it; ` +
  'kwire checks CRC-32C of every batch unless {skipCrc: true}');
if (probe !== null) {
  console.log(`  tried on the ${KIND_LABEL[noneFrame.kind]} none frame with one value byte flipped: kafkajs ${probe.kafkajs}, @platformatic/kafka ${probe.platformatic}, ` +
    `kwire ${probe.kwire}, kwire with skipCrc ${probe.kwireSkip}`);
  if (probe.kwire !== 'rejects it (CRC)' || probe.kwireSkip !== 'decodes it') {
    console.error('bench: kwire did not reject the corrupted batch with CRC checks on, or did not decode it with skipCrc');
    failed = true;
  }
}
console.log(`zstd: kafkajs through fzstd (registered); @platformatic/kafka through ${platformaticZstdNative ? "node:zlib (its own)" : "fzstd (Node 20's zlib has no zstd; its decompressor swapped in)"}`);
console.log(`kwire path: ${kw.hasFrameRecords() ? 'kw_decode_response_frame_records (one record table, no base64)' : 'kw_decode_response_frame + kw_records_decode_table per partition (the module lacks the frame-records calls)'}`);
const worst = {};
const note = (key, ratio, where) => {
  if (worst[key] === undefined || ratio < worst[key].ratio) worst[key] = { ratio, where };
};
const noteMax = (key, ratio, where) => {
  if (worst[key] === undefined || ratio > worst[key].ratio) worst[key] = { ratio, where };
};
for (const kind of FRAMES) {
  const rows = results.filter((r) => r.kind === kind);
  if (rows.length === 0) continue;
  const vmin = Math.min(...rows.map((r) => r.minValue));
  const vmax = Math.max(...rows.map((r) => r.maxValue));
  console.log(`\n${KIND_LABEL[kind]} (${vmin}-${vmax} B)   CPU µs per response; kwire speed-up over each peer (peer CPU / kwire CPU), CRC checked [skipCrc]`);
  console.log('codec     bytes  kafkajs platformatic | kw records [skipCrc] | kw columns [skipCrc] |  records x kafkajs  x platformatic | columns x kafkajs     x platformatic');
  for (const { codec, frame, cpu } of rows) {
    const [kj, pk, rec, recN, col, colN] = cpu;
    const where = `${codec}, ${KIND_LABEL[kind]}`;
    note('recKj', kj / rec, where);
    note('recKjN', kj / recN, where);
    note('recPk', pk / rec, where);
    note('recPkN', pk / recN, where);
    note('colKj', kj / col, where);
    note('colKjN', kj / colN, where);
    note('colPk', pk / col, where);
    note('colPkN', pk / colN, where);
    console.log(`${codec.padEnd(7)}${String(frame.length).padStart(8)}${fmt(kj).padStart(9)}${fmt(pk).padStart(13)} |` +
      `${fmt(rec).padStart(11)} [${fmt(recN).padStart(6)}] |${fmt(col).padStart(11)} [${fmt(colN).padStart(6)}] |` +
      `${x(kj, rec).padStart(8)} [${x(kj, recN).padStart(6)}]${x(pk, rec).padStart(8)} [${x(pk, recN).padStart(6)}] |` +
      `${x(kj, col).padStart(8)} [${x(kj, colN).padStart(6)}]${x(pk, col).padStart(8)} [${x(pk, colN).padStart(6)}]`);
  }
  if (rows[0].module !== undefined) {
    console.log(`kw_decode_response_frame_records alone (input copied in, output freed; CRC checked) vs abi.DecodeResponseFrameRecords in native Go (${goVersion}, GOMAXPROCS 1), CPU µs:`);
    for (const { codec, cpu, module, pure, goUs } of rows) {
      const r = module / goUs;
      const target = codec === 'none' ? TARGET_MODULE_NONE : TARGET_MODULE_COMPRESSED;
      noteMax(codec === 'none' ? 'modNone' : 'modComp', r, `${codec}, ${KIND_LABEL[kind]}`);
      if (codec === 'gzip' || codec === 'zstd') noteMax('modGzZstd', r, `${codec}, ${KIND_LABEL[kind]}`);
      const p = pure === undefined ? '' : `; kwire_purego build ${fmt(pure)} = ${(pure / goUs).toFixed(1)}x native (the kernels: ${(pure / module).toFixed(2)}x faster)`;
      console.log(`  ${codec.padEnd(7)} wasm ${fmt(module).padStart(6)}  native ${fmt(goUs).padStart(6)}  = ${r.toFixed(1)}x native (target <= ${target}x: ${r <= target ? 'met' : 'NOT met'}); ` +
        `${((100 * module) / cpu[4]).toFixed(0)}% of kwire columns${p}`);
    }
  } else {
    console.log('kw_decode_response_frame_records alone: not measured (the binding exposes no module exports, or the module lacks the call)');
  }
}

if (results.some((r) => r.floor !== undefined)) {
  console.log(`\nCompressed frames against the floor: the fastest decompressor this Node has, alone on the same compressed sections (nothing decoded); ` +
    `kwire decompresses ${kw.hostCodecs().join(', ') || 'nothing'} with node:zlib (hostDecompress, ABI 1.3), the rest in the module. CPU µs:`);
  console.log('frame             codec    floor  kw columns  kw records  columns/floor  records/floor  floor from');
  for (const r of results.filter((r) => r.floor !== undefined)) {
    const where = `${r.codec}, ${KIND_LABEL[r.kind]}`;
    noteMax('colFloor', r.cpu[4] / r.floor.us, where);
    console.log(`${KIND_LABEL[r.kind].padEnd(18)}${r.codec.padEnd(7)}${fmt(r.floor.us).padStart(7)}${fmt(r.cpu[4]).padStart(12)}${fmt(r.cpu[2]).padStart(12)}` +
      `${x(r.cpu[4], r.floor.us).padStart(15)}${x(r.cpu[2], r.floor.us).padStart(15)}  ${r.floor.name} (of ${r.floors.map((f) => f.name).join(', ')})`);
  }
}

if (results.length > 0) {
  const line = (label, key, target, atLeast = true) => {
    const w = worst[key];
    const wn = worst[key + 'N'];
    const ok = (r) => (atLeast ? r >= target : r <= target) ? 'met' : 'NOT met';
    let s = `  ${label.padEnd(44)} worst ${w.ratio.toFixed(2)}x (${w.where}): ${ok(w.ratio)}`;
    if (wn !== undefined) s += `; with skipCrc worst ${wn.ratio.toFixed(2)}x (${wn.where}): ${ok(wn.ratio)}`;
    console.log(s);
  };
  console.log('\nTargets (worst codec over the frames above; kwire as it runs by default, CRC checked, then with skipCrc):');
  line(`kwire records >= ${TARGET_RECORDS_KAFKAJS}x kafkajs`, 'recKj', TARGET_RECORDS_KAFKAJS);
  line(`kwire columns >= ${TARGET_COLUMNS_KAFKAJS}x kafkajs`, 'colKj', TARGET_COLUMNS_KAFKAJS);
  line(`kwire columns >= ${TARGET_COLUMNS_PLATFORMATIC}x @platformatic/kafka`, 'colPk', TARGET_COLUMNS_PLATFORMATIC);
  console.log(`  kwire records vs @platformatic/kafka (no target): worst ${worst.recPk.ratio.toFixed(2)}x (${worst.recPk.where}); with skipCrc ${worst.recPkN.ratio.toFixed(2)}x (${worst.recPkN.where})`);
  line(`kwire columns >= ${TARGET_COLUMNS_PLATFORMATIC_ANY}x @platformatic/kafka, every codec`, 'colPk', TARGET_COLUMNS_PLATFORMATIC_ANY);
  line(`kwire records >= ${TARGET_RECORDS_PLATFORMATIC}x @platformatic/kafka, every codec`, 'recPk', TARGET_RECORDS_PLATFORMATIC);
  if (worst.colFloor !== undefined) line(`compressed: kwire columns <= ${TARGET_COLUMNS_FLOOR}x the floor`, 'colFloor', TARGET_COLUMNS_FLOOR, false);
  if (worst.modNone !== undefined) line(`the export <= ${TARGET_MODULE_NONE}x native Go, none`, 'modNone', TARGET_MODULE_NONE, false);
  if (worst.modComp !== undefined) line(`the export <= ${TARGET_MODULE_COMPRESSED}x native Go, compressed`, 'modComp', TARGET_MODULE_COMPRESSED, false);
  if (worst.modGzZstd !== undefined) line(`the export <= ${TARGET_MODULE_INFLATE_ZSTD}x native Go, gzip and zstd`, 'modGzZstd', TARGET_MODULE_INFLATE_ZSTD, false);
}

if (results.length > 0) {
  const all = results.flatMap((r) => r.spread.map((s) => ({ ...s, where: `${r.codec}, ${KIND_LABEL[r.kind]}` })));
  const wide = all.reduce((a, b) => (b.x > a.x ? b : a));
  console.log(`Noise: slowest / fastest of a case's ${ROUNDS} rounds, median over the ${all.length} cases ${median(all.map((s) => s.x)).toFixed(2)}x, ` +
    `widest ${wide.x.toFixed(2)}x (${wide.name}, ${wide.where}); the machine's load average at the end: ${loadavg()[0].toFixed(1)} on ${availableParallelism()} CPUs`);
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
  console.log(`\nawait init() in a fresh Node process (kwire.wasm next to index.js): ` +
    `median ${median(times.map((t) => t.initMs)).toFixed(0)} ms (import of the package ${median(times.map((t) => t.importMs)).toFixed(0)} ms), 3 runs`);
}
if (failed) process.exit(1);
