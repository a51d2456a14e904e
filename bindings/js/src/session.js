// Session: the client side of one Kafka connection over kwire's sans-IO session
// (kw_session_* in capi/kwire.h). The module hands out correlation ids, writes request
// frames with the right header version, cuts what the connection delivers into response
// frames, matches them to their requests and negotiates api versions; this class adds
// the promises and the transport:
//
//   const s = await Session.connect('127.0.0.1', 9092);        // node:net, negotiated
//   const r = await s.request(3, { topics: null });            // Metadata (every topic), negotiated version
//   r.body.brokers; s.close();
//
// or, over any byte stream, a write function and feed():
//
//   const s = new Session(kwire, (bytes) => stream.write(bytes));
//   stream.on('data', (b) => s.feed(b)); stream.on('close', () => s.end());
//   await s.negotiate();
//
// With SASL (options.sasl of Session.connect, or authenticate()), the session
// authenticates after negotiation and, when the broker grants a session lifetime
// (KIP-368: connections.max.reauth.ms, a token's expiry), re-authenticates at 85-95% of
// it, at least a second before its end: new requests wait, the requests on the wire are answered, the exchange runs again,
// and the waiting requests go out in their order. A failed re-authentication closes the
// session. options.requestTimeoutMs (or request()'s timeoutMs) bounds each request: it
// rejects with a TimeoutError and its late response is dropped when it comes.
//
// Requests may be pipelined: each call writes its frame at once and its promise settles
// when its response arrives. A response the module cannot read rejects that request only.
// A broken stream (a frame above maxFrameSize, a response nobody asked for, a failed
// write, the stream ending) fails the session: every pending request rejects with a
// ConnectionClosedError and later calls reject at once.

import { EXPORTS, KW_SESSION_NO_RESPONSE } from './abi_gen.js';
import { KwireTrapError, KwireArgError, KW_ERR_ARG } from './errors.js';
import { asBytes, fromBase64, toBase64 } from './base64.js';
import { AuthenticationError, authenticate as saslAuthenticate, checkSasl, reauthDelayMs } from './sasl.js';
import { VERSION, CLIENT_SOFTWARE_NAME } from './version.js';

export { AuthenticationError };

/** How long a re-authentication may take (waiting for the requests on the wire, then the exchange). */
export const REAUTH_TIMEOUT_MS = 30000;

const utf8dec = new TextDecoder();
const NO_RESPONSE = KW_SESSION_NO_RESPONSE;
const SESSION_EXPORTS = EXPORTS.filter((n) => n.startsWith('kw_session_'));

/**
 * ConnectionClosedError: the session is over (the stream ended, a write failed, the
 * stream carried something that cannot be a response, or close() was called). `cause`
 * holds the underlying error when there is one (a KwireTooLargeError for a frame above
 * maxFrameSize, the socket's error, ...).
 */
export class ConnectionClosedError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'ConnectionClosedError';
  }
}

/**
 * TimeoutError: a request got no response within its timeout. The session goes on; the
 * response, when it comes, is dropped (stats().dropped counts it).
 */
export class TimeoutError extends Error {
  constructor(message) {
    super(message);
    this.name = 'TimeoutError';
  }
}

/**
 * ResponseError: the response to one request could not be used (its body or header does
 * not decode, or a negotiation step failed). The session goes on. `response` holds what
 * the module reported: correlationId, apiKey, apiVersion, headerVersion, error.
 */
export class ResponseError extends Error {
  constructor(response) {
    super(typeof response.error === 'string' ? response.error : 'kwire: unusable response');
    this.name = 'ResponseError';
    this.response = response;
    this.correlationId = response.correlationId;
    this.apiKey = response.apiKey;
    this.apiVersion = response.apiVersion;
  }
}

// The safety net: a session dropped without close() still releases its handle. The
// held value names the instance's exports of the time, so a handle of a replaced
// instance is never freed in its successor.
const registry = new FinalizationRegistry(({ kwire, x, handle }) => {
  if (kwire._x !== x) return;
  try {
    x.kw_session_free(handle);
  } catch {
    // the instance is gone or trapped: nothing to release
  }
});

let loadDefault = null;

/** @internal index.js hands over its init() so that Session.create can load the default instance. */
export function setDefaultLoader(f) {
  loadDefault = f;
}

/**
 * Session is one Kafka connection's client side over kwire's sans-IO session. The
 * transport is a write function (bytes => void or a promise) and feed(); see
 * Session.connect for node:net.
 */
export class Session {
  /**
   * kwire: a Kwire instance (from load() or init()). write: called with each frame to
   * send, in order; it may return a promise (a rejection fails the session). options:
   * clientId, maxFrameSize (default 100 MiB), clientSoftwareName (default 'kwire-js')
   * and clientSoftwareVersion (default the package's version), which go into every
   * ApiVersions request that leaves them empty, bootstrapVersion (the first ApiVersions
   * version; default kwire's highest), onClose (called once with the closing error).
   */
  constructor(kwire, write, options = {}) {
    if (kwire === null || typeof kwire !== 'object' || typeof kwire._exports !== 'function') {
      throw new TypeError('kwire: new Session needs a Kwire instance (from load() or init()); Session.create loads the default one');
    }
    if (typeof write !== 'function') throw new TypeError('kwire: new Session needs a write function');
    const x = kwire._exports();
    const missing = SESSION_EXPORTS.filter((n) => typeof x[n] !== 'function');
    if (missing.length > 0) {
      throw new KwireArgError(KW_ERR_ARG, {
        text: `kwire: this kwire.wasm (ABI ${kwire.abiVersion().major}.${kwire.abiVersion().minor}) has no sessions (needs ABI 1.1; missing ${missing.join(', ')})`,
      }, 'kw_session_new');
    }
    this._k = kwire;
    this._x = x;
    this._write = write;
    this._onClose = typeof options.onClose === 'function' ? options.onClose : null;
    this._pending = new Map(); // correlation id -> { resolve, reject, negotiation }
    this._closed = null; // the ConnectionClosedError once the session is over
    this._negotiation = null; // the pending negotiation's promise
    this._negotiated = false;
    this._negotiationVersions = [];
    this._requestTimeoutMs = options.requestTimeoutMs ?? 0;
    this._abandoned = new Set(); // correlation ids of timed-out requests still on the wire
    this._queue = null; // requests held while a re-authentication runs
    this._idleWaiter = null;
    this._sasl = null;
    this._reauthTimer = null;
    this._authSentAt = 0;
    this._stats = { dropped: 0, saslAuthenticates: 0, reauthentications: 0, sessionLifetimeMs: 0 };
    const config = {};
    for (const k of ['clientId', 'maxFrameSize', 'clientSoftwareName', 'clientSoftwareVersion', 'bootstrapVersion']) {
      if (options[k] !== undefined) config[k] = options[k];
    }
    // The module's own defaults name its Go side; this package reports itself.
    if (config.clientSoftwareName === undefined || config.clientSoftwareName === '') config.clientSoftwareName = CLIENT_SOFTWARE_NAME;
    if (config.clientSoftwareVersion === undefined || config.clientSoftwareVersion === '') config.clientSoftwareVersion = VERSION;
    const text = JSON.stringify(config);
    const [p, n] = kwire._putText(text);
    const s = kwire._scratch;
    const st = this._call('kw_session_new', p, n, s);
    if (st !== 0) throw kwire._lastError(st, 'kw_session_new');
    this._handle = kwire._dv.getInt32(s, true);
    this._token = {};
    registry.register(this, { kwire, x, handle: this._handle }, this._token);
  }

  /** Like the constructor, with the default instance (init()) unless options.kwire is given. */
  static async create(write, options = {}) {
    let kwire = options.kwire;
    if (kwire === undefined) {
      if (loadDefault === null) throw new Error('kwire: no default instance loader; pass options.kwire');
      kwire = await loadDefault();
    }
    return new Session(kwire, write, options);
  }

  /**
   * Opens a node:net connection to host:port (node:tls with options.tls: true or
   * tls.connect's options, e.g. { ca, servername }) and returns its session, negotiated
   * (options.negotiate: false skips that). options: the constructor's, plus kwire (an
   * instance; default: init()), timeoutMs (connect and negotiate, default 30000), and
   * socket options for net.connect (noDelay is on). The socket is `session.socket`;
   * close() ends it, and its end or error closes the session.
   */
  static async connect(host, port, options = {}) {
    if (host !== null && typeof host === 'object') {
      // connect({ host, port, ...options })
      ({ host, port, ...options } = host);
    }
    const sasl = options.sasl !== undefined && options.sasl !== null ? checkSasl(options.sasl) : null;
    const timeoutMs = options.timeoutMs ?? 30000;
    const useTLS = options.tls !== undefined && options.tls !== false && options.tls !== null;
    let socket;
    if (useTLS) {
      const tls = await import(/* webpackIgnore: true */ /* @vite-ignore */ 'node:tls');
      socket = tls.connect({ host, port, ...(options.tls === true ? {} : options.tls), ...(options.socket ?? {}) });
    } else {
      const net = await import(/* webpackIgnore: true */ /* @vite-ignore */ 'node:net');
      socket = net.connect({ host, port, noDelay: true, ...(options.socket ?? {}) });
    }
    let session;
    try {
      await withTimeout(new Promise((resolve, reject) => {
        socket.once(useTLS ? 'secureConnect' : 'connect', resolve);
        socket.once('error', reject);
      }), timeoutMs, `kwire: connecting to ${host}:${port}`);
      if (useTLS) socket.setNoDelay(true);
      session = await Session.create((bytes) => writeSocket(socket, bytes), {
        ...options,
        onClose: (err) => {
          socket.destroy();
          if (typeof options.onClose === 'function') options.onClose(err);
        },
      });
    } catch (err) {
      socket.destroy();
      throw err;
    }
    session.socket = socket;
    socket.on('data', (b) => session.feed(b));
    socket.on('error', (err) => session._fail(new ConnectionClosedError(`kwire: connection to ${host}:${port}: ${err.message}`, { cause: err })));
    socket.on('close', () => session.end());
    if (options.negotiate !== false || sasl !== null) {
      try {
        await withTimeout(session.negotiate(), timeoutMs, `kwire: negotiating with ${host}:${port}`);
        if (sasl !== null) await withTimeout(session.authenticate(sasl), timeoutMs, `kwire: authenticating with ${host}:${port}`);
      } catch (err) {
        session.close(err);
        throw err;
      }
    }
    return session;
  }

  /**
   * Authenticates with SASL (after negotiate()): sasl is { mechanism: 'PLAIN' |
   * 'SCRAM-SHA-256' | 'SCRAM-SHA-512', username, password } or { mechanism:
   * 'OAUTHBEARER', token: async () => jwt, extensions? }. The token callback is called
   * again at every re-authentication. Rejects with an AuthenticationError (the broker's
   * code and message; never the password). Resolves with { sessionLifetimeMs }.
   */
  async authenticate(sasl) {
    const cfg = checkSasl(sasl);
    this._check();
    const r = await this._authExchange(cfg);
    this._sasl = cfg;
    this._scheduleReauth(r.sessionLifetimeMs);
    return r;
  }

  _authExchange(cfg) {
    return saslAuthenticate((apiKey, body) => this._requestNow(apiKey, body, { timeoutMs: REAUTH_TIMEOUT_MS }), cfg, () => {
      this._stats.saslAuthenticates++;
      this._authSentAt = Date.now(); // the broker's session starts after this
    });
  }

  _scheduleReauth(lifetimeMs) {
    this._stats.sessionLifetimeMs = lifetimeMs;
    if (!(lifetimeMs > 0) || this._closed !== null) return;
    // Counted from when the last SaslAuthenticate went out, not from its answer: a slow
    // answer must not eat into the margin before the broker's deadline.
    const delay = Math.max(0, reauthDelayMs(lifetimeMs) - (Date.now() - this._authSentAt));
    this._reauthTimer = setTimeout(() => {
      this._reauthTimer = null;
      this._reauth();
    }, delay);
    if (typeof this._reauthTimer.unref === 'function') this._reauthTimer.unref();
  }

  // _reauth holds new requests, waits for the ones on the wire, runs the exchange again
  // and sends the held requests in order; a failure closes the session.
  async _reauth() {
    if (this._closed !== null) return;
    this._queue = [];
    let r;
    try {
      await withTimeout(this._idle(), REAUTH_TIMEOUT_MS, 'kwire: re-authentication: waiting for the requests in flight');
      r = await this._authExchange(this._sasl);
    } catch (err) {
      const q = this._queue;
      this._queue = null;
      this._fail(new ConnectionClosedError(`kwire: re-authentication failed: ${err && err.message}`, { cause: err }));
      for (const item of q) item.reject(this._closed);
      return;
    }
    this._stats.reauthentications++;
    const q = this._queue;
    this._queue = null;
    this._scheduleReauth(r.sessionLifetimeMs);
    for (const item of q) {
      if (item.done) continue;
      item.done = true;
      clearTimeout(item.timer);
      const left = item.deadline === Infinity ? 0 : Math.max(1, item.deadline - Date.now());
      this._requestNow(item.apiKey, item.body, { ...item.options, timeoutMs: left }).then(item.resolve, item.reject);
    }
  }

  _idle() {
    if (this._pending.size === 0 && this._abandoned.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this._idleWaiter = resolve;
    });
  }

  _maybeIdle() {
    if (this._idleWaiter !== null && this._pending.size === 0 && this._abandoned.size === 0) {
      const f = this._idleWaiter;
      this._idleWaiter = null;
      f();
    }
  }

  /**
   * What the session counted itself: dropped (late responses of timed-out requests),
   * saslAuthenticates (SaslAuthenticate requests sent, every step of every
   * authentication), reauthentications (completed), sessionLifetimeMs (granted at the
   * last authentication; 0: none).
   */
  stats() {
    return { ...this._stats };
  }

  // _call runs one export of the session's instance; a trap fails the session (the
  // replaced instance does not have its handle).
  _call(name, ...args) {
    const k = this._k;
    if (k._x !== this._x) {
      throw new KwireTrapError('kwire: the instance of this session trapped and was replaced; the session is gone', k._x !== null, name);
    }
    let r;
    try {
      r = this._x[name](...args);
    } catch (err) {
      throw k._trapped(name, err);
    }
    k._refresh();
    return r;
  }

  // _take reads the (out, out_len) of a successful call at the scratch slots.
  _take(st, call, asText) {
    const k = this._k;
    if (st !== 0) throw k._lastError(st, call);
    const s = k._scratch;
    const p = k._dv.getUint32(s, true);
    const n = k._dv.getUint32(s + 4, true);
    const out = asText ? utf8dec.decode(k._u8.subarray(p, p + n)) : k._u8.slice(p, p + n);
    if (p !== 0) this._call('kw_free', p);
    return out;
  }

  /** Whether the session is over (closed, failed, or its stream ended). */
  get closed() {
    return this._closed !== null;
  }

  /** Whether the broker's api versions are known. */
  get negotiated() {
    return this._negotiated;
  }

  /** The ApiVersions versions this session's negotiation sent, in order. */
  get negotiationVersions() {
    return this._negotiationVersions.slice();
  }

  /** The error the session closed with (a ConnectionClosedError), or null. */
  get error() {
    return this._closed;
  }

  _check() {
    if (this._closed !== null) throw this._closed;
  }

  /**
   * Negotiates api versions with ApiVersions (retrying at the broker's highest version
   * when it does not know kwire's). Resolves once the broker's table is known; a second
   * call returns the same promise.
   */
  negotiate() {
    if (this._negotiation !== null) return this._negotiation;
    let frame;
    try {
      this._check();
      const s = this._k._scratch;
      frame = this._take(this._call('kw_session_begin_negotiation', this._handle, s, s + 4), 'kw_session_begin_negotiation', false);
    } catch (err) {
      return Promise.reject(this._afterCallError(err));
    }
    this._negotiation = new Promise((resolve, reject) => {
      this._pending.set(frameCorrelationId(frame), { resolve, reject, negotiation: true });
    }).then(() => {
      this._negotiated = true;
    });
    this._negotiationVersions.push(frameVersion(frame));
    this._send(frame);
    return this._negotiation;
  }

  /**
   * Sends a request and resolves with its response: { correlationId, apiKey, apiVersion,
   * bodyVersion, headerVersion, body } (body in the JSON form). body: the request in the
   * JSON form (an object, or JSON text). options.version: the version to send (default:
   * the negotiated one); options.noResponse: the broker does not answer (Produce with
   * acks=0): resolves with null once the frame is handed to write.
   */
  request(apiKey, body, options = {}) {
    if (this._queue !== null && this._closed === null) {
      // A re-authentication runs: the request waits for it, in order.
      const timeoutMs = options.timeoutMs ?? this._requestTimeoutMs;
      return new Promise((resolve, reject) => {
        const item = { apiKey, body, options, resolve, reject, done: false, timer: null, deadline: Infinity };
        if (timeoutMs > 0 && timeoutMs !== Infinity) {
          item.deadline = Date.now() + timeoutMs;
          item.timer = setTimeout(() => {
            if (item.done) return;
            item.done = true;
            reject(new TimeoutError(`kwire: api key ${apiKey}: no response within ${timeoutMs} ms (held by a re-authentication)`));
          }, timeoutMs);
        }
        this._queue.push(item);
      });
    }
    return this._requestNow(apiKey, body, options);
  }

  _requestNow(apiKey, body, options) {
    const version = options.version ?? -1;
    const flags = options.noResponse ? NO_RESPONSE : 0;
    let frame;
    let corr;
    try {
      this._check();
      if (!Number.isInteger(apiKey) || !Number.isInteger(version)) throw new TypeError('kwire: request needs an integer api key and version');
      const k = this._k;
      const text = typeof body === 'string' ? body : stringify(body);
      const [p, n] = k._putText(text);
      const s = k._scratch;
      const st = this._call('kw_session_request', this._handle, apiKey, version, p, n, flags, s, s + 4, s + 8);
      if (st === 0) corr = k._dv.getInt32(s + 8, true);
      frame = this._take(st, 'kw_session_request', false);
    } catch (err) {
      return Promise.reject(this._afterCallError(err));
    }
    if (flags & NO_RESPONSE) {
      this._send(frame);
      return this._closed === null ? Promise.resolve(null) : Promise.reject(this._closed);
    }
    const timeoutMs = options.timeoutMs ?? this._requestTimeoutMs;
    const promise = new Promise((resolve, reject) => {
      const entry = { resolve, reject, negotiation: false, timer: null };
      if (timeoutMs > 0 && timeoutMs !== Infinity) {
        entry.timer = setTimeout(() => {
          if (this._pending.get(corr) !== entry) return;
          this._pending.delete(corr);
          this._abandoned.add(corr);
          reject(new TimeoutError(`kwire: api key ${apiKey} (correlation id ${corr}): no response within ${timeoutMs} ms`));
        }, timeoutMs);
      }
      this._pending.set(corr, entry);
    });
    this._send(frame);
    return promise;
  }

  /** The version request() uses for apiKey (throws before negotiation, or when no version is common). */
  versionFor(apiKey) {
    this._check();
    const s = this._k._scratch;
    const st = this._call('kw_session_version_for', this._handle, apiKey, s);
    if (st !== 0) throw this._k._lastError(st, 'kw_session_version_for');
    return this._k._dv.getInt32(s, true);
  }

  /**
   * The session's counters: { bytesSent, bytesReceived, requestsSent, responsesReceived,
   * pending, negotiated, buffered } (numbers and booleans). After close they are the
   * last ones read.
   */
  counters() {
    if (this._handle === 0) return { ...this._lastCounters };
    const s = this._k._scratch;
    const c = JSON.parse(this._take(this._call('kw_session_counters', this._handle, s, s + 4), 'kw_session_counters', true));
    for (const key of ['bytesSent', 'bytesReceived', 'requestsSent', 'responsesReceived']) c[key] = Number(c[key]);
    return c;
  }

  /**
   * Bytes read from the connection, in any chunking. Complete responses settle their
   * requests before feed returns. Bytes fed after the session closed are ignored.
   */
  feed(bytes) {
    if (this._closed !== null) return;
    const k = this._k;
    try {
      const b = asBytes(bytes);
      if (b.length > 0) {
        const p = k._putBytes(b);
        const st = this._call('kw_session_feed', this._handle, p, b.length);
        if (st !== 0) throw k._lastError(st, 'kw_session_feed');
      }
      const s = k._scratch;
      for (;;) {
        const text = this._take(this._call('kw_session_next', this._handle, s, s + 4), 'kw_session_next', true);
        if (text === '') break;
        this._dispatch(JSON.parse(text));
        if (this._closed !== null) return;
      }
    } catch (err) {
      this._fail(new ConnectionClosedError(`kwire: the connection cannot go on: ${err.message}`, { cause: err }));
    }
  }

  _dispatch(r) {
    const p = this._pending.get(r.correlationId);
    this._pending.delete(r.correlationId);
    if (r.negotiation === 'retry') {
      const frame = fromBase64(r.retry);
      if (p !== undefined) this._pending.set(frameCorrelationId(frame), p);
      this._negotiationVersions.push(frameVersion(frame));
      this._send(frame);
      return;
    }
    if (p === undefined) {
      // The module matched it; nobody here waits: the late answer of a timed-out request.
      if (this._abandoned.delete(r.correlationId)) this._stats.dropped++;
      this._maybeIdle();
      return;
    }
    if (p.timer) clearTimeout(p.timer);
    if (r.error !== undefined) p.reject(new ResponseError(r));
    else if (p.negotiation) p.resolve();
    else p.resolve(r);
    this._maybeIdle();
  }

  /**
   * The byte stream ended: the session closes, pending requests reject with a
   * ConnectionClosedError (which says whether a response was cut mid-frame).
   */
  end() {
    if (this._closed !== null) return;
    let mid = false;
    try {
      mid = this.counters().buffered;
    } catch {
      // the counters are not essential to the message
    }
    const n = this._pending.size;
    this._fail(new ConnectionClosedError(`kwire: the connection was closed by the peer${mid ? ' in the middle of a response' : ''}` +
      (n > 0 ? ` with ${n} request${n === 1 ? '' : 's'} pending` : '')));
  }

  /**
   * Closes the session: pending requests reject with a ConnectionClosedError (with
   * `reason` as its cause when given), the socket of Session.connect is destroyed and the
   * handle is released. Idempotent.
   */
  close(reason) {
    if (this._closed === null) {
      this._fail(new ConnectionClosedError('kwire: the session was closed' + (reason ? `: ${reason.message ?? reason}` : ''), reason ? { cause: reason } : undefined));
    }
  }

  /** Same as close(). */
  free() {
    this.close();
  }

  // _afterCallError: an error of a call made for one request. A trap ends the session;
  // other errors (bad JSON, unknown api, no common version) concern that request only.
  _afterCallError(err) {
    if (this._closed !== null) return this._closed;
    if (err instanceof KwireTrapError) {
      this._fail(new ConnectionClosedError(`kwire: ${err.message}`, { cause: err }));
      return this._closed;
    }
    return err;
  }

  _send(frame) {
    if (this._closed !== null) return;
    let r;
    try {
      r = this._write(frame);
    } catch (err) {
      this._fail(new ConnectionClosedError(`kwire: writing to the connection: ${err && err.message}`, { cause: err }));
      return;
    }
    if (r && typeof r.then === 'function') {
      r.then(undefined, (err) => this._fail(new ConnectionClosedError(`kwire: writing to the connection: ${err && err.message}`, { cause: err })));
    }
  }

  _fail(err) {
    if (this._closed !== null) return;
    this._closed = err;
    if (this._handle !== 0) {
      try {
        this._lastCounters = this.counters();
      } catch {
        this._lastCounters = {};
      }
      if (this._k._x === this._x) {
        try {
          this._call('kw_session_free', this._handle);
        } catch {
          // a trap here replaced the instance; the handle went with it
        }
      }
      registry.unregister(this._token);
      this._handle = 0;
    }
    const pending = [...this._pending.values()];
    this._pending.clear();
    this._abandoned.clear();
    if (this._reauthTimer !== null) {
      clearTimeout(this._reauthTimer);
      this._reauthTimer = null;
    }
    for (const p of pending) {
      if (p.timer) clearTimeout(p.timer);
      p.reject(err);
    }
    if (this._queue !== null) {
      for (const item of this._queue) {
        if (item.done) continue;
        item.done = true;
        clearTimeout(item.timer);
        item.reject(err);
      }
    }
    this._maybeIdle();
    if (this._negotiation !== null) this._negotiation.catch(() => {}); // rejected above; the caller of negotiate() sees it
    if (this._onClose !== null) {
      const f = this._onClose;
      this._onClose = null;
      f(err);
    }
  }
}

function frameCorrelationId(frame) {
  return new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getInt32(8, false);
}

function frameVersion(frame) {
  return new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getInt16(6, false);
}

function writeSocket(socket, bytes) {
  if (socket.destroyed) throw new Error('the socket is closed');
  return new Promise((resolve, reject) => {
    socket.write(bytes, (err) => (err ? reject(err) : resolve()));
  });
}

function withTimeout(promise, ms, what) {
  if (!(ms > 0) || ms === Infinity) return promise;
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new TimeoutError(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// stringify: the JSON form of a request body. Bigints become decimal strings (int64),
// bytes (typed arrays, Buffers, ArrayBuffers) base64 (bytes and records fields).
function replacer(key, x) {
  const o = this[key]; // before toJSON: a Buffer's toJSON would give {type, data}
  if (ArrayBuffer.isView(o) || o instanceof ArrayBuffer) return toBase64(asBytes(o));
  return typeof x === 'bigint' ? x.toString() : x;
}
function stringify(v) {
  const text = JSON.stringify(v, replacer);
  if (text === undefined) throw new TypeError('kwire: nothing to encode');
  return text;
}
