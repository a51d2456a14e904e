"""The record table (kw_records_decode_table's layout 1, the frame calls' layouts 2 and 3)
read with plain struct loads, and the input of kw_records_encode built from Python values.
The table's field offsets are named once, in _layout (capi/kwire.h's KW_REC_*, ...)."""

import base64
import struct
import sys
from array import array
from itertools import chain, repeat
from typing import Any, Dict, Iterable, Iterator, List, Literal, Mapping, NamedTuple, Optional, Sequence, Tuple, Union, overload

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
    ``bytes(r.value)`` copies), or ``None`` when null, made when first asked for. They are
    views of the table, or, for a record that a layout-3 table (decode_fetch,
    decode_produce) leaves in the caller's frame (``source == SOURCE_INPUT``: stored
    uncompressed), views of that frame. They stay valid as long as any of them, the table
    or the frame is referenced. Header keys are ``str`` (invalid UTF-8 becomes U+FFFD, as
    in the JSON form); ``raw_headers()`` gives their exact bytes. int64 values (offset,
    timestamp, producer_id) are Python ints.

    offset, timestamp and producer_id are read when the record is; the other fields when
    first asked for.
    """

    __slots__ = ("offset", "timestamp", "producer_id", "_h", "_buf", "_table", "_at", "_tail")

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
            self._tail = t
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
        SOURCE_INPUT (1) the frame the table was decoded from (layout 3)."""
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
        c = self._t()[_T_COMPRESSION]
        return COMPRESSIONS[c] if 0 <= c < len(COMPRESSIONS) else str(c)

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
        ss = self._t()[_T_SCHEMA_SOURCE]
        return _SCHEMA_SOURCES[ss] if 0 <= ss < len(_SCHEMA_SOURCES) else str(ss)

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


class RecordTable(Sequence[Record]):
    """A record table: a sequence of Record, read from one bytes buffer (``table``) with
    struct loads. ``skipped_bytes`` is the size of a partial batch at the end of the input,
    which Kafka's readers skip; ``layout`` the table's layout version.

    A layout-3 table (what decode_fetch and decode_produce get from a module of ABI 1.2)
    leaves the records stored uncompressed where they are: their spans index ``input``,
    the frame the table was decoded from, which the table keeps a read-only memoryview of
    (no copy). ``input`` is required for layout 3 and ignored before. The caller must not
    change that frame while the records are read (a bytearray cannot be resized while
    views of it exist; changing its bytes changes the records).

    Every record entry's spans, checked against the buffer they index, and every header
    entry are checked when the table is created: a table that points outside its buffers
    is refused (InternalError) before any record is handed out.
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
    )

    def __init__(self, table: bytes, input: Optional[BytesLike] = None, *, _trusted: bool = False) -> None:
        n = len(table)
        if n < _TABLE_HEADER.size:
            raise _bad(f"a record table of {n} bytes")
        magic, layout, count, stride, recs, hcount, hstride, hoff, skipped, total = _TABLE_HEADER.unpack_from(table)
        if magic != L.TABLE_MAGIC or layout < 1:
            raise _bad(f"magic {magic!r} layout {layout}")
        head = L.TABLE_HEADER_SIZE_1
        self._json: Optional[Tuple[int, int]] = None
        if layout >= 2:
            head = L.TABLE_HEADER_SIZE_2
            if n < head:
                raise _bad(f"a layout {layout} table of {n} bytes")
            jo, jl = _JSON_SPAN.unpack_from(table, L.TABLE_JSON_OFFSET)
            if jo < head or jl < 0 or jo > n - jl:
                raise _bad(f"frame JSON ({jo}, {jl}) outside the table")
            self._json = (jo, jl)
        if (
            total != n
            or stride < L.REC_STRIDE
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
        if layout >= 3:
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
        if not (_trusted and self._sources_only()):
            self._check()

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
        if len(self._bufs) == 1:
            return low.count(0) == n
        if low.count(0) == n or low.count(1) == n:
            self._hbuf = self._bufs[low[0]]
            return True
        if low.count(0) + low.count(1) != n:
            return False
        # Headers of both sources: each header entry takes its record's source (the module
        # writes each record's headers after the previous record's).
        counts = recs[L.REC_HEADER_COUNT // 4 :: w]
        hsrc = bytes(chain.from_iterable(map(repeat, low, counts)))
        if len(hsrc) != hn:
            return False
        self._hsrc = hsrc
        return True

    def _check(self) -> None:
        """Every span of every record and header entry lies in the buffer it indexes, every
        source is one the table may have, every record's headers are header entries.

        First a quick check (_Lanes: big-integer arithmetic over all entries at once, at C
        speed) of a table as kwire writes them; when it finds anything, or the table's
        strides do not suit it, the entry-by-entry check (_check_each) says which entry is
        wrong, or accepts what the quick one is too strict about (e.g. headers out of
        record order)."""
        sizes = [len(b) for b in self._bufs]
        if not (self._stride % 8 == 0 and self._hstride % 8 == 0 and self._quick(sizes)):
            self._check_each(sizes)

    def _quick(self, sizes: List[int]) -> bool:
        n, hn, v = self._count, self._hcount, self._view
        hsrc: Optional[bytes] = None  # per header, when the records are of both sources
        hbuf = L.SOURCE_TABLE
        if n:
            recs = v[self._recs : self._recs + n * self._stride]
            src = recs.cast("i")[L.REC_SOURCE // 4 :: self._stride // 4].tobytes()
            low = src[0::4]  # a source's low byte; the other three must be 0
            if src.count(0) + low.count(1) != len(src) or (len(sizes) == 1 and 1 in low):
                return False  # a source other than 0, or (layout 3) 1
            mixed = 0 in low and 1 in low
            words = recs.cast("q")
            w = self._stride // 8
            kv = words[L.REC_KEY_OFFSET // 8 :: w].tobytes() + words[L.REC_VALUE_OFFSET // 8 :: w].tobytes()
            if not mixed:
                sizes1 = (sizes[low[0]] + 1) * _patterns(2 * n).ones
            else:
                lanes = bytearray(16 * n)
                lanes[0 : 8 * n : 8] = low
                lanes[8 * n :: 8] = low
                sizes1 = (sizes[0] + 1) * _patterns(2 * n).ones + int.from_bytes(lanes, "little") * (sizes[1] - sizes[0])
            fhc = int.from_bytes(words[L.REC_FIRST_HEADER // 8 :: w].tobytes(), "little")
            if not (_spans_fit(int.from_bytes(kv, "little"), 2 * n, sizes1, False) and _spans_fit(fhc, n, (hn + 1) * _patterns(n).ones, True)):
                return False
            if hn:
                # Headers in record order, each record's right after the previous one's: then
                # each header entry is one record's, and takes its source.
                p = _patterns(n)
                fh, hc = fhc & p.lo32, (fhc >> 32) & p.lo32
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

    def _check_each(self, sizes: List[int]) -> None:
        """Entry by entry: raises naming the first bad entry; else notes each header's
        source (a header entry shared by records of both sources is refused)."""
        n, hn = self._count, self._hcount
        hsrc = bytearray(hn)
        claimed = bytearray(hn)  # 1: a SOURCE_TABLE record's, 2: a SOURCE_INPUT record's
        what = {L.SOURCE_TABLE: "the table", L.SOURCE_INPUT: "the input"}
        for i, (_, _, _, ko, kl, vo, vl, fh, hc, src) in enumerate(self._entries(0, n)):
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
        # The hot path of a consumer: one struct pass over the entries (checked when the
        # table was made); keys, values and headers are sliced when first asked for.
        new = Record.__new__
        bufs = self._bufs
        stride = self._stride
        at = self._recs + first * stride
        src = _SRC
        for h in self._entries(first, count):
            r = new(Record)
            r.offset, r.timestamp, r.producer_id = h[0], h[1], h[2]
            r._h = h
            r._buf = bufs[h[src]]
            r._table = self
            r._at = at
            at += stride
            yield r

    def json_text(self) -> Optional[bytes]:
        """The frame JSON a layout-2 or -3 table (decode_fetch, decode_produce) carries,
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
    - ``data``: a read-only ``memoryview`` of the table;
    - ``input``: a read-only ``memoryview`` of the frame a layout-3 table was decoded from
      (decode_fetch, decode_produce without ``copy=True``; its uncompressed records stay
      there), else None, and then every source is 0.

    So record i's value is ``buf[values[2*i] : values[2*i] + values[2*i+1]]`` with
    ``buf = input if sources[i] == SOURCE_INPUT else data``.

    The arrays are gathered from the table's entries with C-level copies when first read.
    ``numpy()`` gives the same as numpy arrays that are views of the table (no copy), when
    numpy is installed (it is optional).
    """

    __slots__ = ("table", "first", "length", "_q", "_i", "_got")

    def __init__(self, table: RecordTable, first: int, count: int) -> None:
        self.table = table
        self.first = first
        self.length = count
        self._q: Optional[memoryview] = None
        self._i: Optional[memoryview] = None
        self._got: Dict[Tuple[int, str], memoryview] = {}

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
        return self._field(L.REC_OFFSET, "q")

    @property
    def timestamps(self) -> memoryview:
        return self._field(L.REC_TIMESTAMP, "q")

    @property
    def producer_ids(self) -> memoryview:
        return self._field(L.REC_PRODUCER_ID, "q")

    @property
    def keys(self) -> memoryview:
        return self._field(L.REC_KEY_OFFSET, "i")  # with REC_KEY_LENGTH, the next 4 bytes

    @property
    def values(self) -> memoryview:
        return self._field(L.REC_VALUE_OFFSET, "i")

    @property
    def header_index(self) -> memoryview:
        return self._field(L.REC_FIRST_HEADER, "i")  # with REC_HEADER_COUNT

    @property
    def sources(self) -> memoryview:
        return self._field(L.REC_SOURCE, "i", 4)

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
        """The columns as numpy arrays that are views of the table (zero copy): offsets,
        timestamps, producer_ids (int64, shape (n,)), keys, values, header_index (int32,
        shape (n, 2)), sources (int32, shape (n,)), headers (int32, shape (h, 4)), data
        (uint8) and input (uint8, a view of the frame; None unless layout 3). ImportError
        when numpy is not installed."""
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
            "offsets": view("<i8", a + L.REC_OFFSET, (n,), (st,)),
            "timestamps": view("<i8", a + L.REC_TIMESTAMP, (n,), (st,)),
            "producer_ids": view("<i8", a + L.REC_PRODUCER_ID, (n,), (st,)),
            "keys": view("<i4", a + L.REC_KEY_OFFSET, (n, 2), (st, 4)),
            "values": view("<i4", a + L.REC_VALUE_OFFSET, (n, 2), (st, 4)),
            "header_index": view("<i4", a + L.REC_FIRST_HEADER, (n, 2), (st, 4)),
            "sources": view("<i4", a + L.REC_SOURCE, (n,), (st,)),
            "headers": view("<i4", t._hoff, (t._hcount, 4), (t._hstride, 4)),
            "data": np.frombuffer(t.table, dtype=np.uint8),
            "input": None if t.input is None else np.frombuffer(t.input, dtype=np.uint8),
        }


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
