// Re-authentication, timeouts and reconnection against fake servers, where the order of
// events on the wire can be checked exactly: no request is on the wire while the SASL
// exchange runs, held requests go out in the order they were made, a refused
// re-authentication closes the session, a timed-out request's late answer is dropped, and
// a request on a connection that dies is failed, never sent again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import * as kwire from '../index.js';

const { Session, ReconnectingSession, ConnectionClosedError, TimeoutError, AuthenticationError } = kwire;
const k = await kwire.init();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function table() {
  return k.apis().map((a) => ({ apiKey: a.apiKey, minVersion: a.minVersion, maxVersion: a.maxVersion }));
}

function answer(h, body) {
  return k.encodeResponse({ header: { correlationId: h.correlationId }, body }, h.apiKey, h.apiVersion);
}

function frameCutter(onFrame) {
  let buf = Buffer.alloc(0);
  return (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
      const n = 4 + buf.readInt32BE(0);
      onFrame(buf.subarray(0, n));
      buf = buf.subarray(n);
    }
  };
}

// saslServer: ApiVersions, SaslHandshake and SaslAuthenticate (PLAIN, granting lifetimeMs;
// authenticate(n) decides whether the n-th one succeeds), and Metadata answered after
// delayMs (or never when delayMs < 0). events records what happened, in order.
async function saslServer({ lifetimeMs = 300, delayMs = 30, authenticate = () => true } = {}) {
  const events = [];
  const sockets = new Set();
  let auths = 0;
  let metadata = 0;
  let outstanding = 0;
  const server = net.createServer((c) => {
    sockets.add(c);
    c.on('close', () => sockets.delete(c));
    c.on('error', () => {});
    c.on('data', frameCutter((frame) => {
      const h = k.peekHeader(frame);
      if (h.apiKey === 18) {
        c.write(answer(h, { errorCode: 0, apiKeys: table(), throttleTimeMs: 0 }));
      } else if (h.apiKey === 17) {
        events.push({ ev: 'handshake', outstanding });
        c.write(answer(h, { errorCode: 0, mechanisms: ['PLAIN'] }));
      } else if (h.apiKey === 36) {
        auths++;
        events.push({ ev: 'authenticate', outstanding });
        const ok = authenticate(auths);
        c.write(answer(h, ok ? { errorCode: 0, errorMessage: null, authBytes: '', sessionLifetimeMs: lifetimeMs }
          : { errorCode: 58, errorMessage: 'Authentication failed: credentials revoked', authBytes: '', sessionLifetimeMs: 0 }));
      } else if (h.apiKey === 3) {
        metadata++;
        outstanding++;
        events.push({ ev: 'metadata', corr: h.correlationId });
        if (delayMs < 0) return;
        setTimeout(() => {
          outstanding--;
          if (!c.destroyed) c.write(answer(h, { throttleTimeMs: 0, brokers: [], clusterId: 'fake', controllerId: 1, topics: [] }));
        }, delayMs);
      }
    }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    events,
    get metadata() {
      return metadata;
    },
    dropAll() {
      for (const c of sockets) c.destroy();
    },
    async close() {
      for (const c of sockets) c.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const PLAIN = { mechanism: 'PLAIN', username: 'u', password: 'secret-pw' };

test('re-authentication waits for the requests on the wire and keeps the order of held ones', async () => {
  const srv = await saslServer({ lifetimeMs: 300, delayMs: 30 });
  const s = await Session.connect('127.0.0.1', srv.port, { kwire: k, sasl: PLAIN });
  try {
    // A request every 5 ms for 1.5 s (about 5 re-authentications), none awaited before the next.
    const calls = [];
    const t0 = Date.now();
    while (Date.now() - t0 < 1500) {
      calls.push(s.request(3, { topics: [] }));
      await sleep(5);
    }
    const responses = await Promise.all(calls);
    const corrs = responses.map((r) => r.correlationId);
    for (let i = 1; i < corrs.length; i++) assert.ok(corrs[i] > corrs[i - 1], `request ${i} went out before request ${i - 1}`);
    const st = s.stats();
    assert.ok(st.reauthentications >= 3, `${st.reauthentications} re-authentications`);
    const hs = srv.events.filter((e) => e.ev === 'handshake');
    assert.equal(hs.length, st.reauthentications + 1);
    // At every handshake and authenticate, no Metadata was on the wire unanswered, and
    // none arrived between a handshake and its authenticate.
    for (const e of srv.events) if (e.ev !== 'metadata') assert.equal(e.outstanding, 0, `${e.ev} with ${e.outstanding} requests on the wire`);
    for (let i = 0; i < srv.events.length; i++) {
      if (srv.events[i].ev === 'handshake') assert.equal(srv.events[i + 1].ev, 'authenticate', 'a request came between the handshake and the authenticate');
    }
    assert.equal(s.closed, false);
  } finally {
    s.close();
    await srv.close();
  }
});

test('a refused re-authentication closes the session with the broker\'s message; held requests fail', async () => {
  const srv = await saslServer({ lifetimeMs: 200, delayMs: 100, authenticate: (n) => n === 1 });
  let closedWith = null;
  const s = await Session.connect('127.0.0.1', srv.port, { kwire: k, sasl: PLAIN, onClose: (e) => (closedWith = e) });
  try {
    const results = [];
    for (let i = 0; i < 30 && !s.closed; i++) {
      results.push(s.request(3, { topics: [] }).then(() => 'ok', (e) => e));
      await sleep(10);
    }
    const settled = await Promise.all(results);
    assert.ok(s.closed, 'the session lives on');
    assert.ok(closedWith instanceof ConnectionClosedError);
    assert.match(closedWith.message, /re-authentication failed: .*credentials revoked/);
    assert.ok(closedWith.cause instanceof AuthenticationError);
    assert.ok(!closedWith.message.includes('secret-pw'));
    assert.ok(settled.some((r) => r instanceof ConnectionClosedError), 'no request failed with the session');
    await assert.rejects(s.request(3, { topics: [] }), ConnectionClosedError);
  } finally {
    s.close();
    await srv.close();
  }
});

test('a timed-out request: TimeoutError, the late answer dropped, the next request works', async () => {
  const srv = await saslServer({ lifetimeMs: 0, delayMs: 300 });
  const s = await Session.connect('127.0.0.1', srv.port, { kwire: k });
  try {
    await assert.rejects(s.request(3, { topics: [] }, { timeoutMs: 50 }), TimeoutError);
    const r = await s.request(3, { topics: [] }, { timeoutMs: 5000 });
    assert.equal(r.apiKey, 3);
    assert.equal(s.stats().dropped, 1);
  } finally {
    s.close();
    await srv.close();
  }
});

test('ReconnectingSession: the request on the dying connection fails and is not resent; the next goes to a new connection', async () => {
  const srv = await saslServer({ lifetimeMs: 0, delayMs: -1 }); // Metadata never answered
  const r = await ReconnectingSession.connect('127.0.0.1', srv.port, { kwire: k, sasl: PLAIN, reconnect: { initialDelayMs: 10, maxDelayMs: 50 } });
  try {
    const first = r.session;
    const pending = r.request(3, { topics: [] });
    while (srv.metadata < 1) await sleep(5);
    srv.dropAll();
    await assert.rejects(pending, ConnectionClosedError);
    // The next request waits for the new connection (authenticated again) and is sent once.
    const next = r.request(3, { topics: [] }, { timeoutMs: 200 }).catch((e) => e);
    while (srv.metadata < 2) await sleep(5);
    assert.ok((await next) instanceof TimeoutError, 'the server never answers Metadata');
    await sleep(50);
    assert.equal(srv.metadata, 2, 'Metadata requests received: the failed one was sent again');
    assert.notEqual(r.session, first);
    assert.equal(r.reconnects, 1);
    assert.equal(srv.events.filter((e) => e.ev === 'authenticate').length, 2);
  } finally {
    r.close();
    await srv.close();
  }
});

test('reauthDelayMs: 85-95% of a long lifetime; at least a second before the end of a short one, never before its middle', async () => {
  const { reauthDelayMs } = await import('../src/sasl.js');
  for (const [life, lo, hi] of [[3_600_000, 3_060_000, 3_420_000], [20_000, 17_000, 19_000], [4000, 3000, 3000], [1500, 750, 750]]) {
    for (let i = 0; i < 200; i++) {
      const d = reauthDelayMs(life);
      assert.ok(d >= lo && d <= hi, `reauthDelayMs(${life}) = ${d}, want ${lo}..${hi}`);
    }
  }
});
