// Checks of the record table objects (RecordTable, RecordSet, Record, columns) and of
// decodeFetch / decodeProduce / encodeProduce against the binding's existing decode
// paths (decodeResponse, decodeRequest, decodeRecords). Plain JavaScript, shared by the
// Node and browser tests. Each check returns '' when it passes, else what went wrong.

function eqBytes(a, b) {
  if ((a === null) !== (b === null)) return false;
  if (a === null) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const b64Length = (s) => (s.length / 4) * 3 - (s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0);
const span = (data, pairs, i) => (pairs[2 * i + 1] === -1 ? null : data.subarray(pairs[2 * i], pairs[2 * i] + pairs[2 * i + 1]));

/**
 * checkSet compares a RecordSet (lazy records and columns) with decodeRecords' records
 * of the same bytes: offsets, timestamps, producer ids exactly (bigint), keys, values,
 * headers byte for byte, and every other field.
 */
export function checkSet(set, want, skippedBytes) {
  if (set.length !== want.length) return `${set.length} records, decodeRecords has ${want.length}`;
  if (set.skippedBytes !== skippedBytes) return `skippedBytes ${set.skippedBytes}, decodeRecords ${skippedBytes}`;
  const c = set.columns();
  if (c.length !== want.length || c.offsets.length !== want.length || c.keys.length !== 2 * want.length) return 'columns have the wrong length';
  let i = 0;
  for (const r of set) {
    const w = want[i];
    if (r.offset !== w.offset || r.timestamp !== w.timestamp || r.producerId !== w.producerId) {
      return `record ${i}: offset/timestamp/producerId ${r.offset}/${r.timestamp}/${r.producerId}, want ${w.offset}/${w.timestamp}/${w.producerId}`;
    }
    for (const k of ['timestampType', 'producerEpoch', 'sequence', 'leaderEpoch', 'magic', 'compression', 'transactional', 'control', 'controlType', 'schemaSource', 'schemaId', 'schemaVersion']) {
      if (r[k] !== w[k]) return `record ${i}: ${k} ${r[k]}, want ${w[k]}`;
    }
    if (!eqBytes(r.key, w.key) || !eqBytes(r.value, w.value)) return `record ${i}: key or value differs`;
    const hs = r.headers;
    if (hs.length !== w.headers.length) return `record ${i}: ${hs.length} headers, want ${w.headers.length}`;
    for (let j = 0; j < hs.length; j++) {
      if (hs[j].key !== w.headers[j].key || !eqBytes(hs[j].value, w.headers[j].value)) return `record ${i}: header ${j} differs`;
    }
    // the columns say the same
    if (c.offsets[i] !== w.offset || c.timestamps[i] !== w.timestamp) return `record ${i}: columns offset/timestamp ${c.offsets[i]}/${c.timestamps[i]}`;
    // Spans index the table, or (layout 3, sources[i] 1) the caller's frame.
    if (c.sources[i] !== 0 && c.sources[i] !== 1) return `record ${i}: columns source ${c.sources[i]}`;
    const buf = c.sources[i] === 1 ? c.input : c.data;
    if (buf === null) return `record ${i}: source 1 without an input`;
    if (!eqBytes(span(buf, c.keys, i), w.key) || !eqBytes(span(buf, c.values, i), w.value)) return `record ${i}: columns key or value differs`;
    if ((c.sources[i] === 1) !== (w.compression === 'none' && set.table.layout >= 3 && w.magic === 2 && !w.control)) {
      return `record ${i}: source ${c.sources[i]} for a ${w.compression} record of magic ${w.magic} in a layout-${set.table.layout} table`;
    }
    const first = c.headerIndex[2 * i];
    const count = c.headerIndex[2 * i + 1];
    if (count !== w.headers.length) return `record ${i}: columns header count ${count}`;
    const td = new TextDecoder();
    for (let j = 0; j < count; j++) {
      const h = 4 * (first + j);
      const key = td.decode(buf.subarray(c.headers[h], c.headers[h] + c.headers[h + 1]));
      const value = c.headers[h + 3] === -1 ? null : buf.subarray(c.headers[h + 2], c.headers[h + 2] + c.headers[h + 3]);
      if (key !== w.headers[j].key || !eqBytes(value, w.headers[j].value)) return `record ${i}: columns header ${j} differs`;
    }
    // at(i) is the same record
    const a = set.at(i);
    if (a.offset !== w.offset || !eqBytes(a.value, w.value)) return `record ${i}: at(${i}) differs`;
    i++;
  }
  if (i !== want.length) return `iteration gave ${i} records`;
  return '';
}

/** checkRecordVectorTable: decodeRecordTable of a record vector against decodeRecords. */
export function checkRecordVectorTable(kw, v, fromBase64) {
  const bytes = fromBase64(v.bytes);
  const want = kw.decodeRecords(bytes);
  const t = kw.decodeRecordTable(bytes);
  const m = checkSet(t.slice(0, t.length, t.skippedBytes), want.records, want.skippedBytes);
  return m && `decodeRecordTable: ${m}`;
}

// The bodies of a Fetch response (v4, v12, v16) and a Produce request (v3, v9, v12)
// holding the given records fields, one partition each (null stays null).
export function fetchBody(version, fields) {
  const partitions = fields.map((records, i) => ({ partitionIndex: i, errorCode: 0, highWatermark: '100', lastStableOffset: '100',
    logStartOffset: '0', abortedTransactions: [], preferredReadReplica: -1, records }));
  const topic = version >= 13 ? { topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitions } : { topic: 'vectors', partitions };
  return { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [topic] };
}

export function produceBody(version, fields) {
  const partitionData = fields.map((records, i) => ({ index: i, records }));
  return { transactionalId: null, acks: -1, timeoutMs: 30000, topicData: [version >= 13 ? { topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitionData } : { name: 'vectors', partitionData }] };
}

export const FETCH_VERSIONS = [4, 12, 16];
export const PRODUCE_VERSIONS = [3, 9, 12];

/**
 * checkFrames wraps a records field (and a null one, and the same field again) into
 * Fetch responses and Produce requests and checks decodeFetch / decodeProduce, through
 * whichever path the module offers and through the per-partition path, against
 * decodeResponse / decodeRequest + decodeRecords.
 */
export function checkFrames(kw, bytes, toBase64) {
  const b64 = toBase64(bytes);
  for (const v of FETCH_VERSIONS) {
    const frame = kw.encodeResponse({ header: { correlationId: 5 }, body: fetchBody(v, [b64, null, b64]) }, 1, v);
    const m = checkDecoded(kw, frame, 1, v);
    if (m) return `Fetch v${v}: ${m}`;
  }
  for (const v of PRODUCE_VERSIONS) {
    const frame = kw.encodeRequest({ header: { requestApiKey: 0, requestApiVersion: v, correlationId: 6, clientId: 'c' }, body: produceBody(v, [b64, null, b64]) });
    const m = checkDecoded(kw, frame, 0, v);
    if (m) return `Produce v${v}: ${m}`;
  }
  return '';
}

/**
 * checkDecoded: decodeFetch(frame, version) (apiKey 1) or decodeProduce(frame) (apiKey 0)
 * through both paths against the JSON frame and decodeRecords. When a partition's records
 * do not decode, both paths must fail with that error's class.
 */
export function checkDecoded(kw, frame, apiKey, version) {
  const plain = apiKey === 0 ? kw.decodeRequest(frame) : kw.decodeResponse(frame, 1, version);
  const parts = apiKey === 0 ? plain.body.topicData.flatMap((t) => t.partitionData) : plain.body.responses.flatMap((t) => t.partitions);
  let wantErr = null;
  const want = [];
  for (const p of parts) {
    if (p.records === null || p.records === undefined) continue;
    try {
      want.push(kw.decodeRecords(p.records));
    } catch (e) {
      wantErr = e;
      break;
    }
  }
  let verdicts = null; // the invalidPartitions of the first path, which the other must repeat
  // The frame-records path with the host's decompressors (where the host has any) and
  // without, and the per-partition path.
  // With ABI 1.4 the frame-records path reads layout 4 (columns); { layout: 3 } reads the
  // record entries of layout 3 as before.
  const paths = kw.hasFrameRecords()
    ? [{ fallback: false }, { fallback: false, hostDecompress: false }, { fallback: false, layout: 3 }, { fallback: true }]
    : [{ fallback: true }];
  for (const opts of paths) {
    const how = opts.fallback ? 'per-partition path' : opts.hostDecompress === false ? 'frame-records path, module decompression'
      : opts.layout === 3 ? 'frame-records path, layout 3' : 'frame-records path';
    let got;
    try {
      got = apiKey === 0 ? kw.decodeProduce(frame, opts) : kw.decodeFetch(frame, version, opts);
    } catch (e) {
      if (wantErr !== null && e.constructor === wantErr.constructor && e.status === wantErr.status) continue;
      return `${how}: ${e.message}${wantErr ? ` (decodeRecords fails with ${wantErr.message})` : ''}`;
    }
    if (wantErr !== null) return `${how}: decodes a frame whose records decodeRecords refuses (${wantErr.message})`;
    // everything but the records fields equals the JSON frame
    const gotParts = apiKey === 0 ? got.body.topicData.flatMap((t) => t.partitionData) : got.body.responses.flatMap((t) => t.partitions);
    if (gotParts.length !== parts.length) return `${how}: ${gotParts.length} partitions, want ${parts.length}`;
    const strip = (f) => JSON.stringify({ ...f, partitions: undefined, invalidPartitions: undefined }, (k, x) => (k === 'records' && x !== null ? 'R' : x));
    if (apiKey === 0) {
      const v = JSON.stringify(got.invalidPartitions);
      if (verdicts !== null && v !== verdicts) return `${how}: invalidPartitions ${v}, the other path ${verdicts}`;
      verdicts = v;
    }
    if (strip(got) !== strip(plain)) return `${how}: the frame differs from the JSON frame:\n${strip(got).slice(0, 300)}\n${strip(plain).slice(0, 300)}`;
    let k = 0;
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      const g = gotParts[i].records;
      if (p.records === null || p.records === undefined) {
        if (g !== p.records) return `${how}: partition ${i}: records ${g}, want ${p.records}`;
        continue;
      }
      if (got.partitions[k]?.records !== g) return `${how}: partitions[${k}] is not partition ${i}'s RecordSet`;
      const m = checkSet(g, want[k].records, want[k].skippedBytes);
      if (m) return `${how}: partition ${i}: ${m}`;
      if (g.size !== -1 && g.size !== b64Length(p.records)) return `${how}: partition ${i}: size ${g.size}`;
      k++;
    }
    if (got.partitions.length !== k) return `${how}: partitions has ${got.partitions.length} entries, want ${k}`;
  }
  return '';
}

/**
 * checkEncode: records decoded from a vector, encoded into a Produce request by
 * encodeProduce (both paths when the module has the frame calls), must decode back to the
 * same records; for an uncompressed producer batch the frame must equal encodeRequest's
 * with Kafka's bytes.
 */
export function checkEncode(kw, v, fromBase64, toBase64) {
  const bytes = fromBase64(v.bytes);
  const b0 = v.batches[0];
  if (!b0 || b0.control || b0.timestampType === 'LogAppendTime' || b0.deleteHorizonMs !== '-1' || v.batches.length !== 1 || b0.magic !== 2) return null;
  const set = kw.decodeRecordTable(bytes);
  const spec = { records: set.slice(), compression: b0.compression, baseOffset: BigInt(b0.baseOffset), producerId: BigInt(b0.producerId),
    producerEpoch: b0.producerEpoch, baseSequence: b0.baseSequence, partitionLeaderEpoch: b0.partitionLeaderEpoch, transactional: b0.transactional };
  const frame = (records) => ({ header: { requestApiKey: 0, requestApiVersion: 9, correlationId: 3, clientId: 'e' },
    body: produceBody(9, [records, null]) });
  const outs = [];
  for (const fallback of kw.hasFrameRecords() ? [false, true] : [true]) {
    let enc;
    try {
      enc = kw.encodeProduce(frame(spec), { fallback });
    } catch (e) {
      return `encodeProduce (fallback ${fallback}): ${e.message}`;
    }
    outs.push(enc);
    const back = kw.decodeProduce(enc);
    const want = kw.decodeRecords(bytes);
    const m = checkSet(back.partitions[0].records, want.records.map((r) => ({ ...r })), 0);
    if (m) return `encodeProduce (fallback ${fallback}) decodes back differently: ${m}`;
  }
  if (outs.length === 2 && toBase64(outs[0]) !== toBase64(outs[1])) return 'the frame-records and per-partition paths encode different bytes';
  if (b0.compression === 'none' && toBase64(outs[0]) !== toBase64(kw.encodeRequest(frame(toBase64(bytes))))) {
    return 'encodeProduce of an uncompressed producer batch differs from the frame with Kafka\'s bytes';
  }
  return '';
}

// The bytes as a string of as many chars (for exact comparison, not for reading).
const bin = (b) => {
  if (b === null) return 'null';
  let s = 'b:';
  for (let i = 0; i < b.length; i += 8192) s += String.fromCharCode.apply(null, b.subarray(i, i + 8192));
  return s;
};
const show = (x) => JSON.stringify(x, (k, v) => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? bin(v) : v));

// What a decode of the frame gives: the error (class, status, message, details), or the
// frame with every record (toObject, rawHeaders) and every partition's columns.
function layoutOutcome(kw, frame, apiKey, version, options) {
  let f;
  try {
    f = apiKey === 0 ? kw.decodeProduce(frame, options) : kw.decodeFetch(frame, version, options);
  } catch (e) {
    return { error: `${e.constructor.name} ${e.status} ${e.message} ${JSON.stringify(e.details ?? null)}` };
  }
  const sets = f.partitions.map((p) => p.records);
  const frameJSON = show({ ...f, partitions: undefined }); // a RecordSet as its toJSON
  const records = sets.map((set) => Array.from(set, (r) => show({ ...r.toObject(), raw: r.rawHeaders })));
  const layouts = [...new Set(sets.map((set) => set.table.layout))];
  return { frameJSON, records, sets, layouts };
}

// The batch fields of record i as its columns give them (batchIndex into batches).
function batchFieldsOf(c, i, BatchWords) {
  const e = c.batchIndex[i] * c.batchStride;
  const out = {};
  for (const [k, w] of Object.entries(BatchWords)) out[k] = c.batches[e + w];
  out.baseOffset = c.batches64[(e + BatchWords.baseOffset) >> 1];
  out.producerId = c.batches64[(e + BatchWords.producerId) >> 1];
  return out;
}

/**
 * compareLayouts decodes the frame (decodeProduce for apiKey 0, else decodeFetch) with
 * the given options twice, reading layout 4 (the default with ABI 1.4) and layout 3
 * ({ layout: 3 }), and returns '' when both give the same: the same error, or the same
 * frame, the same records (every field of toObject, headers, rawHeaders) and the same
 * columns (every array; the batch fields of each record through batchIndex, whose first
 * record, record count and sequence must hold too). Else what differs.
 */
export function compareLayouts(kw, frame, apiKey, version, options, BatchWords) {
  const a = layoutOutcome(kw, frame, apiKey, version, options);
  const b = layoutOutcome(kw, frame, apiKey, version, { ...options, layout: 3 });
  if (a.error !== undefined || b.error !== undefined) {
    return a.error === b.error ? '' : `errors differ: layout 4 ${a.error ?? 'decodes'}, layout 3 ${b.error ?? 'decodes'}`;
  }
  if (a.sets.length > 0 && (a.layouts.join() !== '4' || (b.layouts.join() !== '3' && b.layouts.join() !== '2'))) {
    return `layouts ${a.layouts} and ${b.layouts}`;
  }
  if (a.frameJSON !== b.frameJSON) return `frames differ:\n${a.frameJSON.slice(0, 300)}\n${b.frameJSON.slice(0, 300)}`;
  for (let p = 0; p < a.sets.length; p++) {
    for (let i = 0; i < Math.max(a.records[p].length, b.records[p].length); i++) {
      if (a.records[p][i] !== b.records[p][i]) return `partition ${p} record ${i}:\n${a.records[p][i]}\n${b.records[p][i]}`;
    }
    const ca = a.sets[p].columns();
    const cb = b.sets[p].columns();
    if (ca.length !== cb.length || ca.length !== a.sets[p].length) return `partition ${p}: columns of ${ca.length} and ${cb.length} records`;
    // Spans into the table differ by the size of the table header (96 bytes in layout 4,
    // 48 before): they are compared as the bytes they name, below.
    for (const k of ['offsets', 'timestamps', 'headerIndex', 'sources', 'controlTypes', 'schemas']) {
      const x = ca[k];
      const y = cb[k];
      if (x.length !== y.length) return `partition ${p}: columns.${k} of ${x.length} and ${y.length}`;
      for (let j = 0; j < x.length; j++) if (x[j] !== y[j]) return `partition ${p}: columns.${k}[${j}] ${x[j]} and ${y[j]}`;
    }
    if ((ca.input === null) !== (cb.input === null)) return `partition ${p}: columns.input ${ca.input} and ${cb.input}`;
    const records = Array.from(a.sets[p]);
    for (let i = 0; i < ca.length; i++) {
      // The spans index the same bytes.
      const bufA = ca.sources[i] === 1 ? ca.input : ca.data;
      const bufB = cb.sources[i] === 1 ? cb.input : cb.data;
      if (bin(span(bufA, ca.values, i)) !== bin(span(bufB, cb.values, i)) || bin(span(bufA, ca.keys, i)) !== bin(span(bufB, cb.keys, i))) {
        return `partition ${p} record ${i}: columns key or value bytes differ`;
      }
      if (ca.keys[2 * i + 1] !== cb.keys[2 * i + 1] || ca.values[2 * i + 1] !== cb.values[2 * i + 1] ||
          (ca.sources[i] === 1 && (ca.keys[2 * i] !== cb.keys[2 * i] || ca.values[2 * i] !== cb.values[2 * i]))) {
        return `partition ${p} record ${i}: columns keys/values (${ca.keys.subarray(2 * i, 2 * i + 2)}) (${ca.values.subarray(2 * i, 2 * i + 2)}) and (${cb.keys.subarray(2 * i, 2 * i + 2)}) (${cb.values.subarray(2 * i, 2 * i + 2)})`;
      }
      for (let h = 4 * ca.headerIndex[2 * i], end = h + 4 * ca.headerIndex[2 * i + 1]; h < end; h += 4) {
        const hs = (c, buf) => `${bin(buf.subarray(c.headers[h], c.headers[h] + c.headers[h + 1]))}=${bin(span(buf, c.headers, h / 2 + 1))}`;
        if (hs(ca, bufA) !== hs(cb, bufB)) return `partition ${p} record ${i}: columns header entry ${h / 4}: ${hs(ca, bufA)} and ${hs(cb, bufB)}`;
      }
      const fa = batchFieldsOf(ca, i, BatchWords);
      const fb = batchFieldsOf(cb, i, BatchWords);
      const t = a.sets[p].first + i;
      if (fa.firstRecord > t || t >= fa.firstRecord + fa.recordCount) return `partition ${p} record ${i}: batch ${show(fa)} does not hold record ${t}`;
      const r = records[i];
      // Kafka's sequence of a record (Go's records.RecordSequence, int32 arithmetic).
      const delta = Number(BigInt.asIntN(32, r.offset - fa.baseOffset));
      const base = fa.baseSequence;
      const seq = base < 0 ? -1 : base > ((2147483647 - delta) | 0) ? (delta - ((2147483647 - base) | 0) - 1) | 0 : (base + delta) | 0;
      if (seq !== r.sequence || fb.baseSequence !== r.sequence) return `partition ${p} record ${i}: sequence ${r.sequence}, batch ${show(fa)}`;
      for (const k of ['producerId', 'leaderEpoch', 'producerEpoch', 'magic', 'compression', 'timestampType', 'flags', 'source']) {
        if (fa[k] !== fb[k]) return `partition ${p} record ${i}: batch ${k} ${fa[k]} and ${fb[k]}`;
      }
      if (fa.source !== ca.sources[i]) return `partition ${p} record ${i}: batch source ${fa.source}, record source ${ca.sources[i]}`;
    }
  }
  return '';
}
