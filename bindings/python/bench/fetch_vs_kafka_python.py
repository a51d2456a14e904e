"""Benchmark: kwire (Python binding) against kafka-python and aiokafka's C record reader on
the same Fetch responses, in one process, alternating rounds, process CPU time; then the
module call alone (wasmtime) against the same Go function run natively.

The task, each side the cheapest way its public API allows: decode a Fetch response of
1000 records (2 partitions x 5 batches x 100 records, key ~10 bytes, one header) and, for
every record, read its offset, timestamp, key and value. Two sets of values: ~100 bytes
(80-100), and 200-600 bytes (random lengths, fixed seed). Every decoder sums the offsets,
the timestamps, the key bytes and the value bytes; the sums must agree between all
decoders or the benchmark fails. Once per codec: none, gzip, snappy, lz4, zstd.

- kafka-python:   FetchResponse.decode (v12), then MemoryRecords batch by batch, each
                  batch's CRC checked with batch.validate_crc() (its consumer's default,
                  check_crcs=True), every record;
- aiokafka:       the same, with aiokafka's protocol (ResponseHeader_v0 and
                  FetchResponse_v11: aiokafka reads Fetch up to v11, so it gets the same
                  batches in a v11 response) and its record reader, MemoryRecords and
                  DefaultRecordBatch from the C extension aiokafka.record._crecords
                  (printed: which one was loaded); CRC checked per batch as its consumer
                  does by default (check_crcs=True);
- kwire objects:  decode_fetch, then every Record of every partition (r.offset, ...);
                  CRC checked in the module (the default) and skipped (verify_crc=False);
- kwire columns:  decode_fetch, then each partition's columns(): sum() over the offsets
                  and timestamps memoryviews and over the length halves of the key and
                  value (offset, length) pairs, no object per record; CRC checked and
                  skipped.

For each compressed frame, the floor: every native decompressor of the codec this Python
has (zlib, zstandard, cramjam through aiokafka, python-snappy and lz4 through
kafka-python), alone on the frame's compressed records sections, nothing decoded; the
fastest is what kwire columns are held to.

Then kw_decode_response_frame_records alone (input already in the module's memory, output
freed unread), in a bare wasmtime host (bench/modcall.py) running the binding's compiled
code, against abi.DecodeResponseFrameRecords natively (`go run
./bindings/python/bench/gorecords -serve` on the same frames, written to build/bench/,
its samples taken in the same alternating rounds); both outputs must be the same bytes.

Usage: fetch_vs_kafka_python.py [--rounds N] [--codecs none,gzip,...] [--go go]
       fetch_vs_kafka_python.py --profile [--profile-codec none] [--go go]

--profile: cProfile of kwire's Python side (decode_fetch and every record read, top 15)
and of aiokafka's, and a sampling of the module itself: when `perf` works here, the module (built again with
its function names, build/bench/kwire-names.wasm) runs under a wasmtime engine with
profiler "perfmap" while `perf record` samples it, and the 15 hottest symbols are printed.
"""

import argparse
import cProfile
import hashlib
import io
import json
import os
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from typing import Any, Callable, Dict, List, Optional, Tuple

import kafka
import kafka.codec
import kafka.record.util
from kafka.protocol.consumer.fetch import FetchResponse
from kafka.record.memory_records import MemoryRecords as KPMemoryRecords

import aiokafka
import aiokafka.record.default_records as aio_default
import aiokafka.record.memory_records as aio_memory
from aiokafka.protocol.api import ResponseHeader_v0
from aiokafka.protocol.fetch import FetchResponse_v11

import kwire
import modcall

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
OUT_DIR = os.path.join(REPO, "build", "bench")
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
SKIP_CRC = 1  # KW_RECORDS_SKIP_CRC

# Targets, kwire with CRCs checked against peers checking theirs.
TARGET_OBJ_KP = 3.0
TARGET_COL_KP = 8.0
TARGET_COL_AIO = 3.0
TARGET_OBJ_AIO = 1.0
TARGET_MODULE_X_GO = 2.5  # for codec none, and for gzip and zstd (the module's own inflate and zstd)
TARGET_COL_FLOOR = 1.3  # compressed frames: kwire columns over the host's bare decompressor

Sums = Tuple[int, int, int, int, int]

FILLER = "abcdefghijklmnopqrstuvwxyz0123456789" * 3
WORDS = ("order", "customer", "amount", "status", "shipped", "pending", "region", "eu-west", "sku", "quantity", "price", "currency", "EUR",
         "timestamp", "warehouse", "priority", "true", "false", "null", "note")


def value_small(n: int, rng: random.Random) -> bytes:
    """~100 bytes (80-100): the frame the benchmark has always used."""
    return f'{{"id":{n},"payload":"{FILLER[n % 20 : n % 20 + 80]}"}}'.encode()


def value_large(n: int, rng: random.Random) -> bytes:
    """200-600 bytes, random length; JSON-like text of random words, so that codecs
    compress it about as they compress real payloads."""
    size = rng.randint(200, 600)
    parts = [f'{{"id":{n},"fields":{{']
    at = len(parts[0])
    while at < size - 2:
        w = f'"{rng.choice(WORDS)}":"{rng.choice(WORDS)}{rng.randint(0, 99999)}",'
        parts.append(w)
        at += len(w)
    text = "".join(parts)[: size - 2] + "}}"
    return text.encode()


VALUE_SETS: Tuple[Tuple[str, Callable[[int, random.Random], bytes]], ...] = (("~100 B", value_small), ("200-600 B", value_large))


def build_frames(kw: kwire.Kwire, compression: str, value: Callable[[int, random.Random], bytes]) -> Tuple[bytes, bytes, List[bytes]]:
    """The Fetch response as v12 (kafka-python, kwire) and as v11 (aiokafka), with the same
    record batches; and the records section of each batch (compressed, when it is)."""
    rng = random.Random(20240611)
    partitions = []
    sections: List[bytes] = []
    offset = 0
    for p in range(2):
        batches = []
        for _ in range(5):
            recs = []
            for i in range(100):
                n = offset + i
                recs.append({"key": f"key-{n}".encode(), "value": value(n, rng), "timestamp": 1_700_000_000_000 + n,
                             "headers": [("trace-id", f"t-{n}".encode())]})
            batches.append(kw.encode_records(recs, compression=compression, base_offset=offset, producer_id=1000 + p,
                                             producer_epoch=0, base_sequence=offset))
            sections.append(batches[-1][61:])
            offset += 100
        partitions.append({"partitionIndex": p, "errorCode": 0, "highWatermark": offset, "lastStableOffset": offset,
                           "logStartOffset": 0, "abortedTransactions": [], "preferredReadReplica": -1, "records": b"".join(batches)})
    body = {"throttleTimeMs": 0, "errorCode": 0, "sessionId": 0, "responses": [{"topic": "bench", "partitions": partitions}]}
    frame = {"header": {"correlationId": 1}, "body": body}
    return kw.encode_response_frame(frame, 1, 12), kw.encode_response_frame(frame, 1, 11), sections


def host_decompressors(codec: str) -> List[Tuple[str, Callable[[bytes], bytes]]]:
    """Every native decompressor of codec this Python has: the floor is the fastest of them
    on the frame's compressed sections (the decompression alone, nothing decoded)."""
    import aiokafka.codec as aio_codec
    import zlib

    import zstandard

    zd = zstandard.ZstdDecompressor()
    found: Dict[str, List[Tuple[str, Callable[[bytes], bytes]]]] = {
        "gzip": [("zlib", partial(zlib.decompress, wbits=31)), ("aiokafka (zlib)", aio_codec.gzip_decode)],
        "snappy": [("aiokafka (cramjam)", aio_codec.snappy_decode), ("kafka-python (python-snappy)", kafka.codec.snappy_decode)],
        "lz4": [("aiokafka (cramjam)", aio_codec.lz4_decode), ("kafka-python (lz4)", kafka.codec.lz4_decode)],
        "zstd": [("zstandard", partial(zd.decompress, max_output_size=1 << 26)), ("aiokafka (cramjam)", aio_codec.zstd_decode)],
    }
    return found.get(codec, [])


def decompress_all(fn: Callable[[bytes], bytes], sections: List[bytes]) -> int:
    return sum(len(fn(s)) for s in sections)


def kafka_python_read(frame: bytes) -> Sums:
    n = offs = ts = kb = vb = 0
    resp = FetchResponse.decode(frame, version=12, header=True, framed=True)
    for t in resp.responses:
        for p in t.partitions:
            mr = KPMemoryRecords(p.records)
            while True:
                batch = mr.next_batch()
                if batch is None:
                    break
                if not batch.validate_crc():
                    raise ValueError("kafka-python: CRC mismatch")
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


def aiokafka_read(body: bytes) -> Sums:
    """body: the v11 frame without its size prefix, as aiokafka's connection reads it."""
    n = offs = ts = kb = vb = 0
    buf = io.BytesIO(body)
    ResponseHeader_v0.decode(buf)
    resp = FetchResponse_v11.decode(buf)
    for _topic, partitions in resp.topics:
        for _partition, _error_code, _highwater, *part_data in partitions:
            mr = aio_memory.MemoryRecords(part_data[-1])
            while mr.has_next():
                batch = mr.next_batch()
                if not batch.validate_crc():
                    raise ValueError("aiokafka: CRC mismatch")
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


def kwire_objects(kw: kwire.Kwire, frame: bytes, crc: bool) -> Sums:
    n = offs = ts = kb = vb = 0
    for part in kw.decode_fetch(frame, 12, verify_crc=crc)["partitions"]:
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


def kwire_columns(kw: kwire.Kwire, frame: bytes, crc: bool) -> Sums:
    n = offs = ts = kb = vb = 0
    for part in kw.decode_fetch(frame, 12, verify_crc=crc)["partitions"]:
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


def cpu_per_call(fn: Callable[[], Any], n: int) -> float:
    t = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - t) / n


def describe_peers() -> Tuple[str, str, bool]:
    """What the peers run with: kafka-python's CRC and codecs, aiokafka's record reader
    (C extension or pure Python) and codecs; and whether aiokafka's is the C reader."""
    crc_c = getattr(kafka.record.util, "crc32c_c", None) is not None
    kp_codecs = [name for name, has in (("snappy", kafka.codec.has_snappy()), ("lz4", kafka.codec.has_lz4()), ("zstd", kafka.codec.has_zstd())) if has]
    kp = (f"kafka-python {kafka.__version__} (crc32c: {'the crc32c C extension' if crc_c else 'PURE PYTHON'}; "
          f"C codecs for {', '.join(kp_codecs) or 'none'}; gzip via zlib)")
    mr, batch = aio_memory.MemoryRecords, aio_default.DefaultRecordBatch
    is_c = all(c.__module__.startswith("aiokafka.record._crecords") for c in (mr, batch))
    mods = {c.__module__ for c in (mr, batch)}
    try:
        import cramjam

        cram = f"cramjam {cramjam.__version__}"
    except ImportError:
        cram = "no cramjam"
    aio = (f"aiokafka {aiokafka.__version__} (record reader: {'C extension' if is_c else 'PURE PYTHON'} {', '.join(sorted(mods))}; "
           f"snappy, lz4, zstd via {cram}; gzip via zlib)")
    return kp, aio, is_c


def write_frames(frames: Dict[Tuple[str, str], bytes]) -> Dict[Tuple[str, str], str]:
    os.makedirs(OUT_DIR, exist_ok=True)
    paths = {}
    for (vs, codec), frame in frames.items():
        tag = "small" if vs == VALUE_SETS[0][0] else "large"
        p = os.path.join(OUT_DIR, f"fetch-1000-{tag}-{codec}.bin")
        with open(p, "wb") as f:
            f.write(frame)
        paths[(vs, codec)] = p
    return paths


class GoServer:
    """gorecords -serve on the frame files: native Go's samples, taken between this
    process's own so that both see the same load."""

    def __init__(self, go: str, paths: List[str], flags: int) -> None:
        self.proc = subprocess.Popen([go, "run", "./bindings/python/bench/gorecords", "-serve", "-version", "12", "-flags", str(flags), *paths], cwd=REPO,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        self.info = [json.loads(self._line()) for _ in paths]

    def _line(self) -> str:
        line = self.stdout.readline()
        if not line:
            self.proc.wait()
            raise RuntimeError(f"gorecords -serve ended (status {self.proc.returncode})")
        return line

    def per_call(self, i: int, calls: int) -> float:
        """CPU seconds per call over calls calls on file i."""
        self.stdin.write(f"{i} {calls}\n")
        self.stdin.flush()
        return float(self._line()) / 1e6

    def close(self) -> None:
        self.stdin.close()
        self.proc.wait()


def bench(args: argparse.Namespace) -> int:
    kw = kwire.Kwire()
    kp_desc, aio_desc, aio_is_c = describe_peers()
    engine, module, how = modcall.load()
    mc = modcall.ModuleCall(engine, module)
    codecs = args.codecs.split(",")
    frames12: Dict[Tuple[str, str], bytes] = {}
    handles: Dict[Tuple[str, str], Tuple[int, int]] = {}
    names = ["kafka-python", "aiokafka", "kw obj", "kw obj nocrc", "kw col", "kw col nocrc", "module", "Go", "floor"]
    floor_names: Dict[Tuple[str, str], List[str]] = {}
    sizes: Dict[Tuple[str, str], int] = {}
    # (frame, decoder index, sampler: calls -> CPU seconds per call)
    samplers: List[Tuple[Tuple[str, str], int, Callable[[int], float]]] = []
    failed = False
    for vs, value in VALUE_SETS:
        for codec in codecs:
            f12, f11, sections = build_frames(kw, codec, value)
            body11 = f11[4:]
            key = (vs, codec)
            frames12[key], sizes[key] = f12, len(f12)
            handle = handles[key] = mc.put(f12)
            cases: List[Callable[[], Any]] = [
                partial(kafka_python_read, f12),
                partial(aiokafka_read, body11),
                partial(kwire_objects, kw, f12, True),
                partial(kwire_objects, kw, f12, False),
                partial(kwire_columns, kw, f12, True),
                partial(kwire_columns, kw, f12, False),
            ]
            sums = [fn() for fn in cases]
            if len(set(sums)) != 1 or sums[0][0] != 1000:
                print(f"bench ({vs}, {codec}): the decoders disagree: " + "; ".join(f"{n} {s}" for n, s in zip(names, sums)), file=sys.stderr)
                failed = True
                continue
            cases.append(partial(mc.once, handle, 12))
            for i, fn in enumerate(cases):
                samplers.append((key, i, partial(cpu_per_call, fn)))
            # The floor: each of the host's own decompressors on the same compressed sections.
            floor_names[key] = []
            total = None
            for fname, fn in host_decompressors(codec):
                try:
                    got = decompress_all(fn, sections)
                except Exception as e:  # a decompressor that cannot read Kafka's framing is no floor
                    print(f"  ({fname} cannot decompress the {codec} sections: {e})", file=sys.stderr)
                    continue
                if total is not None and got != total:
                    print(f"bench ({vs}, {codec}): {fname} decompresses {got} bytes, {floor_names[key][0]} {total}", file=sys.stderr)
                    failed = True
                total = got
                floor_names[key].append(fname)
                samplers.append((key, 100 + len(floor_names[key]) - 1, partial(cpu_per_call, partial(decompress_all, fn, sections))))
    if failed:
        return 1
    # Native Go on the same frames; the module's output and Go's must be the same bytes.
    paths = write_frames(frames12)
    keys = list(frames12)
    go = GoServer(args.go, [paths[k] for k in keys], mc.flags)
    try:
        same = all(hashlib.sha256(mc.output(handles[k], 12)).hexdigest() == g["outSha256"] for k, g in zip(keys, go.info))
        for j, key in enumerate(keys):
            samplers.append((key, 7, partial(go.per_call, j)))
        # Calibrate: each sample runs a case for about --sample seconds of CPU.
        iters = [max(2, int(args.sample / max(sample(2), 1e-6))) for _, _, sample in samplers]
        samples: List[List[float]] = [[] for _ in samplers]
        for _ in range(args.rounds):
            for j, (_, _, sample) in enumerate(samplers):
                samples[j].append(sample(iters[j]))
    finally:
        go.close()
    results: Dict[Tuple[str, str], List[float]] = {}
    floors: Dict[Tuple[str, str], List[float]] = {}
    for j, (key, i, _) in enumerate(samplers):
        us = statistics.median(samples[j]) * 1e6
        if i >= 100:
            floors.setdefault(key, []).append(us)
        else:
            results.setdefault(key, [0.0] * len(names))[i] = us
    for key, fl in floors.items():
        results[key][8] = min(fl)

    print(f"Fetch response, 1000 records in 10 batches (2 partitions), Python {sys.version.split()[0]}, {args.rounds} alternating rounds, "
          f"median CPU us per response")
    print(f"  {kp_desc}")
    print(f"  {aio_desc}")
    print("  CRCs: kafka-python's and aiokafka's consumers check every batch's CRC by default (check_crcs=True, batch.validate_crc() "
          "before the batch is read); both do so here. kwire checks them in the module unless verify_crc=False (nocrc).")
    print("  aiokafka decodes the same batches in a Fetch v11 response (its newest Fetch); the others v12.")
    hdr = f"{'values':<10}{'codec':<7}{'bytes':>7}{'k-p':>7}{'aiok':>7}{'obj':>7}{'obj-nc':>7}{'col':>7}{'col-nc':>7}   {'obj/kp':>6}{'obj/aio':>8}{'col/kp':>7}{'col/aio':>8}"
    print(hdr)
    worst: Dict[str, Tuple[float, str]] = {}

    def note(name: str, x: float, where: str) -> None:
        if name not in worst or x < worst[name][0]:
            worst[name] = (x, where)

    for key in keys:
        kp, aio, ob, obn, col, coln, _mod, _go, _floor = results[key]
        where = f"values {key[0]}, {key[1]}"
        note("obj/kp", kp / ob, where)
        note("obj/aio", aio / ob, where)
        note("col/kp", kp / col, where)
        note("col/aio", aio / col, where)
        print(f"{key[0]:<10}{key[1]:<7}{sizes[key]:>7}{kp:>7.0f}{aio:>7.0f}{ob:>7.0f}{obn:>7.0f}{col:>7.0f}{coln:>7.0f}   "
              f"{kp / ob:>5.2f}x{aio / ob:>7.2f}x{kp / col:>6.2f}x{aio / col:>7.2f}x")
    print("  (obj, col: kwire objects and columns, CRC checked; -nc: verify_crc=False; ratios: peer time / kwire time, with CRCs)")
    print()
    print(f"Compressed frames against the floor: the fastest of this host's own decompressors alone on the same compressed sections "
          f"(nothing decoded); kwire decompresses {', '.join(kw.host_codecs()) or 'nothing'} with the host's code "
          f"(host_decompress, ABI 1.3), the rest in the module")
    print(f"{'values':<10}{'codec':<7}{'floor':>7}{'col':>7}{'obj':>7}{'col/floor':>10}{'obj/floor':>10}   floor from")
    for key in keys:
        r = results[key]
        if key[1] == "none" or not r[8]:
            continue
        x = r[4] / r[8]
        note_floor = worst.get("col/floor")
        if note_floor is None or x > note_floor[0]:
            worst["col/floor"] = (x, f"values {key[0]}, {key[1]}")
        fastest = floor_names[key][floors[key].index(min(floors[key]))]
        print(f"{key[0]:<10}{key[1]:<7}{r[8]:>7.0f}{r[4]:>7.0f}{r[2]:>7.0f}{x:>9.2f}x{r[2] / r[8]:>9.2f}x   {fastest} (of {', '.join(floor_names[key])})")
    if "col/floor" in worst:
        x, where = worst["col/floor"]
        print(f"target compressed: kwire columns <= {TARGET_COL_FLOOR:g}x the host's decompressor alone: worst {x:.2f}x ({where}): "
              f"{'met' if x <= TARGET_COL_FLOOR else 'NOT met'}")
    aio_note = "" if aio_is_c else " (aiokafka ran its PURE PYTHON reader: these aiokafka figures are not the C reader's)"
    for name, target, what in (("obj/kp", TARGET_OBJ_KP, "objects vs kafka-python"), ("obj/aio", TARGET_OBJ_AIO, "objects vs aiokafka"),
                               ("col/kp", TARGET_COL_KP, "columns vs kafka-python"), ("col/aio", TARGET_COL_AIO, "columns vs aiokafka")):
        x, where = worst[name]
        print(f"target {what} >= {target:g}x: worst {x:.2f}x ({where}): {'met' if x >= target else 'NOT met'}"
              + (aio_note if "aio" in name else ""))

    print()
    print(f"kw_decode_response_frame_records alone, flags {mc.flags} (decode_fetch's: {modcall.layout_of(mc.flags)}), "
          f"CRC checked, median CPU us per call, in the same alternating rounds: wasmtime {wasmtime_version()} "
          f"({how}, {mc.call_kind}, input in the module, output freed unread) vs native {go.info[0]['go']} abi.DecodeResponseFrameRecords "
          f"(gorecords -serve, GOMAXPROCS 1); outputs byte-identical: {'yes' if same else 'NO'}")
    print(f"{'values':<10}{'codec':<7}{'wasm':>7}{'Go':>7}{'wasm/Go':>9}   share of kwire col / obj")
    none_x = []
    gz_zstd_x = []
    for key in keys:
        r = results[key]
        mod, gus = r[6], r[7]
        x = mod / gus
        if key[1] == "none":
            none_x.append((x, key[0]))
        if key[1] in ("gzip", "zstd"):
            gz_zstd_x.append((x, f"{key[1]}, values {key[0]}"))
        print(f"{key[0]:<10}{key[1]:<7}{mod:>7.0f}{gus:>7.0f}{x:>8.2f}x   {100 * mod / r[4]:>3.0f}% / {100 * mod / r[2]:.0f}%")
    for x, vs in none_x:
        print(f"target module <= {TARGET_MODULE_X_GO:g}x native Go (none, values {vs}): {x:.2f}x: {'met' if x <= TARGET_MODULE_X_GO else 'NOT met'}")
    if gz_zstd_x:
        x, where = max(gz_zstd_x)
        print(f"target module <= {TARGET_MODULE_X_GO:g}x native Go, gzip and zstd: worst {x:.2f}x ({where}): {'met' if x <= TARGET_MODULE_X_GO else 'NOT met'}")
    return 0 if same else 1


def wasmtime_version() -> str:
    from importlib.metadata import version

    return version("wasmtime")


# ---- profile mode -----------------------------------------------------------------------


def cprofile_top(title: str, fn: Callable[[], Any], seconds: float = 1.0) -> None:
    """Runs fn under cProfile for about seconds of CPU and prints the 15 functions with the
    most time of their own."""
    fn()
    n = 0
    pr = cProfile.Profile()
    t = time.process_time()
    pr.enable()
    while time.process_time() - t < seconds:
        fn()
        n += 1
    pr.disable()
    print(f"cProfile: {title}, {n} responses; top 15 by own time (s)")
    out = io.StringIO()
    pstats.Stats(pr, stream=out).strip_dirs().sort_stats("tottime").print_stats(15)
    lines = out.getvalue().splitlines()
    at = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("ncalls")), 0)
    print("\n".join("  " + ln for ln in lines[at:] if ln.strip()))
    print()


def profile(args: argparse.Namespace) -> int:
    kw = kwire.Kwire()
    codec = args.profile_codec
    for vs, value in VALUE_SETS:
        f12, f11, _ = build_frames(kw, codec, value)
        body11 = f11[4:]
        cprofile_top(f"kwire objects (decode_fetch + every record read, CRC checked), values {vs}, {codec}",
                     lambda: kwire_objects(kw, f12, True))
        cprofile_top(f"aiokafka (its protocol + C record reader, CRC checked), values {vs}, {codec}", lambda: aiokafka_read(body11))
    return guest_profile(args, kw)


def perf_works() -> Optional[str]:
    """None when `perf record` works here, else why not."""
    perf = shutil.which("perf")
    if perf is None:
        return "perf is not installed"
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run([perf, "record", "-e", "cpu-clock", "-o", os.path.join(d, "p.data"), "--", sys.executable, "-c", "pass"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return "perf record fails here: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    return None


def guest_profile(args: argparse.Namespace, kw: kwire.Kwire) -> int:
    why = perf_works()
    if why is not None:
        print(f"guest sampling: not possible here ({why}); cProfile sees the module call as one C call.")
        return 0
    # kwire.wasm is built stripped (no name section): build it again with its names.
    names_wasm = os.path.join(OUT_DIR, "kwire-names.wasm")
    os.makedirs(OUT_DIR, exist_ok=True)
    env = dict(os.environ, GOOS="wasip1", GOARCH="wasm")
    b = subprocess.run([args.go, "build", "-buildmode=c-shared", "-trimpath", "-o", names_wasm, "./wasm"], cwd=REPO, env=env,
                       capture_output=True, text=True)
    if b.returncode != 0:
        print(f"guest sampling: building the module with its names failed: {b.stderr.strip()}")
        return 1
    f12, _, _ = build_frames(kw, args.profile_codec, VALUE_SETS[0][1])
    frame_file = os.path.join(OUT_DIR, f"fetch-1000-small-{args.profile_codec}.bin")
    with open(frame_file, "wb") as f:
        f.write(f12)
    data = os.path.join(OUT_DIR, "guest.perf.data")
    child = subprocess.Popen([sys.executable, __file__, "--guest-loop", frame_file, "--wasm", names_wasm, "--seconds", str(args.seconds + 1)],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    ready = child.stdout.readline().strip()
    if ready != "ready":
        child.wait()
        print(f"guest sampling: the looping process did not start ({ready!r})")
        return 1
    perf = shutil.which("perf") or "perf"
    subprocess.run([perf, "record", "-e", "cpu-clock", "-F", "1999", "-p", str(child.pid), "-o", data, "--", "sleep", str(args.seconds)],
                   capture_output=True, text=True)
    child.wait()
    rep = subprocess.run([perf, "report", "-i", data, "--stdio", "--no-children", "--sort", "dso,sym", "--percent-limit", "0"],
                         capture_output=True, text=True)
    mapfile = f"/tmp/perf-{child.pid}.map"
    rows: List[Tuple[float, str, str]] = []
    for ln in rep.stdout.splitlines():
        mark = " [.] " if " [.] " in ln else " [k] "
        if ln.lstrip().startswith("#") or mark not in ln:
            continue
        left, _, sym = ln.partition(mark)
        parts = left.split()
        try:
            pct = float(parts[0].rstrip("%"))
        except (ValueError, IndexError):
            continue
        dso = "module (JIT)" if "[JIT]" in left else parts[1]
        rows.append((pct, dso, sym.strip()))
    guest = sum(p for p, d, _ in rows if d == "module (JIT)")
    gc = sum(p for p, d, sym in rows if d == "module (JIT)" and (sym.startswith("runtime.") or sym.startswith("internal_runtime")))
    print(f"guest sampling: perf record (cpu-clock, 1999 Hz, {args.seconds:g} s) of kw_decode_response_frame_records in a loop, values "
          f"{VALUE_SETS[0][0]}, {args.profile_codec}, wasmtime profiler perfmap; the module built again without -s -w (the same code, "
          f"with its function names)")
    print(f"  samples in the module's code {guest:.0f}% (of which the Go runtime's: allocation, collector, write barriers {gc:.0f}%), "
          f"outside it (wasmtime, libc, Python) {100 - guest:.0f}%; top 15 by own samples:")
    for pct, dso, sym in rows[:15]:
        print(f"  {pct:6.2f}%  {dso:<22} {sym}")
    if not rows:
        print("  (no samples: " + rep.stderr.strip() + ")")
    try:
        os.unlink(mapfile)
    except OSError:
        pass
    return 0


def guest_loop(args: argparse.Namespace) -> int:
    """The process perf samples: the module under a perfmap engine, the call in a loop."""
    with open(args.guest_loop, "rb") as f:
        frame = f.read()
    engine, module, _ = modcall.load(profiler="perfmap", wasm=args.wasm)
    mc = modcall.ModuleCall(engine, module)
    h = mc.put(frame)
    for _ in range(20):
        mc.once(h, 12)
    print("ready", flush=True)
    t = time.perf_counter()
    while time.perf_counter() - t < args.seconds:
        mc.once(h, 12)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--sample", type=float, default=0.05, help="seconds of CPU per sample")
    ap.add_argument("--codecs", default=",".join(CODECS))
    ap.add_argument("--go", default="go")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--profile-codec", default="none")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--guest-loop", help=argparse.SUPPRESS)
    ap.add_argument("--wasm", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.guest_loop:
        return guest_loop(args)
    if args.profile:
        return profile(args)
    return bench(args)


if __name__ == "__main__":
    sys.exit(main())
