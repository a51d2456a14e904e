"""Benchmark: kwire (Python binding) against kafka-python decoding the same Fetch response.

The response is a Fetch v12 frame with one partition holding 1000 records (10 batches of
100, 100-byte values, one header each), built with kwire. Each side decodes the whole
frame (header and body), then reads every record's offset, timestamp, key, value and
headers:

- kwire:        decode_response_frame, then decode_records (the record table) per partition;
- kafka-python: FetchResponse.decode, then MemoryRecords batch by batch.

Before timing, both sides must read the same records. Prints the time per response of
each (best of several rounds) and the ratio; the target is kwire >= 10x faster.
Usage: fetch_vs_kafka_python.py [--compression none|gzip] [--rounds N] [--breakdown]
"""

import argparse
import base64
import json
import sys
import time
from typing import Any, Callable, List, Tuple

import kafka
from kafka.protocol.consumer.fetch import FetchResponse
from kafka.record.memory_records import MemoryRecords

import kwire

RECORDS = 1000
PER_BATCH = 100
TARGET = 10.0

Row = Tuple[int, int, Any, Any, List[Tuple[str, Any]]]


def build_frame(kw: kwire.Kwire, compression: str) -> bytes:
    batches = []
    for b in range(RECORDS // PER_BATCH):
        recs = []
        for i in range(PER_BATCH):
            n = b * PER_BATCH + i
            recs.append(
                {
                    "key": f"key-{n:06d}".encode(),
                    "value": (f"value {n:06d} " * 8).encode()[:100],
                    "timestamp": 1_700_000_000_000 + n,
                    "headers": [("trace-id", f"t{n}".encode())],
                }
            )
        batches.append(kw.encode_records(recs, compression=compression, base_offset=b * PER_BATCH))
    body = {
        "throttleTimeMs": 0,
        "errorCode": 0,
        "sessionId": 0,
        "responses": [
            {
                "topic": "bench",
                "partitions": [
                    {
                        "partitionIndex": 0,
                        "errorCode": 0,
                        "highWatermark": RECORDS,
                        "lastStableOffset": RECORDS,
                        "logStartOffset": 0,
                        "abortedTransactions": [],
                        "preferredReadReplica": -1,
                        "records": b"".join(batches),
                    }
                ],
            }
        ],
    }
    return kw.encode_response_frame({"header": {"correlationId": 1}, "body": body}, 1, 12)


def kwire_decode(kw: kwire.Kwire, frame: bytes) -> List[Row]:
    out: List[Row] = []
    f = kw.decode_response_frame(frame, 1, 12)
    for t in f["body"]["responses"]:
        for p in t["partitions"]:
            if p["records"]:
                for r in kw.decode_records(base64.b64decode(p["records"])):
                    out.append((r.offset, r.timestamp, r.key, r.value, r.headers))
    return out


def kafka_python_decode(frame: bytes) -> List[Row]:
    out: List[Row] = []
    resp = FetchResponse.decode(frame, version=12, header=True, framed=True)
    for t in resp.responses:
        for p in t.partitions:
            mr = MemoryRecords(p.records)
            while True:
                batch = mr.next_batch()
                if batch is None:
                    break
                for r in batch:
                    out.append((r.offset, r.timestamp, r.key, r.value, r.headers))
    return out


def normalize(rows: List[Row]) -> List[Tuple[int, int, bytes, bytes, List[Tuple[str, bytes]]]]:
    return [(o, ts, bytes(k), bytes(v), [(hk, bytes(hv)) for hk, hv in hs]) for o, ts, k, v, hs in rows]


def best(fn: Callable[[], Any], rounds: int, min_time: float = 0.2) -> float:
    """Seconds per call: the best round of `rounds` (process CPU time, so that other load on the machine counts less), each running for at least min_time."""
    n = 1
    while True:
        t = time.process_time()
        for _ in range(n):
            fn()
        if time.process_time() - t >= min_time / 4:
            break
        n *= 2
    times = []
    for _ in range(rounds):
        t = time.process_time()
        for _ in range(n):
            fn()
        times.append((time.process_time() - t) / n)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--compression", default="none", choices=["none", "gzip"])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--breakdown", action="store_true", help="also time each stage of kwire's decode")
    args = ap.parse_args()

    kw = kwire.Kwire()
    frame = build_frame(kw, args.compression)
    a, b = normalize(kwire_decode(kw, frame)), normalize(kafka_python_decode(frame))
    if len(a) != RECORDS or a != b:
        print(f"bench: kwire and kafka-python read different records ({len(a)} vs {len(b)})", file=sys.stderr)
        return 1

    tk = best(lambda: kwire_decode(kw, frame), args.rounds)
    tp = best(lambda: kafka_python_decode(frame), args.rounds)
    ratio = tp / tk
    print(f"Fetch v12 response, {RECORDS} records in {RECORDS // PER_BATCH} batches ({args.compression}), {len(frame)} bytes")
    print(f"  kwire {kwire.__version__} (wasmtime):  {tk * 1e6:9.1f} us/response  {tk / RECORDS * 1e9:7.0f} ns/record")
    print(f"  kafka-python {kafka.__version__}:      {tp * 1e6:9.1f} us/response  {tp / RECORDS * 1e9:7.0f} ns/record")
    print(f"  kwire is {ratio:.1f}x faster (target >= {TARGET:.0f}x: {'met' if ratio >= TARGET else 'NOT met'})")
    if args.breakdown:
        js = kw.decode_response_frame_json(frame, 1, 12)
        body = json.loads(js)["body"]
        b64 = body["responses"][0]["partitions"][0]["records"]
        raw = base64.b64decode(b64)
        table = kw.decode_records(raw).table
        stages = [
            ("kw_decode_response_frame (in the module, JSON out)", lambda: kw.decode_response_frame_json(frame, 1, 12)),
            ("json.loads of the frame JSON", lambda: json.loads(js)),
            ("base64 of the records field", lambda: base64.b64decode(b64)),
            ("kw_records_decode_table (in the module)", lambda: kw.decode_records(raw)),
            ("reading 1000 records from the table", lambda: [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in kwire.RecordTable(table)]),
        ]
        for name, fn in stages:
            print(f"    {best(fn, args.rounds) * 1e6:9.1f} us  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
