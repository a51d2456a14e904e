// SASL for sessions: PLAIN, SCRAM-SHA-256/512 (RFC 5802/7677 over node:crypto) and
// OAUTHBEARER (RFC 7628's client response, with a token callback), run with SaslHandshake
// v1 and SaslAuthenticate over a session's own requests. The password never appears in
// an error.

import { fromBase64 } from './base64.js';

const utf8 = new TextEncoder();
const utf8dec = new TextDecoder();

/**
 * AuthenticationError: the broker refused the mechanism or the credentials, or the
 * exchange broke the mechanism's rules. `mechanism`, `errorCode` (Kafka's error code, 0
 * when the client found the fault) and `brokerMessage` (the broker's message, or null).
 */
export class AuthenticationError extends Error {
  constructor(mechanism, errorCode, message, brokerMessage = null) {
    super(`kwire: SASL ${mechanism} authentication failed` + (errorCode ? ` (error ${errorCode}${CODE_NAMES[errorCode] ? ' ' + CODE_NAMES[errorCode] : ''})` : '') + (message ? `: ${message}` : ''));
    this.name = 'AuthenticationError';
    this.mechanism = mechanism;
    this.errorCode = errorCode;
    this.brokerMessage = brokerMessage;
  }
}

const CODE_NAMES = { 33: 'UNSUPPORTED_SASL_MECHANISM', 34: 'ILLEGAL_SASL_STATE', 58: 'SASL_AUTHENTICATION_FAILED' };

/** The mechanisms kwire speaks. */
export const SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'];

const SCRAM_MIN_ITERATIONS = 4096;

/** Checks a sasl option and returns it with the mechanism upper-cased (throws a TypeError). */
export function checkSasl(sasl) {
  if (sasl === null || typeof sasl !== 'object') throw new TypeError('kwire: sasl must be { mechanism, username, password } or { mechanism: "OAUTHBEARER", token }');
  const mechanism = String(sasl.mechanism ?? '').toUpperCase();
  if (!SASL_MECHANISMS.includes(mechanism)) {
    throw new AuthenticationError(String(sasl.mechanism), 0, `kwire supports ${SASL_MECHANISMS.join(', ')}`);
  }
  if (mechanism === 'OAUTHBEARER') {
    if (typeof sasl.token !== 'function') throw new TypeError('kwire: sasl OAUTHBEARER needs token: async () => string');
  } else if (typeof sasl.username !== 'string' || typeof sasl.password !== 'string') {
    throw new TypeError(`kwire: sasl ${mechanism} needs username and password strings`);
  }
  return { ...sasl, mechanism };
}

/**
 * Runs the handshake and the mechanism's exchange; send(apiKey, body) sends one request
 * and resolves with its response. Resolves with { sessionLifetimeMs, steps } (steps: the
 * SaslAuthenticate requests sent).
 */
export async function authenticate(send, sasl, onStep) {
  const mech = sasl.mechanism;
  const hs = await send(17, { mechanism: mech });
  if (hs.body.errorCode !== 0) {
    const list = hs.body.mechanisms ?? [];
    throw new AuthenticationError(mech, hs.body.errorCode, list.length > 0 ? `the broker enables ${list.join(', ')}` : 'the broker enables no SASL mechanism on this listener');
  }
  const step = async (bytes) => {
    onStep();
    const r = await send(36, { authBytes: bytes });
    if (r.body.errorCode !== 0) {
      throw new AuthenticationError(mech, r.body.errorCode, r.body.errorMessage ?? '', r.body.errorMessage ?? null);
    }
    return { bytes: r.body.authBytes ? fromBase64(r.body.authBytes) : new Uint8Array(0), lifetime: Number(r.body.sessionLifetimeMs ?? 0) };
  };
  if (mech === 'PLAIN') {
    const r = await step(utf8.encode(`\u0000${sasl.username}\u0000${sasl.password}`));
    return { sessionLifetimeMs: r.lifetime };
  }
  if (mech === 'OAUTHBEARER') return oauthBearer(step, sasl);
  return scram(step, mech, sasl.username, sasl.password);
}

async function oauthBearer(step, sasl) {
  const mech = 'OAUTHBEARER';
  let token;
  try {
    token = await sasl.token();
  } catch (err) {
    throw new AuthenticationError(mech, 0, `the token callback failed: ${err && err.message}`);
  }
  if (typeof token !== 'string') throw new AuthenticationError(mech, 0, 'the token callback returned no string');
  token = token.replace(/^Bearer /, '');
  if (token === '' || /[\u0001 ]/.test(token)) throw new AuthenticationError(mech, 0, 'the token callback returned an empty or malformed token');
  let msg = `n,,\u0001auth=Bearer ${token}\u0001`;
  for (const [k, v] of Object.entries(sasl.extensions ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) msg += `${k}=${v}\u0001`;
  msg += '\u0001';
  const r = await step(utf8.encode(msg));
  if (r.bytes.length === 0) return { sessionLifetimeMs: r.lifetime };
  // A refused token: the broker's JSON error challenge, acknowledged with 0x01, after
  // which the broker fails the exchange with its message.
  const challenge = utf8dec.decode(r.bytes);
  try {
    await step(new Uint8Array([1]));
  } catch (err) {
    if (err instanceof AuthenticationError) {
      throw new AuthenticationError(mech, err.errorCode, `${err.brokerMessage ?? ''} (broker challenge ${challenge})`.trim(), err.brokerMessage);
    }
    throw err;
  }
  throw new AuthenticationError(mech, 0, `the broker refused the token: ${challenge}`);
}

let cryptoMod = null;
async function nodeCrypto() {
  if (cryptoMod === null) cryptoMod = await import(/* webpackIgnore: true */ /* @vite-ignore */ 'node:crypto');
  return cryptoMod;
}

/** SCRAM's client-final message and expected server signature (exported for tests). */
export async function scramFinal(mech, clientFirstBare, nonce, password, serverFirst) {
  const crypto = await nodeCrypto();
  const hash = mech === 'SCRAM-SHA-256' ? 'sha256' : 'sha512';
  const size = hash === 'sha256' ? 32 : 64;
  const attrs = scramAttrs(serverFirst, 'server-first message');
  if (attrs.e !== undefined) throw new Error(`server error ${attrs.e}`);
  const serverNonce = attrs.r ?? '';
  if (!serverNonce.startsWith(nonce) || serverNonce.length === nonce.length) throw new Error('the server nonce does not extend the client\'s');
  const salt = attrs.s ? Buffer.from(attrs.s, 'base64') : Buffer.alloc(0);
  if (salt.length === 0) throw new Error('the server sent no valid salt');
  const iter = /^[0-9]+$/.test(attrs.i ?? '') ? Number(attrs.i) : NaN;
  if (!(iter >= SCRAM_MIN_ITERATIONS)) throw new Error(`iteration count ${JSON.stringify(attrs.i ?? '')} (at least 4096 needed)`);
  const salted = crypto.pbkdf2Sync(password, salt, iter, size, hash);
  const hmac = (key, data) => crypto.createHmac(hash, key).update(data).digest();
  const clientKey = hmac(salted, 'Client Key');
  const storedKey = crypto.createHash(hash).update(clientKey).digest();
  const finalNoProof = `c=biws,r=${serverNonce}`;
  const authMessage = `${clientFirstBare},${serverFirst},${finalNoProof}`;
  const signature = hmac(storedKey, authMessage);
  const proof = Buffer.alloc(clientKey.length);
  for (let i = 0; i < proof.length; i++) proof[i] = clientKey[i] ^ signature[i];
  const serverSig = hmac(hmac(salted, 'Server Key'), authMessage);
  return { clientFinal: `${finalNoProof},p=${proof.toString('base64')}`, serverSig };
}

function scramAttrs(msg, what) {
  const out = {};
  for (const part of msg.split(',')) {
    if (part.length < 2 || part[1] !== '=') throw new Error(`${what}: malformed attribute ${JSON.stringify(part)}`);
    if (part[0] === 'm') throw new Error(`${what}: mandatory extension not supported`);
    out[part[0]] = part.slice(2);
  }
  return out;
}

async function scram(step, mech, user, password) {
  const crypto = await nodeCrypto();
  const nonce = crypto.randomBytes(24).toString('base64').replace(/=+$/, '');
  const clientFirstBare = `n=${user.replace(/=/g, '=3D').replace(/,/g, '=2C')},r=${nonce}`;
  const first = await step(utf8.encode(`n,,${clientFirstBare}`));
  let fin;
  try {
    fin = await scramFinal(mech, clientFirstBare, nonce, password, utf8dec.decode(first.bytes));
  } catch (err) {
    throw new AuthenticationError(mech, 0, err.message);
  }
  const last = await step(utf8.encode(fin.clientFinal));
  let attrs;
  try {
    attrs = scramAttrs(utf8dec.decode(last.bytes), 'server-final message');
  } catch (err) {
    throw new AuthenticationError(mech, 0, err.message);
  }
  if (attrs.e !== undefined) throw new AuthenticationError(mech, 0, `server error ${attrs.e}`);
  const got = Buffer.from(attrs.v ?? '', 'base64');
  if (got.length !== fin.serverSig.length || !crypto.timingSafeEqual(got, fin.serverSig)) {
    throw new AuthenticationError(mech, 0, 'the server\'s signature does not verify: it does not know the password');
  }
  return { sessionLifetimeMs: last.lifetime };
}

/**
 * When to re-authenticate a session of lifetimeMs: at 85-95% of it, as Kafka's Java
 * client does, but at least a second before it ends (and not before its middle). The
 * requests on the wire are answered before the exchange starts, and a broker closes a
 * connection whose session has expired on its next request, the re-authentication's
 * own included: 5-15% of a lifetime of a few seconds is too little margin on a busy
 * host or a slow network.
 */
export function reauthDelayMs(lifetimeMs) {
  return Math.min(lifetimeMs * (0.85 + 0.1 * Math.random()), Math.max(lifetimeMs - 1000, lifetimeMs / 2));
}
