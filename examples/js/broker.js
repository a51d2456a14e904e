// The broker example: kwire's JavaScript Session talking to a real Kafka broker. It starts
// a broker with the launcher command (conformance/broker/cmd/kwire-broker; Go, Java 17 and
// Maven needed, the first run fetches the jars), connects, creates a topic, produces three
// records (one zstd batch built with encodeRecords) and fetches them back, printing the
// lines the Go broker example (examples/broker/go) prints. Run it from the repository root:
//
//   node examples/js/broker.js                  # starts (and stops) its own broker
//   node examples/js/broker.js 127.0.0.1:9092   # or uses a running one
//
// `make js-broker-example` runs it.
import { spawn } from 'node:child_process';
import { init, Session } from '../../bindings/js/index.js';

const TOPIC = 'kwire-example';
// Kafka's retriable error codes: a new partition electing its leader, a topic id the
// broker's metadata does not know yet, ...
const RETRIABLE = new Set([2, 3, 5, 6, 7, 9, 13, 15, 16, 19, 41, 51, 56, 70, 71, 72, 74, 75, 78, 84, 88, 89, 100, 103, 122, 123, 133]);
const goQuote = (b) => JSON.stringify(new TextDecoder().decode(b)); // the examples' bytes are plain ASCII

// startBroker runs the launcher and resolves with its JSON line and a stop function
// (closing its stdin stops the broker).
function startBroker() {
  const child = spawn(process.env.GO || 'go', ['run', './conformance/broker/cmd/kwire-broker'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async () => {
    child.stdin.end();
    return exited;
  };
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const i = out.indexOf('\n');
      if (i >= 0) resolve({ info: JSON.parse(out.slice(0, i)), stop });
    });
    exited.then((code) => reject(new Error(`kwire-broker exited with ${code} before serving`)));
  });
}

async function run(addr) {
  const kw = await init();
  const [host, port] = addr.split(':');
  // One connection: versions are negotiated with ApiVersions before connect resolves.
  const s = await Session.connect(host, Number(port), { kwire: kw, clientId: 'kwire-example' });
  try {
    console.log(`connected: Produce v${s.versionFor(0)}, Fetch v${s.versionFor(1)}`);

    const ct = await s.request(19, { topics: [{ name: TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30000, validateOnly: false });
    const created = ct.body.topics[0];
    let topicId = created.topicId;
    if (created.errorCode === 36) {
      // TOPIC_ALREADY_EXISTS (a broker given on the command line): look its id up.
      const md = await s.request(3, { topics: [{ name: TOPIC, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
      topicId = md.body.topics[0].topicId;
      console.log(`using topic ${TOPIC}`);
    } else if (created.errorCode !== 0) {
      throw new Error(`create topic: error ${created.errorCode} ${created.errorMessage ?? ''}`);
    } else {
      console.log(`created topic ${TOPIC}`);
    }

    // Three records in one zstd batch; retry while the new partition elects its leader.
    const records = [
      { key: 'k1', value: 'hello', timestamp: 1700000000000 },
      { key: 'k2', value: 'from', timestamp: 1700000000001, headers: [['lang', 'go']] },
      { key: null, value: 'kwire', timestamp: 1700000000002 },
    ];
    const batch = kw.encodeRecords(records, { compression: 'zstd' });
    let base;
    for (let attempt = 0; ; attempt++) {
      const r = await s.request(0, { transactionalId: null, acks: -1, timeoutMs: 30000, topicData: [{ name: TOPIC, topicId, partitionData: [{ index: 0, records: batch }] }] });
      const p = r.body.responses[0].partitionResponses[0];
      if (p.errorCode === 0) {
        base = p.baseOffset;
        break;
      }
      if (!RETRIABLE.has(p.errorCode) || attempt >= 50) throw new Error(`produce: error ${p.errorCode}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    console.log(`produced ${records.length} records at offset ${base}`);

    const fr = await s.request(1, {
      replicaId: -1, maxWaitMs: 1000, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: TOPIC, topicId, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: base, lastFetchedEpoch: -1, logStartOffset: '-1', partitionMaxBytes: 1 << 20 }] }],
      forgottenTopicsData: [], rackId: '',
    });
    let n = 0;
    for (const t of fr.body.responses) {
      for (const p of t.partitions) {
        if (p.errorCode !== 0) throw new Error(`fetch: error ${p.errorCode}`);
        for (const m of kw.decodeRecords(p.records).records) {
          n++;
          const headers = m.headers.map((h) => ` header ${h.key}=${goQuote(h.value)}`).join('');
          console.log(`  ${TOPIC}/${p.partitionIndex} offset ${m.offset} timestamp ${m.timestamp} ${m.compression} key ${m.key === null ? 'null' : goQuote(m.key)} value ${goQuote(m.value)}${headers}`);
        }
      }
    }
    if (n !== records.length) throw new Error(`fetched ${n} records, produced ${records.length}`);
    console.log(`fetched ${n} records`);
    const c = s.counters();
    console.error(`connection: ${c.requestsSent} requests, ${c.bytesSent} bytes written, ${c.bytesReceived} bytes read`);
  } finally {
    s.close();
  }
}

let broker = null;
let code = 0;
try {
  let addr = process.argv[2];
  if (addr === undefined) {
    broker = await startBroker();
    addr = broker.info.addr;
    console.error(`broker: Kafka ${broker.info.version} on ${addr} (started in ${broker.info.startMs} ms)`);
  }
  await run(addr);
} catch (err) {
  console.error('example:', err);
  code = 1;
} finally {
  if (broker !== null && (await broker.stop()) !== 0) code = 1;
}
process.exitCode = code;
