"""Input spans (ABI 1.2: layout-3 record tables; ABI 1.4: layout 4 with input spans):
decode_fetch and decode_produce leave the records stored uncompressed in the caller's
frame, whose keys, values and headers are views of that very object; copy=True gives a
table with its own bytes; an older module gets layout 2; a table that points outside its
input is refused; steady-state calls allocate nothing in the module. The tests run with
the columns (layout 4, the default with a module of ABI 1.4) and without (layout 3)."""

import base64
import struct
from typing import Any, Dict, List, Optional

import pytest

import kwire
from test_frame_records import RECORD_VECTORS, _fetch_frame, _produce_frame, check_decoded, columns_off, in_input, rows_of


def _minor(kw: kwire.Kwire) -> int:
    return kw.abi_version() & 0xFFFF


def _require_layout_3(kw: kwire.Kwire) -> None:
    if not kw.has_frame_records() or _minor(kw) < 2:
        pytest.fail(f"the module (ABI 1.{_minor(kw)}) has no layout-3 tables: this binding is built with one that does")


def _batch(kw: kwire.Kwire, compression: str, value: bytes = b"hello, input", **kws: Any) -> bytes:
    return kw.encode_records([{"key": b"k", "value": value, "headers": [("h", b"hv")]}, {"key": None, "value": b""}],
                             compression=compression, **kws)


@pytest.mark.parametrize("columns", [True, False], ids=["layout 4", "layout 3"])
@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "a slice of a larger buffer"])
def test_an_uncompressed_record_is_a_view_of_the_callers_frame(kw: kwire.Kwire, kind: str, columns: bool) -> None:
    _require_layout_3(kw)
    with columns_off(kw, not columns):
        _a_view_of_the_callers_frame(kw, kind, 4 if columns else 3, 4 if columns else 2)


def _a_view_of_the_callers_frame(kw: kwire.Kwire, kind: str, layout: int, copy_layout: int) -> None:
    for compression, inside in (("none", True), ("lz4", False), ("zstd", False)):
        raw = _fetch_frame(kw, 12, [_batch(kw, compression)])  # type: ignore[list-item]
        big = bytearray(b"\xee" * 7 + raw + b"\xee" * 5)
        frame: Any = {"bytes": raw, "bytearray": bytearray(raw), "memoryview": memoryview(raw), "a slice of a larger buffer": memoryview(big)[7:-5]}[kind]
        owner = frame.obj if isinstance(frame, memoryview) else frame  # what a view of the frame is a view of
        f = kw.decode_fetch(frame, 12)
        rs = f["partitions"][0].records
        assert rs.table.layout == layout
        r = rs[0]
        assert (bytes(r.key or b""), bytes(r.value or b""), [(k, bytes(v or b"")) for k, v in r.headers]) == (b"k", b"hello, input", [("h", b"hv")])
        assert r.source == (kwire.SOURCE_INPUT if inside else kwire.SOURCE_TABLE)
        v = r.value
        assert v is not None and v.readonly
        assert (v.obj is owner) == inside, compression
        assert (r.headers[0].value.obj is owner) == inside  # type: ignore[union-attr]
        assert (v.obj is rs.table.table) == (not inside)
        c = rs.columns()
        assert c.sources.tolist() == [r.source, rs[1].source]
        assert (c.input is not None) and c.input.obj is owner and c.input.nbytes == len(raw)
        if inside and kind in ("bytearray", "a slice of a larger buffer"):
            # The very bytes: a change to the frame shows through the record.
            at = raw.index(b"hello, input")
            buf = frame if isinstance(frame, bytearray) else big
            buf[at + (7 if buf is big else 0)] = ord("H")
            assert bytes(rs[0].value or b"") == b"Hello, input"
            # A bytearray with views of it cannot be resized (Python refuses while they live).
            with pytest.raises(BufferError):
                buf.extend(b"x")
        # copy=True: a table that holds its own bytes (a changed frame fails its CRC now).
        g = kw.decode_fetch(frame, 12, copy=True, verify_crc=False)
        gs = g["partitions"][0].records
        assert gs.table.layout == copy_layout and gs.table.input is None and gs.columns().input is None
        assert all(x.source == kwire.SOURCE_TABLE for x in gs)
        gv = gs[0].value
        assert gv is not None and gv.obj is gs.table.table
        assert rows_of(gs) == rows_of(rs)


@pytest.mark.parametrize("columns", [True, False], ids=["layout 4", "layout 3"])
def test_decode_produce_leaves_records_in_the_frame(kw: kwire.Kwire, columns: bool) -> None:
    _require_layout_3(kw)
    frame = kw.encode_request_frame(_produce_frame(kw, 9, [_batch(kw, "none"), _batch(kw, "gzip")]))
    with columns_off(kw, not columns):
        f = kw.decode_produce(frame)
    (_, _, a), (_, _, b) = f["partitions"]
    assert a.table is b.table and a.table.layout == (4 if columns else 3)
    assert [r.source for r in a] == [1, 1] and [r.source for r in b] == [0, 0]
    assert a[0].value is not None and a[0].value.obj is frame
    assert rows_of(a) == rows_of(kw.decode_records(_batch(kw, "none")))
    assert rows_of(kwire.decode_produce(frame, copy=True)["partitions"][0].records) == rows_of(a)


@pytest.mark.parametrize("columns", [True, False], ids=["layout 4", "layout 3"])
def test_one_frame_of_every_kind_of_record(kw: kwire.Kwire, monkeypatch: pytest.MonkeyPatch, columns: bool) -> None:
    """Records of both sources in one table, headers of both interleaved: uncompressed,
    compressed, legacy messages (magic 0 and 1), a transactional batch and a COMMIT
    marker (Kafka's bytes), through every path."""
    _require_layout_3(kw)
    commit = base64.b64decode(next(v["bytes"] for v in RECORD_VECTORS if v["name"] == "v2-control-commit"))
    fields: List[Optional[bytes]] = [
        _batch(kw, "none"),
        _batch(kw, "snappy"),
        kw.encode_records([{"key": b"old", "value": b"v0"}], magic=0),
        kw.encode_records([{"key": b"old", "value": b"v1", "timestamp": 5}], magic=1),
        None,
        _batch(kw, "none", b"x" * 300, transactional=True, producer_id=7, producer_epoch=1, base_sequence=0),
        _batch(kw, "zstd", b"y" * 300),
        commit,
        _batch(kw, "none", b"z"),
    ]
    frame = _fetch_frame(kw, 12, fields)  # type: ignore[arg-type]
    check_decoded(kw, frame, 1, 12)
    # The module's tables pass the quick check (C-level passes over the entries); the
    # entry-by-entry one is only for tables it finds fault with.
    def slow(*_: Any) -> None:
        raise AssertionError("the entry-by-entry check ran on a good table")

    monkeypatch.setattr(kwire.RecordTable, "_check_each", slow)
    with columns_off(kw, not columns):
        rs = kw.decode_fetch(frame, 12)["partitions"]
    t = rs[0].records.table
    assert t.layout == (4 if columns else 3)
    kwire.RecordTable(t.table, frame)  # checked in full, quickly
    assert [[r.source for r in p.records] for p in rs] == [[1, 1], [0, 0], [0], [0], [1, 1], [0, 0], [0], [1, 1]]
    assert all(r.source == in_input(r, 3) for p in rs for r in p.records)
    assert rs[6].records[0].control
    assert t._hsrc is not None  # the headers index both buffers


def test_an_older_module_gets_layout_2(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a module of ABI 1.0 or 1.1 the flag is not passed (the call would refuse it)
    and the records come as layout 2, the same."""
    old = kwire.Kwire()
    frame = _fetch_frame(old, 12, [_batch(old, "none")])  # type: ignore[list-item]
    want = rows_of(old.decode_fetch(frame, 12)["partitions"][0].records)
    flags: List[int] = []
    call = old._inst.call

    def spy(name: str, *args: int) -> int:
        if name == "kw_decode_response_frame_records":
            flags.append(args[4])
        return call(name, *args)

    monkeypatch.setattr(old._inst, "call", spy)
    monkeypatch.setattr(old._inst, "abi_minor", 1)
    rs = old.decode_fetch(frame, 12)["partitions"][0].records
    assert rs.table.layout == 2 and rs.table.input is None and rows_of(rs) == want
    monkeypatch.setattr(old._inst, "abi_minor", 2)
    rs3 = old.decode_fetch(frame, 12)["partitions"][0].records
    assert flags == [0, kwire.RECORDS_INPUT_SPANS]
    assert rs3.table.layout == 3 and rows_of(rs3) == want


def test_a_layout_3_table_pointing_outside_its_input_is_refused(kw: kwire.Kwire) -> None:
    _require_layout_3(kw)
    frame = _fetch_frame(kw, 12, [_batch(kw, "none"), _batch(kw, "lz4")])  # type: ignore[list-item]
    with columns_off(kw):  # layout 4's: test_columns.py
        t = kw.decode_fetch(frame, 12)["partitions"][0].records.table
    tb = t.table
    kwire.RecordTable(tb, frame)  # as the call gave it
    with pytest.raises(kwire.InternalError, match="needs the frame"):
        kwire.RecordTable(tb)
    at = frame.index(b"hello, input")
    with pytest.raises(kwire.InternalError, match="record 0: .* in the input of"):
        kwire.RecordTable(tb, frame[:at + 5])  # a shorter input than the spans say
    recs, stride = struct.unpack_from("<i", tb, 16)[0], struct.unpack_from("<i", tb, 12)[0]
    hoff = struct.unpack_from("<i", tb, 28)[0]
    n = len(frame)
    assert len(tb) > n + 2  # so a span past the input's end can still lie in the table
    for what, off, value, match in (
        ("value past the input", recs + 32, n - 1, "record 0: key"),
        ("key length past the input", recs + 28, n, "record 0: key"),
        ("source 2", recs + 92, 2, "record 0: source 2"),
        ("source -1", recs + 92, -1, "record 0: source -1"),
        ("header value past the input", hoff + 8, n, "header 0"),
        ("header key past the input", hoff, n, "header 0"),
    ):
        bad = bytearray(tb)
        struct.pack_into("<i", bad, off, value)
        with pytest.raises(kwire.InternalError, match=match):
            kwire.RecordTable(bytes(bad), frame)
        if "source" not in what:
            # the same spans are fine where the record's source is the table
            ok = bytearray(bad)
            struct.pack_into("<i", ok, recs + 92, 0)
            struct.pack_into("<i", ok, recs + stride + 92, 0)
            kwire.RecordTable(bytes(ok), frame)
    # A record of the table (lz4) whose span points past the table but inside... nothing: refused.
    lz = recs + 2 * stride
    assert struct.unpack_from("<i", tb, lz + 92)[0] == 0
    bad = bytearray(tb)
    struct.pack_into("<i", bad, lz + 32, len(tb))
    with pytest.raises(kwire.InternalError, match="record 2: .* in the table of"):
        kwire.RecordTable(bytes(bad), frame)


def test_steady_state_decoding_allocates_nothing_in_the_module() -> None:
    kw = kwire.Kwire()
    if "kw_runtime_stats" not in kw._inst.optional:
        pytest.fail("the module has no kw_runtime_stats (ABI 1.2)")
    frame = _fetch_frame(kw, 12, [_batch(kw, "none"), _batch(kw, "lz4")])  # type: ignore[list-item]
    for copy in (False, True):
        for _ in range(50):
            kw.decode_fetch(frame, 12, copy=copy)
        before: Dict[str, int] = kw.runtime_stats()
        for _ in range(300):
            kw.decode_fetch(frame, 12, copy=copy)
        after = kw.runtime_stats()
        for k in ("gcCycles", "heapAllocs", "liveBuffers", "liveBufferBytes", "runtimeBytes"):
            assert after[k] == before[k], (copy, k, before, after)
    assert set(before) >= {"gcCycles", "heapAllocs", "heapAllocBytes", "heapLiveBytes", "runtimeBytes", "liveBuffers", "liveBufferBytes"}
