"""The record table's layout in the binding is capi/kwire.h's: every KW_TABLE_*, KW_REC_*,
KW_HDR_*, KW_SOURCE_* and KW_RECORDS_* name of the header is in kwire._layout with its
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
    for m in re.finditer(r"^#define (KW_(?:TABLE|REC|HDR|SOURCE|RECORDS)_[A-Z0-9_]+) +(\d+|\"[A-Z]+\")", HEADER, re.M)
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
