// Standard base64 (with padding), as kwire's JSON form writes bytes and records. Node's
// Buffer is used when present (it is much faster); otherwise atob/btoa, which every
// browser and Node have.

const NodeBuffer = typeof globalThis.Buffer === 'function' ? globalThis.Buffer : null;

/** toBase64 encodes bytes as standard base64 with padding. */
export function toBase64(bytes) {
  const u8 = asBytes(bytes);
  if (NodeBuffer) return NodeBuffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString('base64');
  let s = '';
  for (let i = 0; i < u8.length; i += 0x8000) {
    s += String.fromCharCode.apply(null, u8.subarray(i, i + 0x8000));
  }
  return btoa(s);
}

/**
 * fromBase64 decodes standard base64 (padding required, as kwire writes it) into a new
 * Uint8Array. Anything else is a TypeError.
 */
export function fromBase64(text) {
  if (typeof text !== 'string') throw new TypeError('kwire: base64 text must be a string');
  const n = text.length;
  const pad = n > 0 && text.charCodeAt(n - 1) === 61 ? (text.charCodeAt(n - 2) === 61 ? 2 : 1) : 0;
  const want = (n / 4) * 3 - pad;
  let out;
  if (n % 4 !== 0 || text.indexOf('-') >= 0 || text.indexOf('_') >= 0) {
    out = null;
  } else if (NodeBuffer) {
    const b = NodeBuffer.from(text, 'base64');
    out = new Uint8Array(b.buffer, b.byteOffset, b.length);
  } else {
    let s;
    try {
      s = atob(text);
    } catch {
      s = null;
    }
    if (s !== null) {
      out = new Uint8Array(s.length);
      for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    }
  }
  // Decoders skip characters they do not know: a skipped one shows as a shorter result.
  if (!out || out.length !== want) throw new TypeError('kwire: not standard base64 with padding');
  return out;
}

/** asBytes accepts a Uint8Array (Buffer included), any typed array or DataView, or an ArrayBuffer. */
export function asBytes(b) {
  if (b instanceof Uint8Array) return b;
  if (ArrayBuffer.isView(b)) return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  if (b instanceof ArrayBuffer) return new Uint8Array(b);
  throw new TypeError('kwire: expected a Uint8Array, ArrayBuffer or typed array');
}
