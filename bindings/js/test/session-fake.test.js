// Session against fake servers and in-memory streams: the failures a real broker does not
// produce on demand (a 200 MiB frame, a malformed response, an unknown correlation id, a
// stream cut mid-frame, a failed write), the negotiation retry, and any chunking.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as kwire from '../index.js';

const { Session, ConnectionClosedError, ResponseError, KwireTooLargeError, KwireDecodeError, KwireJSONError } = kwire;
const k = await kwire.init();
const AV_MAX = k.apis().find((a) => a.apiKey === 18).maxVersion;

// The broker table a fake server announces: every api kwire knows, at kwire's range.
function table() {
  return k.apis().map((a) => ({ apiKey: a.apiKey, minVersion: a.minVersion, maxVersion: a.maxVersion }));
}

function apiVersionsAnswer(corr, version) {
  const body = { errorCode: 0, apiKeys: table(), throttleTimeMs: 0 };
  return k.encodeResponse({ header: { correlationId: corr }, body }, 18, version);
}

// cut splits a byte stream into request frames.
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

// fakeServer answers each request frame with handle(socket, peekedHeader, frame).
async function fakeServer(handle) {
  const sockets = new Set();
  const server = net.createServer((c) => {
    sockets.add(c);
    c.on('close', () => sockets.delete(c));
    c.on('error', () => {});
    c.on('data', frameCutter((frame) => handle(c, k.peekHeader(frame), frame)));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    async close() {
      for (const c of sockets) c.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

// A server that negotiates normally and hands every other request to `other`.
function negotiating(other) {
  return (c, h, frame) => {
    if (h.apiKey === 18) c.write(apiVersionsAnswer(h.correlationId, h.apiVersion));
    else other(c, h, frame);
  };
}

function metadataAnswer(corr, version) {
  return k.encodeResponse({ header: { correlationId: corr }, body: { throttleTimeMs: 0, brokers: [], clusterId: 'fake', controllerId: 1, topics: [] } }, 3, version);
}

test('a server announcing a 200 MiB frame fails the session cleanly, nothing allocated for it', async () => {
  const srv = await fakeServer((c) => {
    const size = Buffer.alloc(4);
    size.writeInt32BE(200 << 20);
    c.write(size);
  });
  const before = k._memory.buffer.byteLength;
  try {
    let closedWith = null;
    const err = await Session.connect('127.0.0.1', srv.port, { kwire: k, onClose: (e) => (closedWith = e) }).then(
      () => assert.fail('connect succeeded'),
      (e) => e,
    );
    assert.ok(err instanceof ConnectionClosedError, `got ${err}`);
    assert.ok(err.cause instanceof KwireTooLargeError, `cause ${err.cause}`);
    assert.match(err.message, /209715200/);
    assert.equal(closedWith, err);
    const grown = k._memory.buffer.byteLength - before;
    assert.ok(grown < 16 << 20, `module memory grew by ${grown} bytes`);
  } finally {
    await srv.close();
  }
});

test('after a failure every call fails at once with the same error', async () => {
  const writes = [];
  const s = new Session(k, (b) => writes.push(b));
  const neg = s.negotiate();
  const size = Buffer.alloc(4);
  size.writeInt32BE(0x7fffffff);
  s.feed(size);
  await assert.rejects(neg, (e) => e instanceof ConnectionClosedError && e.cause instanceof KwireTooLargeError);
  assert.equal(s.closed, true);
  const n = writes.length;
  await assert.rejects(s.request(3, { topics: [] }, { version: 12 }), (e) => e === s.error);
  await assert.rejects(s.negotiate(), ConnectionClosedError);
  assert.throws(() => s.versionFor(3), ConnectionClosedError);
  assert.equal(writes.length, n, 'nothing written after the failure');
  s.feed(new Uint8Array(8)); // ignored
});

test('a malformed response fails its request only; the session goes on', async () => {
  let metadata = 0;
  const srv = await fakeServer(negotiating((c, h) => {
    if (h.apiKey === 3 && metadata++ === 0) {
      // A Metadata v12 response (header v1) whose body is three bytes.
      const f = Buffer.from([0, 0, 0, 8, 0, 0, 0, 0, 0, 1, 2, 3]);
      f.writeInt32BE(h.correlationId, 4);
      c.write(f);
    } else {
      c.write(metadataAnswer(h.correlationId, h.apiVersion));
    }
  }));
  const s = await Session.connect('127.0.0.1', srv.port, { kwire: k });
  try {
    const bad = s.request(3, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, { version: 12 });
    const good = s.request(3, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, { version: 12 });
    const err = await bad.then(() => assert.fail('the malformed response resolved'), (e) => e);
    assert.ok(err instanceof ResponseError, `got ${err}`);
    assert.equal(err.apiKey, 3);
    assert.equal(err.apiVersion, 12);
    assert.match(err.message, /MetadataResponse|Metadata/);
    const r = await good;
    assert.equal(r.body.clusterId, 'fake');
    assert.equal(s.closed, false);
    assert.equal((await s.request(3, { topics: [] }, { version: 12 })).body.clusterId, 'fake');
  } finally {
    s.close();
    await srv.close();
  }
});

test('a request the module cannot encode fails alone, before anything is written', async () => {
  const writes = [];
  const s = new Session(k, (b) => writes.push(b));
  try {
    await assert.rejects(s.request(3, { topics: [], noSuchField: 1 }, { version: 12 }), KwireJSONError);
    await assert.rejects(s.request(3, { topics: [] }), kwire.KwireVersionError); // not negotiated yet
    await assert.rejects(s.request(9999, {}, { version: 0 }), kwire.KwireUnknownApiError);
    assert.equal(writes.length, 0);
    const p = s.request(3, { topics: [] }, { version: 12 });
    assert.equal(writes.length, 1);
    s.feed(metadataAnswer(new DataView(writes[0].buffer, writes[0].byteOffset).getInt32(8), 12));
    assert.equal((await p).body.clusterId, 'fake');
  } finally {
    s.close();
  }
});

test('a response nobody asked for fails the session', async () => {
  const writes = [];
  const s = new Session(k, (b) => writes.push(b));
  const p = s.request(3, { topics: [] }, { version: 12 });
  s.feed(metadataAnswer(4242, 12));
  await assert.rejects(p, (e) => e instanceof ConnectionClosedError && e.cause instanceof KwireDecodeError && /correlation id 4242/.test(e.message));
});

test('responses arrive in any chunking: one byte at a time, and several frames in one chunk', async () => {
  const writes = [];
  const s = new Session(k, (b) => writes.push(b));
  const neg = s.negotiate();
  const corr = (b) => new DataView(b.buffer, b.byteOffset).getInt32(8);
  for (const byte of apiVersionsAnswer(corr(writes[0]), AV_MAX)) s.feed(Uint8Array.of(byte));
  await neg;
  assert.equal(s.versionFor(3), k.apis().find((a) => a.apiKey === 3).maxVersion);
  const v = s.versionFor(3);
  const ps = [0, 1, 2].map(() => s.request(3, { topics: [] }));
  s.feed(Buffer.concat(writes.slice(1).map((w) => metadataAnswer(corr(w), v))));
  const rs = await Promise.all(ps);
  assert.deepEqual(rs.map((r) => r.correlationId), writes.slice(1).map(corr));
  const c = s.counters();
  assert.equal(c.requestsSent, 4);
  assert.equal(c.responsesReceived, 4);
  assert.equal(c.bytesSent, writes.reduce((n, w) => n + w.length, 0));
  assert.equal(c.pending, 0);
  s.close();
});

test('UNSUPPORTED_VERSION: the session retries at the highest version both know', async () => {
  const seen = [];
  const srv = await fakeServer((c, h) => {
    if (h.apiKey !== 18) return;
    seen.push(h.apiVersion);
    if (h.apiVersion > 2) {
      // Kafka answers an ApiVersions version it does not know at v0, with its own range.
      const body = { errorCode: 35, apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 2 }] };
      c.write(k.encodeResponse({ header: { correlationId: h.correlationId }, body }, 18, 0));
    } else {
      c.write(apiVersionsAnswer(h.correlationId, h.apiVersion));
    }
  });
  const s = await Session.connect('127.0.0.1', srv.port, { kwire: k });
  try {
    assert.deepEqual(seen, [AV_MAX, 2]);
    assert.deepEqual(s.negotiationVersions, [AV_MAX, 2]);
    assert.equal(s.negotiated, true);
    assert.equal(s.versionFor(18), AV_MAX);
  } finally {
    s.close();
    await srv.close();
  }
});

test('a negotiation the broker refuses rejects negotiate() with a ResponseError', async () => {
  const writes = [];
  const s = new Session(k, (b) => writes.push(b));
  const neg = s.negotiate();
  assert.equal(s.negotiate(), neg, 'a second call returns the same promise');
  const corr = new DataView(writes[0].buffer, writes[0].byteOffset).getInt32(8);
  // UNSUPPORTED_VERSION listing no ApiVersions version kwire knows.
  s.feed(k.encodeResponse({ header: { correlationId: corr }, body: { errorCode: 35, apiKeys: [{ apiKey: 18, minVersion: 90, maxVersion: 91 }] } }, 18, 0));
  await assert.rejects(neg, (e) => e instanceof ResponseError && /negotiation/.test(e.message));
  assert.equal(s.negotiated, false);
  assert.equal(s.closed, false);
  s.close();
});

test('the peer closing mid-frame rejects every pending request with ConnectionClosedError', async () => {
  const srv = await fakeServer(negotiating((c, h) => {
    if (h.apiKey === 3) {
      const f = metadataAnswer(h.correlationId, h.apiVersion);
      c.end(f.subarray(0, f.length - 2)); // half an answer, then FIN
    }
  }));
  const s = await Session.connect('127.0.0.1', srv.port, { kwire: k });
  try {
    const a = s.request(3, { topics: [] });
    const b = s.request(3, { topics: [] });
    for (const p of [a, b]) {
      await assert.rejects(p, (e) => e instanceof ConnectionClosedError && /closed by the peer in the middle of a response/.test(e.message));
    }
    await assert.rejects(s.request(3, { topics: [] }), ConnectionClosedError);
    assert.equal(s.socket.destroyed, true);
  } finally {
    s.close();
    await srv.close();
  }
});

test('a failed write fails the session; close() rejects what is pending', async () => {
  let fail = false;
  const s = new Session(k, () => (fail ? Promise.reject(new Error('broken pipe')) : undefined));
  const p1 = s.request(3, { topics: [] }, { version: 12 });
  fail = true;
  const p2 = s.request(3, { topics: [] }, { version: 12 });
  for (const p of [p1, p2]) await assert.rejects(p, (e) => e instanceof ConnectionClosedError && /broken pipe/.test(e.message));

  const s2 = new Session(k, () => {});
  const p3 = s2.request(3, { topics: [] }, { version: 12 });
  s2.close();
  s2.close();
  await assert.rejects(p3, (e) => e instanceof ConnectionClosedError && /closed/.test(e.message));
  assert.equal(s2.counters().requestsSent, 1, 'the last counters stay readable');
});

test('noResponse requests (acks=0) resolve with null and leave nothing pending', async () => {
  const writes = [];
  const s = new Session(k, (b) => writes.push(b));
  const body = { transactionalId: null, acks: 0, timeoutMs: 1000, topicData: [] };
  assert.equal(await s.request(0, body, { version: 9, noResponse: true }), null);
  assert.equal(writes.length, 1);
  assert.equal(s.counters().pending, 0);
  s.close();
});

test('handles are released: 70000 sessions opened and closed one after another', () => {
  for (let i = 0; i < 70000; i++) new Session(k, () => {}).close();
});

test('a module without sessions is refused with a clear error', () => {
  const fake = { _exports: () => ({}), abiVersion: () => ({ major: 1, minor: 0 }) };
  assert.throws(() => new Session(fake, () => {}), /has no sessions \(needs ABI 1\.1/);
});

test('a session dropped without close() has its handle released by the FinalizationRegistry', () => {
  // In a child process with --expose-gc: a dropped session's handle stops being live
  // once the collector has run and the registry's callback with it.
  const script = `
    import * as kwire from ${JSON.stringify(new URL('../index.js', import.meta.url).href)};
    const k = await kwire.init();
    const s = k._scratch;
    const live = (h) => {
      const st = k._x.kw_session_counters(h, s, s + 4);
      if (st === 0) k._x.kw_free(new DataView(k._memory.buffer).getUint32(s, true));
      return st === 0;
    };
    let handle = (() => new kwire.Session(k, () => {})._handle)();
    if (!live(handle)) throw new Error('not live before the drop');
    for (let i = 0; i < 200 && live(handle); i++) {
      globalThis.gc();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    console.log(live(handle) ? 'still live' : 'released');
  `;
  const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.stderr, '');
  assert.equal(r.stdout.trim(), 'released');
});

test('ApiVersions: the session fills the client software fields a request leaves empty, and refuses what Kafka refuses', async () => {
  const sent = (frames) => frames.map((f) => k.decodeRequest(f).body);
  // The defaults: kwire-js and the package's version, in negotiation and in request(18, {}).
  const writes = [];
  const s = new Session(k, (b) => writes.push(b));
  s.request(18, {}, { version: 3 }).catch(() => {});
  s.request(18, { clientSoftwareName: 'mine' }, { version: AV_MAX }).catch(() => {});
  const neg = s.negotiate();
  neg.catch(() => {});
  assert.deepEqual(sent(writes).map((b) => [b.clientSoftwareName, b.clientSoftwareVersion]), [
    ['kwire-js', kwire.VERSION], ['mine', kwire.VERSION], ['kwire-js', kwire.VERSION],
  ]);
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  assert.equal(kwire.VERSION, pkg.version); // what the session reports is the package's version
  s.close();

  // Configured values.
  const w2 = [];
  const s2 = new Session(k, (b) => w2.push(b), { clientSoftwareName: 'my-app', clientSoftwareVersion: '2.0.1' });
  s2.request(18, {}, { version: 3 }).catch(() => {});
  assert.deepEqual(sent(w2).map((b) => [b.clientSoftwareName, b.clientSoftwareVersion]), [['my-app', '2.0.1']]);

  // A value outside Kafka's pattern rejects with the field named, and nothing is written.
  await assert.rejects(s2.request(18, { clientSoftwareName: 'my app' }, { version: 3 }), (e) => {
    assert.ok(e instanceof kwire.KwireEncodeError, String(e));
    assert.equal(e.path, 'clientSoftwareName');
    assert.match(e.message, /clientSoftwareName "my app" does not match \[a-zA-Z0-9\]/);
    assert.match(e.message, /INVALID_REQUEST/);
    return true;
  });
  assert.equal(w2.length, 1);
  assert.equal(s2.closed, false);
  s2.close();
  const s3 = new Session(k, () => {}, { clientSoftwareVersion: '1.0-' });
  await assert.rejects(s3.negotiate(), (e) => e instanceof kwire.KwireEncodeError && e.path === 'clientSoftwareVersion');
  s3.close();
});
