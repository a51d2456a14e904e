"""Layout-4 record tables (ABI 1.4, KW_RECORDS_COLUMNS): decode_fetch and decode_produce
get the records as columns. Whatever a frame holds (every record vector in Fetch and
Produce frames, spoilt batches, bombs), the records (every field, headers, raw headers,
repr), the columns' content and the errors must be exactly those of the layout before
(layout 3, or 2 with copy=True), with the host's decompressors and without; the columns
are views of the table; a layout-4 table that points outside its buffers is refused."""

import base64
import struct
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import pytest

import kwire
from kwire import _layout as L
from test_frame_records import RECORD_VECTORS, _fetch_frame, _produce_frame, columns_off


def _minor(kw: kwire.Kwire) -> int:
    return kw.abi_version() & 0xFFFF


@pytest.fixture(autouse=True)
def _needs_columns(kw: kwire.Kwire) -> None:
    if _minor(kw) < 4:
        pytest.fail(f"the module (ABI 1.{_minor(kw)}) has no layout-4 tables: this binding is built with one that does")


def _b(v: Optional[memoryview]) -> Optional[bytes]:
    return None if v is None else bytes(v)


def record_text(r: kwire.Record) -> str:
    """Every field a Record has, its headers, raw headers and repr."""
    return repr((
        r.offset, r.timestamp, r.producer_id, _b(r.key), _b(r.value), r.key_text(), r.value_text(), r.key_text("ignore"),
        [(k, _b(v)) for k, v in r.headers], [(bytes(k), _b(v)) for k, v in r.raw_headers()], r.source, r.sequence, r.leader_epoch,
        r.producer_epoch, r.magic, r.compression, r.timestamp_type, r.transactional, r.control, r.control_type, r.schema_source,
        r.schema_id, r.schema_version, repr(r),
    ))


def columns_text(c: kwire.Columns) -> str:
    """What the columns say of each record, with spans resolved in the buffer they index
    (the tables of two layouts place their data differently), and the batch fields each
    record's batch entry gives."""
    data, inp = c.data, c.input
    keys, values, hi, hs, src = c.keys, c.values, c.header_index, c.headers, c.sources
    ctl, sch, pids, bi, batches = c.control_types, c.schemas, c.producer_ids, c.batch_index, c.batches
    assert all(len(m) == k * c.length for m, k in ((c.offsets, 1), (c.timestamps, 1), (keys, 2), (values, 2), (hi, 2), (src, 1), (ctl, 1),
                                                    (sch, 3), (pids, 1), (bi, 1)))
    rows: List[Any] = []
    for i in range(c.length):
        buf = inp if src[i] == kwire.SOURCE_INPUT else data
        assert buf is not None

        def span(pairs: memoryview, j: int) -> Optional[bytes]:
            return None if pairs[j + 1] == -1 else bytes(buf[pairs[j] : pairs[j] + pairs[j + 1]])

        b = batches[bi[i]]
        assert b.first_record <= c.first + i < b.first_record + b.record_count
        hdrs = [(span(hs, 4 * j), span(hs, 4 * j + 2)) for j in range(hi[2 * i], hi[2 * i] + hi[2 * i + 1])]
        rows.append((c.offsets[i], c.timestamps[i], span(keys, 2 * i), span(values, 2 * i), hdrs, src[i], ctl[i], sch[3 * i : 3 * i + 3].tolist(),
                     pids[i], b.producer_id, b.producer_epoch, b.leader_epoch, b.magic, b.compression, b.timestamp_type, b.flags,
                     b.base_offset == c.offsets[i] if b.record_count == 1 and b.magic < 2 else None))
    return repr(rows)


def outcome(kw: kwire.Kwire, frame: bytes, api_key: int, version: int, columns: bool, **opts: Any) -> Tuple[str, List[int]]:
    """Every record and the columns of every partition, or the error; and the layouts."""
    try:
        with columns_off(kw, not columns):
            f = kw.decode_produce(frame, **opts) if api_key == 0 else kw.decode_fetch(frame, version, **opts)
    except kwire.KwireError as e:
        return f"ERR {type(e).__name__} {e.status} {e.text} {sorted(e.details.items())}", []
    out: List[str] = []
    layouts: List[int] = []
    for p in f["partitions"]:
        rs = p.records
        layouts.append(rs.table.layout)
        out += [record_text(r) for r in rs]
        out.append(repr([record_text(rs[i]) for i in range(len(rs))] == out[len(out) - len(rs) :]))
        out.append(columns_text(rs.columns()))
        out.append(f"| {p.topic} {p.partition} skipped {rs.skipped_bytes} size {rs.size} invalid {rs.invalid}")
    return "\n".join(out), layouts


def same(kw: kwire.Kwire, frame: bytes, api_key: int = 1, version: int = 12, **opts: Any) -> str:
    """Layout 4 and the layout before say the same, with the host's decompressors and
    without, with input spans and copy=True."""
    first = None
    for copy in (False, True):
        for host in (True, False):
            new, lay4 = outcome(kw, frame, api_key, version, True, copy=copy, host_decompress=host, **opts)
            old, lay = outcome(kw, frame, api_key, version, False, copy=copy, host_decompress=host, **opts)
            assert new == old, (copy, host)
            assert set(lay4) <= {4} and set(lay) <= {2 if copy else 3}
            if first is None:
                first = new
            elif not copy:
                assert new == first, host
    assert first is not None
    return first


@pytest.mark.parametrize("v", RECORD_VECTORS, ids=[v["name"] for v in RECORD_VECTORS])
def test_record_vector(kw: kwire.Kwire, v: Dict[str, Any]) -> None:
    b64 = v["bytes"]
    for version in (4, 12, 16):
        same(kw, _fetch_frame(kw, version, [b64, None, b64]), 1, version)
        same(kw, _fetch_frame(kw, version, [b64, None, b64]), 1, version, verify_crc=False)
    for version in (3, 9, 12):
        same(kw, kw.encode_request_frame(_produce_frame(kw, version, [b64, None, b64])), 0, version)


def test_every_kind_of_record_in_one_frame(kw: kwire.Kwire) -> None:
    """Records of both sources in one table, headers of both interleaved, legacy messages,
    a transactional batch, a COMMIT marker, null keys and values, sequences that wrap."""
    commit = base64.b64decode(next(v["bytes"] for v in RECORD_VECTORS if v["name"] == "v2-control-commit"))

    def batch(compression: str, **kws: Any) -> bytes:
        return kw.encode_records([{"key": b"k", "value": b"hello", "headers": [("h", b"hv"), ("n", None)]}, {"key": None, "value": None},
                                  {"key": b"", "value": b""}, {"key": None, "value": b"v", "headers": [("\u00e9", b"")]}],
                                 compression=compression, **kws)

    fields: List[Optional[bytes]] = [
        batch("none"), batch("snappy"), batch("gzip"), batch("zstd"), batch("lz4"),
        kw.encode_records([{"key": b"old", "value": b"v0"}, {"key": None, "value": None}], magic=0),
        kw.encode_records([{"key": b"old", "value": b"v1", "timestamp": 5}], magic=1, compression="gzip"),
        None,
        batch("none", transactional=True, producer_id=7, producer_epoch=1, base_sequence=2**31 - 2, base_offset=2**40),
        commit,
        batch("zstd", producer_id=2**62 + 1, base_sequence=5, timestamp_type="LogAppendTime", log_append_time=77),
    ]
    text = same(kw, _fetch_frame(kw, 12, fields))  # type: ignore[arg-type]
    f = kw.decode_fetch(_fetch_frame(kw, 12, fields), 12)  # type: ignore[arg-type]
    rs = [p.records for p in f["partitions"]]
    assert rs[0].table.layout == 4
    assert [r.sequence for r in rs[7]] == [2**31 - 2, 2**31 - 1, 0, 1]
    assert [r.producer_id for r in rs[9]] == [2**62 + 1] * 4 and rs[9].columns().producer_ids.tolist() == [2**62 + 1] * 4
    assert [r.source for p in rs for r in p] == [1] * 4 + [0] * 4 * 4 + [0, 0, 0] + [1] * 4 + [0] + [0] * 4
    assert rs[0][1].key is None and rs[0][1].value is None and rs[0][2].key is not None and bytes(rs[0][2].key) == b""
    assert "ERR" not in text


@pytest.mark.parametrize("codec", ["gzip", "zstd", "snappy", "lz4"])
def test_spoilt_batches(kw: kwire.Kwire, codec: str) -> None:
    recs = [{"key": f"k{i}".encode() if i % 3 else None, "value": f"value {i} ".encode() * 20 if i % 4 else None,
             "headers": [("h", f"x{i}".encode())]} for i in range(40)]
    batch = kw.encode_records(recs, compression=codec)
    plain = kw.encode_records(recs[:5])
    refused = n = 0
    step = max(1, len(batch) // 60)
    for at in range(0, len(batch), step):
        for x in (0x01, 0x80):
            b = bytearray(batch)
            b[at] ^= x
            n += 1
            frame = _fetch_frame(kw, 12, [base64.b64encode(plain).decode(), base64.b64encode(bytes(b)).decode()])
            if same(kw, frame, verify_crc=False).startswith("ERR"):
                refused += 1
    for cut in range(1, 80, 9):
        same(kw, _fetch_frame(kw, 12, [base64.b64encode(batch[: len(batch) - cut]).decode()]))
    assert 0 < refused < n


@pytest.mark.parametrize("codec", ["gzip", "zstd", "lz4"])
def test_bombs(kw: kwire.Kwire, codec: str) -> None:
    batch = kw.encode_records([{"value": bytes(4 << 20)}], compression=codec)
    frame = _fetch_frame(kw, 12, [base64.b64encode(batch).decode()])
    assert same(kw, frame, max_decompressed=1 << 20).startswith("ERR TooLargeError")
    assert not same(kw, frame, max_decompressed=(4 << 20) + 64).startswith("ERR")
    produce = kw.encode_request_frame(_produce_frame(kw, 9, [base64.b64encode(batch).decode()]))
    assert same(kw, produce, 0, 9, max_decompressed=1 << 20).startswith("ERR TooLargeError")


def test_columns_are_views_of_the_table(kw: kwire.Kwire) -> None:
    recs = [{"key": f"k{i}".encode(), "value": b"v" * i, "headers": [("h", b"x")]} for i in range(30)]
    frame = _fetch_frame(kw, 12, [base64.b64encode(kw.encode_records(recs, compression=c)).decode() for c in ("none", "zstd")])
    f = kw.decode_fetch(frame, 12)
    for p in f["partitions"]:
        rs = p.records
        t = rs.table
        assert t.layout == 4
        c = rs.columns()
        for name in ("offsets", "timestamps", "keys", "values", "header_index", "batch_index", "control_types", "schemas", "headers"):
            m = getattr(c, name)
            assert m.obj is t.table and m.readonly, name  # a view of the table's bytes, not a copy
        assert (c.offsets.format, c.timestamps.format, c.keys.format, c.sources.format, c.producer_ids.format) == ("q", "q", "i", "i", "q")
        assert c.sources.readonly and c.producer_ids.readonly
        whole = np.frombuffer(t.table, dtype=np.uint8)
        n = c.numpy()
        for name in ("offsets", "timestamps", "keys", "values", "header_index", "batch_index", "control_types", "schemas", "headers", "sources"):
            assert np.shares_memory(n[name], whole), name
            assert not n[name].flags.writeable
        assert n["offsets"].tolist() == c.offsets.tolist() and n["keys"].tolist() == [c.keys[i : i + 2].tolist() for i in range(0, 60, 2)]
        assert n["sources"].tolist() == c.sources.tolist() and n["schemas"].tolist() == [c.schemas[i : i + 3].tolist() for i in range(0, 90, 3)]
        # A RecordSet's columns are the part of the table's that holds its records.
        assert c.offsets.tolist() == [r.offset for r in rs] and rs.first == (0 if p.partition == 0 else 30)
        assert t.columns().offsets[rs.first : rs.first + 30].tolist() == c.offsets.tolist()


def test_records_are_made_from_the_columns(kw: kwire.Kwire) -> None:
    """A record of a layout-4 table holds its key and value views; Records compare by
    identity; RecordTableBuilder and encode_produce take them as they take the others."""
    frame = _fetch_frame(kw, 12, [base64.b64encode(kw.encode_records([{"key": b"k", "value": b"v", "headers": [("h", b"\xff")]},
                                                                        {"key": None, "value": b"w"}])).decode()])
    rs = kw.decode_fetch(frame, 12)["partitions"][0].records
    a, b = rs
    assert isinstance(a, kwire.Record) and a != rs[0] and a == a and len({a, rs[0]}) == 2
    assert a.key is a.key and a.key is not None and a.key.obj is frame
    assert b.key is None and b.key_text() is None and b.value_text() == "w"
    assert repr(a).startswith("Record(offset=0, timestamp=") and repr(a).endswith(", key=b'k', value=b'v', headers=[('h', b'\\xff')], compression='none')")
    with columns_off(kw):
        old = kw.decode_fetch(frame, 12)["partitions"][0].records
    assert [repr(r) for r in rs] == [repr(r) for r in old]
    tb = kwire.RecordTableBuilder()
    tb.add_all(rs)
    assert [(bytes(k), bytes(v or b"")) for k, v in kwire.RecordTable(tb.build())[0].raw_headers()] == [(b"h", b"\xff")]
    enc = kw.encode_produce(_produce_frame(kw, 9, [{"records": rs}]))
    assert [(_b(r.key), _b(r.value)) for r in kw.decode_produce(enc)["partitions"][0].records] == [(b"k", b"v"), (None, b"w")]


def _table4(kw: kwire.Kwire) -> Tuple[bytes, bytes]:
    batches = [kw.encode_records([{"key": b"k", "value": b"hello, input", "headers": [("h", b"hv")]}, {"key": None, "value": b""}],
                                 compression=c) for c in ("none", "lz4")]
    frame = _fetch_frame(kw, 12, [base64.b64encode(b).decode() for b in batches])
    return kw.decode_fetch(frame, 12)["partitions"][0].records.table.table, frame


def test_a_layout_4_table_pointing_outside_its_buffers_is_refused(kw: kwire.Kwire) -> None:
    tb, frame = _table4(kw)
    t = kwire.RecordTable(tb, frame)  # checked in full (not the module's own call)
    assert t.layout == 4 and len(t) == 4 and [r.source for r in t] == [1, 1, 0, 0]
    assert [r.value_text() for r in t] == ["hello, input", "", "hello, input", ""]
    with pytest.raises(kwire.InternalError, match="record 0: source 1 in a layout-4 table"):
        kwire.RecordTable(tb)  # its records need the frame they are views of

    def at(field: int) -> int:
        return int(struct.unpack_from("<i", tb, field)[0])

    keys, vals, hidx, bidx, srcs = (at(x) for x in (L.TABLE_COL_KEYS, L.TABLE_COL_VALUES, L.TABLE_COL_HEADER_INDEX, L.TABLE_COL_BATCH_INDEX,
                                                    L.TABLE_COL_SOURCES))
    n = len(frame)
    cases: List[Tuple[str, int, str, int, str]] = [
        ("value past the input", vals, "<i", n - 1, "record 0: key"),
        ("key length past the input", keys + 4, "<i", n, "record 0: key"),
        ("a header count past the headers", hidx + 4, "<i", 9, "record 0: key"),
        ("a record of the table past it", vals + 16, "<i", len(tb), "record 2: .* in the table of"),
        ("source 2", srcs, "<B", 2, "record 0: source 2"),
        ("batch -1", bidx, "<i", -1, "record 0: batch -1 of"),
        ("batch past the batch table", bidx + 12, "<i", 7, "record 3: batch 7 of"),
        ("a column not 8-aligned", L.TABLE_COL_VALUES, "<i", vals + 4, "column at"),
        ("a column past the table", L.TABLE_COL_SCHEMAS, "<i", len(tb) - 8, "column at"),
        ("the offsets column elsewhere than records_offset", L.TABLE_COL_OFFSETS, "<i", at(L.TABLE_COL_TIMESTAMPS), "column at"),
        ("a batch table past the table", L.TABLE_BATCH_COUNT, "<i", 1 << 20, "batch table"),
        ("a short batch stride", L.TABLE_BATCH_STRIDE, "<i", L.RB_STRIDE - 8, "batch table"),
        ("a record stride", L.TABLE_RECORD_STRIDE, "<i", 8, "geometry"),
    ]
    for what, off, fmt, value, match in cases:
        bad = bytearray(tb)
        struct.pack_into(fmt, bad, off, value)
        with pytest.raises(kwire.InternalError, match=match):
            kwire.RecordTable(bytes(bad), frame)
    with pytest.raises(kwire.InternalError):
        kwire.RecordTable(tb[: L.TABLE_HEADER_SIZE_4 - 1], frame)
    bad = bytearray(tb)
    struct.pack_into("<i", bad, L.TABLE_LAYOUT, 5)
    with pytest.raises(kwire.InternalError, match="layout 5"):
        kwire.RecordTable(bytes(bad), frame)


def test_decode_fetch_asks_for_columns_from_abi_1_4(kw: kwire.Kwire, monkeypatch: pytest.MonkeyPatch) -> None:
    old = kwire.Kwire()
    frame = _fetch_frame(old, 12, [base64.b64encode(old.encode_records([{"key": b"k", "value": b"v"}])).decode()])
    flags: List[int] = []
    call = old._inst.call

    def spy(name: str, *args: int) -> int:
        if name == "kw_decode_response_frame_records":
            flags.append(args[4] & ~(L.RECORDS_HOST_GZIP | L.RECORDS_HOST_SNAPPY | L.RECORDS_HOST_LZ4 | L.RECORDS_HOST_ZSTD))
        return call(name, *args)

    monkeypatch.setattr(old._inst, "call", spy)
    layouts = []
    for minor in (3, 4):
        monkeypatch.setattr(old._inst, "abi_minor", minor)
        layouts.append(old.decode_fetch(frame, 12)["partitions"][0].records.table.layout)
        layouts.append(old.decode_fetch(frame, 12, copy=True)["partitions"][0].records.table.layout)
    with columns_off(old):
        layouts.append(old.decode_fetch(frame, 12)["partitions"][0].records.table.layout)
    assert layouts == [3, 2, 4, 4, 3]
    spans, cols = kwire.RECORDS_INPUT_SPANS, kwire.RECORDS_COLUMNS
    assert flags == [spans, 0, spans | cols, cols, spans]
