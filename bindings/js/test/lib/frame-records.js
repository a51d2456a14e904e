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
function fetchBody(version, fields) {
  const partitions = fields.map((records, i) => ({ partitionIndex: i, errorCode: 0, highWatermark: '100', lastStableOffset: '100',
    logStartOffset: '0', abortedTransactions: [], preferredReadReplica: -1, records }));
  const topic = version >= 13 ? { topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitions } : { topic: 'vectors', partitions };
  return { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [topic] };
}

function produceBody(version, fields) {
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
  const paths = kw.hasFrameRecords() ? [{ fallback: false }, { fallback: false, hostDecompress: false }, { fallback: true }] : [{ fallback: true }];
  for (const opts of paths) {
    const how = opts.fallback ? 'per-partition path' : opts.hostDecompress === false ? 'frame-records path, module decompression' : 'frame-records path';
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
