// The browser test: serves the package (bindings/js), the sample frames and the vectors
// on 127.0.0.1, opens page.html in Debian's headless Chromium through playwright-core
// (never a downloaded browser) and checks what the page computes with the package
// against what Node computes with the same package.
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import * as kwire from '../../index.js';

const PKG = fileURLToPath(new URL('../../', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const CHROMIUM = process.env.KWIRE_CHROMIUM || '/usr/bin/chromium';
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm',
  '.json': 'application/json', '.jsonl': 'text/plain; charset=utf-8', '.bin': 'application/octet-stream' };
const MOUNTS = [['/pkg/', PKG], ['/data/', join(ROOT, 'examples/data/')], ['/vectors/', join(ROOT, 'conformance/vectors/')]];

if (!existsSync(CHROMIUM)) {
  console.error(`js-test-browser: ${CHROMIUM} not found (bash bindings/js/ci-install.sh installs Debian's chromium)`);
  process.exit(1);
}

const server = createServer((req, res) => {
  const path = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
  let file = null;
  if (path === '/') file = join(PKG, 'test/browser/page.html');
  for (const [prefix, dir] of MOUNTS) {
    if (path.startsWith(prefix)) {
      const f = normalize(join(dir, path.slice(prefix.length)));
      if (f.startsWith(normalize(dir)) && !f.includes(sep + 'node_modules' + sep)) file = f;
    }
  }
  if (file === null || !existsSync(file)) {
    res.writeHead(404).end('not found');
    return;
  }
  res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
  res.end(readFileSync(file));
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const origin = `http://127.0.0.1:${server.address().port}`;

const releases = readdirSync(join(ROOT, 'conformance/vectors')).map((f) => /^kafka-clients-(.+)\.jsonl$/.exec(f)?.[1]).filter(Boolean).sort();
const profile = mkdtempSync(join(tmpdir(), 'kwire-chromium-'));
let context;
let failed = false;
try {
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--no-first-run', '--disable-sync'],
    timeout: 60_000,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = [];
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  page.on('console', (m) => m.type() === 'error' && problems.push('console error: ' + m.text()));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  await page.goto(origin + '/', { waitUntil: 'load' });
  await page.waitForFunction(() => window.kwireReady === true, null, { timeout: 30_000 });
  const t0 = performance.now();
  const got = await page.evaluate((input) => window.kwireBrowserTest(input), { releases });
  const secs = ((performance.now() - t0) / 1000).toFixed(1);
  console.log(`browser: ${got.userAgent}`);

  // the same package in Node
  await kwire.init();
  const produce = readFileSync(join(ROOT, 'examples/data/produce-request.bin'));
  const resp = kwire.decodeResponse(readFileSync(join(ROOT, 'examples/data/fetch-response.bin')), 1, 12);
  const values = [];
  for (const t of resp.body.responses) for (const p of t.partitions) for (const r of kwire.decodeRecords(p.records).records) {
    values.push(`${t.topic}/${p.partitionIndex} ${r.offset} ${r.compression} ${new TextDecoder().decode(r.value)}`);
  }
  const checks = [
    ['the page has no Buffer (the browser code paths ran)', () => assert.equal(got.hasBuffer, false)],
    ['the Produce frame decodes as in Node', () => assert.deepEqual(got.request, kwire.decodeRequest(produce))],
    ['the Produce frame re-encodes to its bytes', () => assert.equal(got.requestReencodes, true)],
    ['peekHeader as in Node', () => assert.deepEqual(got.peek, kwire.peekHeader(produce))],
    ['the Fetch frame\'s 12 gzip/snappy/lz4/zstd records as in Node', () => { assert.equal(got.fetchValues.length, 12); assert.deepEqual(got.fetchValues, values); }],
    ['decodeFetch as in Node, through the frame-records calls (layouts 4 and 3) and the fallback (records and columns); encodeProduce/decodeProduce round trip', () => {
      assert.equal(got.hasFrameRecords, true);
      for (const path of ['frameRecords', 'layout3', 'fallback']) {
        assert.deepEqual(got.decodeFetch[path].vals, values, path);
        assert.deepEqual(got.decodeFetch[path].cols, values.map((v) => v.split(' ')[1] + ' ' + v.split(' ').slice(3).join(' ')), path);
        assert.deepEqual(got.produceRoundTrip[path], values.map((v) => v.split(' ').slice(3).join(' ')), path);
      }
    }],
    ['producer id 2^62+1 exact (records and body)', () => { assert.equal(got.producerId, '4611686018427387905'); assert.equal(got.producerIdBody, '4611686018427387905'); }],
    ['interop: a MetadataRequest v13 with 3 bytes after its body decodes, shows _trailingBytes, re-encodes; a response with an extra byte is refused', () => {
      assert.deepEqual(got.trailingBytes, []);
      assert.equal(got.trailingShown, 'AAEC');
    }],
    ['errors are KwireError subclasses with status and text', () => assert.deepEqual({ ...got.error, text: got.error.text.slice(0, 7) }, { name: 'KwireDecodeError', isKwireError: true, status: -2, text: 'kwire: ' })],
    ...got.conformance.map((c) => [`kafka-clients ${c.release}: one vector per (message, version, kind), ${c.vectors} vectors, 0 failures`, () => {
      console.log(c.table);
      assert.ok(c.vectors > 500 && c.vectors === c.triples, `${c.vectors} vectors for ${c.triples} triples`);
      assert.equal(c.failedCount, 0, JSON.stringify(c.failures, null, 1));
    }]),
    [`${got.recordVectors} record-batch vectors, 0 failures`, () => { assert.ok(got.recordVectors >= 20); assert.deepEqual(got.recordFailures, []); }],
    [`record table layout 4 (columns) as layout 3: ${got.layoutFrames} frames, the same records, columns and errors`, () => {
      assert.equal(got.layout, 4);
      assert.ok(got.layoutFrames > 60);
      assert.deepEqual(got.layoutFailures, []);
    }],
    ['no page errors, console errors or failed requests', () => assert.deepEqual(problems, [])],
  ];
  let pass = 0;
  for (const [name, f] of checks) {
    try {
      f();
      pass++;
      console.log(`ok   ${name}`);
    } catch (e) {
      failed = true;
      console.log(`FAIL ${name}\n${e.message}`);
    }
  }
  console.log(`js-test-browser: ${pass} passed, ${checks.length - pass} failed (page work ${secs} s)`);
} catch (e) {
  failed = true;
  console.log('js-test-browser: ' + (e.stack || e));
} finally {
  await context?.close().catch(() => {});
  server.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
