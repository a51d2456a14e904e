// The record-batch vectors of the kwire repository (conformance/vectors/records/*.jsonl:
// batches kafka-clients built and what Kafka's reader saw in them) through the binding:
// decodeRecordsJSON must read what Kafka read, decodeRecords (the record table, as views
// and as copies) must agree with it field by field and byte by byte, and encodeRecords of
// the decoded records must decode back to them (and give Kafka's bytes exactly for an
// uncompressed producer batch). Plain JavaScript, shared by the Node and browser tests.

const CONTROL_TYPES = { ABORT: 0, COMMIT: 1, LEADER_CHANGE: 2, SNAPSHOT_HEADER: 3, SNAPSHOT_FOOTER: 4, KRAFT_VERSION: 5, KRAFT_VOTERS: 6 };

function eqBytes(a, b) {
  if ((a === null) !== (b === null)) return false;
  if (a === null) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// sameJSONRecord compares every key of w (g may carry keys a newer ABI minor added).
function sameJSONRecord(g, w) {
  return Object.keys(w).every((k) => JSON.stringify(g[k]) === JSON.stringify(w[k]));
}

/** checkRecordVector returns '' when the vector passes, else what went wrong. */
export function checkRecordVector(kw, v, fromBase64) {
  const bytes = fromBase64(v.bytes);
  let d;
  try {
    d = kw.decodeRecordsJSON(bytes);
  } catch (e) {
    return 'decodeRecordsJSON: ' + e.message;
  }
  let i = 0;
  for (const b of v.batches) {
    for (const r of b.records) {
      if (i >= d.records.length) return `the binding decodes ${d.records.length} records, Kafka more`;
      const g = d.records[i++];
      let controlType = -1;
      if (r.control) {
        controlType = CONTROL_TYPES[r.control.type];
        if (controlType === undefined) return 'unknown control type ' + r.control.type;
      }
      const want = {
        offset: r.offset, timestamp: r.timestamp, timestampType: b.timestampType, key: r.key, value: r.value,
        headers: r.headers.map((h) => ({ key: h.key, value: h.value })),
        producerId: b.producerId, producerEpoch: b.producerEpoch, sequence: r.sequence, leaderEpoch: b.partitionLeaderEpoch,
        magic: b.magic, compression: b.compression, transactional: b.transactional, control: b.control, controlType,
        schemaSource: g.schemaSource, schemaId: g.schemaId, schemaVersion: g.schemaVersion,
      };
      if (!sameJSONRecord(g, want)) return `record ${i - 1}: the binding reads\n${JSON.stringify(g)}\nKafka read\n${JSON.stringify(want)}`;
    }
  }
  if (i !== d.records.length) return `the binding decodes ${d.records.length} records, Kafka ${i}`;
  for (const copy of [false, true]) {
    const msg = checkTable(kw, bytes, d, copy, fromBase64);
    if (msg) return msg;
  }
  return checkReencode(kw, v, bytes, d, fromBase64);
}

function checkTable(kw, bytes, d, copy, fromBase64) {
  let t;
  try {
    t = kw.decodeRecords(bytes, { copy });
  } catch (e) {
    return `decodeRecords (copy: ${copy}): ${e.message}`;
  }
  if (t.records.length !== d.records.length || t.skippedBytes !== d.skippedBytes) {
    return `decodeRecords has ${t.records.length} records (skipped ${t.skippedBytes}), the JSON ${d.records.length} (skipped ${d.skippedBytes})`;
  }
  for (let i = 0; i < t.records.length; i++) {
    const g = t.records[i];
    const w = d.records[i];
    const b64 = (x) => (x === null ? null : fromBase64(x));
    let ok = typeof g.offset === 'bigint' && g.offset.toString() === w.offset && g.timestamp.toString() === w.timestamp &&
      g.producerId.toString() === w.producerId;
    for (const k of ['timestampType', 'producerEpoch', 'sequence', 'leaderEpoch', 'magic', 'compression', 'transactional', 'control', 'controlType', 'schemaSource', 'schemaId', 'schemaVersion']) {
      ok &&= g[k] === w[k];
    }
    ok &&= eqBytes(g.key, b64(w.key)) && eqBytes(g.value, b64(w.value)) && g.headers.length === w.headers.length;
    for (let j = 0; ok && j < g.headers.length; j++) {
      ok = g.headers[j].key === w.headers[j].key && eqBytes(g.headers[j].value, b64(w.headers[j].value));
    }
    if (!ok) return `decodeRecords (copy: ${copy}) record ${i} disagrees with the JSON ${JSON.stringify(w)}`;
    // views share one buffer per call; copies have a buffer each
    if (g.key !== null && g.key.length > 0 && copy !== (g.key.byteOffset === 0 && g.key.buffer.byteLength === g.key.length)) {
      return `decodeRecords (copy: ${copy}) record ${i}: key is ${copy ? 'not a copy' : 'not a view'}`;
    }
  }
  return '';
}

function checkReencode(kw, v, bytes, d, fromBase64) {
  if (v.batches.length === 0 || d.records.length === 0) return '';
  const b0 = v.batches[0];
  if (b0.control || b0.timestampType === 'LogAppendTime' || b0.deleteHorizonMs !== '-1') return ''; // the broker writes these
  for (const b of v.batches.slice(1)) {
    if (b.magic !== b0.magic || b.compression !== b0.compression || b.magic === 2) return '';
  }
  const options = { compression: b0.compression, magic: b0.magic, baseOffset: b0.baseOffset };
  if (b0.magic === 2) {
    Object.assign(options, {
      producerId: BigInt(b0.producerId), producerEpoch: b0.producerEpoch, baseSequence: b0.baseSequence,
      partitionLeaderEpoch: b0.partitionLeaderEpoch, transactional: b0.transactional,
    });
  }
  const b64 = (x) => (x === null ? null : fromBase64(x));
  const recs = d.records.map((r) => {
    const out = { key: b64(r.key), value: b64(r.value), timestamp: BigInt(r.timestamp) };
    if (b0.magic === 2) out.headers = r.headers.map((h) => [h.key, b64(h.value)]);
    return out;
  });
  let enc;
  try {
    enc = kw.encodeRecords(recs, options);
  } catch (e) {
    return 'encodeRecords: ' + e.message;
  }
  if (b0.compression === 'none' && !eqBytes(enc, bytes)) {
    return `encodeRecords of an uncompressed batch gives ${enc.length} bytes, Kafka wrote ${bytes.length}`;
  }
  const back = kw.decodeRecordsJSON(enc);
  if (back.records.length !== d.records.length) return `re-encoded records decode to ${back.records.length} records, want ${d.records.length}`;
  for (let i = 0; i < back.records.length; i++) {
    if (!sameJSONRecord(back.records[i], d.records[i])) {
      return `re-encoded record ${i} reads\n${JSON.stringify(back.records[i])}\nwant\n${JSON.stringify(d.records[i])}`;
    }
  }
  return '';
}
