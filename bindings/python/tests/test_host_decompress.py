"""Host decompression (ABI 1.3): decode_fetch and decode_produce decompress the batches of a
codec the host has natively (zlib's gzip; zstd through zstandard) themselves and hand them
to the module. Whatever a batch holds (every record vector, byte flips, cuts, trailing
bytes, bombs, other compressors' output), the records or the error must be exactly those of
the module's own decompression (host_decompress=False)."""

import base64
import gzip
import struct
import zlib
from typing import Any, Dict, List

import pytest
import zstandard

import kwire
from conftest import VECTORS, read_jsonl
from test_frame_records import columns_off

RECORD_VECTORS = [v for f in sorted((VECTORS / "records").glob("*.jsonl")) for v in read_jsonl(f)]


def fetch_frame(kw: kwire.Kwire, records: Any) -> bytes:
    def part(i: int) -> Dict[str, Any]:
        return {"partitionIndex": i, "errorCode": 0, "highWatermark": "9", "lastStableOffset": "9", "logStartOffset": "0",
                "abortedTransactions": [], "preferredReadReplica": -1, "records": base64.b64encode(bytes(records)).decode()}

    body = {"throttleTimeMs": 0, "errorCode": 0, "sessionId": 0, "responses": [{"topic": "t", "partitions": [part(0), part(1)]}]}
    return kw.encode_response_frame({"header": {"correlationId": 3}, "body": body}, 1, 12)


def outcome(kw: kwire.Kwire, frame: bytes, **opts: Any) -> str:
    """Every field of every record of every partition, or the error."""
    try:
        f = kw.decode_fetch(frame, 12, **opts)
    except kwire.KwireError as e:
        return f"ERR {type(e).__name__} {e.status} {e.text} {sorted(e.details.items())}"
    out: List[str] = []
    for p in f["partitions"]:
        for r in p.records:
            out.append(repr((r.offset, r.timestamp, r.producer_id, None if r.key is None else bytes(r.key),
                             None if r.value is None else bytes(r.value), [(k, None if v is None else bytes(v)) for k, v in r.headers],
                             r.sequence, r.compression, r.schema_id, r.control)))
        out.append(f"| skipped {p.records.skipped_bytes}")
    return "\n".join(out)


def same(kw: kwire.Kwire, frame: bytes, **opts: Any) -> str:
    host = outcome(kw, frame, **opts)
    module = outcome(kw, frame, host_decompress=False, **opts)
    assert host == module
    with columns_off(kw):  # the layout before the columns (ABI 1.4) says the same
        assert outcome(kw, frame, **opts) == host
        assert outcome(kw, frame, host_decompress=False, **opts) == host
    return host


def with_records_section(batch: bytes, section: bytes, codec: int) -> bytes:
    """batch with its records section replaced by section and its codec set (CRC stale)."""
    b = bytearray(batch[:61]) + section
    struct.pack_into(">i", b, 8, len(b) - 12)
    (attrs,) = struct.unpack_from(">h", b, 21)
    struct.pack_into(">h", b, 21, (attrs & ~7) | codec)
    return bytes(b)


def test_host_codecs(kw: kwire.Kwire) -> None:
    assert kw.abi_version() & 0xFFFF >= 3
    # zstandard is installed with the tests (requirements-dev.txt), so both are the host's.
    assert kw.host_codecs() == ["gzip", "zstd"]


@pytest.mark.parametrize("v", RECORD_VECTORS, ids=[v["name"] for v in RECORD_VECTORS])
def test_record_vector(kw: kwire.Kwire, v: Dict[str, Any]) -> None:
    b = base64.b64decode(v["bytes"])
    frame = fetch_frame(kw, b)
    same(kw, frame)
    same(kw, frame, verify_crc=False)
    same(kw, frame, copy=True)


@pytest.mark.parametrize("codec", ["gzip", "zstd"])
def test_host_path_is_taken(kw: kwire.Kwire, codec: str) -> None:
    batch = kw.encode_records([{"key": b"k", "value": b"v" * 300}], compression=codec)
    frame = fetch_frame(kw, batch)
    before = kw.host_decompressed()["batches"]
    kw.decode_fetch(frame, 12)
    assert kw.host_decompressed()["batches"] - before == 2
    kw.decode_fetch(frame, 12, host_decompress=False)
    with pytest.raises(kwire.TooLargeError):
        kw.decode_fetch(frame, 12, max_decompressed=10)  # past the cap the host gives the batch up
    assert kw.host_decompressed()["batches"] - before == 2
    for other in ["none", "snappy", "lz4"]:
        kw.decode_fetch(fetch_frame(kw, kw.encode_records([{"value": b"x" * 100}], compression=other)), 12)
    assert kw.host_decompressed()["batches"] - before == 2


@pytest.mark.parametrize("codec", ["gzip", "zstd"])
def test_spoilt_batches(kw: kwire.Kwire, codec: str) -> None:
    recs = [{"key": f"k{i}".encode(), "value": f"value {i} ".encode() * 20, "headers": [("h", f"x{i}".encode())]} for i in range(40)]
    batch = kw.encode_records(recs, compression=codec)
    refused = n = 0
    step = max(1, len(batch) // 100)
    for at in range(0, len(batch), step):
        for x in (0x01, 0x80):
            b = bytearray(batch)
            b[at] ^= x
            n += 1
            if same(kw, fetch_frame(kw, b), verify_crc=False).startswith("ERR"):
                refused += 1
    for cut in range(1, 80, 7):
        same(kw, fetch_frame(kw, batch[: len(batch) - cut]))
    assert 0 < refused < n


def test_gzip_members_and_trailing_bytes(kw: kwire.Kwire) -> None:
    batch = kw.encode_records([{"key": f"k{i}".encode(), "value": f"v{i}".encode()} for i in range(10)])
    plain = batch[61:]
    one = gzip.compress(plain, mtime=0)
    cases = {
        "zlib gzip": one,
        "two members": gzip.compress(plain[:30], mtime=0) + gzip.compress(plain[30:], mtime=0),
        "zero bytes after the member": one + bytes(8),
        "junk after the member": one + b"junk",
        "an empty member after": one + gzip.compress(b"", mtime=0),
        "a raw deflate stream": zlib.compress(plain)[2:-4],
    }
    results = {name: same(kw, fetch_frame(kw, with_records_section(batch, sec, 1)), verify_crc=False) for name, sec in cases.items()}
    assert results["zlib gzip"].count("\n") == 2 * 11 - 1 and results["two members"] == results["zlib gzip"]
    assert results["an empty member after"] == results["zlib gzip"]
    for bad in ("zero bytes after the member", "junk after the member", "a raw deflate stream"):
        assert results[bad].startswith("ERR"), bad


def test_zstd_frames_from_other_compressors(kw: kwire.Kwire) -> None:
    batch = kw.encode_records([{"key": f"k{i}".encode(), "value": f"v{i}".encode()} for i in range(10)])
    plain = batch[61:]
    with_size = zstandard.ZstdCompressor().compress(plain)
    streamed = zstandard.ZstdCompressor(write_content_size=False).compress(plain)
    cases = {
        "with content size": with_size,
        "streamed": streamed,
        "two frames": zstandard.ZstdCompressor().compress(plain[:30]) + zstandard.ZstdCompressor().compress(plain[30:]),
        "trailing zeros": with_size + bytes(4),
    }
    results = {name: same(kw, fetch_frame(kw, with_records_section(batch, sec, 4)), verify_crc=False) for name, sec in cases.items()}
    assert results["with content size"].count("\n") == 2 * 11 - 1 and results["streamed"] == results["with content size"]
    assert results["two frames"] == results["with content size"]  # left to the module, which reads both frames
    assert results["trailing zeros"].startswith("ERR")


@pytest.mark.parametrize("codec", ["gzip", "zstd"])
def test_bombs(kw: kwire.Kwire, codec: str) -> None:
    # 4 MiB of zeros in one record: a few KiB compressed.
    batch = kw.encode_records([{"value": bytes(4 << 20)}], compression=codec)
    assert len(batch) < 16 << 10
    frame = fetch_frame(kw, batch)
    capped = same(kw, frame, max_decompressed=1 << 20)
    assert capped.startswith("ERR TooLargeError")
    before = kw.host_decompressed()["batches"]
    assert not same(kw, frame, max_decompressed=(4 << 20) + 64).startswith("ERR")
    assert kw.host_decompressed()["batches"] - before == 2 * 2  # both partitions, in both layouts same() reads
    # A zstd frame that states a content size above the cap is refused before any output.
    if codec == "zstd":
        big = zstandard.ZstdCompressor().compress(bytes(8 << 20))
        capped = same(kw, fetch_frame(kw, with_records_section(batch, big, 4)), verify_crc=False, max_decompressed=1 << 20)
        assert capped.startswith("ERR")
