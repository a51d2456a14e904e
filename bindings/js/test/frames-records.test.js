// Frames built around every request and response vector, and every record-batch vector,
// through the binding's public API (the checks of the kwire repository's ABI runners).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load, fromBase64 } from '../index.js';
import { Catalogue, checkFrame, parseVectorLine } from './lib/conformance.js';
import { checkRecordVector } from './lib/records.js';

const VECTORS = fileURLToPath(new URL('../../../conformance/vectors/', import.meta.url));
const kw = await load();
const cat = new Catalogue(kw.catalogue());

for (const f of readdirSync(VECTORS).filter((f) => /^kafka-clients-.+\.jsonl$/.test(f)).sort()) {
  test(`frames around every request and response of ${f}`, () => {
    const lines = readFileSync(VECTORS + f, 'utf8').split('\n').filter((l) => l.trim() !== '');
    let checked = 0;
    const fails = [];
    lines.forEach((line, i) => {
      const v = parseVectorLine(line, fromBase64);
      if (v.kind !== 'request' && v.kind !== 'response') return;
      const msg = checkFrame(kw, cat, v, (i * 7919) | 0);
      if (msg === null) return;
      checked++;
      if (msg !== '') fails.push(`${v.id}: ${msg}`);
    });
    console.log(`${f}: ${checked} frames checked, ${fails.length} failed`);
    assert.ok(checked > 1000, `only ${checked} frames checked`);
    assert.deepEqual(fails.slice(0, 20), []);
  });
}

test('every record-batch vector', () => {
  const dir = VECTORS + 'records/';
  const files = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
  let n = 0;
  const fails = [];
  for (const f of files) {
    for (const line of readFileSync(dir + f, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const v = JSON.parse(line);
      n++;
      const msg = checkRecordVector(kw, v, fromBase64);
      if (msg !== '') fails.push(`${v.name}: ${msg}`);
    }
  }
  console.log(`${n} record vectors checked, ${fails.length} failed`);
  assert.ok(n >= 20, `only ${n} record vectors`);
  assert.deepEqual(fails, []);
});
