// SASL, re-authentication (KIP-368), request timeouts and reconnection against real
// Apache Kafka brokers: one 4.4.0 and one 3.9.2, started side by side for this file with
// conformance/broker/cmd/kwire-broker -reauth-ms 4000, and every scenario run against
// both at once:
//
// - PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER on SASL_PLAINTEXT and SASL_SSL; a
//   wrong password for each; an expired token; a failing token callback;
// - a request to a paused broker (SIGSTOP) times out, the next one works;
// - 30 s of requests over two connections (SCRAM-SHA-512 on SASL_SSL, OAUTHBEARER on
//   SASL_PLAINTEXT) with re-authentication every ~3.6 s: none fails, every record comes
//   back in order, and the SaslHandshake and SaslAuthenticate frames written to the
//   socket are counted;
// - the broker restarted under a ReconnectingSession: the requests in flight fail, the
//   session carries on with a new, re-authenticated connection.
//
// Needs Go, Java 17 and the broker's jars. Without Java or the jars the tests are
// skipped, unless KWIRE_REQUIRE_BROKER=1 (set by make), which fails them instead.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as kwire from '../index.js';

const { Session, ReconnectingSession, ConnectionClosedError, TimeoutError, AuthenticationError } = kwire;
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const VERSIONS = ['4.4.0', '3.9.2'];
const REAUTH_MS = 4000;
const REAUTH_LOG = 'Beginning re-authentication'; // the broker's debug line (conformance/broker ReauthLogLine)
const LOAD_MS = Number(process.env.KWIRE_REAUTH_DURATION_MS || 30000);
const k = await kwire.init();

const brokers = new Map(); // version -> launcher
let unavailable = null;
let dir = null;

// Launcher: one kwire-broker process; command() writes a stdin command and resolves with
// its JSON answer line.
class Launcher {
  constructor(bin, version) {
    this.version = version;
    this.child = spawn(bin, ['-version', version, '-reauth-ms', String(REAUTH_MS)], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    this.stderr = '';
    this.lines = [];
    this.waiters = [];
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
    this.child.stderr.on('data', (d) => (this.stderr = (this.stderr + d).slice(-16384)));
    let out = '';
    this.child.stdout.on('data', (d) => {
      out += d;
      for (let i; (i = out.indexOf('\n')) >= 0; ) {
        const line = out.slice(0, i);
        out = out.slice(i + 1);
        const w = this.waiters.shift();
        if (w) w.resolve(line);
        else this.lines.push(line);
      }
    });
    this.exited.then((code) => {
      for (const w of this.waiters.splice(0)) w.reject(Object.assign(new Error(`kwire-broker ${version} exited with ${code}:\n${this.stderr}`), { code }));
    });
  }

  nextLine() {
    if (this.lines.length > 0) return Promise.resolve(this.lines.shift());
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  async start() {
    this.info = JSON.parse(await this.nextLine());
    assert.equal(this.info.version, this.version);
    assert.equal(this.info.reauthMs, REAUTH_MS);
  }

  async command(cmd) {
    this.child.stdin.write(cmd + '\n');
    const r = JSON.parse(await this.nextLine());
    if (r.error) throw new Error(`kwire-broker ${this.version} ${cmd}: ${r.error}`);
    return r;
  }

  async stop() {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 60000);
    const code = await this.exited;
    clearTimeout(timer);
    if (code !== 0 && code !== null) throw new Error(`kwire-broker ${this.version} exited with ${code}:\n${this.stderr}`);
  }

  addr(listener) {
    const [host, port] = this.info.listeners[listener].split(':');
    return { host, port: Number(port) };
  }

  tls() {
    return { ca: this.info.certPEM, servername: 'localhost' };
  }
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kwire-js-sasl-'));
  const bin = join(dir, 'kwire-broker');
  execFileSync(process.env.GO || 'go', ['build', '-o', bin, './conformance/broker/cmd/kwire-broker'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  const ls = VERSIONS.map((v) => new Launcher(bin, v));
  for (const l of ls) brokers.set(l.version, l);
  const results = await Promise.allSettled(ls.map((l) => l.start()));
  for (const r of results) {
    if (r.status === 'rejected') {
      if (r.reason.code === 3 && process.env.KWIRE_REQUIRE_BROKER !== '1') unavailable = r.reason.message;
      else throw r.reason;
    }
  }
}, { timeout: 240000 });

after(async () => {
  await Promise.all([...brokers.values()].map((l) => l.stop()));
  if (dir !== null) rmSync(dir, { recursive: true, force: true });
}, { timeout: 120000 });

// bothVersions runs fn(launcher) against both brokers at once.
function bothVersions(name, fn, timeout = 120000) {
  test(name, { timeout }, async (t) => {
    if (unavailable !== null) return t.skip(`no Kafka broker (set KWIRE_REQUIRE_BROKER=1 to fail instead): ${unavailable}`);
    const results = await Promise.allSettled(VERSIONS.map((v) => fn(brokers.get(v), t)));
    const failed = results.map((r, i) => [VERSIONS[i], r]).filter(([, r]) => r.status === 'rejected');
    if (failed.length > 0) {
      const [v, r] = failed[0];
      r.reason.message = `Kafka ${v}: ${r.reason.message}`;
      throw r.reason;
    }
  });
}

function b64url(s) {
  return Buffer.from(s).toString('base64url');
}

// unsignedJWT: a token for Kafka's unsecured OAUTHBEARER validator.
function unsignedJWT(sub, ttlSeconds) {
  const now = Math.floor(Date.now() / 1000);
  return `${b64url('{"alg":"none"}')}.${b64url(JSON.stringify({ sub, iat: now, exp: now + ttlSeconds }))}.`;
}

function saslFor(b, mech, tokens) {
  if (mech === 'OAUTHBEARER') {
    return { mechanism: mech, token: async () => {
      if (tokens) tokens.n++;
      return unsignedJWT('kwire-js', 3600);
    } };
  }
  const [username, password] = b.info.users[mech];
  return { mechanism: mech, username, password };
}

function connect(b, listener, sasl, extra = {}) {
  return Session.connect({ ...b.addr(listener), ...(listener === 'SASL_SSL' ? { tls: b.tls() } : {}), sasl, ...extra });
}

const METADATA = { topics: [] };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let topicSeq = 0;

async function createTopic(s, prefix) {
  const name = `${prefix}-${process.pid}-${++topicSeq}`;
  const r = await s.request(19, { topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30000, validateOnly: false });
  assert.equal(r.body.topics[0].errorCode, 0, `CreateTopics ${name}: ${r.body.topics[0].errorMessage}`);
  return { name, id: r.body.topics[0].topicId };
}

const RETRIABLE = new Set([3, 5, 6, 7, 9, 100]);
async function produce(s, tp, value) {
  const batch = k.encodeRecords([{ value, timestamp: BigInt(Date.now()) }]);
  for (let attempt = 0; ; attempt++) {
    const r = await s.request(0, { transactionalId: null, acks: -1, timeoutMs: 30000, topicData: [{ name: tp.name, topicId: tp.id, partitionData: [{ index: 0, records: batch }] }] });
    const p = r.body.responses[0].partitionResponses[0];
    if (p.errorCode === 0) return Number(p.baseOffset);
    if (!RETRIABLE.has(p.errorCode) || attempt > 50) assert.fail(`Produce to ${tp.name}: error ${p.errorCode}`);
    await sleep(100);
  }
}

async function fetchAll(s, tp, n) {
  const out = [];
  while (out.length < n) {
    const r = await s.request(1, { replicaId: -1, maxWaitMs: 100, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: tp.name, topicId: tp.id, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: out.length, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: 1 << 20 }] }],
      forgottenTopicsData: [], rackId: '' });
    const p = r.body.responses[0].partitions[0];
    assert.equal(p.errorCode, 0, `Fetch ${tp.name} from ${out.length}: error ${p.errorCode}`);
    if (!p.records) break;
    const recs = k.decodeRecords(p.records).records.filter((x) => Number(x.offset) >= out.length);
    if (recs.length === 0) break;
    for (const x of recs) out.push(Buffer.from(x.value).toString());
  }
  return out;
}

// countFrames counts the request frames written to a session's socket, by api key (the
// session writes whole frames; under TLS this is the plaintext side of the socket).
function countFrames(s) {
  const counts = new Map();
  const write = s.socket.write.bind(s.socket);
  s.socket.write = (chunk, ...rest) => {
    if (chunk && chunk.length >= 6) {
      const key = (chunk[4] << 8) | chunk[5];
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return write(chunk, ...rest);
  };
  return (key) => counts.get(key) ?? 0;
}

bothVersions('every mechanism on SASL_PLAINTEXT and SASL_SSL; a wrong password; a refused token', async (b) => {
  for (const mech of b.info.mechanisms) {
    for (const listener of ['SASL_PLAINTEXT', 'SASL_SSL']) {
      const s = await connect(b, listener, saslFor(b, mech));
      const r = await s.request(3, METADATA);
      assert.equal(r.body.brokers.length, 1, `${mech}/${listener}: Metadata`);
      assert.equal(s.stats().sessionLifetimeMs > 0 && s.stats().sessionLifetimeMs <= REAUTH_MS, true, `${mech}: session lifetime ${s.stats().sessionLifetimeMs}`);
      s.close();
    }
    if (mech === 'OAUTHBEARER') continue;
    const [username, password] = b.info.users[mech];
    await assert.rejects(connect(b, 'SASL_PLAINTEXT', { mechanism: mech, username, password: password + '-wrong' }), (err) => {
      assert.ok(err instanceof AuthenticationError, `${mech}: ${err}`);
      assert.equal(err.errorCode, 58);
      assert.ok(!err.message.includes(password), 'the error shows the password');
      return true;
    });
  }
  await assert.rejects(connect(b, 'SASL_PLAINTEXT', { mechanism: 'OAUTHBEARER', token: async () => unsignedJWT('kwire-js', -3600) }), (err) => {
    assert.ok(err instanceof AuthenticationError && err.errorCode === 58 && /invalid_token/.test(err.message), String(err));
    return true;
  });
  await assert.rejects(connect(b, 'SASL_PLAINTEXT', { mechanism: 'OAUTHBEARER', token: async () => { throw new Error('identity provider down'); } }),
    /token callback failed: identity provider down/);
  await assert.rejects(connect(b, 'SASL_PLAINTEXT', { mechanism: 'GSSAPI', username: 'u', password: 'p' }), /kwire supports PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER/);
  // Without SASL, a SASL listener refuses Metadata by closing the connection.
  const raw = await Session.connect(b.addr('SASL_PLAINTEXT'));
  await assert.rejects(raw.request(3, METADATA), ConnectionClosedError);
});

bothVersions('a request to a paused broker times out; the next one on the same session works', async (b) => {
  const s = await connect(b, 'SASL_PLAINTEXT', saslFor(b, 'PLAIN'));
  await b.command('pause');
  let paused = true;
  try {
    const t0 = Date.now();
    await assert.rejects(s.request(3, METADATA, { timeoutMs: 500 }), TimeoutError);
    const took = Date.now() - t0;
    assert.ok(took >= 450 && took < 3000, `timed out after ${took} ms`);
    await b.command('continue');
    paused = false;
    const r = await s.request(3, METADATA, { timeoutMs: 10000 });
    assert.equal(r.body.brokers.length, 1);
    assert.equal(s.stats().dropped, 1, 'the late response is dropped');
    assert.equal(s.closed, false);
  } finally {
    if (paused) await b.command('continue');
    s.close();
  }
});

bothVersions(`${LOAD_MS / 1000} s of requests across re-authentications: none lost, none failed`, async (b) => {
  const setups = [
    { name: 'SCRAM-SHA-512/SASL_SSL', listener: 'SASL_SSL', mech: 'SCRAM-SHA-512', steps: 2 },
    { name: 'OAUTHBEARER/SASL_PLAINTEXT', listener: 'SASL_PLAINTEXT', mech: 'OAUTHBEARER', steps: 1 },
  ];
  const logLinesBefore = (await b.command(`count ${REAUTH_LOG}`)).count;
  let reauths = 0;
  await Promise.all(setups.map(async (st) => {
    const tokens = { n: 0 };
    const s = await connect(b, st.listener, saslFor(b, st.mech, tokens), { requestTimeoutMs: 10000 });
    const frames = countFrames(s);
    const tp = await createTopic(s, 'reauth');
    const stop = Date.now() + LOAD_MS;
    let requests = 0;
    const loaders = [0, 1].map(async () => {
      while (Date.now() < stop) {
        await s.request(3, METADATA);
        requests++;
        await sleep(5);
      }
    });
    let n = 0;
    while (Date.now() < stop) {
      await produce(s, tp, String(n++));
      requests++;
      await sleep(20);
    }
    await Promise.all(loaders);
    const got = await fetchAll(s, tp, n);
    assert.equal(got.length, n, `${st.name}: fetched ${got.length} of ${n} records`);
    got.forEach((v, i) => assert.equal(v, String(i), `${st.name}: record ${i}`));
    const stats = s.stats();
    const hs = frames(17);
    const auth = frames(36);
    console.log(`Kafka ${b.version} ${st.name}: ${LOAD_MS / 1000} s, ${requests} requests (${n} records), none failed; re-authentications ${stats.reauthentications}; ` +
      `written to the socket after connecting: ${hs} SaslHandshake, ${auth} SaslAuthenticate; SaslAuthenticate sent in all ${stats.saslAuthenticates}; session lifetime ${stats.sessionLifetimeMs} ms`);
    assert.ok(stats.reauthentications >= Math.floor(LOAD_MS / REAUTH_MS / 2), `${st.name}: ${stats.reauthentications} re-authentications`);
    if (LOAD_MS >= 30000) assert.ok(stats.reauthentications >= 5, `${st.name}: ${stats.reauthentications} re-authentications`);
    assert.equal(hs, stats.reauthentications, `${st.name}: SaslHandshake frames`);
    assert.equal(auth, st.steps * stats.reauthentications, `${st.name}: SaslAuthenticate frames`);
    assert.equal(stats.saslAuthenticates, st.steps * (stats.reauthentications + 1));
    if (st.mech === 'OAUTHBEARER') assert.equal(tokens.n, stats.reauthentications + 1, 'one token per authentication');
    assert.equal(s.closed, false);
    reauths += stats.reauthentications;
    s.close();
  }));
  const logLines = (await b.command(`count ${REAUTH_LOG}`)).count - logLinesBefore;
  console.log(`Kafka ${b.version}: broker log lines "${REAUTH_LOG}" during the run: ${logLines}; the sessions counted ${reauths}`);
  assert.equal(logLines, reauths, 'the broker logged as many re-authentications as the sessions made');
}, LOAD_MS + 120000);

bothVersions('broker restart: the reconnecting session carries on, re-authenticated', async (b) => {
  const r = await ReconnectingSession.connect({ ...b.addr('SASL_PLAINTEXT'), sasl: saslFor(b, 'SCRAM-SHA-256'), requestTimeoutMs: 60000,
    reconnect: { initialDelayMs: 100, maxDelayMs: 1000 } });
  try {
    const tp = await createTopic(r.session, 'restart');
    await produce(r, tp, 'before');
    const first = r.session;
    const failures = [];
    let ok = 0;
    let restarted = false;
    const restart = b.command('restart').then(() => (restarted = true));
    // Requests keep coming through the restart: those on the dying connection fail with
    // ConnectionClosedError, later ones wait for the new connection.
    while (!restarted || ok === 0 || r.session === first) {
      try {
        await r.request(3, METADATA);
        if (restarted) ok++;
      } catch (err) {
        assert.ok(err instanceof ConnectionClosedError || err instanceof TimeoutError, `request during the restart: ${err}`);
        failures.push(err.name);
      }
      await sleep(20);
    }
    await restart;
    assert.ok(r.reconnects >= 1, 'reconnected');
    assert.notEqual(r.session, first);
    assert.equal(r.session.stats().saslAuthenticates, 2, 'the new connection authenticated with SCRAM');
    await produce(r, tp, 'after');
    assert.deepEqual(await fetchAll(r.session, tp, 2), ['before', 'after']);
    console.log(`Kafka ${b.version} restart: ${failures.length} requests failed (${[...new Set(failures)].join(', ')}), reconnects ${r.reconnects}`);
  } finally {
    r.close();
  }
}, 180000);
