"""The record table's layout in the binding is capi/kwire.h's: every KW_TABLE_*, KW_REC_*,
KW_RB_*, KW_HDR_*, KW_SOURCE_* and KW_RECORDS_* name of the header is in kwire._layout with its
value (and nothing else is), and a table written by hand at the header's offsets reads
back field by field through Record and Columns."""

import re
import struct
from typing import Dict, Tuple, Union

import pytest

import kwire
from conftest import REPO
from kwire import _layout

HEADER = (REPO / "capi" / "kwire.h").read_text(encoding="utf-8")
DEFINES: Dict[str, Union[int, bytes]] = {
    m.group(1): (m.group(2)[1:-1].encode("ascii") if m.group(2).startswith('"') else int(m.group(2)))
    for m in re.finditer(r"^#define (KW_(?:TABLE|REC|RB|HDR|SOURCE|RECORDS)_[A-Z0-9_]+) +(\d+|\"[A-Z]+\")", HEADER, re.M)
}
D: Dict[str, int] = {k: v for k, v in DEFINES.items() if isinstance(v, int)}


def test_the_names_are_kwire_h_s() -> None:
    assert len(DEFINES) >= 45, sorted(DEFINES)  # the pattern still finds the header's names
    for name, value in DEFINES.items():
        assert getattr(_layout, name[len("KW_") :], None) == value, name
    ours = {n for n in vars(_layout) if n.isupper()}
    assert ours == {n[len("KW_") :] for n in DEFINES}, "names in kwire._layout that kwire.h lacks"
    assert (kwire.SOURCE_TABLE, kwire.SOURCE_INPUT, kwire.RECORDS_SKIP_CRC, kwire.RECORDS_INPUT_SPANS) == (
        D["KW_SOURCE_TABLE"], D["KW_SOURCE_INPUT"], D["KW_RECORDS_SKIP_CRC"], D["KW_RECORDS_INPUT_SPANS"])


def _table() -> Tuple[bytes, bytes]:
    """A layout-3 table of two records, written with kwire.h's offsets only: record 0 in
    the table (source 0), record 1 in the input (source 1), one header each; and the input."""
    json_text = b'{"apiKey":1}'
    head = D["KW_TABLE_HEADER_SIZE_2"]
    stride, hstride = D["KW_REC_STRIDE"] + 8, D["KW_HDR_STRIDE"] + 4  # longer entries than today's: read by the strides
    recs = head
    hoff = recs + 2 * stride
    data = hoff + 2 * hstride
    table_bytes = json_text + b"K0V0h0x0"
    inp = b"....K1V1h1x1.."
    total = data + len(table_bytes)
    t = bytearray(total)
    magic = DEFINES["KW_TABLE_MAGIC"]
    assert isinstance(magic, bytes)
    t[0:4] = magic

    def i32(at: int, v: int) -> None:
        struct.pack_into("<i", t, at, v)

    for name, v in (("LAYOUT", 3), ("RECORD_COUNT", 2), ("RECORD_STRIDE", stride), ("RECORDS_OFFSET", recs), ("HEADER_COUNT", 2),
                    ("HEADER_STRIDE", hstride), ("HEADERS_OFFSET", hoff), ("SKIPPED_BYTES", 7), ("TOTAL_SIZE", total),
                    ("JSON_OFFSET", data), ("JSON_LENGTH", len(json_text))):
        i32(D["KW_TABLE_" + name], v)
    t[data:] = table_bytes
    d = data + len(json_text)  # record 0's bytes in the table
    for i, (base, src) in enumerate(((d, 0), (4, 1))):
        e = recs + i * stride
        struct.pack_into("<q", t, e + D["KW_REC_OFFSET"], 2**62 + i)
        struct.pack_into("<q", t, e + D["KW_REC_TIMESTAMP"], -(2**60) - i)
        struct.pack_into("<q", t, e + D["KW_REC_PRODUCER_ID"], 2**40 + i)
        for name, v in (("KEY_OFFSET", base), ("KEY_LENGTH", 2), ("VALUE_OFFSET", base + 2), ("VALUE_LENGTH", 2), ("FIRST_HEADER", i),
                        ("HEADER_COUNT", 1), ("SEQUENCE", 11 + i), ("LEADER_EPOCH", 12 + i), ("PRODUCER_EPOCH", 13 + i), ("MAGIC", 2),
                        ("COMPRESSION", 3 - 3 * src), ("TIMESTAMP_TYPE", 1), ("FLAGS", 1 + 2 * i), ("CONTROL_TYPE", 14 + i),
                        ("SCHEMA_SOURCE", 2), ("SCHEMA_ID", 15 + i), ("SCHEMA_VERSION", 16 + i), ("SOURCE", src)):
            i32(e + D["KW_REC_" + name], v)
        h = hoff + i * hstride
        for name, v in (("KEY_OFFSET", base + 4), ("KEY_LENGTH", 2), ("VALUE_OFFSET", base + 6), ("VALUE_LENGTH", 2)):
            i32(h + D["KW_HDR_" + name], v)
    return bytes(t), inp


def test_a_table_written_at_kwire_h_s_offsets_reads_back() -> None:
    tb, inp = _table()
    t = kwire.RecordTable(tb, inp)
    assert (t.layout, len(t), t.skipped_bytes, t.json_text()) == (3, 2, 7, b'{"apiKey":1}')
    got = [
        (r.offset, r.timestamp, r.producer_id, bytes(r.key or b""), bytes(r.value or b""), [(k, bytes(v or b"")) for k, v in r.headers],
         r.sequence, r.leader_epoch, r.producer_epoch, r.magic, r.compression, r.timestamp_type, r.transactional, r.control,
         r.control_type, r.schema_source, r.schema_id, r.schema_version, r.source)
        for r in t
    ]
    assert got == [
        (2**62, -(2**60), 2**40, b"K0", b"V0", [("h0", b"x0")], 11, 12, 13, 2, "lz4", "LogAppendTime", True, False, 14, "header", 15, 16, 0),
        (2**62 + 1, -(2**60) - 1, 2**40 + 1, b"K1", b"V1", [("h1", b"x1")], 12, 13, 14, 2, "none", "LogAppendTime", True, True, 15, "header",
         16, 17, 1),
    ]
    assert t[1].value is not None and t[1].value.obj is inp and t[0].value is not None and t[0].value.obj is tb
    c = t.columns()
    assert c.offsets.tolist() == [2**62, 2**62 + 1]
    assert c.timestamps.tolist() == [-(2**60), -(2**60) - 1]
    assert c.producer_ids.tolist() == [2**40, 2**40 + 1]
    d = len(tb) - 8
    assert c.keys.tolist() == [d, 2, 4, 2]
    assert c.values.tolist() == [d + 2, 2, 6, 2]
    assert c.header_index.tolist() == [0, 1, 1, 1]
    assert c.sources.tolist() == [0, 1]
    assert c.headers.tolist() == [d + 4, 2, d + 6, 2, 8, 2, 10, 2]
    n = c.numpy()
    assert n["keys"].tolist() == [[d, 2], [4, 2]] and n["sources"].tolist() == [0, 1] and bytes(n["input"]) == inp
    assert n["headers"].tolist() == [[d + 4, 2, d + 6, 2], [8, 2, 10, 2]]


def test_a_layout_3_table_needs_its_input() -> None:
    tb, inp = _table()
    with pytest.raises(kwire.InternalError, match="needs the frame"):
        kwire.RecordTable(tb)
    with pytest.raises(kwire.InternalError, match="record 1: .* in the input of 3 bytes"):
        kwire.RecordTable(tb, inp[:3])


def test_the_batch_entry_and_columns_are_read_at_kwire_h_s_offsets() -> None:
    from kwire import _records

    rb = [D["KW_RB_" + n] for n in ("BASE_OFFSET", "PRODUCER_ID", "FIRST_RECORD", "RECORD_COUNT", "BASE_SEQUENCE", "LEADER_EPOCH",
                                     "PRODUCER_EPOCH", "MAGIC", "COMPRESSION", "TIMESTAMP_TYPE", "FLAGS", "SOURCE")]
    assert rb == [0, 8] + list(range(16, 16 + 4 * 10, 4)) and _records._BATCH.size == D["KW_RB_STRIDE"]
    assert [at for at, _, _ in _records._COLUMNS] == sorted(D["KW_TABLE_COL_" + n] for n in (
        "OFFSETS", "TIMESTAMPS", "KEYS", "VALUES", "HEADER_INDEX", "BATCH_INDEX", "SOURCES", "CONTROL_TYPES", "SCHEMAS"))


def _table4() -> Tuple[bytes, bytes]:
    """A layout-4 table of three records in two batches, written with kwire.h's offsets
    only, its columns in another order than the module's and its batch entries longer:
    record 0 in the table (source 0), records 1 and 2 in the input (source 1); and the
    input."""
    json_text = b'{"apiKey":1}'
    n, nb = 3, 2
    head = D["KW_TABLE_HEADER_SIZE_4"]
    bstride = D["KW_RB_STRIDE"] + 8
    widths = {"SCHEMAS": 12, "SOURCES": 1, "CONTROL_TYPES": 4, "BATCH_INDEX": 4, "HEADER_INDEX": 8, "VALUES": 8, "KEYS": 8,
              "TIMESTAMPS": 8, "OFFSETS": 8}
    at = head
    boff = at
    at += nb * bstride
    cols: Dict[str, int] = {}
    for name, w in widths.items():
        at = (at + 7) // 8 * 8
        cols[name] = at
        at += w * n
    hoff = (at + 7) // 8 * 8
    data = hoff + 3 * D["KW_HDR_STRIDE"]
    table_bytes = json_text + b"K0V0h0x0"
    inp = b"..K1V1h1x1..K2h2x2"
    total = data + len(table_bytes)
    t = bytearray(total)
    magic = DEFINES["KW_TABLE_MAGIC"]
    assert isinstance(magic, bytes)
    t[0:4] = magic

    def put(fmt: str, off: int, *v: int) -> None:
        struct.pack_into(fmt, t, off, *v)

    for name, v in (("LAYOUT", 4), ("RECORD_COUNT", n), ("RECORD_STRIDE", 0), ("RECORDS_OFFSET", cols["OFFSETS"]), ("HEADER_COUNT", 3),
                    ("HEADER_STRIDE", D["KW_HDR_STRIDE"]), ("HEADERS_OFFSET", hoff), ("SKIPPED_BYTES", 7), ("TOTAL_SIZE", total),
                    ("JSON_OFFSET", data), ("JSON_LENGTH", len(json_text)), ("BATCH_COUNT", nb), ("BATCH_STRIDE", bstride),
                    ("BATCHES_OFFSET", boff)):
        put("<i", D["KW_TABLE_" + name], v)
    for name, off in cols.items():
        put("<i", D["KW_TABLE_COL_" + name], off)
    t[data:] = table_bytes
    d = data + len(json_text)
    # batch 0: record 0 (lz4, in the table); batch 1: records 1, 2 (none, in the input; sequences wrap)
    for b, (base, pid, first, count, seq, le, pe, comp, tt, flags, src) in enumerate(
        ((2**62, 2**40, 0, 1, 11, 12, 13, 3, 1, 1, 0), (2**62 + 1, 2**40 + 1, 1, 2, 2**31 - 1, 22, 23, 0, 0, 3, 1))
    ):
        e = boff + b * bstride
        put("<q", e + D["KW_RB_BASE_OFFSET"], base)
        put("<q", e + D["KW_RB_PRODUCER_ID"], pid)
        for name, v in (("FIRST_RECORD", first), ("RECORD_COUNT", count), ("BASE_SEQUENCE", seq), ("LEADER_EPOCH", le), ("PRODUCER_EPOCH", pe),
                        ("MAGIC", 2), ("COMPRESSION", comp), ("TIMESTAMP_TYPE", tt), ("FLAGS", flags), ("SOURCE", src)):
            put("<i", e + D["KW_RB_" + name], v)
    spans = [(d, 2, d + 2, 2, d + 4, d + 6), (2, 2, 4, 2, 6, 8), (12, 2, 0, -1, 14, 16)]  # key, value, header key, header value
    for i, (ko, kl, vo, vl, hk, hv) in enumerate(spans):
        put("<q", cols["OFFSETS"] + 8 * i, 2**62 + i)
        put("<q", cols["TIMESTAMPS"] + 8 * i, -(2**60) - i)
        put("<2i", cols["KEYS"] + 8 * i, ko, kl)
        put("<2i", cols["VALUES"] + 8 * i, vo, vl)
        put("<2i", cols["HEADER_INDEX"] + 8 * i, i, 1)
        put("<i", cols["BATCH_INDEX"] + 4 * i, 0 if i == 0 else 1)
        put("<B", cols["SOURCES"] + i, 0 if i == 0 else 1)
        put("<i", cols["CONTROL_TYPES"] + 4 * i, 14 + i)
        put("<3i", cols["SCHEMAS"] + 12 * i, 2, 15 + i, 16 + i)
        h = hoff + i * D["KW_HDR_STRIDE"]
        for name, v in (("KEY_OFFSET", hk), ("KEY_LENGTH", 2), ("VALUE_OFFSET", hv), ("VALUE_LENGTH", 2)):
            put("<i", h + D["KW_HDR_" + name], v)
    return bytes(t), inp


def test_a_layout_4_table_written_at_kwire_h_s_offsets_reads_back() -> None:
    tb, inp = _table4()
    t = kwire.RecordTable(tb, inp)
    assert (t.layout, len(t), t.skipped_bytes, t.json_text()) == (4, 3, 7, b'{"apiKey":1}')
    got = [
        (r.offset, r.timestamp, r.producer_id, kwire._records._show(r.key), kwire._records._show(r.value), [(k, bytes(v or b"")) for k, v in r.headers],
         r.sequence, r.leader_epoch, r.producer_epoch, r.magic, r.compression, r.timestamp_type, r.transactional, r.control,
         r.control_type, r.schema_source, r.schema_id, r.schema_version, r.source)
        for r in t
    ]
    assert got == [
        (2**62, -(2**60), 2**40, "b'K0'", "b'V0'", [("h0", b"x0")], 11, 12, 13, 2, "lz4", "LogAppendTime", True, False, 14, "header", 15, 16, 0),
        (2**62 + 1, -(2**60) - 1, 2**40 + 1, "b'K1'", "b'V1'", [("h1", b"x1")], 2**31 - 1, 22, 23, 2, "none", "CreateTime", True, True, 15,
         "header", 16, 17, 1),
        (2**62 + 2, -(2**60) - 2, 2**40 + 1, "b'K2'", "None", [("h2", b"x2")], 0, 22, 23, 2, "none", "CreateTime", True, True, 16,
         "header", 17, 18, 1),
    ]
    c = t.columns()
    assert c.offsets.tolist() == [2**62, 2**62 + 1, 2**62 + 2] and c.producer_ids.tolist() == [2**40, 2**40 + 1, 2**40 + 1]
    assert c.sources.tolist() == [0, 1, 1] and c.batch_index.tolist() == [0, 1, 1] and c.control_types.tolist() == [14, 15, 16]
    assert c.schemas.tolist() == [2, 15, 16, 2, 16, 17, 2, 17, 18]
    assert [tuple(b) for b in c.batches] == [(2**62, 2**40, 0, 1, 11, 12, 13, 2, 3, 1, 1, 0), (2**62 + 1, 2**40 + 1, 1, 2, 2**31 - 1, 22, 23, 2, 0, 0, 3, 1)]
    n = c.numpy()
    assert n["schemas"].tolist() == [[2, 15, 16], [2, 16, 17], [2, 17, 18]] and n["sources"].tolist() == [0, 1, 1]
    assert t[2].value is None and t[1].value is not None and t[1].value.obj is inp and t[0].key is not None and t[0].key.obj is tb
    with pytest.raises(kwire.InternalError, match="record 1: source 1"):
        kwire.RecordTable(tb)
