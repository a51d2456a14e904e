"""The record table (kw_records_decode_table's layout 1, the frame calls' layouts 2, 3 and
4) read with plain struct loads and memoryview casts, and the input of kw_records_encode
built from Python values.
The table's field offsets are named once, in _layout (capi/kwire.h's KW_REC_*, ...)."""

import base64
import importlib
import struct
import sys
from array import array
from bisect import bisect_right
from itertools import chain, repeat, starmap
from operator import add, itemgetter
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Literal, Mapping, NamedTuple, Optional, Sequence, Tuple, Union, overload

from . import _abi
from . import _layout as L
from ._errors import ERR_ARG, ERR_INTERNAL, error_for

BytesLike = Union[bytes, bytearray, memoryview]

COMPRESSIONS = tuple(k[len("KW_COMPRESSION_") :].lower() for k, _ in sorted(
    ((k, v) for k, v in vars(_abi).items() if k.startswith("KW_COMPRESSION_")), key=lambda kv: kv[1]))
"""Compression names by KW_COMPRESSION_* code ("none", "gzip", "snappy", "lz4", "zstd")."""
_TIMESTAMP_TYPES = {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}
_SCHEMA_SOURCES = ("none", "value-prefix", "header")

# The table header of layout 1 (magic .. total_size); layouts 2 and 3 add the frame JSON's
# (offset, length) at TABLE_JSON_OFFSET.
_TABLE_HEADER = struct.Struct("<4s9i")
_JSON_SPAN = struct.Struct("<2i")
# The head of a record entry, read for every record: offset, timestamp, producer_id (i64),
# key offset and length, value offset and length, first header, header count (i32) —
# REC_OFFSET .. REC_HEADER_COUNT, in order (tests/test_layout.py checks it against kwire.h).
_HEAD = struct.Struct("<3q6i")
# Indices in a head tuple; the entry tuples of _entry() have the source after them.
_KO, _KL, _VO, _VL, _FH, _HC, _SRC = 3, 4, 5, 6, 7, 8, 9
# The tail, read when one of its fields is asked for: REC_SEQUENCE .. REC_SOURCE.
_TAIL = struct.Struct("<%di" % ((L.REC_SOURCE + 4 - L.REC_SEQUENCE) // 4))


def _tail_index(off: int) -> int:
    return (off - L.REC_SEQUENCE) // 4


_T_SEQUENCE = _tail_index(L.REC_SEQUENCE)
_T_LEADER_EPOCH = _tail_index(L.REC_LEADER_EPOCH)
_T_PRODUCER_EPOCH = _tail_index(L.REC_PRODUCER_EPOCH)
_T_MAGIC = _tail_index(L.REC_MAGIC)
_T_COMPRESSION = _tail_index(L.REC_COMPRESSION)
_T_TIMESTAMP_TYPE = _tail_index(L.REC_TIMESTAMP_TYPE)
_T_FLAGS = _tail_index(L.REC_FLAGS)
_T_CONTROL_TYPE = _tail_index(L.REC_CONTROL_TYPE)
_T_SCHEMA_SOURCE = _tail_index(L.REC_SCHEMA_SOURCE)
_T_SCHEMA_ID = _tail_index(L.REC_SCHEMA_ID)
_T_SCHEMA_VERSION = _tail_index(L.REC_SCHEMA_VERSION)
_T_SOURCE = _tail_index(L.REC_SOURCE)
_HEADER = struct.Struct("<4i")  # HDR_KEY_OFFSET, HDR_KEY_LENGTH, HDR_VALUE_OFFSET, HDR_VALUE_LENGTH
# A batch entry of layout 4 (RB_BASE_OFFSET .. RB_SOURCE, in order; tests/test_layout.py
# checks it against kwire.h), and the index of each field in its tuple.
_BATCH = struct.Struct("<2q10i")
_B_BASE_OFFSET, _B_PRODUCER_ID, _B_FIRST_RECORD, _B_RECORD_COUNT, _B_BASE_SEQUENCE, _B_LEADER_EPOCH = range(6)
_B_PRODUCER_EPOCH, _B_MAGIC, _B_COMPRESSION, _B_TIMESTAMP_TYPE, _B_FLAGS, _B_SOURCE = range(6, 12)
_FLAG_TRANSACTIONAL = 1
_FLAG_CONTROL = 2
_LITTLE = sys.byteorder == "little"

_entries: Dict[int, struct.Struct] = {}


def _entry(stride: int) -> struct.Struct:
    """A whole record entry of that stride: the head, then the source (REC_SOURCE)."""
    s = _entries.get(stride)
    if s is None:
        s = struct.Struct("<3q6i%dxi%dx" % (L.REC_SOURCE - L.REC_SEQUENCE, stride - L.REC_SOURCE - 4))
        _entries[stride] = s
    return s


def _show(b: Optional[memoryview]) -> str:
    return "None" if b is None else repr(bytes(b))


class Header(NamedTuple):
    """One record header: ``key`` (str: the key's UTF-8, invalid bytes as U+FFFD) and
    ``value`` (a read-only memoryview, or None when null). A tuple, so ``for k, v in
    r.headers`` works; its repr shows the value as bytes."""

    key: str
    value: Optional[memoryview]

    def __repr__(self) -> str:
        return f"Header({self.key!r}, {_show(self.value)})"


class RawHeader(NamedTuple):
    """A header with its key as the exact bytes of the batch (Record.raw_headers())."""

    key: memoryview
    value: Optional[memoryview]

    def __repr__(self) -> str:
        return f"RawHeader({_show(self.key)}, {_show(self.value)})"


_new_tuple = tuple.__new__


class Record:
    """One record of a record table.

    ``key``, ``value`` and header values are read-only ``memoryview`` slices (no copy;
    ``bytes(r.value)`` copies), or ``None`` when null. They are views of the table, or, for
    a record that decode_fetch or decode_produce leave in the caller's frame (``source ==
    SOURCE_INPUT``: stored uncompressed), views of that frame. They stay valid as long as
    any of them, the table or the frame is referenced. Header keys are ``str`` (invalid
    UTF-8 becomes U+FFFD, as in the JSON form); ``raw_headers()`` gives their exact bytes.
    int64 values (offset, timestamp, producer_id) are Python ints.

    A record of a table with entries (layouts 1-3: decode_records, an older module) reads
    offset, timestamp and producer_id when it is made and key and value when first asked
    for; a record of a layout-4 table (decode_fetch, decode_produce) is made, with its
    offset, timestamp, key and value, by C-level passes over the table's columns, and
    reads its other fields from the columns and its batch when asked for. Records compare
    by identity.
    """

    __slots__ = ()

    offset: int
    timestamp: int
    producer_id: int
    _h: Tuple[int, ...]  # the entry: offset .. header_count, source
    _buf: memoryview  # what the spans index: the table, or the caller's frame
    _table: "RecordTable"
    _at: int
    _tail: Tuple[int, ...]  # unset until a tail field is asked for

    def _t(self) -> Tuple[int, ...]:
        try:
            return self._tail
        except AttributeError:
            t = _TAIL.unpack_from(self._table.table, self._at + L.REC_SEQUENCE)
            self._tail = t  # type: ignore[misc]  # an _EntryRecord's slot
            return t

    @property
    def key(self) -> Optional[memoryview]:
        """The key: a read-only memoryview, or None when null."""
        h = self._h
        n = h[_KL]
        return None if n == -1 else self._buf[h[_KO] : h[_KO] + n]

    @property
    def value(self) -> Optional[memoryview]:
        """The value: a read-only memoryview, or None when null."""
        h = self._h
        n = h[_VL]
        return None if n == -1 else self._buf[h[_VO] : h[_VO] + n]

    def key_text(self, errors: str = "replace") -> Optional[str]:
        """The key decoded as UTF-8 (invalid bytes as U+FFFD unless ``errors`` says
        otherwise, as bytes.decode takes it), or None when null."""
        h = self._h
        n = h[_KL]
        return None if n == -1 else str(self._buf[h[_KO] : h[_KO] + n], "utf-8", errors)

    def value_text(self, errors: str = "replace") -> Optional[str]:
        """The value decoded as UTF-8 (as key_text), or None when null."""
        h = self._h
        n = h[_VL]
        return None if n == -1 else str(self._buf[h[_VO] : h[_VO] + n], "utf-8", errors)

    @property
    def source(self) -> int:
        """What key, value and headers are views of: SOURCE_TABLE (0) the table,
        SOURCE_INPUT (1) the frame the table was decoded from (input spans: layout 3, or
        layout 4 without copy=True)."""
        return self._h[_SRC]

    @property
    def headers(self) -> List[Header]:
        """The record's headers in wire order (read from the table when first asked for,
        for every record of the table at once)."""
        h = self._h
        hc = h[_HC]
        return self._table._headers()[h[_FH] : h[_FH] + hc] if hc else []

    def raw_headers(self) -> List[RawHeader]:
        """The headers with their keys as the exact bytes of the batch."""
        h = self._h
        hc = h[_HC]
        return self._table._raw_headers()[h[_FH] : h[_FH] + hc] if hc else []

    @property
    def sequence(self) -> int:
        return self._t()[_T_SEQUENCE]

    @property
    def leader_epoch(self) -> int:
        return self._t()[_T_LEADER_EPOCH]

    @property
    def producer_epoch(self) -> int:
        return self._t()[_T_PRODUCER_EPOCH]

    @property
    def magic(self) -> int:
        return self._t()[_T_MAGIC]

    @property
    def compression(self) -> str:
        """"none", "gzip", "snappy", "lz4" or "zstd"."""
        return _compression_name(self._t()[_T_COMPRESSION])

    @property
    def timestamp_type(self) -> str:
        """"CreateTime", "LogAppendTime" or "NoTimestampType"."""
        tt = self._t()[_T_TIMESTAMP_TYPE]
        return _TIMESTAMP_TYPES.get(tt, str(tt))

    @property
    def transactional(self) -> bool:
        return bool(self._t()[_T_FLAGS] & _FLAG_TRANSACTIONAL)

    @property
    def control(self) -> bool:
        return bool(self._t()[_T_FLAGS] & _FLAG_CONTROL)

    @property
    def control_type(self) -> int:
        """-1 unless a control record: 0 ABORT, 1 COMMIT, 2 LEADER_CHANGE, ..."""
        return self._t()[_T_CONTROL_TYPE]

    @property
    def schema_source(self) -> str:
        """"none", "value-prefix" or "header"."""
        return _schema_source_name(self._t()[_T_SCHEMA_SOURCE])

    @property
    def schema_id(self) -> int:
        return self._t()[_T_SCHEMA_ID]

    @property
    def schema_version(self) -> int:
        return self._t()[_T_SCHEMA_VERSION]

    def __repr__(self) -> str:
        hs = ", ".join(f"({k!r}, {_show(v)})" for k, v in self.headers)
        return (
            f"Record(offset={self.offset}, timestamp={self.timestamp}, key={_show(self.key)}, "
            f"value={_show(self.value)}, headers=[{hs}], compression={self.compression!r})"
        )


class _EntryRecord(Record):
    """A record of a table with record entries (layouts 1-3)."""

    __slots__ = ("offset", "timestamp", "producer_id", "_h", "_buf", "_table", "_at", "_tail")


def _i32(x: int) -> int:
    return ((x + 0x80000000) & 0xFFFFFFFF) - 0x80000000


def _sequence(base_sequence: int, delta: int) -> int:
    """A record's sequence: its batch's base sequence plus its offset delta, wrapping past
    INT32_MAX to 0 as Kafka's producer does (records.RecordSequence, in int32 arithmetic)."""
    if base_sequence < 0:
        return -1
    delta = _i32(delta)
    if base_sequence > _i32(0x7FFFFFFF - delta):
        return _i32(_i32(delta - _i32(0x7FFFFFFF - base_sequence)) - 1)
    return _i32(base_sequence + delta)


def _compression_name(c: int) -> str:
    return COMPRESSIONS[c] if 0 <= c < len(COMPRESSIONS) else str(c)


def _schema_source_name(ss: int) -> str:
    return _SCHEMA_SOURCES[ss] if 0 <= ss < len(_SCHEMA_SOURCES) else str(ss)


# CPython's C descriptor for a field of a tuple (what collections.namedtuple uses), read
# as fast as a slot; elsewhere a property around a C-level itemgetter.
_tuplegetter = getattr(importlib.import_module("_collections"), "_tuplegetter", None) if sys.implementation.name == "cpython" else None


def _field_getter(index: int, doc: str) -> Any:
    if _tuplegetter is not None:
        return _tuplegetter(index, doc)
    return property(itemgetter(index), doc=doc)


if TYPE_CHECKING:
    _Fields = Tuple[Any, ...]
else:
    _Fields = tuple  # a plain tuple base (typing's would add Generic to the MRO)


class _ColumnRecord(_Fields, Record):
    """A record of a layout-4 table: the tuple (offset, timestamp, key, value, table,
    index), made with tuple.__new__ over zips of the columns (no Python frame per record);
    offset, timestamp, key and value are read by C-level getters, the other fields from
    the table's columns and the record's batch entry."""

    __slots__ = ()

    offset = _field_getter(0, "The record's offset.")
    timestamp = _field_getter(1, "The record's timestamp (ms).")
    key = _field_getter(2, "The key: a read-only memoryview, or None when null.")
    value = _field_getter(3, "The value: a read-only memoryview, or None when null.")
    __repr__ = Record.__repr__
    __eq__ = object.__eq__
    __ne__ = object.__ne__
    __hash__ = object.__hash__

    def _batch(self) -> Tuple[int, ...]:
        t: RecordTable = self[4]
        i: int = self[5]
        return t._batch_rows()[t._bidx[i]]

    @property
    def producer_id(self) -> int:  # type: ignore[override]  # Record's is an _EntryRecord's slot
        return self._batch()[_B_PRODUCER_ID]

    def key_text(self, errors: str = "replace") -> Optional[str]:
        k = self[2]
        return None if k is None else str(k, "utf-8", errors)

    def value_text(self, errors: str = "replace") -> Optional[str]:
        v = self[3]
        return None if v is None else str(v, "utf-8", errors)

    @property
    def source(self) -> int:
        t: RecordTable = self[4]
        i: int = self[5]
        return t._srcb[i]

    @property
    def headers(self) -> List[Header]:
        t: RecordTable = self[4]
        i = 2 * self[5]
        fh, hc = t._hidx[i], t._hidx[i + 1]
        return t._headers()[fh : fh + hc] if hc else []

    def raw_headers(self) -> List[RawHeader]:
        t: RecordTable = self[4]
        i = 2 * self[5]
        fh, hc = t._hidx[i], t._hidx[i + 1]
        return t._raw_headers()[fh : fh + hc] if hc else []

    @property
    def sequence(self) -> int:
        b = self._batch()
        return _sequence(b[_B_BASE_SEQUENCE], self[0] - b[_B_BASE_OFFSET])

    @property
    def leader_epoch(self) -> int:
        return self._batch()[_B_LEADER_EPOCH]

    @property
    def producer_epoch(self) -> int:
        return self._batch()[_B_PRODUCER_EPOCH]

    @property
    def magic(self) -> int:
        return self._batch()[_B_MAGIC]

    @property
    def compression(self) -> str:
        return _compression_name(self._batch()[_B_COMPRESSION])

    @property
    def timestamp_type(self) -> str:
        tt = self._batch()[_B_TIMESTAMP_TYPE]
        return _TIMESTAMP_TYPES.get(tt, str(tt))

    @property
    def transactional(self) -> bool:
        return bool(self._batch()[_B_FLAGS] & _FLAG_TRANSACTIONAL)

    @property
    def control(self) -> bool:
        return bool(self._batch()[_B_FLAGS] & _FLAG_CONTROL)

    @property
    def control_type(self) -> int:
        return self._column(L.TABLE_COL_CONTROL_TYPES, 1, 0)

    @property
    def schema_source(self) -> str:
        return _schema_source_name(self._column(L.TABLE_COL_SCHEMAS, 3, 0))

    @property
    def schema_id(self) -> int:
        return self._column(L.TABLE_COL_SCHEMAS, 3, 1)

    @property
    def schema_version(self) -> int:
        return self._column(L.TABLE_COL_SCHEMAS, 3, 2)

    def _column(self, at: int, per: int, k: int) -> int:
        t: RecordTable = self[4]
        i: int = self[5]
        v: int = t._col(at)[per * i + k]
        return v


_LAYOUT_COLUMNS = 4
_I32 = struct.Struct("<i")
# Layout 4's columns: the offset of each in the table header, its bytes per record and
# its memoryview format.
_COLUMNS: Tuple[Tuple[int, int, str], ...] = (
    (L.TABLE_COL_OFFSETS, 8, "q"),
    (L.TABLE_COL_TIMESTAMPS, 8, "q"),
    (L.TABLE_COL_KEYS, 8, "i"),
    (L.TABLE_COL_VALUES, 8, "i"),
    (L.TABLE_COL_HEADER_INDEX, 8, "i"),
    (L.TABLE_COL_BATCH_INDEX, 4, "i"),
    (L.TABLE_COL_SOURCES, 1, "B"),
    (L.TABLE_COL_CONTROL_TYPES, 4, "i"),
    (L.TABLE_COL_SCHEMAS, 12, "i"),
)
_pick = tuple.__getitem__
_is_null = (-1).__eq__


def _views(buf: memoryview, pairs: memoryview) -> Iterable[Optional[memoryview]]:
    """The slices of buf that (offset, length) pairs name, None where the length is -1:
    C-level maps (slice, memoryview.__getitem__), no Python frame per span."""
    lengths = pairs[1::2].tolist()
    nulls = lengths.count(-1)
    if nulls == len(lengths):
        return repeat(None, nulls)
    starts = pairs[0::2].tolist()
    views = map(buf.__getitem__, map(slice, starts, map(add, starts, lengths)))
    if not nulls:
        return views
    # (view, None)[length == -1]
    return map(_pick, zip(views, repeat(None)), map(_is_null, lengths))


def _le(m: memoryview) -> bytes:
    """A column's integers as little-endian bytes (a big-endian host's copy swapped back)."""
    a = array(m.format, m.tobytes())
    a.byteswap()
    return a.tobytes()


class RecordTable(Sequence[Record]):
    """A record table: a sequence of Record, read from one bytes buffer (``table``).
    ``skipped_bytes`` is the size of a partial batch at the end of the input, which
    Kafka's readers skip; ``layout`` the table's layout version.

    Layouts 1-3 hold an entry per record, read with struct loads. Layout 4 (what
    decode_fetch and decode_produce get from a module of ABI 1.4) holds the records'
    fields as columns, one array per field, and a batch table for the fields a batch
    holds once: its columns are memoryview casts of the table (no copy), and its records
    are made from them with C-level passes.

    A layout-3 table (decode_fetch and decode_produce with a module of ABI 1.2 or 1.3),
    and a layout-4 table decoded with input spans, leave the records stored uncompressed
    where they are: their spans index ``input``, the frame the table was decoded from,
    which the table keeps a read-only memoryview of (no copy). ``input`` is required for
    layout 3, optional for layout 4 (without it every record's source must be the table)
    and ignored before. The caller must not change that frame while the records are read
    (a bytearray cannot be resized while views of it exist; changing its bytes changes
    the records).

    Every record's spans, checked against the buffer they index, and every header entry
    are checked when the table is created, and in layout 4 every column's and the batch
    table's place in the table and every record's batch: a table that points outside its
    buffers is refused (InternalError) before any record is handed out.
    """

    __slots__ = (
        "table",
        "input",
        "skipped_bytes",
        "layout",
        "_view",
        "_bufs",
        "_count",
        "_stride",
        "_recs",
        "_hcount",
        "_hstride",
        "_hoff",
        "_hsrc",
        "_hbuf",
        "_hdrs",
        "_raw",
        "_json",
        "_cols",
        "_srcb",
        "_bidx",
        "_hidx",
        "_bcount",
        "_bstride",
        "_boff",
        "_brows",
        "_runs",
    )

    def __init__(self, table: bytes, input: Optional[BytesLike] = None, *, _trusted: bool = False) -> None:
        n = len(table)
        if n < _TABLE_HEADER.size:
            raise _bad(f"a record table of {n} bytes")
        magic, layout, count, stride, recs, hcount, hstride, hoff, skipped, total = _TABLE_HEADER.unpack_from(table)
        if magic != L.TABLE_MAGIC or not 1 <= layout <= _LAYOUT_COLUMNS:
            raise _bad(f"magic {magic!r} layout {layout}")
        head = L.TABLE_HEADER_SIZE_1
        self._json: Optional[Tuple[int, int]] = None
        columns = layout == _LAYOUT_COLUMNS
        if layout >= 2:
            head = L.TABLE_HEADER_SIZE_4 if columns else L.TABLE_HEADER_SIZE_2
            if n < head:
                raise _bad(f"a layout {layout} table of {n} bytes")
            jo, jl = _JSON_SPAN.unpack_from(table, L.TABLE_JSON_OFFSET)
            if jo < head or jl < 0 or jo > n - jl:
                raise _bad(f"frame JSON ({jo}, {jl}) outside the table")
            self._json = (jo, jl)
        if (
            total != n
            or (stride != 0 if columns else stride < L.REC_STRIDE)
            or hstride < L.HDR_STRIDE
            or count < 0
            or hcount < 0
            or recs < head
            or recs + count * stride > n
            or hoff < head
            or hoff + hcount * hstride > n
        ):
            raise _bad(f"geometry (layout {layout}, {count} records, {hcount} headers, {n} bytes)")
        self.table = table
        self.layout: int = layout
        self.skipped_bytes: int = skipped
        self._view = memoryview(table)
        self.input: Optional[memoryview] = None
        if layout == 3 or (columns and input is not None):
            if input is None:
                raise _bad("a layout-3 table needs the frame it was decoded from (input)")
            self.input = memoryview(input).cast("B").toreadonly()
        self._bufs: Tuple[memoryview, ...] = (self._view,) if self.input is None else (self._view, self.input)
        self._count: int = count
        self._stride: int = stride
        self._recs: int = recs
        self._hcount: int = hcount
        self._hstride: int = hstride
        self._hoff: int = hoff
        # The source of each header entry (that of the record it belongs to) when the
        # headers index both buffers; else None, and they all index _hbuf.
        self._hsrc: Optional[bytes] = None
        self._hbuf: memoryview = self._view
        self._hdrs: Optional[List[Header]] = None
        self._raw: Optional[List[RawHeader]] = None
        self._runs: Optional[Tuple[List[int], List[Tuple[int, int, int]]]] = None
        if columns:
            self._columns(head)
            if not (_trusted and self._sources_only_4()):
                self._check_batches()
                self._check(self._srcb, self._col(L.TABLE_COL_KEYS), self._col(L.TABLE_COL_VALUES), self._hidx)
        elif not (_trusted and self._sources_only()):
            self._check()

    def _columns(self, head: int) -> None:
        """Layout 4: the batch table's and every column's place, checked, and the columns
        as memoryview casts of the table."""
        t, n, size = self.table, self._count, len(self.table)
        bcount, bstride, boff = (_I32.unpack_from(t, at)[0] for at in (L.TABLE_BATCH_COUNT, L.TABLE_BATCH_STRIDE, L.TABLE_BATCHES_OFFSET))
        if bcount < 0 or bstride < L.RB_STRIDE or boff < head or boff > size - bcount * bstride:
            raise _bad(f"batch table ({bcount} batches of {bstride} bytes at {boff}) in a table of {size} bytes")
        self._bcount: int = bcount
        self._bstride: int = bstride
        self._boff: int = boff
        self._brows: Optional[List[Tuple[int, ...]]] = None
        cols: Dict[int, memoryview] = {}
        for at, width, fmt in _COLUMNS:
            (off,) = _I32.unpack_from(t, at)
            if off < head or off % 8 or off > size - width * n or (at == L.TABLE_COL_OFFSETS and off != self._recs):
                raise _bad(f"column at +{at} ({n} records of {width} bytes at {off}) in a table of {size} bytes")
            raw = self._view[off : off + width * n]
            cols[at] = raw.cast(fmt) if _LITTLE or fmt == "B" else _native(raw.tobytes(), fmt)  # type: ignore[call-overload, arg-type]
        self._cols: Dict[int, memoryview] = cols
        self._srcb: bytes = cols[L.TABLE_COL_SOURCES].tobytes()
        self._bidx: memoryview = cols[L.TABLE_COL_BATCH_INDEX]
        self._hidx: memoryview = cols[L.TABLE_COL_HEADER_INDEX]

    def _check_batches(self) -> None:
        """Layout 4: every record's batch is an entry of the batch table."""
        n, bcount = self._count, self._bcount
        if n and not (0 <= min(self._bidx) and max(self._bidx) < bcount):
            i = next(i for i, b in enumerate(self._bidx) if not 0 <= b < bcount)
            raise _bad(f"record {i}: batch {self._bidx[i]} of {bcount}")

    def _col(self, at: int) -> memoryview:
        """Layout 4: the column whose offset the table header holds at `at` (TABLE_COL_*)."""
        return self._cols[at]

    # ---- checks, once, when the table is created ---------------------------------------

    def _sources_only(self) -> bool:
        """For a table the module just returned (decode_fetch, decode_records): its spans
        are not checked one by one (the module's own tests and fuzz targets hold them to
        its buffers, and a memoryview slice cannot leave its buffer anyway); only which
        buffer each header indexes is worked out, as _quick does. False when the table is
        not laid out as the module lays it out: then it is checked in full."""
        n, hn, st = self._count, self._hcount, self._stride
        if not (_LITTLE and st % 8 == 0 and self._hstride == L.HDR_STRIDE):
            return False
        if n == 0 or hn == 0:
            return True
        recs = self._view[self._recs : self._recs + n * st].cast("i")
        w = st // 4
        low = recs[L.REC_SOURCE // 4 :: w].tobytes()[0::4]
        return self._header_sources(low, lambda: recs[L.REC_HEADER_COUNT // 4 :: w])

    def _sources_only_4(self) -> bool:
        """_sources_only for layout 4, which also holds every source to the buffers the
        table has (its records are made by source)."""
        n, low = self._count, self._srcb
        if self._hstride != L.HDR_STRIDE or low.count(0) + low.count(1) != n or (len(self._bufs) == 1 and 1 in low):
            return False
        return n == 0 or self._hcount == 0 or self._header_sources(low, lambda: self._hidx[1::2])

    def _header_sources(self, low: bytes, counts: Callable[[], Iterable[int]]) -> bool:
        n, hn = self._count, self._hcount
        if len(self._bufs) == 1:
            return low.count(0) == n
        if low.count(0) == n or low.count(1) == n:
            self._hbuf = self._bufs[low[0]]
            return True
        if low.count(0) + low.count(1) != n:
            return False
        # Headers of both sources: each header entry takes its record's source (the module
        # writes each record's headers after the previous record's).
        hsrc = bytes(chain.from_iterable(map(repeat, low, counts())))
        if len(hsrc) != hn:
            return False
        self._hsrc = hsrc
        return True

    def _check(self, low: Optional[bytes] = None, keys: Optional[memoryview] = None, values: Optional[memoryview] = None,
               hidx: Optional[memoryview] = None) -> None:
        """Every span of every record and header entry lies in the buffer it indexes, every
        source is one the table may have, every record's headers are header entries.

        First a quick check (_Lanes: big-integer arithmetic over all entries at once, at C
        speed) of a table as kwire writes them; when it finds anything, or the table's
        strides do not suit it, the entry-by-entry check (_check_each) says which entry is
        wrong, or accepts what the quick one is too strict about (e.g. headers out of
        record order). Layout 4 gives its sources, key and value (offset, length) pairs and
        (first header, count) pairs as columns (low, keys, values, hidx); layouts 1-3 have
        them read from the entries."""
        sizes = [len(b) for b in self._bufs]
        if low is not None and keys is not None and values is not None and hidx is not None:
            kv = keys.tobytes() + values.tobytes() if _LITTLE else _le(keys) + _le(values)
            fhc = hidx.tobytes() if _LITTLE else _le(hidx)
            if not (self._hstride % 8 == 0 and self._quick(sizes, low, kv, fhc)):
                self._check_each(sizes, zip(keys[0::2], keys[1::2], values[0::2], values[1::2], hidx[0::2], hidx[1::2], low))
            return
        if not (self._stride % 8 == 0 and self._hstride % 8 == 0 and self._quick_entries(sizes)):
            self._check_each(sizes, (h[_KO:] for h in self._entries(0, self._count)))

    def _quick_entries(self, sizes: List[int]) -> bool:
        n = self._count
        if not n:
            return self._quick(sizes, b"", b"", b"")
        recs = self._view[self._recs : self._recs + n * self._stride]
        src = recs.cast("i")[L.REC_SOURCE // 4 :: self._stride // 4].tobytes()
        low = src[0::4]  # a source's low byte; the other three must be 0
        if src.count(0) + low.count(1) != len(src):
            return False
        words = recs.cast("q")
        w = self._stride // 8
        kv = words[L.REC_KEY_OFFSET // 8 :: w].tobytes() + words[L.REC_VALUE_OFFSET // 8 :: w].tobytes()
        return self._quick(sizes, low, kv, words[L.REC_FIRST_HEADER // 8 :: w].tobytes())

    def _quick(self, sizes: List[int], low: bytes, kv: bytes, fhc: bytes) -> bool:
        """low: each record's source (one byte); kv: the (offset, length) pairs of the keys,
        then of the values, 8 bytes each, little-endian; fhc: the (first header, count)
        pairs."""
        n, hn, v = self._count, self._hcount, self._view
        hsrc: Optional[bytes] = None  # per header, when the records are of both sources
        hbuf = L.SOURCE_TABLE
        if n:
            if low.count(0) + low.count(1) != n or (len(sizes) == 1 and 1 in low):
                return False  # a source other than 0, or (with an input) 1
            mixed = 0 in low and 1 in low
            if not mixed:
                sizes1 = (sizes[low[0]] + 1) * _patterns(2 * n).ones
            else:
                lanes = bytearray(16 * n)
                lanes[0 : 8 * n : 8] = low
                lanes[8 * n :: 8] = low
                sizes1 = (sizes[0] + 1) * _patterns(2 * n).ones + int.from_bytes(lanes, "little") * (sizes[1] - sizes[0])
            fhc_words = int.from_bytes(fhc, "little")
            if not (_spans_fit(int.from_bytes(kv, "little"), 2 * n, sizes1, False) and _spans_fit(fhc_words, n, (hn + 1) * _patterns(n).ones, True)):
                return False
            if hn:
                # Headers in record order, each record's right after the previous one's: then
                # each header entry is one record's, and takes its source.
                p = _patterns(n)
                fh, hc = fhc_words & p.lo32, (fhc_words >> 32) & p.lo32
                end, last = fh + hc, 64 * (n - 1)
                if fh & _LANE or end >> last != hn or end & ((1 << last) - 1) != fh >> 64:
                    return False
                if mixed:
                    counts = struct.unpack("<%dq" % n, hc.to_bytes(8 * n, "little"))
                    hsrc = bytes(chain.from_iterable(map(repeat, low, counts)))
                else:
                    hbuf = low[0]
        if hn:
            hs = self._hstride
            if hs != L.HDR_STRIDE:
                return False
            ents = int.from_bytes(v[self._hoff : self._hoff + hn * hs], "little")  # (key, value) span pairs
            p = _patterns(2 * hn)
            if hsrc is None:
                sizes1 = (sizes[hbuf] + 1) * p.ones
            else:
                lanes = bytearray(16 * hn)
                lanes[0::16] = hsrc
                lanes[8::16] = hsrc
                sizes1 = (sizes[0] + 1) * p.ones + int.from_bytes(lanes, "little") * (sizes[1] - sizes[0])
            if ents & p.even_sign or not _spans_fit(ents, 2 * hn, sizes1, False):
                return False  # a key of length -1, or a span outside its buffer
        self._hsrc, self._hbuf = hsrc, self._bufs[hbuf]
        return True

    def _check_each(self, sizes: List[int], rows: Iterable[Tuple[int, ...]]) -> None:
        """Record by record (rows: key offset, key length, value offset, value length,
        first header, header count, source): raises naming the first bad record or header
        entry; else notes each header's source (a header entry shared by records of both
        sources is refused)."""
        hn = self._hcount
        hsrc = bytearray(hn)
        claimed = bytearray(hn)  # 1: a SOURCE_TABLE record's, 2: a SOURCE_INPUT record's
        what = {L.SOURCE_TABLE: "the table", L.SOURCE_INPUT: "the input"}
        for i, (ko, kl, vo, vl, fh, hc, src) in enumerate(rows):
            if not 0 <= src < len(sizes):
                raise _bad(f"record {i}: source {src} in a layout-{self.layout} table" + ("" if self.layout >= 3 else " (only layout 3 has sources)"))
            size = sizes[src]
            if not (
                (kl == -1 or (kl >= 0 and 0 <= ko <= size - kl))
                and (vl == -1 or (vl >= 0 and 0 <= vo <= size - vl))
                and 0 <= fh
                and 0 <= hc <= hn - fh
            ):
                raise _bad(f"record {i}: key ({ko}, {kl}) value ({vo}, {vl}) headers {fh}+{hc} of {hn}, in {what.get(src, src)} of {size} bytes")
            for j in range(fh, fh + hc):
                if claimed[j] and claimed[j] != src + 1:
                    raise _bad(f"header {j} belongs to records of both sources")
                claimed[j] = src + 1
                hsrc[j] = src
        for j, (ko, kl, vo, vl) in enumerate(self._header_entries()):
            size = sizes[hsrc[j]]
            if not (kl >= 0 and 0 <= ko <= size - kl and (vl == -1 or (vl >= 0 and 0 <= vo <= size - vl))):
                raise _bad(f"header {j}: key ({ko}, {kl}) value ({vo}, {vl}), in {what[hsrc[j]]} of {size} bytes")
        if hn and min(hsrc) == max(hsrc):
            self._hbuf = self._bufs[hsrc[0]]
        else:
            self._hsrc = bytes(hsrc) if hn else None

    # ---- reading ------------------------------------------------------------------------

    def _entries(self, first: int, count: int) -> Iterator[Tuple[int, ...]]:
        """Record entries first .. first+count-1: (offset, timestamp, producer_id, key
        offset, key length, value offset, value length, first header, header count, source)."""
        a = self._recs + first * self._stride
        return _entry(self._stride).iter_unpack(self._view[a : a + count * self._stride])

    def _header_entries(self) -> List[Tuple[int, ...]]:
        """Every header entry (key_offset, key_length, value_offset, value_length)."""
        if self._hstride == _HEADER.size:
            return list(_HEADER.iter_unpack(self._view[self._hoff : self._hoff + self._hcount * _HEADER.size]))
        return [_HEADER.unpack_from(self.table, self._hoff + j * self._hstride) for j in range(self._hcount)]

    def _header_bufs(self) -> Iterable[memoryview]:
        """The buffer each header entry's spans index."""
        if self._hsrc is None:
            return repeat(self._hbuf, self._hcount)
        return map(self._bufs.__getitem__, self._hsrc)

    def _raw_headers(self) -> List[RawHeader]:
        raw = self._raw
        if raw is None:
            raw = [
                _new_tuple(RawHeader, (b[ko : ko + kl], None if vl == -1 else b[vo : vo + vl]))
                for (ko, kl, vo, vl), b in zip(self._header_entries(), self._header_bufs())
            ]
            self._raw = raw
        return raw

    def _headers(self) -> List[Header]:
        h = self._hdrs
        if h is None:
            h = [
                _new_tuple(Header, (str(b[ko : ko + kl], "utf-8", "replace"), None if vl == -1 else b[vo : vo + vl]))
                for (ko, kl, vo, vl), b in zip(self._header_entries(), self._header_bufs())
            ]
            self._hdrs = h
        return h

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, i: int) -> Record: ...

    @overload
    def __getitem__(self, i: slice) -> List[Record]: ...

    def __getitem__(self, i: Union[int, slice]) -> Union[Record, List[Record]]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._count))]
        j: int = i + self._count if i < 0 else i
        if not 0 <= j < self._count:
            raise IndexError("record index out of range")
        return next(self._records(j, 1))

    def __iter__(self) -> Iterator[Record]:
        return self._records(0, self._count)

    def _records(self, first: int, count: int) -> Iterator[Record]:
        if self._stride == 0:
            # Layout 4: the records of each run of one source, made by C-level passes.
            end = first + count
            starts, runs = self._source_runs()
            j = bisect_right(starts, first) - 1
            parts = []
            for k in range(max(j, 0), len(runs)):
                a, b, s = runs[k]
                if a >= end:
                    break
                parts.append((max(a, first), min(b, end), s))
            return chain.from_iterable(starmap(self._run, parts))
        return self._entry_records(first, count)

    def _source_runs(self) -> Tuple[List[int], List[Tuple[int, int, int]]]:
        """Layout 4: the records as runs (first, end, source) of one source each, and the
        first record of each run."""
        got = self._runs
        if got is None:
            runs = []
            low, n, a = self._srcb, self._count, 0
            while a < n:
                s = low[a]
                b = low.find(b"\x00" if s else b"\x01", a)
                b = n if b < 0 else b
                runs.append((a, b, s))
                a = b
            got = self._runs = ([r[0] for r in runs], runs)
        return got

    def _run(self, a: int, b: int, source: int) -> Iterator[Record]:
        """Layout 4: records a .. b-1, all of one source, as _ColumnRecord tuples: zips of
        the columns and of the key and value views, no Python frame per record."""
        buf = self._bufs[source]
        cols = self._cols
        return map(
            _new_tuple,
            repeat(_ColumnRecord),
            zip(
                cols[L.TABLE_COL_OFFSETS][a:b],
                cols[L.TABLE_COL_TIMESTAMPS][a:b],
                _views(buf, cols[L.TABLE_COL_KEYS][2 * a : 2 * b]),
                _views(buf, cols[L.TABLE_COL_VALUES][2 * a : 2 * b]),
                repeat(self),
                range(a, b),
            ),
        )

    def _batch_rows(self) -> List[Tuple[int, ...]]:
        """Layout 4: every batch entry, unpacked (RB_BASE_OFFSET .. RB_SOURCE)."""
        rows = self._brows
        if rows is None:
            st, at = self._bstride, self._boff
            if st == _BATCH.size:
                rows = list(_BATCH.iter_unpack(self._view[at : at + self._bcount * st]))
            else:
                rows = [_BATCH.unpack_from(self.table, at + j * st) for j in range(self._bcount)]
            self._brows = rows
        return rows

    def _entry_records(self, first: int, count: int) -> Iterator[Record]:
        # The hot path of a consumer of layouts 1-3: one struct pass over the entries
        # (checked when the table was made); keys, values and headers are sliced when
        # first asked for.
        new = _EntryRecord.__new__
        bufs = self._bufs
        stride = self._stride
        at = self._recs + first * stride
        src = _SRC
        for h in self._entries(first, count):
            r = new(_EntryRecord)
            r.offset, r.timestamp, r.producer_id = h[0], h[1], h[2]
            r._h = h
            r._buf = bufs[h[src]]
            r._table = self
            r._at = at
            at += stride
            yield r

    def json_text(self) -> Optional[bytes]:
        """The frame JSON a layout-2, -3 or -4 table (decode_fetch, decode_produce) carries,
        else None."""
        if self._json is None:
            return None
        jo, jl = self._json
        return self.table[jo : jo + jl]

    def slice(
        self, first: int = 0, count: Optional[int] = None, skipped_bytes: int = 0, size: int = -1, invalid: Optional[Dict[str, Any]] = None
    ) -> "RecordSet":
        """Records first .. first+count-1 as a RecordSet (a partition's records field)."""
        if count is None:
            count = self._count - first
        if first < 0 or count < 0 or first > self._count - count:
            raise _bad(f"records {first}+{count} of {self._count}")
        return RecordSet(self, first, count, skipped_bytes, size, invalid)

    def columns(self) -> "Columns":
        """Every record's fields as arrays (see Columns): no object per record."""
        return Columns(self, 0, self._count)

    def __repr__(self) -> str:
        frame = "" if self.input is None else f", {self.input.nbytes}-byte input"
        return f"<RecordTable layout {self.layout}, {self._count} records, {len(self.table)} bytes{frame}, skipped {self.skipped_bytes}>"


_LANE = (1 << 64) - 1


class _Patterns:
    """Big integers of `count` 64-bit lanes with the same value in each (see _spans_fit)."""

    __slots__ = ("ones", "lo32", "sign", "b40", "high_sign", "even_sign")

    def __init__(self, count: int) -> None:
        self.ones = int.from_bytes(b"\x01\0\0\0\0\0\0\0" * count, "little")
        self.lo32 = self.ones * 0xFFFFFFFF
        self.sign = self.ones << 31  # bit 31 of each lane: a negative low half
        self.high_sign = self.ones << 63  # bit 63: a negative high half
        self.b40 = self.ones << 40
        self.even_sign = int.from_bytes(b"\0\0\0\0\0\0\0\x80\0\0\0\0\0\0\0\0" * (count // 2), "little")


_pattern_cache: Dict[int, _Patterns] = {}


def _patterns(count: int) -> _Patterns:
    p = _pattern_cache.get(count)
    if p is None:
        if len(_pattern_cache) >= 16:
            _pattern_cache.clear()
        p = _pattern_cache[count] = _Patterns(count)
    return p


def _spans_fit(words: int, count: int, sizes1: int, high_nonnegative: bool) -> bool:
    """The quick check of `count` (offset, length) pairs at once, with big-integer
    arithmetic instead of a Python loop: `words` holds them as the table does, lane i
    (bits 64i .. 64i+63) = offset | length << 32, and `sizes1` the size + 1 of the buffer
    each indexes, one per lane. True when every offset is >= 0, every length >= -1 (-1
    is a null, whose offset only has to be <= size + 1; with high_nonnegative, >= 0) and
    offset + length <= size. Each lane's arithmetic stays within its lane: offsets and
    lengths as unsigned 32-bit values, sums below 2^33, sizes below 2^31."""
    p = _patterns(count)
    off = words & p.lo32
    len1 = ((words >> 32) + p.ones) & p.lo32  # length + 1: a null is 0, a negative length >= 2^31
    if (off | len1) & p.sign or (high_nonnegative and words & p.high_sign):
        return False
    # 2^40 + size + 1 - (offset + length + 1) per lane: bit 40 stays set exactly where
    # the span fits, and no lane borrows from the next.
    return (sizes1 + p.b40 - (off + len1)) & p.b40 == p.b40


def _bad(what: str) -> Exception:
    return error_for(ERR_INTERNAL, f"kwire: bad record table: {what}")


def compression_code(c: Union[str, int]) -> int:
    """KW_COMPRESSION_* for a name ("none", "gzip", "snappy", "lz4", "zstd") or a code."""
    if isinstance(c, bool):
        raise TypeError("compression must be a name or an int")
    if isinstance(c, int):
        return c
    try:
        return COMPRESSIONS.index(c)
    except ValueError:
        raise error_for(ERR_ARG, f"kwire: unknown compression {c!r} (want one of {', '.join(COMPRESSIONS)})") from None


def _b64(v: Any, what: str) -> Optional[str]:
    if v is None:
        return None
    if isinstance(v, str):
        v = v.encode("utf-8")
    if isinstance(v, (bytes, bytearray, memoryview)):
        return base64.b64encode(v).decode("ascii")
    raise TypeError(f"{what} must be bytes, bytearray, memoryview, str or None, not {type(v).__name__}")


def _header_key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, (bytes, bytearray, memoryview)):
        return bytes(k).decode("utf-8")
    raise TypeError(f"a header key must be str or bytes, not {type(k).__name__}")


def _field(r: Any, name: str, default: Any = None) -> Any:
    if isinstance(r, Mapping):
        return r.get(name, default)
    return getattr(r, name, default)


def record_json(r: Any, i: int) -> Dict[str, Any]:
    """One record of kw_records_encode's JSON input."""
    rec: Dict[str, Any] = {
        "key": _b64(_field(r, "key"), f"records[{i}].key"),
        "value": _b64(_field(r, "value"), f"records[{i}].value"),
    }
    ts = _field(r, "timestamp")
    if ts is not None:
        rec["timestamp"] = int(ts)
    hs = _field(r, "headers")
    if hs:
        hl = []
        for h in hs:
            if isinstance(h, Mapping):
                k, v = h.get("key"), h.get("value")
            else:
                k, v = h
            hl.append({"key": _header_key(k), "value": _b64(v, f"records[{i}] header value")})
        rec["headers"] = hl
    return rec


def batch_json(
    records: Iterable[Any],
    *,
    magic: int,
    base_offset: int,
    partition_leader_epoch: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    transactional: bool,
    timestamp_type: str,
    log_append_time: int,
    level: int,
) -> Dict[str, Any]:
    """The JSON input of kw_records_encode. int64 values go as JSON numbers (exact: the
    module reads integral numbers as well as decimal strings)."""
    out = [record_json(r, i) for i, r in enumerate(records)]
    return {
        "magic": magic,
        "baseOffset": base_offset,
        "partitionLeaderEpoch": partition_leader_epoch,
        "producerId": producer_id,
        "producerEpoch": producer_epoch,
        "baseSequence": base_sequence,
        "transactional": transactional,
        "timestampType": timestamp_type,
        "logAppendTime": log_append_time,
        "level": level,
        "records": out,
    }


class RecordSet(Sequence[Record]):
    """A run of records of one RecordTable: a partition's records field as decode_fetch
    and decode_produce return it. A sequence of Record (made when iterated or indexed),
    with ``columns()`` for access without an object per record.

    ``skipped_bytes`` is the size of a partial batch at the end of the records field
    (skipped, as Kafka's readers do); ``size`` the field's size on the wire (-1 when not
    known).

    ``invalid``, for a partition of a Produce request (v3 on), is None when its records
    pass Kafka's validateRecords, else the broker's verdict: a dict with ``errorCode``
    (87 INVALID_RECORD, 76 UNSUPPORTED_COMPRESSION_TYPE, 2 CORRUPT_MESSAGE, -1),
    ``error`` (Kafka's name of the code) and ``reason``."""

    __slots__ = ("table", "first", "skipped_bytes", "size", "invalid", "_count")

    def __init__(
        self, table: RecordTable, first: int, count: int, skipped_bytes: int, size: int, invalid: Optional[Dict[str, Any]] = None
    ) -> None:
        self.table = table
        self.first = first
        self._count = count
        self.skipped_bytes = skipped_bytes
        self.size = size
        self.invalid = invalid

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, i: int) -> Record: ...

    @overload
    def __getitem__(self, i: slice) -> List[Record]: ...

    def __getitem__(self, i: Union[int, slice]) -> Union[Record, List[Record]]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._count))]
        j: int = i + self._count if i < 0 else i
        if not 0 <= j < self._count:
            raise IndexError("record index out of range")
        return self.table[self.first + j]

    def __iter__(self) -> Iterator[Record]:
        return self.table._records(self.first, self._count)

    def columns(self) -> "Columns":
        """These records' fields as arrays (see Columns)."""
        return Columns(self.table, self.first, self._count)

    def __repr__(self) -> str:
        return f"<RecordSet {self._count} records from {self.first}, skipped {self.skipped_bytes}>"


class Batch(NamedTuple):
    """One entry of a table's batch table (Columns.batches): the fields a record batch
    holds once for its records first_record .. first_record + record_count - 1 (table
    indices). Codes as the table holds them: ``compression`` KW_COMPRESSION_* (COMPRESSIONS
    names them), ``timestamp_type`` -1 none, 0 CreateTime, 1 LogAppendTime, ``flags`` bit 0
    transactional, bit 1 control, ``source`` SOURCE_*. A record's sequence is -1 when
    ``base_sequence`` is, else base_sequence + (its offset - base_offset), wrapping past
    2**31 - 1 to 0 as Kafka's producer does."""

    base_offset: int
    producer_id: int
    first_record: int
    record_count: int
    base_sequence: int
    leader_epoch: int
    producer_epoch: int
    magic: int
    compression: int
    timestamp_type: int
    flags: int
    source: int


class Columns:
    """Records as arrays, one entry per record, no object per record:

    - ``offsets``, ``timestamps``, ``producer_ids``: ``memoryview`` of format ``q``
      (int64, exact);
    - ``keys``, ``values``: ``memoryview`` of format ``i``, two entries per record: the
      offset and the length (-1: null) in the record's buffer (below);
    - ``header_index``: format ``i``, (first header, header count) per record;
    - ``headers``: format ``i``, four entries per header: key offset, key length, value
      offset, value length (-1: null) — the table's header entries, by table index; a
      header's spans index the same buffer as its record's;
    - ``sources``: format ``i``, one per record: which buffer its key, value and header
      spans index: ``SOURCE_TABLE`` (0) ``data``, ``SOURCE_INPUT`` (1) ``input``;
    - ``control_types``: format ``i``, one per record: -1 unless a control record (0
      ABORT, 1 COMMIT, ...);
    - ``schemas``: format ``i``, three per record: schema source (0 none, 1
      value-prefix, 2 header), id, version;
    - ``batch_index``: format ``i``, one per record: its entry in ``batches``;
    - ``batches``: the table's batch table, a list of Batch (base offset, producer id,
      base sequence, epochs, magic, compression, timestamp type, flags: the fields a
      batch holds once);
    - ``data``: a read-only ``memoryview`` of the table;
    - ``input``: a read-only ``memoryview`` of the frame the table was decoded from when
      its records stored uncompressed stay there (decode_fetch, decode_produce without
      ``copy=True``), else None, and then every source is 0.

    So record i's value is ``buf[values[2*i] : values[2*i] + values[2*i+1]]`` with
    ``buf = input if sources[i] == SOURCE_INPUT else data``.

    A layout-4 table (decode_fetch and decode_produce with a module of ABI 1.4) holds
    its records as columns: offsets, timestamps, keys, values, header_index,
    batch_index, control_types, schemas and headers are memoryview casts of the table
    itself (no copy); sources (a byte per record in the table) and producer_ids (a field
    of each batch) are made from it with C-level passes. Tables with an entry per record
    (layouts 1-3) have their arrays gathered from the entries with C-level copies when
    first read, and a batch per record. ``numpy()`` gives the same as numpy arrays (views
    of the table where the table holds them), when numpy is installed (it is optional).
    """

    __slots__ = ("table", "first", "length", "_q", "_i", "_got")

    def __init__(self, table: RecordTable, first: int, count: int) -> None:
        self.table = table
        self.first = first
        self.length = count
        self._q: Optional[memoryview] = None
        self._i: Optional[memoryview] = None
        self._got: Dict[Tuple[int, str], memoryview] = {}

    def _span(self, at: int, per: int = 1) -> memoryview:
        """Layout 4: the part of a column that holds these records."""
        return self.table._cols[at][per * self.first : per * (self.first + self.length)]

    def _field(self, off: int, fmt: 'Literal["q", "i"]', size: int = 8) -> memoryview:
        """The `size` bytes at `off` of every record entry, as a dense memoryview of fmt."""
        got = self._got.get((off, fmt))
        if got is None:
            got = self._gather(off, fmt, size)
            self._got[(off, fmt)] = got
        return got

    def _gather(self, off: int, fmt: 'Literal["q", "i"]', size: int) -> memoryview:
        t = self.table
        st = t._stride
        a = t._recs + self.first * st
        if _LITTLE and st % 8 == 0 and off % size == 0:
            if size == 8:
                q = self._q
                if q is None:
                    q = self._q = t._view[a : a + self.length * st].cast("q")
                return memoryview(q[off // 8 :: st // 8].tobytes()).cast(fmt)
            i = self._i
            if i is None:
                i = self._i = t._view[a : a + self.length * st].cast("i")
            return memoryview(i[off // 4 :: st // 4].tobytes()).cast("i")
        raw = b"".join(t.table[a + j * st + off : a + j * st + off + size] for j in range(self.length))
        return _native(raw, fmt)

    @property
    def offsets(self) -> memoryview:
        if self.table._stride == 0:
            return self._span(L.TABLE_COL_OFFSETS)
        return self._field(L.REC_OFFSET, "q")

    @property
    def timestamps(self) -> memoryview:
        if self.table._stride == 0:
            return self._span(L.TABLE_COL_TIMESTAMPS)
        return self._field(L.REC_TIMESTAMP, "q")

    @property
    def producer_ids(self) -> memoryview:
        t = self.table
        if t._stride == 0:
            got = self._got.get((L.TABLE_COL_BATCH_INDEX, "q"))
            if got is None:
                pids = [b[_B_PRODUCER_ID] for b in t._batch_rows()]
                got = self._got[(L.TABLE_COL_BATCH_INDEX, "q")] = memoryview(array("q", map(pids.__getitem__, self.batch_index))).toreadonly()
            return got
        return self._field(L.REC_PRODUCER_ID, "q")

    @property
    def keys(self) -> memoryview:
        if self.table._stride == 0:
            return self._span(L.TABLE_COL_KEYS, 2)
        return self._field(L.REC_KEY_OFFSET, "i")  # with REC_KEY_LENGTH, the next 4 bytes

    @property
    def values(self) -> memoryview:
        if self.table._stride == 0:
            return self._span(L.TABLE_COL_VALUES, 2)
        return self._field(L.REC_VALUE_OFFSET, "i")

    @property
    def header_index(self) -> memoryview:
        if self.table._stride == 0:
            return self._span(L.TABLE_COL_HEADER_INDEX, 2)
        return self._field(L.REC_FIRST_HEADER, "i")  # with REC_HEADER_COUNT

    @property
    def sources(self) -> memoryview:
        t = self.table
        if t._stride == 0:
            got = self._got.get((L.TABLE_COL_SOURCES, "i"))
            if got is None:
                # A byte per record in the table: widened to int32 by one strided copy.
                wide = bytearray(4 * self.length)
                wide[0 if _LITTLE else 3 :: 4] = t._srcb[self.first : self.first + self.length]
                got = self._got[(L.TABLE_COL_SOURCES, "i")] = memoryview(wide).cast("i").toreadonly()
            return got
        return self._field(L.REC_SOURCE, "i", 4)

    @property
    def control_types(self) -> memoryview:
        if self.table._stride == 0:
            return self._span(L.TABLE_COL_CONTROL_TYPES)
        return self._field(L.REC_CONTROL_TYPE, "i", 4)

    @property
    def schemas(self) -> memoryview:
        if self.table._stride == 0:
            return self._span(L.TABLE_COL_SCHEMAS, 3)
        got = self._got.get((L.REC_SCHEMA_SOURCE, "3i"))
        if got is None:
            a = array("i", bytes(12 * self.length))
            for k, off in enumerate((L.REC_SCHEMA_SOURCE, L.REC_SCHEMA_ID, L.REC_SCHEMA_VERSION)):
                a[k::3] = array("i", self._field(off, "i", 4).tobytes())
            got = self._got[(L.REC_SCHEMA_SOURCE, "3i")] = memoryview(a).toreadonly()
        return got

    @property
    def batch_index(self) -> memoryview:
        if self.table._stride == 0:
            return self._span(L.TABLE_COL_BATCH_INDEX)
        return memoryview(array("i", range(self.first, self.first + self.length))).toreadonly()  # a batch per record

    @property
    def batches(self) -> List[Batch]:
        t = self.table
        if t._stride == 0:
            return list(map(_new_tuple, repeat(Batch), t._batch_rows()))
        # A table with an entry per record: each record as a batch of its own.
        out = []
        for j, (r, h) in enumerate(zip(t, t._entries(0, t._count))):
            tail = r._t()
            out.append(Batch(h[0], h[2], j, 1, tail[_T_SEQUENCE], tail[_T_LEADER_EPOCH], tail[_T_PRODUCER_EPOCH], tail[_T_MAGIC],
                             tail[_T_COMPRESSION], tail[_T_TIMESTAMP_TYPE], tail[_T_FLAGS], h[_SRC]))
        return out

    @property
    def headers(self) -> memoryview:
        t = self.table
        if t._hstride == _HEADER.size and _LITTLE:
            return t._view[t._hoff : t._hoff + t._hcount * _HEADER.size].cast("i")
        return _native(b"".join(t.table[t._hoff + j * t._hstride : t._hoff + j * t._hstride + 16] for j in range(t._hcount)), "i")

    @property
    def data(self) -> memoryview:
        return self.table._view

    @property
    def input(self) -> Optional[memoryview]:
        return self.table.input

    def numpy(self) -> Dict[str, Any]:
        """The columns as numpy arrays: offsets, timestamps, producer_ids (int64, shape
        (n,)), keys, values, header_index (int32, shape (n, 2)), sources (shape (n,):
        int32, uint8 in a layout-4 table), control_types, batch_index (int32, shape (n,)),
        schemas (int32, shape (n, 3)), headers (int32, shape (h, 4)), data (uint8) and
        input (uint8, a view of the frame; None when the records are all in the table).
        Every array is a read-only view of the table (zero copy) but producer_ids and
        batch_index of a table with an entry per record (layouts 1-3), and producer_ids
        of a layout-4 table (one per batch there). ImportError when numpy is not
        installed."""
        import numpy as np

        t = self.table
        n = self.length

        def view(dtype: str, off: int, shape: Tuple[int, ...], strides: Tuple[int, ...]) -> Any:
            if shape[0] == 0:
                return np.zeros(shape, dtype=dtype)
            arr = np.ndarray(shape=shape, dtype=dtype, buffer=t.table, offset=off, strides=strides)
            arr.flags.writeable = False
            return arr

        if t._stride == 0:
            f = self.first

            def col(at: int, dtype: str, width: int, per: int = 1) -> Any:
                (off,) = _I32.unpack_from(t.table, at)
                size = width // per
                shape = (n,) if per == 1 else (n, per)
                return view(dtype, off + f * width, shape, (width,) if per == 1 else (width, size))

            cols = {
                "offsets": col(L.TABLE_COL_OFFSETS, "<i8", 8),
                "timestamps": col(L.TABLE_COL_TIMESTAMPS, "<i8", 8),
                "producer_ids": np.frombuffer(self.producer_ids, dtype=np.int64),
                "keys": col(L.TABLE_COL_KEYS, "<i4", 8, 2),
                "values": col(L.TABLE_COL_VALUES, "<i4", 8, 2),
                "header_index": col(L.TABLE_COL_HEADER_INDEX, "<i4", 8, 2),
                "sources": col(L.TABLE_COL_SOURCES, "u1", 1),
                "control_types": col(L.TABLE_COL_CONTROL_TYPES, "<i4", 4),
                "batch_index": col(L.TABLE_COL_BATCH_INDEX, "<i4", 4),
                "schemas": col(L.TABLE_COL_SCHEMAS, "<i4", 12, 3),
            }
        else:
            st = t._stride
            a = t._recs + self.first * st
            cols = {
                "offsets": view("<i8", a + L.REC_OFFSET, (n,), (st,)),
                "timestamps": view("<i8", a + L.REC_TIMESTAMP, (n,), (st,)),
                "producer_ids": view("<i8", a + L.REC_PRODUCER_ID, (n,), (st,)),
                "keys": view("<i4", a + L.REC_KEY_OFFSET, (n, 2), (st, 4)),
                "values": view("<i4", a + L.REC_VALUE_OFFSET, (n, 2), (st, 4)),
                "header_index": view("<i4", a + L.REC_FIRST_HEADER, (n, 2), (st, 4)),
                "sources": view("<i4", a + L.REC_SOURCE, (n,), (st,)),
                "control_types": view("<i4", a + L.REC_CONTROL_TYPE, (n,), (st,)),
                "batch_index": np.arange(self.first, self.first + n, dtype=np.int32),
                "schemas": view("<i4", a + L.REC_SCHEMA_SOURCE, (n, 3), (st, 4)),
            }
        cols["headers"] = view("<i4", t._hoff, (t._hcount, 4), (t._hstride, 4))
        cols["data"] = np.frombuffer(t.table, dtype=np.uint8)
        cols["input"] = None if t.input is None else np.frombuffer(t.input, dtype=np.uint8)
        return cols


def _native(raw: bytes, fmt: 'Literal["q", "i"]') -> memoryview:
    """Little-endian integers as a memoryview of native ones (swapped on big-endian hosts)."""
    a = array(fmt, raw)
    if not _LITTLE:
        a.byteswap()
    return memoryview(a)


class RecordTableBuilder:
    """Writes a record table (layout 1) on the host side: the records input of the
    frame-records encode call. ``add`` takes a mapping or object with ``key``, ``value``
    (bytes-like, str as UTF-8, or None), ``timestamp`` (int, default -1) and ``headers``
    (pairs or {"key", "value"} mappings; a decoded Record works, its header keys as their
    exact bytes)."""

    def __init__(self) -> None:
        self._recs: List[Tuple[int, Optional[bytes], Optional[bytes], int, int]] = []
        self._hdrs: List[Tuple[bytes, Optional[bytes]]] = []
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._recs)

    def add(self, r: Any) -> int:
        """Adds one record; returns its index."""
        i = len(self._recs)
        key = _raw(_field(r, "key"), f"record {i}: key")
        value = _raw(_field(r, "value"), f"record {i}: value")
        ts = _field(r, "timestamp")
        ts = -1 if ts is None else int(ts)
        if not -(1 << 63) <= ts < (1 << 63):
            raise error_for(ERR_ARG, f"kwire: record {i}: timestamp {ts} is not an int64", {"category": "arg"})
        first = len(self._hdrs)
        hs = r.raw_headers() if isinstance(r, Record) else (_field(r, "headers") or [])
        n = 0
        for h in hs:
            if isinstance(h, Mapping):
                k, v = h.get("key"), h.get("value")
            else:
                k, v = h
            kb = _raw(k, f"record {i}: header key")
            if kb is None:
                raise TypeError(f"record {i}: a header key must be str or bytes")
            vb = _raw(v, f"record {i}: header value")
            self._hdrs.append((kb, vb))
            self._bytes += len(kb) + (len(vb) if vb is not None else 0)
            n += 1
        self._recs.append((ts, key, value, first, n))
        self._bytes += (len(key) if key is not None else 0) + (len(value) if value is not None else 0)
        return i

    def add_all(self, records: Iterable[Any]) -> int:
        """Adds every record; returns the index of the first."""
        first = len(self._recs)
        for r in records:
            self.add(r)
        return first

    def build(self) -> bytes:
        """The table's bytes."""
        n, hn = len(self._recs), len(self._hdrs)
        hoff = L.TABLE_HEADER_SIZE_1 + n * L.REC_STRIDE
        d = hoff + hn * _HEADER.size
        total = d + self._bytes
        buf = bytearray(total)
        _TABLE_HEADER.pack_into(buf, 0, L.TABLE_MAGIC, 1, n, L.REC_STRIDE, L.TABLE_HEADER_SIZE_1, hn, L.HDR_STRIDE, hoff, 0, total)
        chunks: List[bytes] = []

        def put(b: Optional[bytes]) -> Tuple[int, int]:
            nonlocal d
            if b is None:
                return 0, -1
            chunks.append(b)
            d += len(b)
            return d - len(b), len(b)

        entry = struct.Struct("<3q18i")
        for i, (ts, key, value, first, count) in enumerate(self._recs):
            ko, kl = put(key)
            vo, vl = put(value)
            entry.pack_into(
                buf, L.TABLE_HEADER_SIZE_1 + i * L.REC_STRIDE,
                i, ts, -1, ko, kl, vo, vl, first, count, -1, -1, -1, 2, 0, -1 if ts == -1 else 0, 0, -1, 0, -1, -1, 0,
            )
        for j, (k, v) in enumerate(self._hdrs):
            ko, kl = put(k)
            vo, vl = put(v)
            _HEADER.pack_into(buf, hoff + j * L.HDR_STRIDE, ko, kl, vo, vl)
        start = hoff + hn * L.HDR_STRIDE
        buf[start:] = b"".join(chunks)
        return bytes(buf)


def _raw(v: Any, what: str) -> Optional[bytes]:
    if v is None:
        return None
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    raise TypeError(f"{what} must be bytes, bytearray, memoryview, str or None, not {type(v).__name__}")
