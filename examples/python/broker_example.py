"""The broker example: kwire's Python Session talking to a real Kafka broker.

It starts a broker with the launcher command (conformance/broker/cmd/kwire-broker; Go,
Java 17 and Maven needed, the first run fetches the jars), connects, creates a topic,
produces three records (one zstd batch built with encode_records) and fetches them back,
printing the lines the Go broker example (examples/broker/go) prints. Run it from the
repository root with the package installed (``make python-broker-example`` does both):

    python examples/python/broker_example.py                  # starts (and stops) its own broker
    python examples/python/broker_example.py 127.0.0.1:9092   # or uses a running one
"""

import base64
import json
import os
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional

import kwire

TOPIC = "kwire-example"
# Kafka's retriable error codes: a new partition electing its leader, a topic id the
# broker's metadata does not know yet, ...
RETRIABLE = {2, 3, 5, 6, 7, 9, 13, 15, 16, 19, 41, 51, 56, 70, 71, 72, 74, 75, 78, 84, 88, 89, 100, 103, 122, 123, 133}


def go_quote(b: Optional[memoryview]) -> str:
    """Go's %q of the examples' plain ASCII bytes."""
    return "null" if b is None else json.dumps(bytes(b).decode("utf-8"))


def run(addr: str) -> None:
    host, port = addr.rsplit(":", 1)
    # One connection: versions are negotiated with ApiVersions before connect returns.
    with kwire.Session.connect(host, int(port), client_id="kwire-example") as s:
        print(f"connected: Produce v{s.version_for(0)}, Fetch v{s.version_for(1)}")

        ct = s.request(19, {"topics": [{"name": TOPIC, "numPartitions": 1, "replicationFactor": 1, "assignments": [], "configs": []}], "timeoutMs": 30000, "validateOnly": False})
        assert ct is not None
        created = ct["body"]["topics"][0]
        if created["errorCode"] == 36:  # TOPIC_ALREADY_EXISTS (a broker given on the command line)
            md = s.request(3, {"topics": [{"name": TOPIC, "topicId": "AAAAAAAAAAAAAAAAAAAAAA"}], "allowAutoTopicCreation": False, "includeTopicAuthorizedOperations": False})
            assert md is not None
            topic_id = md["body"]["topics"][0]["topicId"]
            print(f"using topic {TOPIC}")
        elif created["errorCode"] != 0:
            raise RuntimeError(f"create topic: error {created['errorCode']} {created['errorMessage'] or ''}")
        else:
            topic_id = created["topicId"]
            print(f"created topic {TOPIC}")

        # Three records in one zstd batch; retry while the new partition elects its leader.
        records: List[Dict[str, Any]] = [
            {"key": b"k1", "value": b"hello", "timestamp": 1700000000000},
            {"key": b"k2", "value": b"from", "timestamp": 1700000000001, "headers": [("lang", b"go")]},
            {"key": None, "value": b"kwire", "timestamp": 1700000000002},
        ]
        batch = kwire.encode_records(records, compression="zstd")
        produce = {"transactionalId": None, "acks": -1, "timeoutMs": 30000, "topicData": [{"name": TOPIC, "topicId": topic_id, "partitionData": [{"index": 0, "records": batch}]}]}
        for attempt in range(51):
            r = s.request(0, produce)
            assert r is not None
            p = r["body"]["responses"][0]["partitionResponses"][0]
            if p["errorCode"] == 0:
                base = int(p["baseOffset"])
                break
            if p["errorCode"] not in RETRIABLE or attempt == 50:
                raise RuntimeError(f"produce: error {p['errorCode']}")
            time.sleep(0.1)
        print(f"produced {len(records)} records at offset {base}")

        fr = s.request(1, {
            "replicaId": -1, "maxWaitMs": 1000, "minBytes": 1, "maxBytes": 1 << 20, "isolationLevel": 0, "sessionId": 0, "sessionEpoch": -1,
            "topics": [{"topic": TOPIC, "topicId": topic_id, "partitions": [{"partition": 0, "currentLeaderEpoch": -1, "fetchOffset": base, "lastFetchedEpoch": -1, "logStartOffset": -1, "partitionMaxBytes": 1 << 20}]}],
            "forgottenTopicsData": [], "rackId": "",
        })
        assert fr is not None
        n = 0
        for t in fr["body"]["responses"]:
            for part in t["partitions"]:
                if part["errorCode"] != 0:
                    raise RuntimeError(f"fetch: error {part['errorCode']}")
                for m in kwire.decode_records(base64.b64decode(part["records"] or "")):
                    n += 1
                    headers = "".join(f" header {k}={go_quote(v)}" for k, v in m.headers)
                    print(f"  {TOPIC}/{part['partitionIndex']} offset {m.offset} timestamp {m.timestamp} {m.compression} key {go_quote(m.key)} value {go_quote(m.value)}{headers}")
        if n != len(records):
            raise RuntimeError(f"fetched {n} records, produced {len(records)}")
        print(f"fetched {n} records")
        c = s.counters()
        print(f"connection: {c['requestsSent']} requests, {c['bytesSent']} bytes written, {c['bytesReceived']} bytes read", file=sys.stderr)


def main() -> int:
    if len(sys.argv) > 1:
        run(sys.argv[1])
        return 0
    # Start a broker; closing the launcher's stdin stops it.
    proc = subprocess.Popen([os.environ.get("GO", "go"), "run", "./conformance/broker/cmd/kwire-broker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    code = 0
    try:
        line = proc.stdout.readline()
        if not line:
            print("example: kwire-broker exited before serving", file=sys.stderr)
            return 1
        info = json.loads(line)
        print(f"broker: Kafka {info['version']} on {info['addr']} (started in {info['startMs']} ms)", file=sys.stderr)
        run(info["addr"])
    except Exception as e:
        print(f"example: {e}", file=sys.stderr)
        code = 1
    finally:
        proc.stdin.close()
        try:
            if proc.wait(90) != 0:
                code = 1
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            code = 1
    return code


if __name__ == "__main__":
    sys.exit(main())
