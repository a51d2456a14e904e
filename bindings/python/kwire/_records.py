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
_RECORD = struct.Struct("<3q18i")  # layout 1: 96 bytes
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
    """

    __slots__ = (
        "offset",
        "timestamp",
        "producer_id",
        "key",
        "value",
        "headers",
        "sequence",
        "leader_epoch",
        "producer_epoch",
        "magic",
        "compression",
        "timestamp_type",
        "transactional",
        "control",
        "control_type",
        "schema_source",
        "schema_id",
        "schema_version",
        "_raw_headers",
    )

    offset: int
    timestamp: int
    producer_id: int
    key: Optional[memoryview]
    value: Optional[memoryview]
    headers: List[Tuple[str, Optional[memoryview]]]
    sequence: int
    leader_epoch: int
    producer_epoch: int
    magic: int
    compression: str
    """"none", "gzip", "snappy", "lz4" or "zstd"."""
    timestamp_type: str
    """"CreateTime", "LogAppendTime" or "NoTimestampType"."""
    transactional: bool
    control: bool
    control_type: int
    """-1 unless a control record: 0 ABORT, 1 COMMIT, 2 LEADER_CHANGE, ..."""
    schema_source: str
    """"none", "value-prefix" or "header"."""
    schema_id: int
    schema_version: int
    _raw_headers: List[Tuple[memoryview, Optional[memoryview]]]

    def raw_headers(self) -> List[Tuple[memoryview, Optional[memoryview]]]:
        """The headers with their keys as the exact bytes of the batch."""
        return list(self._raw_headers)

    def __repr__(self) -> str:
        def show(b: Optional[memoryview]) -> str:
            return "None" if b is None else repr(bytes(b))

        hs = ", ".join(f"({k!r}, {show(v)})" for k, v in self.headers)
        return (
            f"Record(offset={self.offset}, timestamp={self.timestamp}, key={show(self.key)}, "
            f"value={show(self.value)}, headers=[{hs}], compression={self.compression!r})"
        )


class RecordTable(Sequence[Record]):
    """The records of kw_records_decode_table: a sequence of Record, read lazily from one
    bytes buffer (``table``) with struct loads. ``skipped_bytes`` is the size of a partial
    batch at the end of the input, which Kafka's readers skip."""

    __slots__ = ("table", "skipped_bytes", "_view", "_count", "_stride", "_recs", "_hcount", "_hstride", "_hoff")

    def __init__(self, table: bytes) -> None:
        n = len(table)
        if n < _TABLE_HEADER.size:
            raise _bad(f"a record table of {n} bytes")
        magic, layout, count, stride, recs, hcount, hstride, hoff, skipped, total = _TABLE_HEADER.unpack_from(table)
        if magic != b"KWRT" or layout < 1:
            raise _bad(f"magic {magic!r} layout {layout}")
        if (
            total != n
            or stride < _RECORD.size
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

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, i: int) -> Record: ...

    @overload
    def __getitem__(self, i: slice) -> List[Record]: ...

    def __getitem__(self, i: Union[int, slice]) -> Union[Record, List[Record]]:
        if isinstance(i, slice):
            return [self._record(_RECORD.unpack_from(self.table, self._recs + j * self._stride)) for j in range(*i.indices(self._count))]
        j: int = i + self._count if i < 0 else i
        if not 0 <= j < self._count:
            raise IndexError("record index out of range")
        return self._record(_RECORD.unpack_from(self.table, self._recs + j * self._stride))

    def __iter__(self) -> Iterator[Record]:
        if self._stride == _RECORD.size:
            end = self._recs + self._count * self._stride
            rows: Iterable[Tuple[Any, ...]] = _RECORD.iter_unpack(self._view[self._recs : end])
        else:
            rows = (_RECORD.unpack_from(self.table, self._recs + j * self._stride) for j in range(self._count))
        mk = self._record
        for row in rows:
            yield mk(row)

    def _span(self, off: int, n: int) -> Optional[memoryview]:
        if n == -1:
            return None
        if n < 0 or off < 0 or off + n > len(self.table):
            raise _bad(f"span ({off}, {n}) outside the table")
        return self._view[off : off + n]

    def _record(self, row: Tuple[Any, ...]) -> Record:
        (off, ts, pid, ko, kl, vo, vl, fh, hc, seq, le, pe, magic, comp, tt, flags, ct, ss, sid, sv) = row[:20]
        r = Record.__new__(Record)
        r.offset = off
        r.timestamp = ts
        r.producer_id = pid
        view, n = self._view, len(self.table)
        if kl == -1:
            r.key = None
        elif 0 <= ko and 0 <= kl and ko + kl <= n:
            r.key = view[ko : ko + kl]
        else:
            raise _bad(f"key span ({ko}, {kl})")
        if vl == -1:
            r.value = None
        elif 0 <= vo and 0 <= vl and vo + vl <= n:
            r.value = view[vo : vo + vl]
        else:
            raise _bad(f"value span ({vo}, {vl})")
        if hc:
            if fh < 0 or hc < 0 or fh + hc > self._hcount:
                raise _bad(f"headers {fh}+{hc} of {self._hcount}")
            raw: List[Tuple[memoryview, Optional[memoryview]]] = []
            for j in range(fh, fh + hc):
                hko, hkl, hvo, hvl = _HEADER.unpack_from(self.table, self._hoff + j * self._hstride)
                k = self._span(hko, hkl)
                if k is None:
                    raise _bad(f"header {j} has a null key")
                raw.append((k, self._span(hvo, hvl)))
            r._raw_headers = raw
            r.headers = [(bytes(k).decode("utf-8", "replace"), v) for k, v in raw]
        else:
            r._raw_headers = []
            r.headers = []
        r.sequence = seq
        r.leader_epoch = le
        r.producer_epoch = pe
        r.magic = magic
        r.compression = COMPRESSIONS[comp] if 0 <= comp < len(COMPRESSIONS) else str(comp)
        r.timestamp_type = _TIMESTAMP_TYPES.get(tt, str(tt))
        r.transactional = bool(flags & _FLAG_TRANSACTIONAL)
        r.control = bool(flags & _FLAG_CONTROL)
        r.control_type = ct
        r.schema_source = _SCHEMA_SOURCES[ss] if 0 <= ss < len(_SCHEMA_SOURCES) else str(ss)
        r.schema_id = sid
        r.schema_version = sv
        return r

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
