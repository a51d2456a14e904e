"""The record table (kw_records_decode_table) read with plain struct loads, and the input
of kw_records_encode built from Python values."""

import base64
import struct
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union, overload

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

    __slots__ = ("offset", "timestamp", "producer_id", "key", "value", "headers", "_table", "_at", "_tail")

    offset: int
    timestamp: int
    producer_id: int
    key: Optional[memoryview]
    value: Optional[memoryview]
    headers: List[Tuple[str, Optional[memoryview]]]
    """The record's headers in wire order: (key, value) pairs."""
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

    def raw_headers(self) -> List[Tuple[memoryview, Optional[memoryview]]]:
        """The headers with their keys as the exact bytes of the batch."""
        fh, hc = _FH_HC.unpack_from(self._table.table, self._at + 40)
        return self._table._raw_headers()[fh : fh + hc] if hc else []

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
    )

    def __init__(self, table: bytes) -> None:
        n = len(table)
        if n < _TABLE_HEADER.size:
            raise _bad(f"a record table of {n} bytes")
        magic, layout, count, stride, recs, hcount, hstride, hoff, skipped, total = _TABLE_HEADER.unpack_from(table)
        if magic != b"KWRT" or layout < 1:
            raise _bad(f"magic {magic!r} layout {layout}")
        if (
            total != n
            or stride < _RECORD_SIZE
            or hstride < _HEADER.size
            or count < 0
            or hcount < 0
            or recs < _TABLE_HEADER.size
            or recs + count * stride > n
            or hoff < 0
            or hoff + hcount * hstride > n
        ):
            raise _bad("inconsistent geometry")
        self.table = table
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
        # against the buffer before it is sliced, headers sliced from one shared list.
        v, n, hn = self._view, len(self.table), self._hcount
        hdrs = self._headers() if hn else []
        new = Record.__new__
        stride = self._stride
        for off, ts, pid, ko, kl, vo, vl, fh, hc in heads:
            if (
                not (kl == -1 or (0 <= ko <= n - kl and kl >= 0))
                or not (vl == -1 or (0 <= vo <= n - vl and vl >= 0))
                or not (hc == 0 or (0 <= fh and 0 < hc <= hn - fh))
            ):
                raise _bad(f"record entry at {at}: key ({ko}, {kl}) value ({vo}, {vl}) headers {fh}+{hc} of {hn}")
            r = new(Record)
            r.offset = off
            r.timestamp = ts
            r.producer_id = pid
            r.key = None if kl == -1 else v[ko : ko + kl]
            r.value = None if vl == -1 else v[vo : vo + vl]
            r.headers = hdrs[fh : fh + hc] if hc else []
            r._table = self
            r._at = at
            at += stride
            yield r

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
    out: List[Dict[str, Any]] = []
    for i, r in enumerate(records):
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
        out.append(rec)
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
