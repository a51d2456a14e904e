"""Benchmark: kwire (Python binding) against kafka-python on the same Fetch responses, in
one process, alternating rounds, process CPU time.

The task, each side the cheapest way its public API allows: decode a Fetch v12 response
of 1000 records (2 partitions x 5 batches x 100 records, key ~10 bytes, value ~100 bytes,
one header) and, for every record, read its offset, timestamp, key and value. Checksums
(sum of offsets, sum of timestamps, total key bytes, total value bytes) must agree between
all decoders or the benchmark fails. Once per codec: none, gzip, snappy, lz4, zstd.

- kafka-python:   FetchResponse.decode, then MemoryRecords batch by batch, every record;
- kwire records:  decode_fetch, then every Record of every partition (r.offset, ...);
- kwire columns:  decode_fetch, then each partition's columns(): sum() over the offsets
                  and timestamps memoryviews and over the length halves of the key and
                  value (offset, length) pairs, no object per record.

Usage: fetch_vs_kafka_python.py [--rounds N] [--codecs none,gzip,...]
"""

import argparse
import statistics
import sys
import time
from typing import Any, Callable, List, Tuple

import kafka
from kafka.protocol.consumer.fetch import FetchResponse
from kafka.record.memory_records import MemoryRecords

import kwire

TARGET_RECORDS = 3.0
TARGET_COLUMNS = 10.0
Sums = Tuple[int, int, int, int, int]


def build_frame(kw: kwire.Kwire, compression: str) -> bytes:
    filler = "abcdefghijklmnopqrstuvwxyz0123456789" * 3
    partitions = []
    offset = 0
    for p in range(2):
        batches = []
        for _ in range(5):
            recs = []
            for i in range(100):
                n = offset + i
                recs.append({"key": f"key-{n}".encode(), "value": f'{{"id":{n},"payload":"{filler[n % 20 : n % 20 + 80]}"}}'.encode(),
                             "timestamp": 1_700_000_000_000 + n, "headers": [("trace-id", f"t-{n}".encode())]})
            batches.append(kw.encode_records(recs, compression=compression, base_offset=offset, producer_id=1000 + p,
                                             producer_epoch=0, base_sequence=offset))
            offset += 100
        partitions.append({"partitionIndex": p, "errorCode": 0, "highWatermark": offset, "lastStableOffset": offset,
                           "logStartOffset": 0, "abortedTransactions": [], "preferredReadReplica": -1, "records": b"".join(batches)})
    body = {"throttleTimeMs": 0, "errorCode": 0, "sessionId": 0, "responses": [{"topic": "bench", "partitions": partitions}]}
    return kw.encode_response_frame({"header": {"correlationId": 1}, "body": body}, 1, 12)


def kafka_python_read(frame: bytes) -> Sums:
    n = offs = ts = kb = vb = 0
    resp = FetchResponse.decode(frame, version=12, header=True, framed=True)
    for t in resp.responses:
        for p in t.partitions:
            mr = MemoryRecords(p.records)
            while True:
                batch = mr.next_batch()
                if batch is None:
                    break
                for r in batch:
                    n += 1
                    offs += r.offset
                    ts += r.timestamp
                    k, v = r.key, r.value
                    if k is not None:
                        kb += len(k)
                    if v is not None:
                        vb += len(v)
    return n, offs, ts, kb, vb


def kwire_records(kw: kwire.Kwire, frame: bytes) -> Sums:
    n = offs = ts = kb = vb = 0
    for part in kw.decode_fetch(frame, 12)["partitions"]:
        for r in part.records:
            n += 1
            offs += r.offset
            ts += r.timestamp
            k, v = r.key, r.value
            if k is not None:
                kb += len(k)
            if v is not None:
                vb += len(v)
    return n, offs, ts, kb, vb


def kwire_columns(kw: kwire.Kwire, frame: bytes) -> Sums:
    n = offs = ts = kb = vb = 0
    for part in kw.decode_fetch(frame, 12)["partitions"]:
        c = part.records.columns()
        n += c.length
        offs += sum(c.offsets)
        ts += sum(c.timestamps)
        kl = c.keys[1::2]
        vl = c.values[1::2]
        # a null key or value has length -1: counted as 0 bytes
        kb += sum(kl) + kl.tolist().count(-1)
        vb += sum(vl) + vl.tolist().count(-1)
    return n, offs, ts, kb, vb


def module_alone(kw: kwire.Kwire, frame: bytes) -> None:
    """The export call alone (input copied in, kw_decode_response_frame_records, output
    copied out and freed): the module's share of kwire's time. Not a decoder."""
    inst = kw._inst
    p, n = inst.put(frame)
    inst.call_out("kw_decode_response_frame_records", p, n, 1, 12, 0, 0)


def cpu_per_call(fn: Callable[[], Any], n: int) -> float:
    t = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - t) / n


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--codecs", default="none,gzip,snappy,lz4,zstd")
    args = ap.parse_args()
    kw = kwire.Kwire()
    rows: List[Tuple[str, int, List[float]]] = []
    failed = False
    for codec in args.codecs.split(","):
        frame = build_frame(kw, codec)
        cases: List[Tuple[str, Callable[[], Sums]]] = [
            (f"kafka-python {kafka.__version__}", lambda: kafka_python_read(frame)),
            ("kwire records", lambda: kwire_records(kw, frame)),
            ("kwire columns", lambda: kwire_columns(kw, frame)),
        ]
        sums = [fn() for _, fn in cases]
        if len(set(sums)) != 1 or sums[0][0] != 1000:
            print(f"bench ({codec}): the decoders disagree: " + "; ".join(f"{n} {s}" for (n, _), s in zip(cases, sums)), file=sys.stderr)
            failed = True
            continue
        if kw.has_frame_records():
            cases.append(("kwire.wasm call alone", lambda: (module_alone(kw, frame), (0, 0, 0, 0, 0))[1]))
        iters = []
        for _, fn in cases:
            per = cpu_per_call(fn, 3)
            iters.append(max(3, int(0.15 / max(per, 1e-6))))
        samples: List[List[float]] = [[] for _ in cases]
        for _ in range(args.rounds):
            for i, (_, fn) in enumerate(cases):
                samples[i].append(cpu_per_call(fn, iters[i]))
        rows.append((codec, len(frame), [statistics.median(s) * 1e6 for s in samples]))

    path = ("kw_decode_response_frame_records (one record table, no base64)" if kw.has_frame_records()
            else "kw_decode_response_frame + kw_records_decode_table per partition (the module lacks the frame-records calls)")
    print(f"Fetch v12 response, 1000 records in 10 batches, Python {sys.version.split()[0]}, {args.rounds} alternating rounds, median CPU us per response")
    print(f"kwire path: {path}")
    print("codec    bytes  kafka-python  kwire records (x k-p)  kwire columns (x k-p)")
    worst_r = worst_c = float("inf")
    for codec, size, (kp, kr, kc, *_) in rows:
        worst_r, worst_c = min(worst_r, kp / kr), min(worst_c, kp / kc)
        print(f"{codec:<7}{size:>7}{kp:>13.0f}{kr:>15.0f} ({kp / kr:.2f}x){kc:>15.0f} ({kp / kc:.2f}x)")
    if rows and len(rows[0][2]) > 3:
        print("inside kwire.wasm (the export call alone, output copied out), us and share of kwire columns: "
              + ", ".join(f"{codec} {t[3]:.0f} ({100 * t[3] / t[2]:.0f}%)" for codec, _, t in rows))
    if rows:
        print(f"per-record objects: worst {worst_r:.2f}x kafka-python (target >= {TARGET_RECORDS:.0f}x: {'met' if worst_r >= TARGET_RECORDS else 'NOT met'}); "
              f"columns: worst {worst_c:.2f}x (target >= {TARGET_COLUMNS:.0f}x: {'met' if worst_c >= TARGET_COLUMNS else 'NOT met'})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
