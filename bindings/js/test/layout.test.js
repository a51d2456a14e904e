// The record table's field offsets in src/layout.js are capi/kwire.h's KW_REC_* and
// KW_HDR_* (the header is the one definition of the layout).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { HDR, REC, SOURCE_INPUT, SOURCE_TABLE } from '../src/layout.js';
import { BatchWords } from '../src/table.js';

const header = readFileSync(new URL('../../../capi/kwire.h', import.meta.url), 'utf8');
const defines = new Map([...header.matchAll(/^#define (KW_(?:REC|HDR|SOURCE|RB)_[A-Z_]+) (\d+)/gm)].map((m) => [m[1], Number(m[2])]));
const upper = (name) => name.replace(/[A-Z]/g, (c) => '_' + c).toUpperCase();

test('record and header entry offsets match kwire.h', () => {
  let n = 0;
  for (const [name, off] of Object.entries(REC)) {
    assert.equal(off, defines.get('KW_REC_' + upper(name)), `REC.${name}`);
    n++;
  }
  for (const [name, off] of Object.entries(HDR)) {
    assert.equal(off, defines.get('KW_HDR_' + upper(name)), `HDR.${name}`);
    n++;
  }
  assert.equal(SOURCE_TABLE, defines.get('KW_SOURCE_TABLE'));
  assert.equal(SOURCE_INPUT, defines.get('KW_SOURCE_INPUT'));
  // Every KW_REC_ field of kwire.h is known here (but the stride).
  const recNames = [...defines.keys()].filter((k) => k.startsWith('KW_REC_') && k !== 'KW_REC_STRIDE');
  assert.equal(recNames.length, Object.keys(REC).length);
  assert.ok(n >= 25);
});

test("the batch entry's word indexes (BatchWords) are kwire.h's KW_RB_* / 4", () => {
  const rb = [...defines.keys()].filter((k) => k.startsWith('KW_RB_') && k !== 'KW_RB_STRIDE');
  assert.equal(rb.length, Object.keys(BatchWords).length);
  for (const [name, word] of Object.entries(BatchWords)) assert.equal(word * 4, defines.get('KW_RB_' + upper(name)), `BatchWords.${name}`);
});
