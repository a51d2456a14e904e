// The inspector's browser test: serves bindings/js (inspector.html, the package and
// kwire-inspect.wasm) and examples/data on 127.0.0.1, opens the page in Debian's headless
// Chromium through playwright-core, and checks what it shows against the native kwire
// command on the same inputs: the project's committed capture (one table row per frame,
// in order, with the same direction, api, version and correlation id; a Produce
// request's and a Fetch response's records expanded, under the topic name their topic
// ids have in the capture's Metadata responses), a pasted hex request and a pasted
// base64 response. It saves a screenshot to build/js/inspector.png.
//
//   node test/browser/inspector.js KWIRE_BINARY
import { createServer } from 'node:http';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const PKG = fileURLToPath(new URL('../../', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const CHROMIUM = process.env.KWIRE_CHROMIUM || '/usr/bin/chromium';
const KWIRE = process.argv[2] || join(ROOT, 'build/kwire');
const CAPTURE = join(ROOT, 'examples/data/sample.pcap');
const SHOT = join(ROOT, 'build/js/inspector.png');
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm' };

for (const [what, path] of [['chromium', CHROMIUM], ['kwire', KWIRE], ['kwire-inspect.wasm', join(PKG, 'kwire-inspect.wasm')]]) {
  if (!existsSync(path)) {
    console.error(`inspector test: ${what} not found at ${path}`);
    process.exit(1);
  }
}

const server = createServer((req, res) => {
  const path = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
  const f = normalize(join(PKG, path));
  if (!f.startsWith(normalize(PKG)) || f.includes(sep + 'node_modules' + sep) || !existsSync(f)) {
    res.writeHead(404).end('not found');
    return;
  }
  res.writeHead(200, { 'content-type': TYPES[extname(f)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
  res.end(readFileSync(f));
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const origin = `http://127.0.0.1:${server.address().port}`;

// What the native command prints for the same inputs.
const lines = (args, input) => execFileSync(KWIRE, args, { input, maxBuffer: 1 << 28, stdio: 'pipe' }).toString()
  .split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
const native = lines(['pcap', CAPTURE]);
const produce = readFileSync(join(ROOT, 'examples/data/produce-request.bin'));
const fetchResp = readFileSync(join(ROOT, 'examples/data/fetch-response.bin'));

const profile = mkdtempSync(join(tmpdir(), 'kwire-chromium-'));
let context;
let passed = 0;
let failed = 0;
try {
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--no-first-run', '--disable-sync'],
    viewport: { width: 1400, height: 1000 },
    timeout: 60_000,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = [];
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  page.on('console', (m) => m.type() === 'error' && problems.push('console error: ' + m.text()));
  await page.goto(origin + '/inspector.html', { waitUntil: 'load' });
  try {
    await page.waitForFunction(() => window.kwireInspectorReady === true, null, { timeout: 60_000 });
  } catch (e) {
    throw new Error(`the page did not get ready (status: ${await page.textContent('#status')}; ${problems.join('; ')})`);
  }

  const rows = () => page.$$eval('#frames tbody tr.frame', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  const result = async () => {
    await page.waitForFunction(() => window.kwireInspector !== undefined, null, { timeout: 60_000 });
    return page.evaluate(() => { const r = window.kwireInspector; window.kwireInspector = undefined; return r; });
  };
  const check = async (name, fn) => {
    try {
      await fn();
      passed++;
      console.log(`ok: ${name}`);
    } catch (e) {
      failed++;
      console.log(`FAIL: ${name}\n${e.stack ?? e}`);
    }
  };

  // 1. The committed capture, dropped in through the file input.
  await page.setInputFiles('#file', CAPTURE);
  const r = await result();
  const got = await rows();
  await check('the capture: one row per frame kwire pcap prints', () => {
    assert.equal(r.error, undefined);
    assert.equal(r.errors, 0);
    assert.equal(got.length, native.length);
    assert.ok(got.length > 20, `only ${got.length} rows`);
  });
  await check('each row: direction, api, version, correlation id, size, connection as kwire pcap', () => {
    native.forEach((l, i) => {
      const [n, time, conn, dir, api, version, corr, size, latency] = got[i];
      assert.equal(n, String(i + 1));
      assert.equal(conn, l.conn, `row ${i + 1}`);
      assert.equal(dir, l.dir, `row ${i + 1}`);
      assert.ok(api.endsWith(`(${l.apiKey})`), `row ${i + 1}: ${api} for api key ${l.apiKey}`);
      assert.equal(version, String(l.apiVersion), `row ${i + 1}`);
      assert.equal(corr, String(l.correlationId), `row ${i + 1}`);
      assert.equal(size, String(l.size), `row ${i + 1}`);
      assert.equal(time, l.time.replace('T', ' ').replace('Z', ''), `row ${i + 1}`);
      assert.equal(latency === '', l.latencyUs === undefined, `row ${i + 1}: latency ${latency}`);
    });
  });
  const firstProduce = native.findIndex((l) => l.dir === 'request' && l.apiKey === 0);
  await check('a Produce request expands to its records and JSON tree', async () => {
    assert.ok(firstProduce >= 0, 'no Produce request in the capture');
    await page.locator('#frames tbody tr.frame').nth(firstProduce).click();
    const recs = await page.$$eval('tr.detail tr.record', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    const want = native[firstProduce].body.topicData[0].partitionData[0].records.batches[0].records;
    assert.equal(recs.length, want.length);
    assert.equal(recs[0][0], want[0].offset);
    assert.equal(recs[0][3], want[0].key.text);
    assert.equal(recs[0][4], want[0].value.text);
    const tree = await page.textContent('tr.detail .tree');
    assert.ok(tree.includes('header') && tree.includes('body'), tree.slice(0, 200));
  });
  await check('the Produce v13 request names its topic by id; the page shows the name the capture gives it', async () => {
    const topic = native[firstProduce].body.topicData[0];
    assert.ok(native[firstProduce].apiVersion >= 13 && typeof topic.topicId === 'string', JSON.stringify(topic).slice(0, 200));
    assert.equal(topic.name, 'orders', 'kwire pcap names the topic id');
    const batches = topic.partitionData[0].records.batches;
    const n = batches.reduce((s, b) => s + b.records.length, 0);
    assert.equal(await page.textContent('tr.detail .records-title'),
      `body.topicData[0].partitionData[0].records topic orders, partition 0: ${batches.length} batch${batches.length === 1 ? '' : 'es'}, ${n} record${n === 1 ? '' : 's'}`);
  });
  await check('the screenshot is saved', async () => {
    mkdirSync(join(ROOT, 'build/js'), { recursive: true });
    await page.screenshot({ path: SHOT, fullPage: false });
    assert.ok(readFileSync(SHOT).length > 10_000);
  });

  const firstFetch = native.findIndex((l) => l.dir === 'response' && l.apiKey === 1 && l.body.responses.some((t) => t.partitions.some((p) => p.records?.batches?.length)));
  await check('a Fetch response (topic ids only) shows its records under the topic name', async () => {
    assert.ok(firstFetch >= 0, 'no Fetch response with records in the capture');
    assert.ok(native[firstFetch].apiVersion >= 13 && native[firstFetch].body.responses[0].topic === 'orders');
    const row = page.locator('#frames tbody tr.frame').nth(firstFetch);
    await row.click();
    const titles = await row.locator('xpath=following-sibling::tr[1]').locator('.records-title').allTextContents();
    assert.ok(titles.length > 0 && titles.every((t) => / topic orders, partition \d+: /.test(t)), titles.join(' | '));
  });

  // 2. A pasted hex request.
  await page.fill('#frame', produce.toString('hex').replace(/(.{64})/g, '$1\n'));
  await page.check('input[name=dir][value=request]');
  await page.click('#decode');
  await result();
  await check('a pasted hex Produce request: one row, its two records', async () => {
    const g = await rows();
    assert.equal(g.length, 1);
    assert.deepEqual(g[0].slice(3, 8), ['request', 'Produce (0)', '9', '7', String(produce.length)]);
    await page.locator('#frames tbody tr.frame').first().click();
    const recs = await page.$$eval('tr.detail tr.record', (trs) => trs.map((tr) => tr.cells[4].textContent));
    assert.deepEqual(recs, ['orders/0 message 0', 'orders/0 message 1']);
    assert.match(await page.textContent('#status'), /^pasted frame: 1 frame$/);
  });

  // 3. A pasted base64 response, decoded as Fetch v12.
  await page.fill('#frame', fetchResp.toString('base64'));
  await page.check('input[name=dir][value=response]');
  await page.selectOption('#api', '1');
  await page.fill('#version', '12');
  await page.click('#decode');
  await result();
  await check('a pasted base64 Fetch v12 response: its records as kwire decode gives them', async () => {
    const g = await rows();
    assert.equal(g.length, 1);
    assert.deepEqual(g[0].slice(3, 7), ['response', 'Fetch (1)', '12', '8']);
    await page.locator('#frames tbody tr.frame').first().click();
    const recs = await page.$$eval('tr.detail tr.record', (trs) => trs.map((tr) => tr.cells[4].textContent));
    const want = [];
    const n = lines(['decode', '--response', 'Fetch:12'], fetchResp)[0];
    for (const t of n.body.responses) for (const p of t.partitions) for (const b of p.records.batches) for (const rec of b.records) want.push(rec.value.text);
    assert.deepEqual(recs, want);
    assert.ok(want.length >= 4);
  });

  // 3b. The same response pasted as a request: the error says what it looks like.
  await page.fill('#frame', fetchResp.toString('base64'));
  await page.check('input[name=dir][value=request]');
  await page.click('#decode');
  const asRequest = await result();
  await check('a response pasted as a request: its error says to try --response Fetch:12', async () => {
    assert.equal(asRequest.errors, 1);
    await page.locator('#frames tbody tr.frame').first().click();
    assert.match(await page.textContent('tr.detail p'), /^this looks like a response, not a request: try --response Fetch:12 \(as a request: /);
  });

  // 4. The capture dropped on the drop zone (a drop event carrying the file).
  await page.evaluate(async (b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([bytes], 'dropped.pcap'));
    document.getElementById('drop').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, readFileSync(CAPTURE).toString('base64'));
  const dropped = await result();
  await check('a capture dropped on the page: the same rows', async () => {
    assert.equal(dropped.frames, native.length);
    assert.deepEqual(await rows(), got);
    assert.match(await page.textContent('#status'), /^dropped\.pcap: /);
  });

  // 5. Not a capture: a clear error, no rows.
  await page.setInputFiles('#file', { name: 'junk.pcap', mimeType: 'application/octet-stream', buffer: Buffer.from('not a capture') });
  const bad = await result();
  await check('a file that is not a capture gets an error', async () => {
    assert.match(bad.error ?? '', /not a pcap or pcapng/);
    assert.match(await page.textContent('#status'), /not a pcap or pcapng/);
  });
  // 6. Crafted captures whose headers claim sizes they do not hold (4 GB snapshot
  // lengths, lying packet and block lengths, thousands of interfaces): each gives the
  // frames kwire pcap gives and, where kwire pcap fails, its error, and the module lives
  // on (the committed capture reads again after them).
  const HOSTILE = join(ROOT, 'cmd/kwire/testdata/hostile');
  const hostile = readdirSync(HOSTILE).sort();
  for (const name of hostile) {
    const file = join(HOSTILE, name);
    let want;
    let wantError = '';
    try {
      want = lines(['pcap', file]);
    } catch (e) {
      want = e.stdout.toString().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
      wantError = e.stderr.toString().trim().replace(`kwire: ${file}: `, '');
    }
    await page.setInputFiles('#file', file);
    const h = await result();
    await check(`crafted capture ${name}: ${want.length} frame${want.length === 1 ? '' : 's'}${wantError ? ', then the error' : ''} as kwire pcap`, async () => {
      assert.equal(h.frames ?? 0, want.length);
      if (wantError) assert.equal(h.error, wantError);
      else assert.equal(h.error, undefined);
    });
  }
  await check('there are crafted captures', () => assert.ok(hostile.length >= 10, hostile.join(' ')));
  await page.setInputFiles('#file', CAPTURE);
  const again = await result();
  await check('after the crafted captures, the committed capture reads as before', async () => {
    assert.equal(again.frames, native.length);
    assert.deepEqual(await rows(), got);
  });
  await check('no page errors', () => assert.deepEqual(problems, []));
} finally {
  await context?.close();
  server.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(`inspector: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
