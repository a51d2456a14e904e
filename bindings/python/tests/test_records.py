"""Records: Kafka's record vectors (conformance/vectors/records) through the record table
fast path and the JSON form, kw_records_encode, and the record API's edge cases."""

import base64
import struct
from typing import Any, Dict, List, Optional

import pytest

import kwire
from conftest import VECTORS, read_jsonl

CONTROL_TYPES = {"ABORT": 0, "COMMIT": 1, "LEADER_CHANGE": 2, "SNAPSHOT_HEADER": 3, "SNAPSHOT_FOOTER": 4, "KRAFT_VERSION": 5, "KRAFT_VOTERS": 6}


def b64(s: Optional[str]) -> Optional[bytes]:
    return None if s is None else base64.b64decode(s)


def opt_bytes(m: Optional[memoryview]) -> Optional[bytes]:
    return None if m is None else bytes(m)


RECORD_VECTORS = read_jsonl(VECTORS / "records" / "kafka-clients-4.4.0.jsonl")


def test_record_vectors_present() -> None:
    names = {v["name"] for v in RECORD_VECTORS}
    assert len(RECORD_VECTORS) >= 20
    assert {"v2-none", "v2-zstd", "v0-gzip", "v1-lz4", "v2-control-abort", "mixed-magic-fetch"} <= names


def kafka_records(v: Dict[str, Any]) -> List[Dict[str, Any]]:
    """What Kafka's reader saw, flattened to one dict per record in the record API's terms."""
    out = []
    for b in v["batches"]:
        for r in b["records"]:
            out.append(
                {
                    "offset": int(r["offset"]),
                    "timestamp": int(r["timestamp"]),
                    "timestamp_type": b["timestampType"],
                    "key": b64(r["key"]),
                    "value": b64(r["value"]),
                    "headers": [(h["key"], b64(h["value"])) for h in r["headers"]],
                    "producer_id": int(b["producerId"]),
                    "producer_epoch": b["producerEpoch"],
                    "sequence": r["sequence"],
                    "leader_epoch": b["partitionLeaderEpoch"],
                    "magic": b["magic"],
                    "compression": b["compression"],
                    "transactional": b["transactional"],
                    "control": b["control"],
                    "control_type": CONTROL_TYPES[r["control"]["type"]] if r.get("control") else -1,
                }
            )
    return out


def table_record(r: kwire.Record) -> Dict[str, Any]:
    return {
        "offset": r.offset,
        "timestamp": r.timestamp,
        "timestamp_type": r.timestamp_type,
        "key": opt_bytes(r.key),
        "value": opt_bytes(r.value),
        "headers": [(k, opt_bytes(v)) for k, v in r.headers],
        "producer_id": r.producer_id,
        "producer_epoch": r.producer_epoch,
        "sequence": r.sequence,
        "leader_epoch": r.leader_epoch,
        "magic": r.magic,
        "compression": r.compression,
        "transactional": r.transactional,
        "control": r.control,
        "control_type": r.control_type,
    }


def json_record(r: kwire.RecordJSON) -> Dict[str, Any]:
    return {
        "offset": int(r["offset"]),
        "timestamp": int(r["timestamp"]),
        "timestamp_type": r["timestampType"],
        "key": b64(r["key"]),
        "value": b64(r["value"]),
        "headers": [(h["key"], b64(h["value"])) for h in r["headers"]],
        "producer_id": int(r["producerId"]),
        "producer_epoch": r["producerEpoch"],
        "sequence": r["sequence"],
        "leader_epoch": r["leaderEpoch"],
        "magic": r["magic"],
        "compression": r["compression"],
        "transactional": r["transactional"],
        "control": r["control"],
        "control_type": r["controlType"],
    }


@pytest.mark.parametrize("v", RECORD_VECTORS, ids=[v["name"] for v in RECORD_VECTORS])
def test_record_vector(kw: kwire.Kwire, v: Dict[str, Any]) -> None:
    data = base64.b64decode(v["bytes"])
    want = kafka_records(v)
    assert want, "a vector without records tests nothing"

    table = kw.decode_records(data)
    got = [table_record(r) for r in table]
    assert got == want
    assert [table_record(table[i]) for i in range(len(table))] == want  # random access agrees with iteration
    assert table.skipped_bytes == 0

    js = kw.decode_records_dict(data)
    assert [json_record(r) for r in js["records"]] == want
    assert js["skippedBytes"] == 0
    for r, jr in zip(table, js["records"]):
        assert (r.schema_source, r.schema_id, r.schema_version) == (jr["schemaSource"], jr["schemaId"], jr["schemaVersion"])

    # The records again through encode_records, when one producer call could have built
    # them: one batch (or an uncompressed legacy set), not broker-written.
    b0 = v["batches"][0]
    if b0["control"] or b0["timestampType"] == "LogAppendTime" or b0["deleteHorizonMs"] != "-1":
        return
    if any(b["magic"] != b0["magic"] or b["compression"] != b0["compression"] or b["magic"] == 2 for b in v["batches"][1:]):
        return
    kwargs: Dict[str, Any] = {"magic": b0["magic"], "base_offset": int(b0["baseOffset"]), "compression": b0["compression"]}
    if b0["magic"] == 2:
        kwargs.update(
            producer_id=int(b0["producerId"]),
            producer_epoch=b0["producerEpoch"],
            base_sequence=b0["baseSequence"],
            partition_leader_epoch=b0["partitionLeaderEpoch"],
            transactional=b0["transactional"],
        )
    recs = list(table)
    if b0["magic"] < 2:
        recs = [{"key": r.key, "value": r.value, "timestamp": r.timestamp} for r in table]
    enc = kw.encode_records(recs, **kwargs)
    if b0["compression"] == "none":
        assert enc == data, "an uncompressed batch must come out as Kafka wrote it"
    back = [table_record(r) for r in kw.decode_records(enc)]
    assert back == want


@pytest.mark.parametrize("compression", kwire.COMPRESSIONS)
def test_encode_decode_every_codec(kw: kwire.Kwire, compression: str) -> None:
    recs = [
        {"key": f"k{i}".encode(), "value": bytes([i % 256]) * (i * 7), "timestamp": 1_700_000_000_000 + i, "headers": [("h", b"v"), ("n", None)]}
        for i in range(300)
    ]
    recs.append({"key": None, "value": None, "timestamp": 1_700_000_000_999})
    data = kw.encode_records(recs, compression=compression, base_offset=1000)
    t = kw.decode_records(data)
    assert len(t) == len(recs)
    for i, (r, w) in enumerate(zip(t, recs)):
        assert r.offset == 1000 + i
        assert r.timestamp == w["timestamp"]
        assert opt_bytes(r.key) == w["key"] and opt_bytes(r.value) == w["value"]
        assert [(k, opt_bytes(v)) for k, v in r.headers] == list(w.get("headers", []))
        assert r.compression == compression and r.magic == 2


def test_producer_id_2_62_plus_1_round_trips_as_int(kw: kwire.Kwire) -> None:
    pid = 2**62 + 1
    data = kw.encode_records([{"key": b"k", "value": b"v", "timestamp": 2**53 + 1}], producer_id=pid, producer_epoch=7, base_sequence=0, base_offset=2**60 + 3)
    r = kw.decode_records(data)[0]
    assert r.producer_id == pid and isinstance(r.producer_id, int)
    assert r.timestamp == 2**53 + 1 and r.offset == 2**60 + 3
    assert kw.decode_records_dict(data)["records"][0]["producerId"] == str(pid)
    # Negative int64 and the extremes.
    data = kw.encode_records([{"value": b"x", "timestamp": -(2**63)}], producer_id=2**63 - 1, producer_epoch=0, base_sequence=0)
    r = kw.decode_records(data)[0]
    assert r.producer_id == 2**63 - 1 and r.timestamp == -(2**63)


@pytest.mark.parametrize("magic,compression", [(0, "none"), (0, "gzip"), (1, "snappy"), (1, "lz4")])
def test_legacy_sets(kw: kwire.Kwire, magic: int, compression: str) -> None:
    data = kw.encode_records([{"key": b"a", "value": b"1", "timestamp": 5}, {"key": None, "value": b"2", "timestamp": 6}], magic=magic, compression=compression)
    t = list(kw.decode_records(data))
    assert [r.magic for r in t] == [magic, magic]
    assert [opt_bytes(r.value) for r in t] == [b"1", b"2"]
    assert [r.timestamp for r in t] == ([-1, -1] if magic == 0 else [5, 6])
    assert all(r.leader_epoch == -1 for r in t)


def test_legacy_headers_and_zstd_refused(kw: kwire.Kwire) -> None:
    with pytest.raises(kwire.ArgError):
        kw.encode_records([{"value": b"x", "headers": [("h", b"v")]}], magic=1)
    with pytest.raises(kwire.UnsupportedError) as e:
        kw.encode_records([{"value": b"x"}], magic=1, compression="zstd")
    assert e.value.status == -9 and e.value.text


def test_memoryview_views_and_copies(kw: kwire.Kwire) -> None:
    data = bytearray(kw.encode_records([{"key": b"key", "value": b"value", "headers": [(b"hX", b"x")]}]))
    data[data.index(b"hX") + 1] = 0xFF  # a header key that is not UTF-8 (CRC left stale)
    t = kw.decode_records(data, verify_crc=False)
    r = t[0]
    assert isinstance(r.value, memoryview) and r.value.readonly
    assert r.value.obj is t.table  # a view of the table, not a copy
    assert r.value.tobytes() == b"value"
    assert r.headers[0][0] == "h\ufffd"  # as the JSON form
    assert bytes(r.raw_headers()[0][0]) == b"h\xff"  # exact bytes
    del t
    assert bytes(r.key or b"") == b"key"  # a view keeps the table alive


def test_inputs_bytearray_and_memoryview(kw: kwire.Kwire) -> None:
    data = kw.encode_records([{"value": "é"}])
    for form in (bytearray(data), memoryview(data), memoryview(b"pad" + data)[3:]):
        assert opt_bytes(kw.decode_records(form)[0].value) == "é".encode()


def test_crc_check_and_skip(kw: kwire.Kwire) -> None:
    data = bytearray(kw.encode_records([{"value": b"hello"}]))
    data[data.index(b"hello")] ^= 0x20  # "Hello": the batch CRC no longer matches
    with pytest.raises(kwire.DecodeError) as e:
        kw.decode_records(data)
    assert e.value.status == -2 and "crc" in e.value.text.lower()
    assert opt_bytes(kw.decode_records(data, verify_crc=False)[0].value) == b"Hello"


def test_partial_batch_is_skipped(kw: kwire.Kwire) -> None:
    a = kw.encode_records([{"value": b"one"}])
    b = kw.encode_records([{"value": b"two"}], base_offset=1)
    t = kw.decode_records(a + b[:20])
    assert len(t) == 1 and t.skipped_bytes == 20
    assert kw.decode_records_dict(a + b[:20])["skippedBytes"] == 20


def test_decompression_cap(kw: kwire.Kwire) -> None:
    data = kw.encode_records([{"value": b"\0" * 100_000}], compression="gzip")
    with pytest.raises(kwire.TooLargeError):
        kw.decode_records(data, max_decompressed=1000)
    assert len(kw.decode_records(data, max_decompressed=200_000)) == 1


def test_unknown_compression(kw: kwire.Kwire) -> None:
    with pytest.raises(kwire.ArgError):
        kw.encode_records([{"value": b"x"}], compression="brotli")
    with pytest.raises(kwire.ArgError) as e:
        kw.encode_records([{"value": b"x"}], compression=9)
    assert e.value.status == -1


def test_garbage_is_a_decode_error(kw: kwire.Kwire) -> None:
    with pytest.raises(kwire.DecodeError) as e:
        kw.decode_records(b"\0" * 8 + struct.pack(">i", 80) + b"\0" * 4 + b"\x02" + b"\x07" * 79)
    assert e.value.offset is not None


def test_table_layout_is_read_by_its_strides(kw: kwire.Kwire) -> None:
    """A later layout may grow the strides: the reader must follow the table header."""
    data = kw.encode_records([{"key": b"a", "value": b"b", "headers": [("h", b"c")]}, {"value": b"d"}])
    raw = kw.decode_records(data).table
    magic, layout, n, stride, recs, hn, hstride, hoff, skipped, total = struct.unpack_from("<4s9i", raw)
    assert (magic, layout, n, stride, hstride, total) == (b"KWRT", 1, 2, 96, 16, len(raw))
    # Rebuild the table with 8 extra bytes per record entry and 4 per header entry.
    body = bytearray()
    head = 40
    new_recs = head
    new_hoff = new_recs + n * (stride + 8)
    shift = new_hoff + hn * (hstride + 4) - hoff - hn * hstride  # where the data moved
    for i in range(n):
        e = bytearray(raw[recs + i * stride : recs + (i + 1) * stride])
        for at in (24, 32):  # key_offset, value_offset
            off, ln = struct.unpack_from("<ii", e, at)
            if ln >= 0:
                struct.pack_into("<i", e, at, off + shift)
        body += e + b"\xee" * 8
    for j in range(hn):
        e = bytearray(raw[hoff + j * hstride : hoff + (j + 1) * hstride])
        for at in (0, 8):
            off, ln = struct.unpack_from("<ii", e, at)
            if ln >= 0:
                struct.pack_into("<i", e, at, off + shift)
        body += e + b"\xee" * 4
    body += raw[hoff + hn * hstride :]
    new = bytearray(struct.pack("<4s9i", b"KWRT", 1, n, stride + 8, new_recs, hn, hstride + 4, new_hoff, skipped, head + len(body))) + body
    grown = kwire.RecordTable(bytes(new))
    assert [table_record(r) for r in grown] == [table_record(r) for r in kw.decode_records(data)]


def test_malformed_table_is_refused() -> None:
    with pytest.raises(kwire.InternalError):
        kwire.RecordTable(b"KWRT" + b"\0" * 10)
    with pytest.raises(kwire.InternalError):
        kwire.RecordTable(struct.pack("<4s9i", b"KWRT", 1, 5, 96, 40, 0, 16, 40, 0, 40))


def test_random_access_slices_and_repr(kw: kwire.Kwire) -> None:
    data = kw.encode_records([{"key": f"k{i}".encode(), "value": None, "headers": [("i", str(i).encode())] * (i % 3)} for i in range(5)])
    t = kw.decode_records(data)
    assert len(t) == 5 and t[-1].offset == 4 and t[0].value is None
    assert [r.offset for r in t[1:4]] == [1, 2, 3] and [r.offset for r in t[::-2]] == [4, 2, 0]
    assert [len(r.headers) for r in t] == [0, 1, 2, 0, 1]
    assert [(k, bytes(v or b"")) for k, v in t[2].headers] == [("i", b"2"), ("i", b"2")]
    assert [(bytes(k), bytes(v or b"")) for k, v in t[4].raw_headers()] == [(b"i", b"4")]
    assert t[0].raw_headers() == []
    with pytest.raises(IndexError):
        t[5]
    with pytest.raises(IndexError):
        t[-6]
    assert "key=b'k1'" in repr(t[1]) and "value=None" in repr(t[1])
    assert "5 records" in repr(t)
    # The tail fields read on demand agree with the JSON form.
    js = kw.decode_records_dict(data)["records"]
    for r, j in zip(t, js):
        assert (r.sequence, r.leader_epoch, r.producer_epoch, r.magic) == (j["sequence"], j["leaderEpoch"], j["producerEpoch"], j["magic"])
        assert (r.compression, r.timestamp_type, r.transactional, r.control, r.control_type) == (
            j["compression"], j["timestampType"], j["transactional"], j["control"], j["controlType"])
