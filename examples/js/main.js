// Decodes the sample frames in examples/data with kwire's JavaScript binding and prints
// every message in the format all the language examples share (examples/README.md).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { init, decodeRequest, decodeResponse, decodeRecords, apis } from '../../bindings/js/index.js';

const dir = process.argv[2] ?? join('examples', 'data');
const utf8 = new TextDecoder();

// quote writes bytes as a JSON string the way Go's encoding/json does (it also escapes
// <, > and & and the two line separators), or null.
function quote(b) {
  if (b === null) return 'null';
  return JSON.stringify(utf8.decode(b)).replace(/[<>&\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

function print(topic, partition, records) {
  for (const r of decodeRecords(records).records) {
    const headers = r.headers.map((h) => `${h.key}=${quote(h.value)}`).join(' ');
    console.log(`  ${topic}/${partition} offset ${r.offset} timestamp ${r.timestamp} ${r.compression} key ${quote(r.key)} value ${quote(r.value)} headers [${headers}]`);
  }
}

await init();

const req = decodeRequest(readFileSync(join(dir, 'produce-request.bin')));
const api = apis().find((a) => a.apiKey === req.apiKey);
console.log(`request: ${api.name} v${req.header.requestApiVersion} correlation ${req.header.correlationId} client ${req.header.clientId}`);
if (req.apiKey === 0) {
  for (const t of req.body.topicData) {
    for (const p of t.partitionData) print(t.name, p.index, p.records);
  }
}

const resp = decodeResponse(readFileSync(join(dir, 'fetch-response.bin')), 1, 12);
console.log(`response: Fetch v12 correlation ${resp.header.correlationId}`);
for (const t of resp.body.responses) {
  for (const p of t.partitions) print(t.topic, p.partitionIndex, p.records);
}
