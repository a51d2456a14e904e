"""RecordSet / Columns / RecordTableBuilder, and decode_fetch, decode_produce and
encode_produce: every record-batch vector and every Produce request / Fetch response
conformance vector, compared with the existing decode paths (decode_*_frame +
decode_records): keys, values, headers, offsets, timestamps exact."""

import base64
import json
import struct
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

import kwire
from conftest import VECTORS, read_jsonl

P62 = 2**62 + 1
RECORD_VECTORS = [v for f in sorted((VECTORS / "records").glob("*.jsonl")) for v in read_jsonl(f)]
FRAME_VECTOR_FILES = sorted(VECTORS.glob("kafka-clients-*.jsonl"))

Row = Tuple[int, int, int, Optional[bytes], Optional[bytes], List[Tuple[str, Optional[bytes]]], Tuple[Any, ...]]


def _b(v: Optional[memoryview]) -> Optional[bytes]:
    return None if v is None else bytes(v)


def rows_of(recs: Any) -> List[Row]:
    """Every field of each record, as plain values."""
    return [
        (
            r.offset,
            r.timestamp,
            r.producer_id,
            _b(r.key),
            _b(r.value),
            [(k, _b(v)) for k, v in r.headers],
            (r.sequence, r.leader_epoch, r.producer_epoch, r.magic, r.compression, r.timestamp_type, r.transactional,
             r.control, r.control_type, r.schema_source, r.schema_id, r.schema_version),
        )
        for r in recs
    ]


def rows_of_columns(c: kwire.Columns) -> List[Tuple[int, int, Optional[bytes], Optional[bytes], List[Tuple[str, Optional[bytes]]]]]:
    keys, values, hi, hs, sources = c.keys, c.values, c.header_index, c.headers, c.sources
    offs, tss = c.offsets, c.timestamps
    assert len(sources) == c.length

    def span(data: memoryview, pairs: memoryview, i: int) -> Optional[bytes]:
        return None if pairs[2 * i + 1] == -1 else bytes(data[pairs[2 * i] : pairs[2 * i] + pairs[2 * i + 1]])

    out = []
    for i in range(c.length):
        # Spans index the table, or (layout 3, source 1) the frame the table was decoded from.
        assert sources[i] in (kwire.SOURCE_TABLE, kwire.SOURCE_INPUT)
        data = c.data
        if sources[i] == kwire.SOURCE_INPUT:
            assert c.input is not None
            data = c.input
        headers = []
        for j in range(hi[2 * i], hi[2 * i] + hi[2 * i + 1]):
            ko, kl, vo, vl = hs[4 * j : 4 * j + 4]
            headers.append((bytes(data[ko : ko + kl]).decode("utf-8", "replace"), None if vl == -1 else bytes(data[vo : vo + vl])))
        out.append((offs[i], tss[i], span(data, keys, i), span(data, values, i), headers))
    return out


def in_input(r: kwire.Record, layout: int, spans: Optional[bool] = None) -> bool:
    """Whether a layout-`layout` table leaves r in the input: stored uncompressed in a
    magic-2 batch, not a control record; in layout 3, and in layout 4 with input spans
    (spans; default: layout >= 3)."""
    return (layout >= 3 if spans is None else spans) and r.compression == "none" and r.magic == 2 and not r.control


def batch_fields_of_columns(c: kwire.Columns) -> List[Tuple[Any, ...]]:
    """The fields a record takes from its batch, its control type and schema, read from
    the columns (batch_index into batches, control_types, schemas, producer_ids), as
    rows_of gives them."""
    bi, batches, ctl, sch, pids, offs = c.batch_index, c.batches, c.control_types, c.schemas, c.producer_ids, c.offsets
    out = []
    for i in range(c.length):
        b = batches[bi[i]]
        assert b.first_record <= c.first + i < b.first_record + b.record_count and pids[i] == b.producer_id
        delta = offs[i] - b.base_offset
        seq = -1 if b.base_sequence < 0 else (delta - (2**31 - 1 - b.base_sequence) - 1 if b.base_sequence > 2**31 - 1 - delta else b.base_sequence + delta)
        tt = {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}[b.timestamp_type]
        out.append((pids[i], (seq, b.leader_epoch, b.producer_epoch, b.magic, kwire.COMPRESSIONS[b.compression], tt, bool(b.flags & 1),
                              bool(b.flags & 2), ctl[i], ("none", "value-prefix", "header")[sch[3 * i]], sch[3 * i + 1], sch[3 * i + 2])))
    return out


def check_set(rs: kwire.RecordSet, want: kwire.RecordTable, frame: Optional[Any] = None, spans: Optional[bool] = None) -> None:
    """A RecordSet (records and columns) says exactly what decode_records says; in a
    table with input spans (layout 3; layout 4 unless copy=True), exactly the records
    stored uncompressed are views of `frame` (the very object the caller passed), every
    other one a view of the table."""
    assert len(rs) == len(want)
    assert rs.skipped_bytes == want.skipped_bytes
    w = rows_of(want)
    assert rows_of(rs) == w
    assert rows_of([rs[i] for i in range(len(rs))]) == w
    assert [[(bytes(k), _b(v)) for k, v in r.raw_headers()] for r in rs] == [[(bytes(k), _b(v)) for k, v in r.raw_headers()] for r in want]
    assert rows_of_columns(rs.columns()) == [(o, t, k, v, h) for o, t, _, k, v, h, _ in w]
    assert batch_fields_of_columns(rs.columns()) == [(p, tail) for _, _, p, _, _, _, tail in w]
    layout = rs.table.layout
    if spans is None:
        spans = layout == 3
    sources = [kwire.SOURCE_INPUT if in_input(r, layout, spans) else kwire.SOURCE_TABLE for r in rs]
    assert [r.source for r in rs] == sources
    assert rs.columns().sources.tolist() == sources
    assert (rs.table.input is not None) == spans == (rs.columns().input is not None)
    for r, src in zip(rs, sources):
        owner = frame if src == kwire.SOURCE_INPUT else rs.table.table
        views = [r.key, r.value] + [v for _, v in r.headers] + [k for k, _ in r.raw_headers()]
        assert all(v.obj is owner and v.readonly for v in views if v is not None), (src, r)
    np_cols = rs.columns().numpy()
    assert np_cols["offsets"].tolist() == [r[0] for r in w]
    assert np_cols["timestamps"].tolist() == [r[1] for r in w]
    assert np_cols["values"][:, 1].tolist() == [-1 if r[4] is None else len(r[4]) for r in w]
    assert np_cols["sources"].tolist() == sources
    assert (np_cols["input"] is None) == (not spans)
    assert np_cols["producer_ids"].tolist() == [r[2] for r in w]
    assert np_cols["control_types"].tolist() == [r[6][8] for r in w]
    assert np_cols["schemas"][:, 1].tolist() == [r[6][10] for r in w]
    assert np_cols["batch_index"].tolist() == rs.columns().batch_index.tolist()


@pytest.mark.parametrize("v", RECORD_VECTORS, ids=[v["name"] for v in RECORD_VECTORS])
def test_record_vector_columns(kw: kwire.Kwire, v: Dict[str, Any]) -> None:
    data = base64.b64decode(v["bytes"])
    t = kw.decode_records(data)
    check_set(t.slice(0, len(t), t.skipped_bytes), t)


def _fetch_frame(kw: kwire.Kwire, version: int, fields: List[Optional[str]]) -> bytes:
    parts = [
        {"partitionIndex": i, "errorCode": 0, "highWatermark": 100, "lastStableOffset": 100, "logStartOffset": 0,
         "abortedTransactions": [], "preferredReadReplica": -1, "records": r}
        for i, r in enumerate(fields)
    ]
    topic: Dict[str, Any] = {"topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "partitions": parts} if version >= 13 else {"topic": "vectors", "partitions": parts}
    body = {"throttleTimeMs": 0, "errorCode": 0, "sessionId": 0, "responses": [topic]}
    return kw.encode_response_frame({"header": {"correlationId": 5}, "body": body}, 1, version)


def _produce_frame(kw: kwire.Kwire, version: int, fields: List[Any]) -> Dict[str, Any]:
    parts = [{"index": i, "records": r} for i, r in enumerate(fields)]
    topic: Dict[str, Any] = {"topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "partitionData": parts} if version >= 13 else {"name": "vectors", "partitionData": parts}
    return {"header": {"requestApiKey": 0, "requestApiVersion": version, "correlationId": 6, "clientId": "c"},
            "body": {"transactionalId": None, "acks": -1, "timeoutMs": 30000, "topicData": [topic]}}


def paths(kw: kwire.Kwire) -> List[bool]:
    """The fallback flags to test: both paths when the module has the frame calls."""
    return [False, True] if kw.has_frame_records() else [True]


@contextmanager
def columns_off(kw: kwire.Kwire, off: bool = True) -> Iterator[None]:
    """decode_fetch / decode_produce ask for the layout before the columns (layout 3, or
    2 with copy=True) while in the block, when off."""
    was = kw._columns
    kw._columns = not off
    try:
        yield
    finally:
        kw._columns = was


# The ways decode_fetch / decode_produce read records: (fallback, copy, the table layout
# they must give, host_decompress, columns): with a module of ABI 1.4 the frame-records
# call asking for columns (layout 4), with input spans or copy=True, with the host's
# decompressors and without; the same call asking for the layout before (columns_off):
# input spans (layout 3, the default with a module of ABI 1.2 or 1.3; layout 2 with an
# older one), with the host's decompressors (ABI 1.3) and without, and copy=True (layout
# 2); and the per-partition path (a layout-1 table per records field).
def modes(kw: kwire.Kwire) -> List[Tuple[bool, bool, int, bool, bool]]:
    if not kw.has_frame_records():
        return [(True, False, 1, True, False)]
    minor = kw.abi_version() & 0xFFFF
    spans = 3 if minor >= 2 else 2
    cols = [(False, False, 4, True, True), (False, False, 4, False, True), (False, True, 4, True, True), (False, True, 4, False, True)] if minor >= 4 else []
    return cols + [(False, False, spans, True, False), (False, False, spans, False, False), (False, True, 2, True, False), (True, False, 1, True, False)]


def check_decoded(kw: kwire.Kwire, frame: bytes, api_key: int, version: int) -> None:
    """decode_fetch / decode_produce through every path against the JSON frame and
    decode_records; a records field decode_records refuses must fail the call the same way."""
    plain: Dict[str, Any] = dict(kw.decode_request_frame(frame) if api_key == 0 else kw.decode_response_frame(frame, 1, version))
    body = plain["body"]
    parts = [p for t in body.get("topicData" if api_key == 0 else "responses") or [] for p in t.get("partitionData" if api_key == 0 else "partitions") or []]
    want: List[kwire.RecordTable] = []
    want_err: Optional[kwire.KwireError] = None
    for p in parts:
        if p.get("records") is None:
            continue
        try:
            want.append(kw.decode_records(base64.b64decode(p["records"])))
        except kwire.KwireError as e:
            want_err = e
            break
    errors: Dict[Tuple[bool, bool], str] = {}  # (copy, host): the error of the frame-records call, either layout
    for fallback, copy, layout, host, columns in modes(kw):
        if want_err is not None:
            with pytest.raises(type(want_err)) as raised, columns_off(kw, not columns):
                if api_key == 0:
                    kw.decode_produce(frame, fallback=fallback, copy=copy, host_decompress=host)
                else:
                    kw.decode_fetch(frame, version, fallback=fallback, copy=copy, host_decompress=host)
            if not fallback:
                err = raised.value
                text = f"{type(err).__name__} {err.status} {err.text} {sorted(err.details.items())}"
                assert errors.setdefault((copy, host), text) == text, (layout, copy, host)
            continue
        with columns_off(kw, not columns):
            got: Dict[str, Any] = dict(
                kw.decode_produce(frame, fallback=fallback, copy=copy, host_decompress=host)
                if api_key == 0
                else kw.decode_fetch(frame, version, fallback=fallback, copy=copy, host_decompress=host)
            )
        gparts = [p for t in got["body"].get("topicData" if api_key == 0 else "responses") or [] for p in t.get("partitionData" if api_key == 0 else "partitions") or []]
        assert len(gparts) == len(parts)

        def strip(f: Dict[str, Any]) -> str:
            return json.dumps({k: v for k, v in f.items() if k not in ("partitions", "invalidPartitions")}, default=lambda o: "R", sort_keys=True)

        plain_r = json.loads(json.dumps(plain))
        for p in [p for t in plain_r["body"].get("topicData" if api_key == 0 else "responses") or [] for p in t.get("partitionData" if api_key == 0 else "partitions") or []]:
            if p.get("records") is not None:
                p["records"] = "R"
        assert strip(got) == strip(plain_r)
        k = 0
        for p, g in zip(parts, gparts):
            if p.get("records") is None:
                assert g.get("records") is None
                continue
            rs = g["records"]
            assert isinstance(rs, kwire.RecordSet)
            assert got["partitions"][k].records is rs
            assert rs.table.layout == layout
            check_set(rs, want[k], frame, layout == 3 or (layout == 4 and not copy))
            assert rs.size == len(base64.b64decode(p["records"]))
            k += 1
        assert len(got["partitions"]) == k


@pytest.mark.parametrize("v", RECORD_VECTORS, ids=[v["name"] for v in RECORD_VECTORS])
def test_record_vector_in_frames(kw: kwire.Kwire, v: Dict[str, Any]) -> None:
    b64 = v["bytes"]
    for version in (4, 12, 16):
        check_decoded(kw, _fetch_frame(kw, version, [b64, None, b64]), 1, version)
    for version in (3, 9, 12):
        check_decoded(kw, kw.encode_request_frame(_produce_frame(kw, version, [b64, None, b64])), 0, version)


@pytest.mark.parametrize("path", FRAME_VECTOR_FILES, ids=[p.name for p in FRAME_VECTOR_FILES])
def test_every_produce_and_fetch_vector(kw: kwire.Kwire, path: Any, report: List[str]) -> None:
    checked = with_records = 0
    for i, v in enumerate(read_jsonl(path)):
        if (v["apiKey"], v["kind"]) not in ((0, "request"), (1, "response")):
            continue
        body = base64.b64decode(v["bytes"])
        req_hv, resp_hv = kw.header_versions(v["apiKey"], v["version"])
        if v["kind"] == "request":
            header = kw.encode_message("RequestHeader", req_hv, {"requestApiKey": 0, "requestApiVersion": v["version"], "correlationId": i, "clientId": "v"})
        else:
            header = kw.encode_message("ResponseHeader", resp_hv, {"correlationId": i})
        frame = struct.pack(">i", len(header) + len(body)) + header + body
        try:
            if v["kind"] == "request":
                kw.decode_request_frame(frame)
            else:
                kw.decode_response_frame(frame, 1, v["version"])
        except kwire.KwireError:
            continue  # the conformance suite's business
        checked += 1
        with_records += '"records": "' in json.dumps(v["json"])
        check_decoded(kw, frame, v["apiKey"], v["version"])
    report.append(f"{path.name}: {checked} Produce/Fetch vectors through decode_produce/decode_fetch ({with_records} with records), "
                  f"paths: {'frame-records and per-partition' if kw.has_frame_records() else 'per-partition only (module lacks the frame-records calls)'}")
    assert checked > 200


@pytest.mark.parametrize("v", RECORD_VECTORS, ids=[v["name"] for v in RECORD_VECTORS])
def test_record_vector_encode_produce(kw: kwire.Kwire, v: Dict[str, Any]) -> None:
    data = base64.b64decode(v["bytes"])
    b0 = v["batches"][0] if v["batches"] else None
    eligible = (
        b0 is not None and len(v["batches"]) == 1 and b0["magic"] == 2 and not b0["control"]
        and b0["timestampType"] != "LogAppendTime" and b0["deleteHorizonMs"] == "-1"
    )
    t = kw.decode_records(data)
    if not eligible:
        # the records still re-encode into a batch with the same keys and values
        spec: Dict[str, Any] = {"records": t.slice()}
    else:
        assert b0 is not None
        spec = {"records": t.slice(), "compression": b0["compression"], "baseOffset": int(b0["baseOffset"]),
                "producerId": int(b0["producerId"]), "producerEpoch": b0["producerEpoch"], "baseSequence": b0["baseSequence"],
                "partitionLeaderEpoch": b0["partitionLeaderEpoch"], "transactional": b0["transactional"]}
    outs = []
    for fallback in paths(kw):
        enc = kw.encode_produce(_produce_frame(kw, 9, [spec, None]), fallback=fallback)
        outs.append(enc)
        back = kw.decode_produce(enc)
        rs = back["partitions"][0].records
        if eligible:
            assert rows_of(rs) == rows_of(t)
        else:
            assert [(_b(r.key), _b(r.value)) for r in rs] == [(_b(r.key), _b(r.value)) for r in t]
    assert all(o == outs[0] for o in outs)
    if eligible and b0 is not None and b0["compression"] == "none":
        assert outs[0] == kw.encode_request_frame(_produce_frame(kw, 9, [data, None]))


def test_int64_exact_in_records_and_columns(kw: kwire.Kwire) -> None:
    batch = kw.encode_records([{"key": b"a", "value": b"b", "timestamp": P62}, {"key": None, "value": None, "timestamp": -P62}],
                              base_offset=P62, producer_id=P62, producer_epoch=0, base_sequence=0)
    frame = _fetch_frame(kw, 12, [base64.b64encode(batch).decode()])
    for fallback in paths(kw):
        f = kw.decode_fetch(frame, 12, fallback=fallback)
        (topic, partition, rs), = f["partitions"]
        assert (topic, partition) == ("vectors", 0)
        c = rs.columns()
        assert c.offsets.tolist() == [P62, P62 + 1]
        assert c.timestamps.tolist() == [P62, -P62]
        assert [r.producer_id for r in rs] == [P62, P62]
        assert c.keys.tolist()[2:] == [0, -1]
        assert c.numpy()["offsets"].tolist() == [P62, P62 + 1]


def test_builder_round_trip() -> None:
    b = kwire.RecordTableBuilder()
    assert b.add_all([
        {"key": "k1", "value": b"\x01\x02", "timestamp": P62, "headers": [("h", b"x"), {"key": "n", "value": None}]},
        {"key": None, "value": "", "timestamp": 5},
        {"key": b"", "value": None, "headers": [(b"\xff", b"\x09")]},
    ]) == 0
    t = kwire.RecordTable(b.build())
    r0, r1, r2 = t
    assert (r0.timestamp, bytes(r0.key or b""), _b(r0.value)) == (P62, b"k1", b"\x01\x02")
    assert [(k, _b(v)) for k, v in r0.headers] == [("h", b"x"), ("n", None)]
    assert (r1.key, _b(r1.value), r1.timestamp) == (None, b"", 5)
    assert (_b(r2.key), r2.value, r2.timestamp) == (b"", None, -1)
    assert [bytes(k) for k, _ in r2.raw_headers()] == [b"\xff"]
    assert t.columns().header_index.tolist() == [0, 2, 2, 0, 2, 1]
    with pytest.raises(TypeError):
        b.add({"key": 1})


def test_corrupt_tables_are_refused() -> None:
    b = kwire.RecordTableBuilder()
    b.add({"key": "k", "value": "v"})
    good = bytearray(b.build())
    bad = bytearray(good)
    struct.pack_into("<i", bad, 40 + 36, 1 << 20)  # value length past the end
    with pytest.raises(kwire.InternalError, match="bad record table: record 0: key"):
        kwire.RecordTable(bytes(bad))
    with pytest.raises(kwire.InternalError):
        kwire.RecordTable(bytes(good[:30]))
    # Every span of every record entry is checked when the table is made: key offset, key
    # length, value offset, the header range, the source (0 before layout 3).
    recs = struct.unpack_from("<i", good, 16)[0]
    for at, v in ((24, -5), (28, -2), (28, 1 << 20), (32, -1), (40, 3), (44, 7), (40, -1), (44, -1), (92, 1), (92, -1)):
        b2 = bytearray(good)
        struct.pack_into("<i", b2, recs + at, v)
        with pytest.raises(kwire.InternalError, match="record 0"):
            kwire.RecordTable(bytes(b2))
    # The offset of a null does not matter.
    b3 = bytearray(good)
    struct.pack_into("<ii", b3, recs + 24, 1 << 20, -1)
    assert next(iter(kwire.RecordTable(bytes(b3)))).key is None
    # So are header entries: one past the end is refused, whether a record has it or not.
    hb = kwire.RecordTableBuilder()
    hb.add({"key": "k", "value": "v", "headers": [("h", b"x")]})
    hgood = hb.build()
    assert [(k, bytes(v or b"")) for k, v in next(iter(kwire.RecordTable(hgood))).headers] == [("h", b"x")]
    hoff = struct.unpack_from("<i", hgood, 28)[0]
    for at, v in ((12, 1 << 20), (0, -1), (4, -1), (8, 1 << 20)):
        hbad = bytearray(hgood)
        struct.pack_into("<i", hbad, hoff + at, v)
        with pytest.raises(kwire.InternalError, match="header 0"):
            kwire.RecordTable(bytes(hbad))
        struct.pack_into("<i", hbad, recs + 44, 0)  # no record has it now
        with pytest.raises(kwire.InternalError, match="header 0"):
            kwire.RecordTable(bytes(hbad))
    lay2 = bytearray(good)
    struct.pack_into("<i", lay2, 4, 2)  # layout 2 without room for the frame JSON fields
    with pytest.raises(kwire.InternalError):
        kwire.RecordTable(bytes(lay2))


def test_decode_fetch_errors(kw: kwire.Kwire) -> None:
    with pytest.raises(kwire.DecodeError):
        kw.decode_fetch(b"\x00\x00\x00\x04\x00\x00\x00\x01", 12)
    other = kw.encode_request_frame({"header": {"requestApiKey": 3, "requestApiVersion": 12, "correlationId": 1, "clientId": "x"}, "body": {"topics": []}})
    with pytest.raises(TypeError):
        kw.decode_produce(other)
    corrupt = bytearray(kw.encode_records([{"key": b"k", "value": b"value"}]))
    corrupt[-3] ^= 0xFF  # a byte of the value: the batch's CRC no longer matches
    garbage = base64.b64encode(corrupt).decode()
    check_decoded(kw, _fetch_frame(kw, 12, [garbage]), 1, 12)
    with pytest.raises(kwire.DecodeError):
        kw.decode_fetch(_fetch_frame(kw, 12, [garbage]), 12)


def test_module_level_functions() -> None:
    b = kwire.encode_records([{"key": b"k", "value": b"v", "timestamp": 1}])
    enc = kwire.encode_produce({"header": {"requestApiKey": 0, "requestApiVersion": 9, "correlationId": 1, "clientId": "m"},
                                "body": {"acks": -1, "timeoutMs": 1, "topicData": [{"name": "t", "partitionData": [
                                    {"index": 0, "records": b},
                                    {"index": 1, "records": {"records": [{"key": b"k", "value": b"v", "timestamp": 1}], "compression": "zstd"}},
                                ]}]}})
    f = kwire.decode_produce(enc)
    assert [(p.topic, p.partition, [bytes(r.value or b"") for r in p.records]) for p in f["partitions"]] == [("t", 0, [b"v"]), ("t", 1, [b"v"])]
    assert [r.compression for r in f["partitions"][1].records] == ["zstd"]
