// ReconnectingSession: a Session.connect that comes back. When the connection dies, the
// requests on it reject (ConnectionClosedError: they are never sent again, since the
// broker may have acted on them), and a new connection is opened in the background with
// exponential backoff and jitter: negotiated and authenticated again. Requests made
// meanwhile wait for it (within their timeout) and go to the new connection.

import { Session, ConnectionClosedError, TimeoutError } from './session.js';
import { AuthenticationError } from './sasl.js';

const DEFAULTS = { initialDelayMs: 100, maxDelayMs: 10000, multiplier: 2, jitter: 0.2, maxAttempts: Infinity };

/** The delay before attempt n (0-based): initial * multiplier^n, capped, +-jitter. */
export function backoffDelayMs(n, opts = DEFAULTS) {
  const o = { ...DEFAULTS, ...opts };
  const base = Math.min(o.maxDelayMs, o.initialDelayMs * o.multiplier ** n);
  return Math.max(0, base * (1 - o.jitter + 2 * o.jitter * Math.random()));
}

export class ReconnectingSession {
  /**
   * Connects like Session.connect(host, port, options) and keeps a session open.
   * options.reconnect: { initialDelayMs (100), maxDelayMs (10000), multiplier (2),
   * jitter (0.2: +-20%), maxAttempts (Infinity) }; options.onReconnect(session, attempt)
   * is called after each new connection. The first connection must succeed (its error
   * is thrown); later ones are retried. A refused authentication stops the retries: the
   * wrapper closes with that error.
   */
  static async connect(host, port, options = {}) {
    if (host !== null && typeof host === 'object') ({ host, port, ...options } = host);
    const r = new ReconnectingSession(host, port, options);
    r._session = await r._open();
    r._watch(r._session);
    return r;
  }

  constructor(host, port, options) {
    this._host = host;
    this._port = port;
    this._options = options;
    this._backoff = { ...DEFAULTS, ...(options.reconnect ?? {}) };
    this._session = null;
    this._connecting = null; // the promise of the connection being made
    this._closed = null;
    this._reconnects = 0;
    this._attempts = 0;
    this._lastError = null;
  }

  _open() {
    const { reconnect, onReconnect, ...opts } = this._options;
    return Session.connect(this._host, this._port, opts);
  }

  _watch(s) {
    s.socket.once('close', () => {
      if (this._closed === null && this._session === s) this._reconnect();
    });
  }

  _reconnect() {
    if (this._connecting !== null) return this._connecting;
    this._connecting = (async () => {
      for (let n = 0; this._closed === null; n++) {
        if (n >= this._backoff.maxAttempts) {
          this.close(new ConnectionClosedError(`kwire: reconnecting to ${this._host}:${this._port}: gave up after ${n} attempts: ${this._lastError && this._lastError.message}`, { cause: this._lastError }));
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, backoffDelayMs(n, this._backoff)));
        if (this._closed !== null) break;
        this._attempts++;
        try {
          const s = await this._open();
          if (this._closed !== null) {
            s.close();
            break;
          }
          this._session = s;
          this._reconnects++;
          this._watch(s);
          if (typeof this._options.onReconnect === 'function') this._options.onReconnect(s, n + 1);
          return s;
        } catch (err) {
          this._lastError = err;
          if (err instanceof AuthenticationError) {
            this.close(new ConnectionClosedError(`kwire: reconnecting to ${this._host}:${this._port}: ${err.message}`, { cause: err }));
            break;
          }
        }
      }
      throw this._closed;
    })().finally(() => {
      this._connecting = null;
    });
    this._connecting.catch(() => {});
    return this._connecting;
  }

  /** The current session (a new one after each reconnection). */
  get session() {
    return this._session;
  }

  /** Connections made after the first. */
  get reconnects() {
    return this._reconnects;
  }

  /** Whether close() was called (or the retries gave up). */
  get closed() {
    return this._closed !== null;
  }

  /**
   * Sends on the current connection, or, while it is being replaced, waits for the new
   * one (within options.timeoutMs or the requestTimeoutMs option, if given). Rejects with
   * ConnectionClosedError when the connection dies with the request on it.
   */
  async request(apiKey, body, options = {}) {
    if (this._closed !== null) throw this._closed;
    let s = this._session;
    if (s.closed) {
      const timeoutMs = options.timeoutMs ?? this._options.requestTimeoutMs ?? 0;
      const t0 = Date.now();
      const next = this._reconnect();
      s = timeoutMs > 0 ? await raceTimeout(next, timeoutMs, apiKey) : await next;
      if (timeoutMs > 0) options = { ...options, timeoutMs: Math.max(1, timeoutMs - (Date.now() - t0)) };
    }
    return s.request(apiKey, body, options);
  }

  /** Closes the current session and stops reconnecting. */
  close(reason) {
    if (this._closed === null) {
      this._closed = reason instanceof ConnectionClosedError ? reason : new ConnectionClosedError('kwire: the session was closed' + (reason ? `: ${reason.message ?? reason}` : ''));
    }
    if (this._session !== null) this._session.close(reason);
  }
}

function raceTimeout(promise, ms, apiKey) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new TimeoutError(`kwire: api key ${apiKey}: no connection within ${ms} ms (reconnecting)`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
