"""The record table (kw_records_decode_table) read with plain struct loads, and the input
of kw_records_encode built from Python values."""

import base64
import struct
import sys
from array import array
from typing import Any, Dict, Iterable, Iterator, List, Literal, Mapping, Optional, Sequence, Tuple, Union, overload

from ._errors import ERR_ARG, ERR_INTERNAL, error_for

BytesLike = Union[bytes, bytearray, memoryview]

COMPRESSIONS = ("none", "gzip", "snappy", "lz4", "zstd")
"""Compression names by KW_COMPRESSION_* code."""
_TIMESTAMP_TYPES = {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}
_SCHEMA_SOURCES = ("none", "value-prefix", "header")

_TABLE_HEADER = struct.Struct("<4s9i")
_RECORD_SIZE = 96  # layout 1
# The head of a record entry, read for every record: offset, timestamp, producer_id,
# key_offset, key_length, value_offset, value_length, first_header, header_count.
_HEAD = struct.Struct("<3q6i")
_HEAD_STRIDE = struct.Struct("<3q6i%dx" % (_RECORD_SIZE - 48))
# The tail, read when one of its fields is asked for: sequence .. schema_version.
_TAIL = struct.Struct("<12i")
_FH_HC = struct.Struct("<2i")  # first_header, header_count at +40
_HEADER = struct.Struct("<4i")
_FLAG_TRANSACTIONAL = 1
_FLAG_CONTROL = 2


class Record:
    """One record of a record table.

    ``key``, ``value`` and header values are read-only ``memoryview`` slices of the
    table (no copy; ``bytes(r.value)`` copies), or ``None`` when null. They stay valid as
    long as any of them or the table is referenced. Header keys are ``str`` (invalid
    UTF-8 becomes U+FFFD, as in the JSON form); ``raw_headers()`` gives their exact
    bytes. int64 values (offset, timestamp, producer_id) are Python ints.

    offset, timestamp, producer_id, key and value are read when the record is; the other
    fields are read from the table when first asked for.
    """

    __slots__ = ("offset", "timestamp", "producer_id", "key", "value", "_fh", "_hc", "_table", "_at", "_tail")

    offset: int
    timestamp: int
    producer_id: int
    key: Optional[memoryview]
    value: Optional[memoryview]
    _fh: int  # first header entry
    _hc: int  # header count
    _table: "RecordTable"
    _at: int
    _tail: Tuple[int, ...]  # unset until a tail field is asked for

    def _t(self) -> Tuple[int, ...]:
        try:
            return self._tail
        except AttributeError:
            t = _TAIL.unpack_from(self._table.table, self._at + 48)
            self._tail = t
            return t

    @property
    def headers(self) -> List[Tuple[str, Optional[memoryview]]]:
        """The record's headers in wire order: (key, value) pairs (read from the table
        when first asked for, for every record of the table at once)."""
        hc = self._hc
        return self._table._headers()[self._fh : self._fh + hc] if hc else []

    def raw_headers(self) -> List[Tuple[memoryview, Optional[memoryview]]]:
        """The headers with their keys as the exact bytes of the batch."""
        hc = self._hc
        return self._table._raw_headers()[self._fh : self._fh + hc] if hc else []

    @property
    def sequence(self) -> int:
        return self._t()[0]

    @property
    def leader_epoch(self) -> int:
        return self._t()[1]

    @property
    def producer_epoch(self) -> int:
        return self._t()[2]

    @property
    def magic(self) -> int:
        return self._t()[3]

    @property
    def compression(self) -> str:
        """"none", "gzip", "snappy", "lz4" or "zstd"."""
        c = self._t()[4]
        return COMPRESSIONS[c] if 0 <= c < len(COMPRESSIONS) else str(c)

    @property
    def timestamp_type(self) -> str:
        """"CreateTime", "LogAppendTime" or "NoTimestampType"."""
        tt = self._t()[5]
        return _TIMESTAMP_TYPES.get(tt, str(tt))

    @property
    def transactional(self) -> bool:
        return bool(self._t()[6] & _FLAG_TRANSACTIONAL)

    @property
    def control(self) -> bool:
        return bool(self._t()[6] & _FLAG_CONTROL)

    @property
    def control_type(self) -> int:
        """-1 unless a control record: 0 ABORT, 1 COMMIT, 2 LEADER_CHANGE, ..."""
        return self._t()[7]

    @property
    def schema_source(self) -> str:
        """"none", "value-prefix" or "header"."""
        ss = self._t()[8]
        return _SCHEMA_SOURCES[ss] if 0 <= ss < len(_SCHEMA_SOURCES) else str(ss)

    @property
    def schema_id(self) -> int:
        return self._t()[9]

    @property
    def schema_version(self) -> int:
        return self._t()[10]

    def __repr__(self) -> str:
        def show(b: Optional[memoryview]) -> str:
            return "None" if b is None else repr(bytes(b))

        hs = ", ".join(f"({k!r}, {show(v)})" for k, v in self.headers)
        return (
            f"Record(offset={self.offset}, timestamp={self.timestamp}, key={show(self.key)}, "
            f"value={show(self.value)}, headers=[{hs}], compression={self.compression!r})"
        )


class RecordTable(Sequence[Record]):
    """The records of kw_records_decode_table: a sequence of Record, read from one bytes
    buffer (``table``) with struct loads. ``skipped_bytes`` is the size of a partial batch
    at the end of the input, which Kafka's readers skip. Every offset and length in the
    table is checked against the buffer before any record is handed out."""

    __slots__ = (
        "table",
        "skipped_bytes",
        "_view",
        "_count",
        "_stride",
        "_recs",
        "_hcount",
        "_hstride",
        "_hoff",
        "_hdrs",
        "_raw",
        "layout",
        "_json",
    )

    def __init__(self, table: bytes) -> None:
        n = len(table)
        if n < _TABLE_HEADER.size:
            raise _bad(f"a record table of {n} bytes")
        magic, layout, count, stride, recs, hcount, hstride, hoff, skipped, total = _TABLE_HEADER.unpack_from(table)
        if magic != b"KWRT" or layout < 1:
            raise _bad(f"magic {magic!r} layout {layout}")
        head = _TABLE_HEADER.size
        self._json: Optional[Tuple[int, int]] = None
        if layout >= 2:
            # layout 2 (the frame calls): + json_offset, json_length; the header is 48 bytes
            head = _TABLE_HEADER.size + 8
            if n < head:
                raise _bad(f"a layout {layout} table of {n} bytes")
            jo, jl = _FH_HC.unpack_from(table, _TABLE_HEADER.size)
            if jo < head or jl < 0 or jo > n - jl:
                raise _bad(f"frame JSON ({jo}, {jl}) outside the table")
            self._json = (jo, jl)
        if (
            total != n
            or stride < _RECORD_SIZE
            or hstride < _HEADER.size
            or count < 0
            or hcount < 0
            or recs < head
            or recs + count * stride > n
            or hoff < head
            or hoff + hcount * hstride > n
        ):
            raise _bad("inconsistent geometry")
        self.table = table
        self.layout: int = layout
        self.skipped_bytes: int = skipped
        self._view = memoryview(table)
        self._count: int = count
        self._stride: int = stride
        self._recs: int = recs
        self._hcount: int = hcount
        self._hstride: int = hstride
        self._hoff: int = hoff
        self._hdrs: Optional[List[Tuple[str, Optional[memoryview]]]] = None
        self._raw: Optional[List[Tuple[memoryview, Optional[memoryview]]]] = None

    def _heads(self) -> Iterator[Tuple[int, ...]]:
        if self._stride == _RECORD_SIZE:
            return _HEAD_STRIDE.iter_unpack(self._view[self._recs : self._recs + self._count * self._stride])
        return (_HEAD.unpack_from(self.table, self._recs + j * self._stride) for j in range(self._count))

    def _header_entries(self) -> List[Tuple[int, ...]]:
        """Every header entry (key_offset, key_length, value_offset, value_length), checked."""
        n = len(self.table)
        if self._hstride == _HEADER.size:
            ents = list(_HEADER.iter_unpack(self._view[self._hoff : self._hoff + self._hcount * _HEADER.size]))
        else:
            ents = [_HEADER.unpack_from(self.table, self._hoff + j * self._hstride) for j in range(self._hcount)]
        for j, (ko, kl, vo, vl) in enumerate(ents):
            if not (0 <= ko <= n - kl and kl >= 0 and (vl == -1 or (0 <= vo <= n - vl and vl >= 0))):
                raise _bad(f"header entry {j}: key ({ko}, {kl}) value ({vo}, {vl})")
        return ents

    def _raw_headers(self) -> List[Tuple[memoryview, Optional[memoryview]]]:
        raw = self._raw
        if raw is None:
            v = self._view
            raw = [(v[ko : ko + kl], None if vl == -1 else v[vo : vo + vl]) for ko, kl, vo, vl in self._header_entries()]
            self._raw = raw
        return raw

    def _headers(self) -> List[Tuple[str, Optional[memoryview]]]:
        h = self._hdrs
        if h is None:
            t, v = self.table, self._view
            h = [
                (t[ko : ko + kl].decode("utf-8", "replace"), None if vl == -1 else v[vo : vo + vl])
                for ko, kl, vo, vl in self._header_entries()
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
        at = self._recs + j * self._stride
        return self._record(at, _HEAD.unpack_from(self.table, at))

    def _record(self, at: int, head: Tuple[int, ...]) -> Record:
        return next(self._records(iter((head,)), at))

    def __iter__(self) -> Iterator[Record]:
        return self._records(self._heads(), self._recs)

    def _records(self, heads: Iterator[Tuple[int, ...]], at: int) -> Iterator[Record]:
        # The hot path of a consumer: one struct pass over the entries, every span checked
        # against the buffer before it is sliced; headers are read when first asked for.
        v, n, hn = self._view, len(self.table), self._hcount
        new = Record.__new__
        stride = self._stride
        for off, ts, pid, ko, kl, vo, vl, fh, hc in heads:
            if not (
                (kl == -1 or 0 <= ko <= n - kl and kl >= 0)
                and (vl == -1 or 0 <= vo <= n - vl and vl >= 0)
                and 0 <= fh
                and 0 <= hc <= hn - fh
            ):
                raise _bad(f"record entry at {at}: key ({ko}, {kl}) value ({vo}, {vl}) headers {fh}+{hc} of {hn}")
            r = new(Record)
            r.offset = off
            r.timestamp = ts
            r.producer_id = pid
            r.key = None if kl == -1 else v[ko : ko + kl]
            r.value = None if vl == -1 else v[vo : vo + vl]
            r._fh = fh
            r._hc = hc
            r._table = self
            r._at = at
            at += stride
            yield r

    def json_text(self) -> Optional[bytes]:
        """The frame JSON a layout-2 table (decode_fetch, decode_produce) carries, else None."""
        if self._json is None:
            return None
        jo, jl = self._json
        return self.table[jo : jo + jl]

    def slice(self, first: int = 0, count: Optional[int] = None, skipped_bytes: int = 0, size: int = -1) -> "RecordSet":
        """Records first .. first+count-1 as a RecordSet (a partition's records field)."""
        if count is None:
            count = self._count - first
        if first < 0 or count < 0 or first > self._count - count:
            raise _bad(f"records {first}+{count} of {self._count}")
        return RecordSet(self, first, count, skipped_bytes, size)

    def columns(self) -> "Columns":
        """Every record's fields as arrays (see Columns): no object per record."""
        return Columns(self, 0, self._count)

    def _heads_of(self, first: int, count: int) -> Iterator[Tuple[int, ...]]:
        a = self._recs + first * self._stride
        if self._stride == _RECORD_SIZE:
            return _HEAD_STRIDE.iter_unpack(self._view[a : a + count * self._stride])
        return (_HEAD.unpack_from(self.table, a + j * self._stride) for j in range(count))

    def __repr__(self) -> str:
        return f"<RecordTable {self._count} records, {len(self.table)} bytes, skipped {self.skipped_bytes}>"


def _bad(what: str) -> Exception:
    return error_for(ERR_INTERNAL, f"kwire: malformed record table from kw_records_decode_table: {what}")


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
    known)."""

    __slots__ = ("table", "first", "skipped_bytes", "size", "_count")

    def __init__(self, table: RecordTable, first: int, count: int, skipped_bytes: int, size: int) -> None:
        self.table = table
        self.first = first
        self._count = count
        self.skipped_bytes = skipped_bytes
        self.size = size

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
        t = self.table
        return t._records(t._heads_of(self.first, self._count), t._recs + self.first * t._stride)

    def columns(self) -> "Columns":
        """These records' fields as arrays (see Columns)."""
        return Columns(self.table, self.first, self._count)

    def __repr__(self) -> str:
        return f"<RecordSet {self._count} records from {self.first}, skipped {self.skipped_bytes}>"


class Columns:
    """Records as arrays, one entry per record, no object per record:

    - ``offsets``, ``timestamps``: ``memoryview`` of format ``q`` (int64, exact);
    - ``keys``, ``values``: ``memoryview`` of format ``i``, two entries per record: the
      offset into ``data`` and the length (-1: null), so record i's value is
      ``data[values[2*i] : values[2*i] + values[2*i+1]]``;
    - ``header_index``: format ``i``, (first header, header count) per record;
    - ``headers``: format ``i``, four entries per header: key offset, key length, value
      offset, value length (-1: null) — the table's header entries, by table index;
    - ``data``: a read-only ``memoryview`` of the table (every offset above indexes it).

    The arrays are gathered from the table's entries with C-level copies when first read.
    ``numpy()`` gives the same as numpy arrays that are views of the table (no copy), when
    numpy is installed (it is optional).
    """

    __slots__ = ("table", "first", "length", "_q", "_got")

    def __init__(self, table: RecordTable, first: int, count: int) -> None:
        self.table = table
        self.first = first
        self.length = count
        self._q: Optional[memoryview] = None
        self._got: Dict[int, memoryview] = {}

    def _field(self, word: int, fmt: 'Literal["q", "i"]') -> memoryview:
        """Entry word `word` (8-byte unit) of every record, as a dense memoryview of fmt."""
        got = self._got.get(word)
        if got is None:
            got = self._gather(word, fmt)
            self._got[word] = got
        return got

    def _gather(self, word: int, fmt: 'Literal["q", "i"]') -> memoryview:
        t = self.table
        st = t._stride
        a = t._recs + self.first * st
        if st % 8 == 0 and _LITTLE:
            q = self._q
            if q is None:
                q = t._view[a : a + self.length * st].cast("q")
                self._q = q
            return memoryview(q[word :: st // 8].tobytes()).cast(fmt)
        raw = b"".join(t.table[a + j * st + 8 * word : a + j * st + 8 * word + 8] for j in range(self.length))
        return _native(raw, fmt)

    @property
    def offsets(self) -> memoryview:
        return self._field(0, "q")

    @property
    def timestamps(self) -> memoryview:
        return self._field(1, "q")

    @property
    def producer_ids(self) -> memoryview:
        return self._field(2, "q")

    @property
    def keys(self) -> memoryview:
        return self._field(3, "i")

    @property
    def values(self) -> memoryview:
        return self._field(4, "i")

    @property
    def header_index(self) -> memoryview:
        return self._field(5, "i")

    @property
    def headers(self) -> memoryview:
        t = self.table
        if t._hstride == _HEADER.size and _LITTLE:
            return t._view[t._hoff : t._hoff + t._hcount * _HEADER.size].cast("i")
        return _native(b"".join(t.table[t._hoff + j * t._hstride : t._hoff + j * t._hstride + 16] for j in range(t._hcount)), "i")

    @property
    def data(self) -> memoryview:
        return self.table._view

    def numpy(self) -> Dict[str, Any]:
        """The columns as numpy arrays that are views of the table (zero copy): offsets,
        timestamps, producer_ids (int64, shape (n,)), keys, values, header_index (int32,
        shape (n, 2)), headers (int32, shape (h, 4)) and data (uint8). ImportError when
        numpy is not installed."""
        import numpy as np

        t = self.table
        st = t._stride
        a = t._recs + self.first * st
        n = self.length

        def view(dtype: str, off: int, shape: Tuple[int, ...], strides: Tuple[int, ...]) -> Any:
            if shape[0] == 0:
                return np.zeros(shape, dtype=dtype)
            arr = np.ndarray(shape=shape, dtype=dtype, buffer=t.table, offset=off, strides=strides)
            arr.flags.writeable = False
            return arr

        return {
            "offsets": view("<i8", a, (n,), (st,)),
            "timestamps": view("<i8", a + 8, (n,), (st,)),
            "producer_ids": view("<i8", a + 16, (n,), (st,)),
            "keys": view("<i4", a + 24, (n, 2), (st, 4)),
            "values": view("<i4", a + 32, (n, 2), (st, 4)),
            "header_index": view("<i4", a + 40, (n, 2), (st, 4)),
            "headers": view("<i4", t._hoff, (t._hcount, 4), (t._hstride, 4)),
            "data": np.frombuffer(t.table, dtype=np.uint8),
        }


_LITTLE = sys.byteorder == "little"


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
        hoff = _TABLE_HEADER.size + n * _RECORD_SIZE
        d = hoff + hn * _HEADER.size
        total = d + self._bytes
        buf = bytearray(total)
        _TABLE_HEADER.pack_into(buf, 0, b"KWRT", 1, n, _RECORD_SIZE, _TABLE_HEADER.size, hn, _HEADER.size, hoff, 0, total)
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
                buf, _TABLE_HEADER.size + i * _RECORD_SIZE,
                i, ts, -1, ko, kl, vo, vl, first, count, -1, -1, -1, 2, 0, -1 if ts == -1 else 0, 0, -1, 0, -1, -1, 0,
            )
        for j, (k, v) in enumerate(self._hdrs):
            ko, kl = put(k)
            vo, vl = put(v)
            _HEADER.pack_into(buf, hoff + j * _HEADER.size, ko, kl, vo, vl)
        start = hoff + hn * _HEADER.size
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
