// Session against a real Apache Kafka broker (started once for this file with
// conformance/broker/cmd/kwire-broker, stopped in `after`, also when a test fails): the
// round trip the Go connection's tests make. Negotiation (and a forced
// UNSUPPORTED_VERSION), CreateTopics, Produce of batches built with encodeRecords in every
// compression, Fetch and exact contents, five requests in flight, counters equal to the
// socket's bytes, a dead socket, and the same session over TLS (node:tls: any byte stream).
//
// The release is Kafka 4.4.0, or KWIRE_BROKER_VERSION (session-broker-3.9.2.test.js runs
// this file against 3.9.2). Needs Go, Java 17 and the broker's jars (make broker-deps). Without Java or the jars the
// tests are skipped, unless KWIRE_REQUIRE_BROKER=1 (set by make), which fails them instead.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import tls from 'node:tls';
import * as kwire from '../index.js';

const { Session, ConnectionClosedError } = kwire;
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const VERSION = process.env.KWIRE_BROKER_VERSION || '4.4.0';
const k = await kwire.init();
const kwMax = (key) => k.apis().find((a) => a.apiKey === key).maxVersion;

let broker = null; // { info, child, stderr }
let unavailable = null;

// startBroker builds the launcher command and starts one broker; resolves with the JSON
// line it prints.
async function startBroker() {
  const dir = mkdtempSync(join(tmpdir(), 'kwire-js-broker-'));
  const bin = join(dir, 'kwire-broker');
  try {
    execFileSync(process.env.GO || 'go', ['build', '-o', bin, './conformance/broker/cmd/kwire-broker'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const child = spawn(bin, ['-version', VERSION], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  const b = { child, stderr: '', info: null, dir, exited: new Promise((resolve) => child.once('exit', (code, sig) => resolve({ code, sig }))) };
  child.stderr.on('data', (d) => (b.stderr = (b.stderr + d).slice(-16384)));
  broker = b;
  const line = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const i = out.indexOf('\n');
      if (i >= 0) resolve(out.slice(0, i));
    });
    b.exited.then(({ code }) => reject(Object.assign(new Error(`kwire-broker exited with ${code} before serving:\n${b.stderr}`), { code })));
  });
  b.info = JSON.parse(line);
  assert.equal(b.info.version, VERSION);
  return b;
}

async function stopBroker() {
  const b = broker;
  if (b === null) return;
  broker = null;
  b.child.stdin.end(); // the launcher stops the broker when stdin closes
  const timer = setTimeout(() => b.child.kill('SIGKILL'), 60000);
  const { code } = await b.exited;
  clearTimeout(timer);
  rmSync(b.dir, { recursive: true, force: true });
  if (code !== 0 && code !== null) throw new Error(`kwire-broker exited with ${code}:\n${b.stderr}`);
}

before(async () => {
  try {
    await startBroker();
  } catch (err) {
    if (err.code === 3 && process.env.KWIRE_REQUIRE_BROKER !== '1') unavailable = err.message;
    else throw err;
  }
}, { timeout: 240000 });

after(stopBroker, { timeout: 90000 });

function brokerTest(name, fn) {
  test(`${name} (Kafka ${VERSION})`, { timeout: 120000 }, (t) => {
    if (unavailable !== null) return t.skip(`no Kafka broker (set KWIRE_REQUIRE_BROKER=1 to fail instead): ${unavailable}`);
    return fn(t);
  });
}

function addr() {
  const [host, port] = broker.info.addr.split(':');
  return [host, Number(port)];
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let topicSeq = 0;

async function createTopic(s, prefix) {
  const name = `${prefix}-${process.pid}-${++topicSeq}`;
  const r = await s.request(19, { topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30000, validateOnly: false });
  const t = r.body.topics[0];
  assert.equal(t.errorCode, 0, `CreateTopics ${name}: error ${t.errorCode} ${t.errorMessage}`);
  assert.ok(t.topicId && t.topicId !== 'AAAAAAAAAAAAAAAAAAAAAA', 'CreateTopics returned no topic id');
  return { name, id: t.topicId };
}

// Kafka's retriable error codes (codec/kerr lists them): a new partition electing its
// leader, a topic id not known yet on the broker's metadata, ...
const RETRIABLE = new Set([2, 3, 5, 6, 7, 9, 13, 15, 16, 19, 41, 51, 56, 70, 71, 72, 74, 75, 78, 84, 88, 89, 100, 103, 122, 123, 133]);

async function produce(s, tp, records, compression) {
  const batch = k.encodeRecords(records, { compression });
  for (let attempt = 0; ; attempt++) {
    const r = await s.request(0, { transactionalId: null, acks: -1, timeoutMs: 30000, topicData: [{ name: tp.name, topicId: tp.id, partitionData: [{ index: 0, records: batch }] }] });
    const p = r.body.responses[0].partitionResponses[0];
    if (p.errorCode === 0) return BigInt(p.baseOffset);
    if (!RETRIABLE.has(p.errorCode) || attempt > 50) assert.fail(`Produce v${r.apiVersion} to ${tp.name}: error ${p.errorCode}`);
    await sleep(100);
  }
}

function fetchBody(tp, offset, maxWaitMs = 500) {
  return {
    replicaId: -1, maxWaitMs, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic: tp.name, topicId: tp.id, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: String(offset), lastFetchedEpoch: -1, logStartOffset: '-1', partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [], rackId: '',
  };
}

async function fetchRecords(s, tp, offset) {
  const r = await s.request(1, fetchBody(tp, offset));
  assert.equal(r.body.errorCode, 0);
  const out = [];
  for (const t of r.body.responses) {
    for (const p of t.partitions) {
      assert.equal(p.errorCode, 0, `Fetch ${tp.name}/${p.partitionIndex}: error ${p.errorCode}`);
      for (const rec of k.decodeRecords(p.records, { copy: true }).records) if (rec.offset >= offset && !rec.control) out.push(rec);
    }
  }
  return out;
}

const te = new TextEncoder();
// An ApiVersions body: the session fills clientSoftwareName and clientSoftwareVersion
// (kwire-js and the package's version), which Kafka requires from v3 on.
const AV = {};
const bytesOrNull = (v) => (v === null ? null : te.encode(v));

brokerTest('negotiation: ApiVersions at kwire\'s highest, every api at min(kwire, broker)', async () => {
  const s = await Session.connect(...addr(), { kwire: k, clientId: 'kwire-js-test' });
  try {
    assert.equal(s.negotiated, true);
    const av = await s.request(18, {}); // without the filled fields: INVALID_REQUEST and no apis
    assert.equal(av.apiVersion, s.versionFor(18));
    assert.ok(av.apiVersion >= 3);
    assert.equal(av.body.errorCode, 0);
    const table = av.body.apiKeys;
    // A broker that knows less than kwire's ApiVersions version is asked once more, at its highest.
    const brokerMax = table.find((a) => a.apiKey === 18).maxVersion;
    assert.deepEqual(s.negotiationVersions, brokerMax < kwMax(18) ? [kwMax(18), brokerMax] : [kwMax(18)]);
    assert.ok(table.length >= 20, `broker lists ${table.length} apis`);
    let checked = 0;
    for (const b of table) {
      const api = k.apis().find((a) => a.apiKey === b.apiKey);
      if (!api) continue;
      const lo = Math.max(api.minVersion, b.minVersion);
      const hi = Math.min(api.maxVersion, b.maxVersion);
      if (hi < lo) {
        assert.throws(() => s.versionFor(b.apiKey), kwire.KwireVersionError);
        continue;
      }
      assert.equal(s.versionFor(b.apiKey), hi, `${api.name}`);
      checked++;
    }
    assert.ok(checked >= 20);
    const md = await s.request(3, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    assert.equal(md.apiVersion, s.versionFor(3));
    assert.equal(md.body.brokers.length, 1);
    assert.equal(`${md.body.brokers[0].host}:${md.body.brokers[0].port}`, broker.info.addr);
  } finally {
    s.close();
  }
});

brokerTest('Metadata: topics null lists every topic, topics [] none (as the READMEs say)', async () => {
  const s = await Session.connect(...addr(), { kwire: k });
  try {
    const tp = await createTopic(s, 'js-metadata');
    let all;
    for (let i = 0; i < 50; i++) { // the broker's metadata cache learns the new topic soon after CreateTopics
      all = await s.request(3, { topics: null });
      if (all.body.topics.some((t) => t.name === tp.name)) break;
      await sleep(100);
    }
    assert.ok(all.apiVersion >= 1);
    assert.ok(all.body.topics.some((t) => t.name === tp.name), `topics: null lists ${all.body.topics.map((t) => t.name)}`);
    const none = await s.request(3, { topics: [] });
    assert.deepEqual(none.body.topics, []);
    assert.equal(none.body.brokers.length, 1);
  } finally {
    s.close();
  }
});

brokerTest('forced UNSUPPORTED_VERSION: bootstrap above kwire\'s highest, one retry at the broker\'s', async () => {
  const above = kwMax(18) + 1;
  const s = await Session.connect(...addr(), { kwire: k, bootstrapVersion: above });
  try {
    const av = await s.request(18, AV);
    assert.equal(av.body.errorCode, 0);
    const brokerMax = av.body.apiKeys.find((a) => a.apiKey === 18).maxVersion;
    assert.deepEqual(s.negotiationVersions, [above, Math.min(kwMax(18), brokerMax)]);
  } finally {
    s.close();
  }
});

brokerTest('round trip: CreateTopics, Produce in every compression, Fetch back exact contents', async () => {
  const s = await Session.connect(...addr(), { kwire: k });
  try {
    const tp = await createTopic(s, 'js-compression');
    const comps = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
    const want = [];
    const ts = 1700000000000;
    for (const [ci, comp] of comps.entries()) {
      const recs = [];
      for (let i = 0; i < 20; i++) {
        recs.push({
          key: i === 3 ? null : `${comp}-key-${i}`,
          value: i === 4 ? null : `${comp} value ${i}; `.repeat(1 + i),
          timestamp: ts + ci * 100 + i,
          headers: [['codec', comp], ['null', null]],
        });
      }
      const base = await produce(s, tp, recs, comp);
      assert.equal(base, BigInt(ci * 20), `${comp} batch offset`);
      for (const r of recs) want.push({ ...r, compression: comp });
    }
    const got = [];
    while (got.length < want.length) {
      const recs = await fetchRecords(s, tp, BigInt(got.length));
      assert.ok(recs.length > 0, `fetch from ${got.length} returned nothing`);
      got.push(...recs);
    }
    assert.equal(got.length, want.length);
    for (const [i, w] of want.entries()) {
      const g = got[i];
      assert.equal(g.offset, BigInt(i));
      assert.equal(g.compression, w.compression, `record ${i}`);
      assert.equal(g.timestamp, BigInt(w.timestamp));
      assert.deepEqual(g.key, bytesOrNull(w.key), `record ${i} key`);
      assert.deepEqual(g.value, bytesOrNull(w.value), `record ${i} value`);
      assert.deepEqual(g.headers.map((h) => [h.key, h.value]), [['codec', te.encode(w.compression)], ['null', null]], `record ${i} headers`);
    }
  } finally {
    s.close();
  }
});

// Five requests in flight, measured: responses are held back (not fed) while five
// requests are written; the broker answers all five before the session has read any.
brokerTest('five requests in flight on one connection, answered in order', async () => {
  const socket = net.connect({ host: addr()[0], port: addr()[1], noDelay: true });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let gate = null; // null: fed at once; an array: held back
  const s = new Session(k, (b) => void socket.write(b));
  socket.on('data', (d) => (gate === null ? s.feed(d) : gate.push(d)));
  socket.on('close', () => s.end());
  const open = () => {
    const held = gate;
    gate = null;
    for (const d of held) s.feed(d);
  };
  try {
    await s.negotiate();
    const tp = await createTopic(s, 'js-inflight');
    await produce(s, tp, [{ key: 'k', value: 'in flight', timestamp: 1 }], 'none');
    gate = [];
    const sent = s.counters().requestsSent;
    const ps = [
      s.request(18, AV),
      s.request(3, { topics: [{ name: tp.name, topicId: tp.id }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }),
      s.request(1, fetchBody(tp, 0)),
      s.request(18, AV),
      s.request(3, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }),
    ];
    // Wait until the five answers have arrived on the socket (complete frames held back).
    const frames = () => {
      const b = Buffer.concat(gate);
      let n = 0;
      for (let at = 0; at + 4 <= b.length && at + 4 + b.readInt32BE(at) <= b.length; at += 4 + b.readInt32BE(at)) n++;
      return n;
    };
    for (let i = 0; frames() < 5; i++) {
      assert.ok(i < 600, `only ${frames()} answers arrived`);
      await sleep(50);
    }
    const c = s.counters();
    assert.equal(c.requestsSent - sent, 5);
    assert.equal(c.pending, 5, 'five requests pending while all five answers sit unread on the socket');
    open();
    const rs = await Promise.all(ps);
    assert.deepEqual(rs.map((r) => r.apiKey), [18, 3, 1, 18, 3]);
    assert.deepEqual(rs.map((r) => r.body.errorCode ?? 0), [0, 0, 0, 0, 0]);
    const corrs = rs.map((r) => r.correlationId);
    assert.deepEqual(corrs, [...corrs].sort((a, b) => a - b));
    assert.equal(k.decodeRecords(rs[2].body.responses[0].partitions[0].records).records[0].value.length, 9);
    assert.equal(s.counters().pending, 0);
  } finally {
    s.close();
    socket.destroy();
  }
});

brokerTest('counters equal the bytes on the socket', async () => {
  const s = await Session.connect(...addr(), { kwire: k });
  try {
    const tp = await createTopic(s, 'js-counters');
    await produce(s, tp, [{ value: 'counted' }], 'gzip');
    await fetchRecords(s, tp, 0n);
    await Promise.all(Array.from({ length: 10 }, () => s.request(18, AV)));
    const c = s.counters();
    assert.equal(c.bytesSent, s.socket.bytesWritten);
    assert.equal(c.bytesReceived, s.socket.bytesRead);
    assert.equal(c.requestsSent, c.responsesReceived);
    assert.ok(c.requestsSent >= 14);
  } finally {
    s.close();
  }
});

brokerTest('a socket that dies rejects every pending request with ConnectionClosedError, later calls at once', async () => {
  const s = await Session.connect(...addr(), { kwire: k });
  const tp = await createTopic(s, 'js-dead');
  await produce(s, tp, [{ value: 'x' }], 'none');
  // Offset 1: nothing there yet, the broker holds these for 10 s.
  const ps = [s.request(1, fetchBody(tp, 1, 10000)), s.request(1, fetchBody(tp, 1, 10000))];
  const t0 = Date.now();
  s.socket.destroy();
  for (const p of ps) await assert.rejects(p, (e) => e instanceof ConnectionClosedError && /closed/.test(e.message));
  assert.ok(Date.now() - t0 < 5000);
  await assert.rejects(s.request(18, AV), ConnectionClosedError);
  assert.equal(s.closed, true);
});

brokerTest('the same session over TLS (node:tls as a byte stream)', async () => {
  const [host, port] = broker.info.listeners.SSL.split(':');
  const socket = tls.connect({ host, port: Number(port), ca: broker.info.certPEM, servername: 'localhost' });
  await new Promise((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
  const s = await Session.create((b) => void socket.write(b), { kwire: k });
  socket.on('data', (d) => s.feed(d));
  socket.on('close', () => s.end());
  let tp;
  try {
    await s.negotiate();
    tp = await createTopic(s, 'js-tls');
    await produce(s, tp, [{ key: 'tls', value: 'over TLS', timestamp: 5 }], 'lz4');
    const recs = await fetchRecords(s, tp, 0n);
    assert.equal(recs.length, 1);
    assert.deepEqual(recs[0].value, te.encode('over TLS'));
  } finally {
    s.close();
    socket.destroy();
  }
  // Session.connect's own TLS option.
  const s2 = await Session.connect(host, Number(port), { kwire: k, tls: { ca: broker.info.certPEM, servername: 'localhost' } });
  try {
    assert.equal(s2.negotiated, true);
    assert.deepEqual((await fetchRecords(s2, tp, 0n)).map((r) => r.value), [te.encode('over TLS')]);
    assert.ok(s2.socket.encrypted);
  } finally {
    s2.close();
  }
});

// SASL is two requests the caller sends through the session: SaslHandshake, then
// SaslAuthenticate with the mechanism's bytes (PLAIN: "\0user\0password").
brokerTest('SASL PLAIN through the session; a wrong password is refused and the broker closes', async () => {
  const [host, port] = broker.info.listeners.SASL_PLAINTEXT.split(':');
  const [user, password] = broker.info.users.PLAIN;
  const login = async (pw) => {
    const s = await Session.connect(host, Number(port), { kwire: k });
    const hs = await s.request(17, { mechanism: 'PLAIN' });
    assert.equal(hs.body.errorCode, 0);
    assert.ok(hs.body.mechanisms.includes('PLAIN'));
    return [s, await s.request(36, { authBytes: te.encode(`\0${user}\0${pw}`) })];
  };
  const [s, ok] = await login(password);
  try {
    assert.equal(ok.body.errorCode, 0, ok.body.errorMessage);
    const md = await s.request(3, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    assert.equal(md.body.brokers.length, 1);
  } finally {
    s.close();
  }
  const [bad, refused] = await login(password + 'x');
  assert.equal(refused.body.errorCode, 58); // SASL_AUTHENTICATION_FAILED
  assert.match(refused.body.errorMessage, /[Aa]uthentication failed/);
  await assert.rejects(bad.request(18, AV), ConnectionClosedError); // the broker closed the connection
  bad.close();
});
