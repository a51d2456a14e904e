// Every conformance vector of the kwire repository (conformance/vectors/kafka-clients-*.jsonl)
// through the binding's public API: decode, encode and round trip, 0 failures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load, fromBase64 } from '../index.js';
import { Catalogue, Report, parseVectorLine } from './lib/conformance.js';

const VECTORS = fileURLToPath(new URL('../../../conformance/vectors/', import.meta.url));

const releases = readdirSync(VECTORS)
  .map((f) => /^kafka-clients-(.+)\.jsonl$/.exec(f)?.[1])
  .filter(Boolean)
  .sort();

test('the repository has vectors of at least two releases', () => {
  assert.ok(releases.length >= 2, `releases found: ${releases}`);
});

const kw = await load();
const cat = new Catalogue(kw.catalogue());

for (const release of releases) {
  test(`kafka-clients ${release}: every vector decodes, encodes and round-trips`, () => {
    const manifest = JSON.parse(readFileSync(`${VECTORS}/kafka-clients-${release}.manifest.json`, 'utf8'));
    const lines = readFileSync(`${VECTORS}/kafka-clients-${release}.jsonl`, 'utf8').split('\n').filter((l) => l.trim() !== '');
    const report = new Report(release, manifest);
    for (const line of lines) report.add(kw, cat, parseVectorLine(line, fromBase64));
    console.log(report.table('Node ' + process.version));
    assert.equal(report.vectors, lines.length);
    assert.ok(report.vectors > 1000, `only ${report.vectors} vectors`);
    for (const kind of ['request', 'response', 'header', 'data']) {
      assert.ok((report.triples.get(kind)?.size ?? 0) > 0, `no ${kind} vectors`);
    }
    // every (message, version) the release lists has vectors
    for (const mm of manifest.messages) {
      if (mm.minVersion < 0) continue;
      for (let v = mm.minVersion; v <= mm.maxVersion; v++) {
        assert.ok(report.triples.get(mm.kind)?.has(`${mm.name} v${v}`), `no vector for ${mm.kind} ${mm.name} v${v}`);
      }
    }
    const shown = report.failures.slice(0, 30).map((f) => `${f.id} [${f.check}] ${f.detail}`).join('\n');
    assert.equal(report.failures.length, 0, `${report.failedVectors()} of ${report.vectors} vectors failed:\n${shown}`);
  });
}
