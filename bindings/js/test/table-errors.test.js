// The two readers of the record table (readTable behind decodeRecords, RecordTable behind
// the frame calls) on corrupt tables: each refuses with its own exact message, and
// neither reads outside the table. Also a layout-2 table (frame JSON after the header).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RecordTable, RecordTableBuilder } from '../index.js';
import { readTable } from '../src/records.js';

// One record (key 'k' at 152, value 'v' at 153) with one header ('h' at 154, 'x' at 155):
// records at 40 (stride 96), headers at 136 (stride 16), 156 bytes.
function sample() {
  const b = new RecordTableBuilder();
  b.add({ key: 'k', value: 'v', headers: [['h', 'x']] });
  return b.build();
}

function withInts(sets) {
  const buf = sample();
  const dv = new DataView(buf.buffer);
  for (const [at, v] of sets) dv.setInt32(at, v, true);
  return buf;
}

// The same table in layout 2: 8 more header bytes (json_offset, json_length), every
// offset moved by 8, and json text appended at the end.
function layout2(json, jsonAt) {
  const one = sample();
  const jb = new TextEncoder().encode(json);
  const buf = new Uint8Array(one.length + 8 + jb.length);
  buf.set(one.subarray(0, 40));
  buf.set(one.subarray(40), 48);
  buf.set(jb, one.length + 8);
  const dv = new DataView(buf.buffer);
  for (const [at, v] of [[4, 2], [16, 48], [28, 144], [36, buf.length], [40, jsonAt ?? one.length + 8], [44, jb.length]]) {
    dv.setInt32(at, v, true);
  }
  for (const at of [48 + 24, 48 + 32, 144, 144 + 8]) dv.setInt32(at, dv.getInt32(at, true) + 8, true);
  return buf;
}

const R = 40; // the record entry
const H = 136; // the header entry
const geometry = (layout, n, hn, size) => `geometry (layout ${layout}, ${n} records, ${hn} headers, ${size} bytes)`;

// [name, table, readTable's message, RecordTable's message] (null: the table is read).
const cases = [
  ['shorter than a header', () => sample().slice(0, 30), 'no KWRT header', 'no KWRT header'],
  ['bad magic', () => { const b = sample(); b[3] = 0; return b; }, 'no KWRT header', 'no KWRT header'],
  ['total size not the buffer size', () => withInts([[36, 155]]), geometry(1, 1, 1, 156), geometry(1, 1, 1, 156)],
  ['layout 0', () => withInts([[4, 0]]), geometry(0, 1, 1, 156), geometry(0, 1, 1, 156)],
  ['record stride below 96', () => withInts([[12, 95]]), geometry(1, 1, 1, 156), geometry(1, 1, 1, 156)],
  ['header stride below 16', () => withInts([[24, 15]]), geometry(1, 1, 1, 156), geometry(1, 1, 1, 156)],
  ['records past the end', () => withInts([[8, 2]]), geometry(1, 2, 1, 156), geometry(1, 2, 1, 156)],
  ['negative record count', () => withInts([[8, -1]]), geometry(1, -1, 1, 156), geometry(1, -1, 1, 156)],
  ['headers past the end', () => withInts([[20, 2]]), geometry(1, 1, 2, 156), geometry(1, 1, 2, 156)],
  ['records inside the header', () => withInts([[16, 36]]), geometry(1, 1, 1, 156), geometry(1, 1, 1, 156)],
  ['key past the end', () => withInts([[R + 28, 100]]),
    'span (152, 100) outside the table', 'record 0: key (152, 100) value (153, 1) headers 0+1 of 1'],
  ['negative key offset', () => withInts([[R + 24, -1]]),
    'span (-1, 1) outside the table', 'record 0: key (-1, 1) value (153, 1) headers 0+1 of 1'],
  ['value length -2', () => withInts([[R + 36, -2]]),
    'span (153, -2) outside the table', 'record 0: key (152, 1) value (153, -2) headers 0+1 of 1'],
  ['header run past the headers', () => withInts([[R + 44, 2]]),
    'record 0: headers 0+2 of 1', 'record 0: key (152, 1) value (153, 1) headers 0+2 of 1'],
  ['negative first header', () => withInts([[R + 40, -1]]),
    'record 0: headers -1+1 of 1', 'record 0: key (152, 1) value (153, 1) headers -1+1 of 1'],
  ['header key past the end', () => withInts([[H + 4, 10]]),
    'record 0: header 0 key outside the table', 'header 0: key (154, 10) value (155, 1)'],
  ['header key length -1', () => withInts([[H + 4, -1]]),
    'record 0: header 0 key outside the table', 'header 0: key (154, -1) value (155, 1)'],
  ['header value past the end', () => withInts([[H + 12, 5]]),
    'span (155, 5) outside the table', 'header 0: key (154, 1) value (155, 5)'],
  ['null key, value and header value', () => withInts([[R + 28, -1], [R + 36, -1], [H + 12, -1]]), null, null],
  ['layout 2', () => layout2('{"a":1}'), null, null],
  // A layout-2 table whose records start inside its 48-byte header (readTable took 40 as
  // the header size of every layout until both readers shared one geometry check).
  ['layout 2, records inside the header', () => { const b = layout2('{}'); new DataView(b.buffer).setInt32(16, 40, true); return b; },
    geometry(2, 1, 1, 166), geometry(2, 1, 1, 166)],
  ['layout 2, frame JSON past the end', () => layout2('{}', 1000), null, 'frame JSON (1000, 2) outside the table'],
];

for (const [name, make, readMsg, tableMsg] of cases) {
  test(`record table: ${name}`, () => {
    const check = (read, msg, what) => {
      if (msg === null) {
        assert.doesNotThrow(read, what);
      } else {
        assert.throws(read, { message: 'kwire: bad record table: ' + msg }, what);
      }
    };
    check(() => readTable(make(), false, false), readMsg, 'readTable');
    check(() => readTable(make(), true, true), readMsg, 'readTable (copy, int64 as strings)');
    check(() => new RecordTable(make()), tableMsg, 'RecordTable');
  });
}

test('record table: both readers read the same fields', () => {
  const cases2 = [sample(), withInts([[R + 28, -1], [R + 36, -1], [H + 12, -1]]), layout2('{"a":1}')];
  for (const buf of cases2) {
    const { records } = readTable(buf, false, false);
    const t = new RecordTable(buf);
    assert.equal(records.length, 1);
    assert.deepEqual(t.at(0).toObject(), records[0]);
    assert.deepEqual(t.at(0).rawHeaders.map((h) => [[...h.key], h.value && [...h.value]]),
      records[0].headers.map((h) => [[...new TextEncoder().encode(h.key)], h.value && [...h.value]]));
  }
  assert.equal(new RecordTable(layout2('{"a":1}')).jsonText(), '{"a":1}');
  assert.equal(new RecordTable(sample()).jsonText(), null);
});
