"""At-scale benchmark: one 48 MB Fetch v12 response (4 partitions x 12 batches x 1000
records of 1 KiB, uncompressed: about Kafka's default fetch.max.bytes of 50 MiB) decoded
with decode_fetch and every record's offset, key and value read, against native Go on
the same frame:

- the consumer's work in Go (`go run ./bindings/js/bench/goscale`):
  codec.DecodeResponseFrame + records.Decoder.ForEachFetchMessage, keys and values
  aliasing the frame; the target is against this;
- what the module runs, natively (`go run ./bindings/python/bench/gorecords`):
  abi.DecodeResponseFrameRecords with decode_fetch's flags (ABI 1.2: input spans, the
  uncompressed records stay in the frame; ABI 1.4: the records as columns, a layout-4
  table; before 1.2, layout 2 with every key and value copied), to show how kwire's time splits between the module and the Python side.

The decoding runs in a process of its own (--measure: the frame read from a file, a fresh
instance), which reports its CPU time per decode and, for each decode, its peak resident
size over the resident size before the first decode (the frame already read, the module
instantiated): on Linux the peak is reset before each decode (clear_refs), so that it is
that decode's and not one from reading the frame; the reset is checked, and where it does
not work the process's lifetime peak is used, which can only be higher. Then, in the same
process, kw_decode_response_frame_records alone on the frame (bench/modcall.py).

Usage: at_scale.py [--go go] [--frame FILE] [--rounds N]
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional

import kwire
import modcall

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
TARGET_X_GO = 3  # Python CPU per decode over Go's (goscale), medians
TARGET_X_FRAME = 2  # peak resident growth over the frame's size


def reset_peak() -> bool:
    """Resets the process's peak resident size (Linux: clear_refs 5), so that the peak read
    after a decode is that decode's, not one from before (reading the frame file, loading
    the module). True only when the reset took: the peak then equals the current size."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    hwm = peak_rss()
    return hwm is not None and hwm <= current_rss() + (1 << 20)


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


def linear_memory(kw: kwire.Kwire) -> Optional[int]:
    """The size of the binding's module memory, where its internals still show it."""
    try:
        inst = kw._inst
        return int(inst._mem.data_len(inst._store))
    except Exception:  # noqa: BLE001 - not public: the binding may have changed
        return None


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
    base = current_rss()  # the frame read, the module instantiated
    times: List[float] = []
    cpus: List[float] = []
    peaks: List[int] = []
    wasm: List[Optional[int]] = []
    rss: List[int] = []
    resets: List[bool] = []
    sums: Dict[str, int] = {}
    for _ in range(rounds):
        resets.append(reset_peak())
        c = time.process_time()
        t = time.perf_counter()
        sums = read_all(kw, frame)
        times.append((time.perf_counter() - t) * 1000)
        cpus.append((time.process_time() - c) * 1000)
        peaks.append(peak_rss() - base)
        rss.append(current_rss() - base)
        wasm.append(linear_memory(kw))
    # The module call alone, in an instance of its own (after the memory figures above).
    engine, module, how = modcall.load()
    mc = modcall.ModuleCall(engine, module)
    h = mc.put(frame)
    mod: List[float] = []
    for _ in range(4):
        c = time.process_time()
        mc.once(h, 12)
        mod.append((time.process_time() - c) * 1000)
    print(json.dumps({"times": times, "cpus": cpus, "peaks": peaks, "rss": rss, "wasm": wasm, "resets": resets, "sums": sums,
                      "frameBytes": len(frame), "baseRss": base, "moduleCpus": mod, "moduleHow": how,
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
    flags = modcall.default_flags(kwire.abi_version())  # decode_fetch's, and modcall's
    gr = subprocess.run([args.go, "run", "./bindings/python/bench/gorecords", "-rounds", "5", "-sample-ms", "1", "-flags", str(flags), args.frame],
                        cwd=REPO, capture_output=True, text=True, check=True)
    gt = json.loads(gr.stdout)
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
    med = statistics.median(steady)
    x_go = med / g["cpuMedianMs"]
    mod = statistics.median(m["moduleCpus"][1:])
    peak = max(m["peaks"])
    mib = 1 << 20
    reset_ok = all(m["resets"])
    print(f"At scale: Fetch v12 response of {size / mib:.0f} MB (4 partitions x 12 batches x 1000 records of 1 KiB, none), every offset, key and value read; "
          f"kwire path: {m['path']}; CPU ms per decode")
    print(f"  native Go ({g['go']}, GOMAXPROCS 1) DecodeResponseFrame + ForEachFetchMessage (values alias the frame): median {g['cpuMedianMs']:.1f}, best {g['cpuBestMs']:.1f}")
    what = modcall.layout_of(flags) + ("" if flags & kwire.RECORDS_INPUT_SPANS else ", every key and value copied")
    print(f"  native Go abi.DecodeResponseFrameRecords, flags {flags} (the module's work: a {gt['outBytes'] / mib:.1f} MB record table, {what}): "
          f"median {gt['cpuUsMedian'] / 1000:.1f}, best {gt['cpuUsBest'] / 1000:.1f}")
    print(f"  kw_decode_response_frame_records alone in wasmtime ({m['moduleHow']}), calls 2..{len(m['moduleCpus'])}: median {mod:.0f} "
          f"= {mod / (gt['cpuUsMedian'] / 1000):.1f}x the same Go natively")
    print(f"  kwire Python (decode_fetch + every record read), rounds 2..{len(m['cpus'])}: median {med:.0f}, best {best:.0f}; first decode {m['cpus'][0]:.0f}; "
          f"of the median, the module call {100 * mod / med:.0f}%")
    print(f"target Python CPU <= {TARGET_X_GO}x native Go (medians, against DecodeResponseFrame + ForEachFetchMessage): {x_go:.1f}x: "
          f"{'met' if x_go <= TARGET_X_GO else 'NOT met'}")
    wasm = ", ".join("n/a" if w is None else f"{w / mib:.0f}" for w in m["wasm"])
    print(f"  after each decode, MB over the {m['baseRss'] / mib:.0f} MB resident before the first (frame read, module instantiated): "
          f"module linear memory {wasm}; resident growth {', '.join(f'{r / mib:.0f}' for r in m['rss'])}")
    print(f"  peak resident growth during each decode, MB ({'peak reset before each decode' if reset_ok else 'the process lifetime peak: the reset did not work here'}): "
          f"{', '.join(f'{p / mib:.0f}' for p in m['peaks'])}")
    print(f"target peak resident growth <= {TARGET_X_FRAME}x the frame: {peak / mib:.0f} MB = {peak / size:.1f}x: {'met' if peak <= TARGET_X_FRAME * size else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
