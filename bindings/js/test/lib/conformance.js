// The conformance checks of the kwire repository (conformance/README.md), through this
// binding's public API: for each vector Kafka wrote, decode (bytes -> decodeMessage ->
// object, compared semantically with the vector's json), encode (the vector's json ->
// encodeMessage -> bytes, compared with its bytes) and round trip (decodeMessage ->
// object -> encodeMessage -> the same bytes). Renamed fields and superseded unstable
// versions are handled from the module's own catalogue, as the Go runners do. Plain
// JavaScript: the Node tests and the browser page both use it.

/** parseVectorLine parses one JSON Lines vector, keeping the json member's exact text. */
export function parseVectorLine(line, fromBase64) {
  const v = JSON.parse(line);
  const start = line.indexOf('"json":') + 7;
  const end = line.lastIndexOf(',"bytes":');
  let jsonText = start > 6 && end > start ? line.slice(start, end) : JSON.stringify(v.json);
  try {
    JSON.parse(jsonText);
  } catch {
    jsonText = JSON.stringify(v.json);
  }
  return { id: v.id, name: v.name, apiKey: v.apiKey, kind: v.kind, version: v.version, json: v.json, jsonText, bytes: fromBase64(v.bytes) };
}

function show(v) {
  const s = v === undefined ? '(absent)' : JSON.stringify(v);
  return s.length > 80 ? s.slice(0, 77) + '...' : s;
}

/** jsonDiff returns the first difference ({path, want, got}) or null. */
export function jsonDiff(want, got, path = '$') {
  if (Array.isArray(want)) {
    if (!Array.isArray(got)) return { path, want: show(want), got: show(got) };
    for (let i = 0; i < want.length && i < got.length; i++) {
      const d = jsonDiff(want[i], got[i], `${path}[${i}]`);
      if (d) return d;
    }
    if (want.length !== got.length) return { path, want: `${want.length} elements`, got: `${got.length} elements` };
    return null;
  }
  if (want !== null && typeof want === 'object') {
    if (got === null || typeof got !== 'object' || Array.isArray(got)) return { path, want: show(want), got: show(got) };
    const keys = [...new Set([...Object.keys(want), ...Object.keys(got)])].sort();
    for (const k of keys) {
      const p = `${path}.${k}`;
      if (!(k in want)) return { path: p, want: '(absent)', got: show(got[k]) };
      if (!(k in got)) return { path: p, want: show(want[k]), got: '(absent)' };
      const d = jsonDiff(want[k], got[k], p);
      if (d) return d;
    }
    return null;
  }
  // numbers compare by value and sign (-0 is not 0), like the Go runner's bit comparison
  return Object.is(want, got) ? null : { path, want: show(want), got: show(got) };
}

function applyRename(v, steps, oldName, newName) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return;
  if (steps.length === 0) {
    if (oldName in v && !(newName in v)) {
      v[newName] = v[oldName];
      delete v[oldName];
    }
    return;
  }
  const [step, ...rest] = steps;
  if (step.endsWith('[]')) {
    const arr = v[step.slice(0, -2)];
    if (Array.isArray(arr)) for (const e of arr) applyRename(e, rest, oldName, newName);
    return;
  }
  applyRename(v[step], rest, oldName, newName);
}

/** renamedJSON returns the vector's json with the catalogue's renames applied (a copy when any applies). */
export function renamedJSON(json, m) {
  if (!m.renames || m.renames.length === 0) return { json, renamed: false };
  const before = JSON.stringify(json);
  const copy = JSON.parse(before);
  for (const r of m.renames) applyRename(copy, r.path === '' ? [] : r.path.split('.'), r.old, r.new);
  return { json: copy, renamed: JSON.stringify(copy) !== before };
}

function firstDiff(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

function sameBytes(a, b) {
  return firstDiff(a, b) === -1;
}

/** Catalogue lookups: by name, else (a message Kafka renamed) by api key and kind. */
export class Catalogue {
  constructor(cat) {
    this.cat = cat;
    this.byName = new Map(cat.messages.map((m) => [m.name, m]));
  }
  lookup(name, apiKey, kind) {
    const m = this.byName.get(name);
    if (m) return { m, alias: false };
    const a = this.cat.apis.find((x) => x.apiKey === apiKey);
    if (a && (kind === 'request' || kind === 'response')) {
      return { m: this.byName.get(kind === 'request' ? a.request : a.response) ?? null, alias: true };
    }
    return { m: null, alias: false };
  }
  apiMessage(apiKey, kind) {
    const a = this.cat.apis.find((x) => x.apiKey === apiKey);
    return a ? (kind === 'request' ? a.request : a.response) : '';
  }
}

/** checkVector runs the three comparisons; it returns the failures (empty when all pass). */
export function checkVector(kw, cat, v) {
  const fails = [];
  const fail = (check, detail) => fails.push({ id: v.id, check, detail });
  const { m } = cat.lookup(v.name, v.apiKey, v.kind);
  if (!m) {
    for (const c of ['decode', 'encode', 'round-trip']) fail(c, `the catalogue has no message ${v.name} (api key ${v.apiKey}, ${v.kind})`);
    return fails;
  }
  if (m.kind !== v.kind || m.apiKey !== v.apiKey) {
    fail('decode', `the catalogue's ${m.name} is a ${m.kind} with api key ${m.apiKey}`);
    return fails;
  }
  let decoded = null;
  try {
    decoded = kw.decodeMessage(m.name, v.version, v.bytes);
    const d = jsonDiff(renamedJSON(v.json, m).json, decoded);
    if (d) fail('decode', `JSON differs at ${d.path}: want ${d.want}, got ${d.got}`);
  } catch (e) {
    fail('decode', `decodeMessage failed: ${e.message}`);
  }
  try {
    const enc = kw.encodeMessage(m.name, v.version, v.jsonText);
    if (!sameBytes(enc, v.bytes)) fail('encode', `encodes ${enc.length} bytes, Kafka wrote ${v.bytes.length}; first difference at ${firstDiff(enc, v.bytes)}`);
  } catch (e) {
    fail('encode', `encodeMessage failed: ${e.message}`);
  }
  if (decoded !== null) {
    try {
      const re = kw.encodeMessage(m.name, v.version, decoded);
      if (!sameBytes(re, v.bytes)) fail('round-trip', `re-encodes ${re.length} bytes, input had ${v.bytes.length}; first difference at ${firstDiff(re, v.bytes)}`);
    } catch (e) {
      fail('round-trip', `encodeMessage of the decoded object failed: ${e.message}`);
    }
  } else {
    fail('round-trip', 'skipped: the bytes did not decode');
  }
  return fails;
}

/**
 * Report runs a release's vectors and keeps the coverage: (api, version, kind) triples,
 * vectors, failures per check and kind, excused superseded versions.
 */
export class Report {
  constructor(release, manifest) {
    this.release = release;
    this.manifest = manifest;
    this.byKey = new Map(manifest.messages.map((mm) => [mm.kind + ' ' + mm.name, mm]));
    this.vectors = 0;
    this.triples = new Map(); // kind -> Set of "name vN"
    this.perKind = new Map(); // kind -> {vectors, decode, encode, round-trip} (failed vector counts)
    this.failures = [];
    this.excused = new Map(); // "name vN" -> count
    this.renamed = 0;
    this.aliases = new Map();
  }

  add(kw, cat, v) {
    this.vectors++;
    if (!this.triples.has(v.kind)) this.triples.set(v.kind, new Set());
    this.triples.get(v.kind).add(`${v.name} v${v.version}`);
    let k = this.perKind.get(v.kind);
    if (!k) this.perKind.set(v.kind, (k = { vectors: 0, decode: 0, encode: 0, 'round-trip': 0 }));
    k.vectors++;
    const { m, alias } = cat.lookup(v.name, v.apiKey, v.kind);
    if (m && alias) this.aliases.set(v.name, m.name);
    if (m && renamedJSON(v.json, m).renamed) this.renamed++;
    const fs = checkVector(kw, cat, v);
    if (fs.length === 0) return fs;
    if (m && this.superseded(m, v)) {
      const key = `${v.name} v${v.version}`;
      this.excused.set(key, (this.excused.get(key) ?? 0) + 1);
      return [];
    }
    for (const c of new Set(fs.map((f) => f.check))) k[c]++;
    this.failures.push(...fs);
    return fs;
  }

  superseded(m, v) {
    const declared = (m.superseded ?? []).some((s) => s.release === this.release && s.version === v.version);
    const mm = this.byKey.get(v.kind + ' ' + v.name);
    return declared && mm !== undefined && mm.unstableVersion === v.version;
  }

  failedVectors() {
    return new Set(this.failures.map((f) => f.id)).size;
  }

  table(host) {
    const rows = [['kind', '(api,version,kind)', 'vectors', 'decode fail', 'encode fail', 'round-trip fail']];
    const tot = [0, 0, 0, 0, 0];
    for (const kind of ['request', 'response', 'header', 'data']) {
      const k = this.perKind.get(kind) ?? { vectors: 0, decode: 0, encode: 0, 'round-trip': 0 };
      const t = this.triples.get(kind)?.size ?? 0;
      const r = [t, k.vectors, k.decode, k.encode, k['round-trip']];
      r.forEach((x, i) => (tot[i] += x));
      rows.push([kind, ...r.map(String)]);
    }
    rows.push(['total', ...tot.map(String)]);
    const w = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
    const lines = [`kafka-clients ${this.release} vs kwire through the JavaScript binding (${host})`];
    for (const r of rows) lines.push(r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  '));
    if (this.renamed > 0) lines.push(`note: ${this.renamed} vectors use field names a newer release renamed; compared under the catalogue's renames`);
    for (const [k, n] of [...this.excused].sort()) {
      lines.push(`excused: ${k}: ${n} vectors differ; Kafka ${this.release} marks it unstable and kwire implements the newer definition (catalogue: superseded)`);
    }
    for (const [a, b] of [...this.aliases].sort()) lines.push(`note: kwire has no message named ${a}; its vectors ran against ${b} (same api key)`);
    return lines.join('\n');
  }
}

/** onePerTriple keeps the first vector of each (name, version, kind). */
export function onePerTriple(vectors) {
  const seen = new Set();
  return vectors.filter((v) => {
    const k = `${v.kind} ${v.name} ${v.version}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/**
 * checkFrame wraps a request or response vector's body in a frame (header from
 * encodeMessage at the header version headerVersions gives, correlation id and client id
 * varying) and checks: decodeRequest/decodeResponse give the envelope of kwire.h with the
 * body decodeMessage gives; encodeRequest/encodeResponse of that object give the frame
 * back; peekHeader reads the header fields, also from the frame's first bytes only.
 * It returns '' on success, null when the body does not decode (left to checkVector).
 */
export function checkFrame(kw, cat, v, corr) {
  const name = cat.apiMessage(v.apiKey, v.kind);
  if (!name) return null;
  let body;
  try {
    body = kw.decodeMessage(name, v.version, v.bytes);
  } catch {
    return null;
  }
  const clientId = `client-${corr % 97}`;
  const hvs = kw.headerVersions(v.apiKey, v.version);
  const hv = v.kind === 'request' ? hvs.request : hvs.response;
  const header = v.kind === 'request'
    ? kw.encodeMessage('RequestHeader', hv, { requestApiKey: v.apiKey, requestApiVersion: v.version, correlationId: corr, clientId })
    : kw.encodeMessage('ResponseHeader', hv, { correlationId: corr });
  const frame = new Uint8Array(4 + header.length + v.bytes.length);
  new DataView(frame.buffer).setUint32(0, header.length + v.bytes.length);
  frame.set(header, 4);
  frame.set(v.bytes, 4 + header.length);

  const env = v.kind === 'request' ? kw.decodeRequest(frame) : kw.decodeResponse(frame, v.apiKey, v.version);
  const keys = Object.keys(env).join(',');
  if (keys !== 'apiKey,apiVersion,headerVersion,header,body') return `frame object has keys ${keys}`;
  if (env.apiKey !== v.apiKey || env.apiVersion !== v.version || env.headerVersion !== hv) {
    return `frame names api ${env.apiKey} v${env.apiVersion} header v${env.headerVersion}, want ${v.apiKey} v${v.version} header v${hv}`;
  }
  const d = jsonDiff(body, env.body);
  if (d) return `frame body differs from decodeMessage at ${d.path}: ${d.want} vs ${d.got}`;
  if (env.header.correlationId !== corr) return `header correlation id ${env.header.correlationId}, want ${corr}`;
  if (v.kind === 'request' && hv >= 1 && env.header.clientId !== clientId) return `header client id ${env.header.clientId}, want ${clientId}`;

  const re = v.kind === 'request' ? kw.encodeRequest(env) : kw.encodeResponse(env);
  if (firstDiff(re, frame) !== -1) return `the frame object encodes to ${re.length} bytes, the frame had ${frame.length}; first difference at ${firstDiff(re, frame)}`;

  if (v.kind === 'request') {
    const want = { frameSize: frame.length - 4, apiKey: v.apiKey, apiVersion: v.version, correlationId: corr, headerVersion: hv,
      clientId: hv >= 1 ? clientId : null, clientIdOffset: hv >= 1 ? 14 : -1, clientIdLength: hv >= 1 ? clientId.length : -1 };
    const p = kw.peekHeader(frame);
    if (JSON.stringify(p) !== JSON.stringify(want)) return `peek gives ${JSON.stringify(p)}, want ${JSON.stringify(want)}`;
    if (hv >= 1) {
      const p2 = kw.peekHeader(frame.subarray(0, 14 + clientId.length));
      if (JSON.stringify(p2) !== JSON.stringify(want)) return `peek of the first ${14 + clientId.length} bytes gives ${JSON.stringify(p2)}`;
    }
  }
  return '';
}
