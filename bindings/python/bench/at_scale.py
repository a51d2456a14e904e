"""At-scale benchmark: one 50 MB Fetch v12 response (4 partitions x 12 batches x 1000
records of 1 KiB, uncompressed: Kafka's default fetch.max.bytes) decoded with decode_fetch
and every record's value read, against native Go (codec.DecodeResponseFrame +
records.Decoder.ForEachFetchMessage, `go run ./bindings/js/bench/goscale` on the same
frame). The decoding runs in a process of its own (--measure: the frame read from a file,
a fresh instance), which reports its CPU time per decode and, for each decode, its peak
resident size over the size before the first decode (the peak is reset before each
decode on Linux, so that it is that decode's), the resident growth after it and the
module's linear memory.

Usage: at_scale.py [--go go] [--frame FILE] [--rounds N]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from typing import Any, Dict, List

import kwire

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
TARGET_X_GO = 5
TARGET_X_FRAME = 3


def reset_peak() -> bool:
    """Resets the process's peak resident size (Linux: clear_refs 5), so that the peak read
    after a decode is that decode's, not one from before (reading the frame file, loading
    the module). False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss() -> int:
    """The peak resident size since reset_peak (VmHWM), else over the process's life."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def current_rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def read_all(kw: kwire.Kwire, frame: bytes) -> Dict[str, int]:
    n = offs = kb = vb = 0
    for part in kw.decode_fetch(frame, 12)["partitions"]:
        for r in part.records:
            n += 1
            offs += r.offset
            k, v = r.key, r.value
            if k is not None:
                kb += len(k)
            if v is not None:
                vb += len(v)
    return {"records": n, "offsetSum": offs, "keyBytes": kb, "valueBytes": vb}


def measure(path: str, rounds: int) -> None:
    with open(path, "rb") as f:
        frame = f.read()
    kw = kwire.Kwire()
    kw.abi_version()
    base = current_rss()  # peaks below are ru_maxrss over the resident size before decoding
    times: List[float] = []
    cpus: List[float] = []
    peaks: List[int] = []
    wasm: List[int] = []
    rss: List[int] = []
    sums: Dict[str, int] = {}
    for _ in range(rounds):
        reset_peak()
        c = time.process_time()
        t = time.perf_counter()
        sums = read_all(kw, frame)
        times.append((time.perf_counter() - t) * 1000)
        cpus.append((time.process_time() - c) * 1000)
        peaks.append(peak_rss() - base)
        rss.append(current_rss() - base)
        wasm.append(kw._inst._mem.data_len(kw._inst._store))
    print(json.dumps({"times": times, "cpus": cpus, "peaks": peaks, "rss": rss, "wasm": wasm, "sums": sums, "frameBytes": len(frame),
                      "path": "frame-records" if kw.has_frame_records() else "per partition (base64 in the frame JSON)"}))


def build(path: str) -> int:
    kw = kwire.Kwire()
    value = bytes(97 + i % 26 for i in range(1024))
    partitions: List[Dict[str, Any]] = []
    offset = 0
    for p in range(4):
        batches = []
        for _ in range(12):
            recs = [{"key": f"k{offset + i}".encode(), "value": value, "timestamp": 1_700_000_000_000 + offset + i} for i in range(1000)]
            batches.append(kw.encode_records(recs, base_offset=offset))
            offset += 1000
        partitions.append({"partitionIndex": p, "errorCode": 0, "highWatermark": offset, "lastStableOffset": offset, "logStartOffset": 0,
                           "abortedTransactions": [], "preferredReadReplica": -1, "records": b"".join(batches)})
    body = {"throttleTimeMs": 0, "errorCode": 0, "sessionId": 0, "responses": [{"topic": "scale", "partitions": partitions}]}
    frame = kw.encode_response_frame({"header": {"correlationId": 1}, "body": body}, 1, 12)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(frame)
    return len(frame)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--go", default="go")
    ap.add_argument("--frame", default=os.path.join(REPO, "build", "bench", "fetch-50mb-py.bin"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--measure", action="store_true")
    args = ap.parse_args()
    if args.measure:
        measure(args.frame, args.rounds)
        return 0
    size = build(args.frame)
    go = subprocess.run([args.go, "run", "./bindings/js/bench/goscale", "-frame", args.frame, "-version", "12"],
                        cwd=REPO, capture_output=True, text=True, check=True)
    g = json.loads(go.stdout)
    child = subprocess.run([sys.executable, __file__, "--measure", "--frame", args.frame, "--rounds", str(args.rounds)],
                           capture_output=True, text=True, check=True)
    m = json.loads(child.stdout)
    want = {k: g[k] for k in ("records", "offsetSum", "keyBytes", "valueBytes")}
    if m["sums"] != want:
        print(f"bench: kwire read {m['sums']}, Go {want}", file=sys.stderr)
        return 1
    # The first decode grows the module's memory; rounds 2.. are the steady state.
    steady = m["cpus"][1:] or m["cpus"]
    best = min(steady)
    med = sorted(steady)[len(steady) // 2]
    x_go = best / g["cpuBestMs"]
    peak = max(m["peaks"])
    mib = 1 << 20
    print(f"At scale: Fetch v12 response of {size / mib:.0f} MB (4 partitions x 12 batches x 1000 records of 1 KiB, none), every value read; kwire path: {m['path']}")
    print(f"  native Go ({g['go']}, DecodeResponseFrame + ForEachFetchMessage, GOMAXPROCS 1): CPU best {g['cpuBestMs']:.1f} ms, median {g['cpuMedianMs']:.1f} ms; wall best {g['bestMs']:.1f} ms")
    print(f"  kwire Python (decode_fetch + r.value of every record), rounds 2..{len(m['cpus'])}: CPU best {best:.0f} ms, median {med:.0f} ms = {x_go:.1f}x Go's CPU "
          f"(target <= {TARGET_X_GO}x: {'met' if x_go <= TARGET_X_GO else 'NOT met'}); first decode {m['cpus'][0]:.0f} ms CPU; wall best {min(m['times'][1:] or m['times']):.0f} ms")
    print(f"  after each decode, MB: the module's linear memory {', '.join(f'{w / mib:.0f}' for w in m['wasm'])}; "
          f"resident growth {', '.join(f'{r / mib:.0f}' for r in m['rss'])}")
    print(f"  peak resident growth after each decode, MB: {', '.join(f'{p / mib:.0f}' for p in m['peaks'])}")
    print(f"  peak {peak / mib:.0f} MB = {peak / size:.1f}x the frame (target <= {TARGET_X_FRAME}x: {'met' if peak <= TARGET_X_FRAME * size else 'NOT met'}); "
          f"growth from the second decode to the last: {(m['peaks'][-1] - m['peaks'][min(1, len(m['peaks']) - 1)]) / mib:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
