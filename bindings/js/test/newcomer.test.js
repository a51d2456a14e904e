// What a new user meets first: Kafka's verdict on a Produce request's partitions, the
// version hint of a response decoded at the wrong version, "did you mean", named
// constants, TypeErrors for forgotten arguments and errors that name what failed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  load, ApiKey, ErrorCode, RETRIABLE_ERROR_CODES, apiKeyName, errorCodeName,
  KwireDecodeError, KwireUnknownApiError, KwireVersionError,
} from '../index.js';

const kw = await load();
// The frames every binding's tests share (abi/testdata/frames.txt, written by the Go tests).
const FRAMES = Object.fromEntries(readFileSync(fileURLToPath(new URL('../../../abi/testdata/frames.txt', import.meta.url)), 'utf8')
  .split('\n').filter((l) => l !== '' && !l.startsWith('#')).map((l) => l.split(' ')).map(([n, h]) => [n, Uint8Array.from(Buffer.from(h, 'hex'))]));
const produce = FRAMES['produce-v9-invalid-partitions'];
const fetch = FRAMES['fetch-v12-partial-batch'];

for (const fallback of [false, true]) {
  test(`decodeProduce reports each partition Kafka's validateRecords refuses (${fallback ? 'per-partition path' : 'frame-records path'})`, () => {
    const f = kw.decodeProduce(produce, { fallback });
    const verdicts = f.partitions.map((p) => [p.topic, p.partition, p.invalid?.errorCode ?? 0, p.records.length]);
    assert.deepEqual(verdicts, [
      ['events', 0, 0, 2], // one complete batch
      ['events', 1, ErrorCode.INVALID_RECORD, 0], // a batch cut short
      ['events', 2, ErrorCode.INVALID_RECORD, 0], // no batch
      ['events', 3, ErrorCode.INVALID_RECORD, 2], // two batches
      ['events', 4, ErrorCode.INVALID_RECORD, 1], // a magic 1 message set at v9
    ]);
    assert.deepEqual(f.invalidPartitions.map((p) => [p.topic, p.partition, p.error]), [
      ['events', 1, 'INVALID_RECORD'], ['events', 2, 'INVALID_RECORD'], ['events', 3, 'INVALID_RECORD'], ['events', 4, 'INVALID_RECORD'],
    ]);
    assert.match(f.invalidPartitions[0].reason, /found none complete/);
    assert.match(f.invalidPartitions[2].reason, /exactly one record batch/);
    assert.match(f.invalidPartitions[3].reason, /found magic 1/);
    assert.ok(f.partitions[1].records.skippedBytes > 0);
    assert.equal(f.body.topicData[0].partitionData[1].records.invalid.errorCode, 87);
    assert.equal(f.partitions[0].records.invalid, null);
  });

  test(`a Fetch response whose records end in a partial batch decodes (${fallback ? 'per-partition' : 'frame-records'})`, () => {
    const f = kw.decodeFetch(fetch, 12, { fallback });
    assert.equal(f.partitions.length, 1);
    assert.equal(f.partitions[0].records.length, 2);
    assert.ok(f.partitions[0].records.skippedBytes > 0);
    assert.equal(f.partitions[0].invalid, null);
  });
}

test('a response decoded at the wrong version names the version that decodes it', () => {
  for (const call of [() => kw.decodeResponse(fetch, 1, 11), () => kw.decodeFetch(fetch, 11), () => kw.decodeFetch(fetch, 11, { fallback: true })]) {
    assert.throws(call, (e) => {
      assert.ok(e instanceof KwireDecodeError, String(e));
      assert.equal(e.hintVersion, 12);
      assert.equal(e.hint, 'the bytes decode as FetchResponse v12: was the request v12?');
      assert.match(e.message, /; the bytes decode as FetchResponse v12: was the request v12\?$/);
      assert.equal(e.details.hint.message, 'FetchResponse');
      return true;
    });
  }
});

test('decodeResponse and decodeFetch without a version are a TypeError', () => {
  assert.throws(() => kw.decodeResponse(fetch, 1), TypeError);
  assert.throws(() => kw.decodeResponse(fetch), TypeError);
  assert.throws(() => kw.decodeFetch(fetch), TypeError);
});

test('an unknown message name gets a suggestion', () => {
  assert.throws(() => kw.decodeMessage('FetchRespons', 4, new Uint8Array(0)), (e) => {
    assert.ok(e instanceof KwireUnknownApiError);
    assert.match(e.message, /did you mean FetchResponse\?/);
    return true;
  });
});

test('an encode at a version the message lacks names message and version', () => {
  const header = { requestApiKey: 3, requestApiVersion: 99, correlationId: 1, clientId: 'c' };
  assert.throws(() => kw.encodeRequest({ header, body: {} }), (e) => {
    assert.ok(e instanceof KwireVersionError, String(e));
    assert.equal(e.messageName, 'MetadataRequest');
    assert.equal(e.version, 99);
    return true;
  });
  assert.throws(() => kw.encodeMessage('MetadataRequest', 99, {}), (e) => e.messageName === 'MetadataRequest' && e.version === 99);
});

test('api keys and error codes have names', () => {
  assert.equal(ApiKey.Produce, 0);
  assert.equal(ApiKey.Fetch, 1);
  assert.equal(ApiKey.ApiVersions, 18);
  assert.equal(apiKeyName(3), 'Metadata');
  assert.equal(ErrorCode.NONE, 0);
  assert.equal(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 3);
  assert.equal(ErrorCode.UNKNOWN_SERVER_ERROR, -1);
  assert.equal(errorCodeName(87), 'INVALID_RECORD');
  assert.ok(RETRIABLE_ERROR_CODES.has(ErrorCode.NOT_LEADER_OR_FOLLOWER));
  assert.ok(!RETRIABLE_ERROR_CODES.has(ErrorCode.INVALID_RECORD));
  // The module's catalogue has the same api keys.
  for (const a of kw.apis()) assert.equal(ApiKey[apiKeyName(a.apiKey)], a.apiKey, JSON.stringify(a));
});

test('a records error on the per-partition path names the topic and partition', () => {
  const bad = Uint8Array.from(fetch);
  const at = Buffer.from(bad).indexOf('f-value-0');
  assert.ok(at > 0);
  bad[at] ^= 0xff; // a value of the first batch: its CRC no longer matches
  assert.throws(() => kw.decodeFetch(bad, 12, { fallback: true }), (e) => {
    assert.ok(e instanceof KwireDecodeError, String(e));
    assert.equal(e.topic, 'events');
    assert.equal(e.partition, 3);
    assert.match(e.message, /topic events partition 3/);
    assert.match(e.path, /^responses\[0\]\.partitions\[0\]\.records/);
    return true;
  });
});
