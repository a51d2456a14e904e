"""The public API: class Kwire (one wasm instance) and module-level functions over a
shared default instance."""

import base64
import binascii
import json
import math
import re
import struct
import threading
from typing import (
    Any,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Tuple,
    Type,
    TypeVar,
    Union,
    cast,
    overload,
)

from . import _abi, _layout, _records
from ._hostcodec import HOST_DECOMPRESSORS, host_codecs
from ._errors import ERR_ARG, ERR_INTERNAL, ERR_UNKNOWN_API, ERR_UNSUPPORTED, KwireError, error_for
from ._validate import produce_verdict
from ._layout import RECORDS_COLUMNS, RECORDS_INPUT_SPANS, RECORDS_SKIP_CRC
from ._records import RecordSet, RecordTable, RecordTableBuilder
from ._runtime import MAX_ALLOC, Instance, check_int32
from ._types import Catalogue, CatalogueApi, FetchFrame, PartitionRecords, PeekedHeader, ProduceFrame, RecordsJSON, RequestFrame, ResponseFrame

BytesLike = Union[bytes, bytearray, memoryview]
"""Any contiguous bytes: bytes, bytearray or memoryview (read, never kept; except the
frame of decode_fetch / decode_produce, whose records may stay views of it)."""
RecordsData = Union[bytes, bytearray, memoryview, str]
"""A records field: its bytes, or the base64 text the frame decoders give for it."""
JSONText = Union[bytes, bytearray, memoryview, str]

T = TypeVar("T")

_I32 = struct.Struct("<i")
# The KW_RECORDS_HOST_* flags of the codecs the host decompresses.
_HOST_FLAG_OF = {
    _abi.KW_COMPRESSION_GZIP: _layout.RECORDS_HOST_GZIP,
    _abi.KW_COMPRESSION_SNAPPY: _layout.RECORDS_HOST_SNAPPY,
    _abi.KW_COMPRESSION_LZ4: _layout.RECORDS_HOST_LZ4,
    _abi.KW_COMPRESSION_ZSTD: _layout.RECORDS_HOST_ZSTD,
}
_HOST_FLAGS = sum(_HOST_FLAG_OF[c] for c in HOST_DECOMPRESSORS)
_BATCH_LIST_MAGIC = _abi.KW_BATCH_LIST_MAGIC
# The int32 words of a batch list entry.
_BATCH_DATA_OFFSET = _abi.KW_BATCH_DATA_OFFSET // 4
_BATCH_DATA_LENGTH = _abi.KW_BATCH_DATA_LENGTH // 4
_BATCH_COMPRESSION = _abi.KW_BATCH_COMPRESSION // 4
# The module's cap on what one compressed batch may decompress to when max_decompressed is 0.
_DEFAULT_MAX_DECOMPRESSED = 100 << 20

_FRAME_RECORDS = ("kw_decode_request_frame_records", "kw_decode_response_frame_records", "kw_encode_request_frame_records")


def _json_default(o: Any) -> Any:
    if isinstance(o, (bytes, bytearray, memoryview)):
        return base64.b64encode(o).decode("ascii")
    raise TypeError(f"{type(o).__name__} is not a value of kwire's JSON form")


def _specials(o: Any) -> Any:
    """Replaces NaN and the infinities by the JSON form's strings."""
    if isinstance(o, float) and not math.isfinite(o):
        return "NaN" if math.isnan(o) else ("Infinity" if o > 0 else "-Infinity")
    if isinstance(o, Mapping):
        return {k: _specials(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_specials(v) for v in o]
    return o


def dumps(o: Any) -> bytes:
    """Python values to kwire's JSON form: int64 may be given as int (written exactly),
    bytes-like values become base64, NaN/Infinity floats become their strings."""
    try:
        s = json.dumps(o, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_json_default)
    except ValueError:
        s = json.dumps(_specials(o), separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_json_default)
    return s.encode("utf-8")


# A JSON number token that is exactly "-0": negative zero, which kwire writes for a float64
# -0.0 (its shortest form). Python's json reads it as the int 0 and would lose the sign.
_NEG_ZERO = re.compile(rb"[:\[,]-0[,\]}]")


def _int_or_neg_zero(s: str) -> Any:
    return -0.0 if s == "-0" else int(s)


def loads(text: bytes) -> Any:
    """kwire's JSON form to Python values, exactly: like json.loads, except that the number
    -0 becomes the float -0.0, so that encoding the result gives the same bytes again."""
    if _NEG_ZERO.search(text):
        return json.loads(text, parse_int=_int_or_neg_zero)
    return json.loads(text)


def _text(j: JSONText) -> BytesLike:
    return j.encode("utf-8") if isinstance(j, str) else j


def _name(message: Any) -> bytes:
    if isinstance(message, str):
        return message.encode("utf-8")
    n = getattr(message, "__name__", None)
    if isinstance(n, str):
        return n.encode("utf-8")
    raise TypeError(f"a message is named by a str or a kwire.messages TypedDict, not {type(message).__name__}")


class Kwire:
    """One instance of kwire.wasm in wasmtime.

    Every method is thread-safe (calls on one instance are serialized by a lock); use one
    instance per thread for parallelism. ``wasm`` overrides the module file (default:
    $KWIRE_WASM, else the kwire.wasm shipped in this package).

    ``env`` is the environment the module's Go runtime sees (WASI environ), e.g.
    ``{"GOGC": "400"}`` to trade memory for less collection work inside the module
    (about 15% faster record decoding for a few MB more); empty by default.

    Errors are raised as KwireError subclasses carrying the ABI status and text.
    """

    def __init__(self, wasm: Optional[str] = None, *, env: Optional[Mapping[str, str]] = None) -> None:
        self._lock = threading.Lock()
        # decode_fetch / decode_produce ask a module of ABI 1.4 for layout-4 tables (the
        # records as columns); False asks for the layout before (tests compare the two).
        self._columns = True
        self._host_stats: Dict[str, int] = {"batches": 0, "bytes": 0}
        self._inst = Instance(wasm, dict(env) if env else None)
        self._catalogue: Optional[bytes] = None
        self._apis: Optional[Dict[int, CatalogueApi]] = None

    # ---- version and catalogue -------------------------------------------------------

    def abi_version(self) -> int:
        """(major << 16) | minor of the loaded module."""
        return self._inst.abi_version

    def api_catalogue(self) -> Catalogue:
        """Every api key and message the library knows (a fresh copy each call)."""
        return cast(Catalogue, json.loads(self.api_catalogue_json()))

    def api_catalogue_json(self) -> bytes:
        """kw_api_catalogue as JSON text."""
        with self._lock:
            if self._catalogue is None:
                self._catalogue = self._inst.call_out("kw_api_catalogue")
            return self._catalogue

    def api(self, api_key: int) -> CatalogueApi:
        """The catalogue entry of an api key; UnknownAPIError when there is none."""
        if self._apis is None:
            self._apis = {a["apiKey"]: a for a in self.api_catalogue()["apis"]}
        a = self._apis.get(api_key)
        if a is None:
            raise error_for(ERR_UNKNOWN_API, f"kwire: unknown api key {api_key}", {"category": "unknown_api"})
        return a

    def header_versions(self, api_key: int, api_version: int) -> Tuple[int, int]:
        """(request header version, response header version) of (api_key, api_version)."""
        check_int32("api_key", api_key)
        check_int32("api_version", api_version)
        with self._lock:
            return self._inst.header_versions(api_key, api_version)

    # ---- message bodies --------------------------------------------------------------

    @overload
    def decode_message(self, message: Type[T], version: int, data: BytesLike) -> T: ...

    @overload
    def decode_message(self, message: str, version: int, data: BytesLike) -> Dict[str, Any]: ...

    def decode_message(self, message: Any, version: int, data: BytesLike) -> Any:
        """Decodes exactly one message body at a version into its JSON form (a dict: int64
        as decimal strings, bytes as base64). ``message`` is a name ("FetchResponse") or a
        kwire.messages TypedDict (``messages.FetchResponse``), which types the result."""
        return loads(self.decode_message_json(message, version, data))

    def decode_message_json(self, message: Any, version: int, data: BytesLike) -> bytes:
        """As decode_message, returning the JSON text."""
        check_int32("version", version)
        name = _name(message)
        with self._lock:
            np, nn, dp, dn = self._inst.put(name, data)
            try:
                return self._inst.call_out("kw_decode_message", np, nn, version, dp, dn)
            finally:
                self._inst.release_input()

    def encode_message(self, message: Any, version: int, body: Mapping[str, Any]) -> bytes:
        """Encodes a message body (its JSON form as a dict; int64 may be ints, bytes
        fields may be bytes) at a version. Returns the body bytes (no size, no header)."""
        return self.encode_message_json(message, version, dumps(body))

    def encode_message_json(self, message: Any, version: int, json_text: JSONText) -> bytes:
        """As encode_message, from JSON text."""
        check_int32("version", version)
        name = _name(message)
        with self._lock:
            np, nn, jp, jn = self._inst.put(name, _text(json_text))
            try:
                return self._inst.call_out("kw_encode_message", np, nn, version, jp, jn)
            finally:
                self._inst.release_input()

    # ---- frames ------------------------------------------------------------------------

    def decode_request_frame(self, frame: BytesLike) -> RequestFrame:
        """Decodes one complete request frame (size prefix included) into
        {"apiKey", "apiVersion", "headerVersion", "header", "body"}."""
        return cast(RequestFrame, loads(self.decode_request_frame_json(frame)))

    def decode_request_frame_json(self, frame: BytesLike) -> bytes:
        return self._one_in("kw_decode_request_frame", frame)

    def encode_request_frame(self, frame: Mapping[str, Any]) -> bytes:
        """Encodes {"header", "body"} (api key and version from the header) into a whole
        request frame, size prefix included."""
        return self.encode_request_frame_json(dumps(frame))

    def encode_request_frame_json(self, json_text: JSONText) -> bytes:
        return self._one_in("kw_encode_request_frame", _text(json_text))

    def decode_response_frame(self, frame: BytesLike, api_key: int, api_version: int) -> ResponseFrame:
        """Decodes one complete response frame answering a request of (api_key,
        api_version), which a response does not carry."""
        return cast(ResponseFrame, loads(self.decode_response_frame_json(frame, api_key, api_version)))

    def decode_response_frame_json(self, frame: BytesLike, api_key: int, api_version: int) -> bytes:
        return self._one_in("kw_decode_response_frame", frame, api_key, api_version)

    def encode_response_frame(self, frame: Mapping[str, Any], api_key: int, api_version: int) -> bytes:
        """Encodes {"header", "body"} as the response frame of (api_key, api_version)."""
        return self.encode_response_frame_json(dumps(frame), api_key, api_version)

    def encode_response_frame_json(self, json_text: JSONText, api_key: int, api_version: int) -> bytes:
        return self._one_in("kw_encode_response_frame", _text(json_text), api_key, api_version)

    def peek_request_header(self, frame: BytesLike) -> PeekedHeader:
        """Reads size, api key, version, correlation id and client id from the first bytes
        of a request frame without decoding the rest (the input may be incomplete past the
        client id). The version is not checked against the api's range."""
        with self._lock:
            size, key, ver, corr, hv, cio, cil, _ = self._inst.peek(frame)
        cid = None
        if cil >= 0:
            cid = bytes(memoryview(frame)[cio : cio + cil]).decode("utf-8", "replace")
        return PeekedHeader(size, key, ver, corr, hv, cid, cio, cil)

    # ---- records -------------------------------------------------------------------------

    def decode_records(self, data: RecordsData, *, verify_crc: bool = True, max_decompressed: int = 0) -> RecordTable:
        """Decodes every batch (magic 2) and legacy message (magic 0, 1) of a records field,
        decompressing as needed, into a RecordTable (the fast path: a flat binary table
        read with struct loads; keys, values and header values are memoryviews of it).
        ``data`` is the field's bytes, or the base64 text that decode_request_frame and
        decode_response_frame give for it. ``max_decompressed`` caps what one batch may
        decompress to (0: 100 MiB)."""
        return RecordTable(self._records("kw_records_decode_table", data, verify_crc, max_decompressed), _trusted=True)

    def decode_records_dict(self, data: RecordsData, *, verify_crc: bool = True, max_decompressed: int = 0) -> RecordsJSON:
        """As decode_records, in the JSON form of kw_records_decode_json (int64 as decimal
        strings, bytes as base64)."""
        return cast(RecordsJSON, loads(self.decode_records_json(data, verify_crc=verify_crc, max_decompressed=max_decompressed)))

    def decode_records_json(self, data: RecordsData, *, verify_crc: bool = True, max_decompressed: int = 0) -> bytes:
        """kw_records_decode_json's JSON text."""
        return self._records("kw_records_decode_json", data, verify_crc, max_decompressed)

    def _records(self, fn: str, data: RecordsData, verify_crc: bool, max_decompressed: int) -> bytes:
        check_int32("max_decompressed", max_decompressed)
        flags = 0 if verify_crc else RECORDS_SKIP_CRC
        return self._one_in(fn, _records_bytes(data), flags, max_decompressed)

    def encode_records(
        self,
        records: Iterable[Any],
        *,
        compression: Union[str, int] = "none",
        magic: int = 2,
        base_offset: int = 0,
        partition_leader_epoch: int = -1,
        producer_id: int = -1,
        producer_epoch: int = -1,
        base_sequence: int = -1,
        transactional: bool = False,
        timestamp_type: str = "CreateTime",
        log_append_time: int = -1,
        level: int = 0,
    ) -> bytes:
        """Encodes records into one record batch (magic 2) or legacy message set (magic 0,
        1) the way Kafka's producer does, and returns its bytes (a partition's records).

        Each record is a mapping or an object (a decoded Record works) with ``key`` and
        ``value`` (bytes-like, str as UTF-8, or None), ``timestamp`` (int ms, optional) and
        ``headers`` (pairs or {"key", "value"} mappings; key str, value bytes-like or None).
        ``compression`` is "none", "gzip", "snappy", "lz4", "zstd" or its code; ``level``
        the codec's level (0: default). int64 arguments are plain ints."""
        spec = _records.batch_json(
            records,
            magic=magic,
            base_offset=base_offset,
            partition_leader_epoch=partition_leader_epoch,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=base_sequence,
            transactional=transactional,
            timestamp_type=timestamp_type,
            log_append_time=log_append_time,
            level=level,
        )
        return self.encode_records_json(dumps(spec), compression)

    def encode_records_json(self, json_text: JSONText, compression: Union[str, int] = "none") -> bytes:
        """kw_records_encode from its JSON input (see kwire.h)."""
        code = check_int32("compression", _records.compression_code(compression))
        return self._one_in("kw_records_encode", _text(json_text), code)

    # ---- whole Fetch responses and Produce requests ----------------------------------------

    def has_frame_records(self) -> bool:
        """Whether the loaded module exports the frame-records calls
        (kw_decode_request_frame_records, kw_decode_response_frame_records,
        kw_encode_request_frame_records). Without them decode_fetch, decode_produce and
        encode_produce go partition by partition through the older calls."""
        return all(f in self._inst.optional for f in _FRAME_RECORDS)

    def decode_fetch(
        self,
        frame: BytesLike,
        api_version: int,
        *,
        verify_crc: bool = True,
        max_decompressed: int = 0,
        fallback: bool = False,
        copy: bool = False,
        host_decompress: bool = True,
    ) -> FetchFrame:
        """Decodes a whole Fetch response frame answering a Fetch request of api_version.
        The result is decode_response_frame's, except that each non-null records field is
        a RecordSet (records decoded once into one record table, never through base64 when
        the module has the frame-records calls), and ``partitions`` lists
        (topic, partition, records) for each of them.

        Zero copy (a module of ABI 1.2): the keys, values and headers of records stored
        uncompressed are memoryviews of ``frame`` itself (``Record.source`` is
        SOURCE_INPUT), which the result keeps a reference to; do not change the frame (a
        bytearray) while reading them. Decompressed records, control records and legacy
        messages are views of the table. ``copy=True`` asks for a table that holds its own
        copy of every record instead. ``fallback=True`` takes the per-partition path (the
        records fields' base64 decoded, then each decoded on its own: copies) even when
        the module has the frame-records calls.

        Columns (a module of ABI 1.4): the table holds the records' fields as columns
        (layout 4): ``columns()`` are memoryview casts of it (no copy), and records are
        made from the columns with C-level passes; the records and their fields are the
        same as with the layouts before.

        Host decompression (a module of ABI 1.3): the compressed batches of a codec this
        host decompresses natively (``host_codecs()``: gzip through zlib, zstd when the
        zstandard package is installed) are decompressed here and handed to the module;
        the records, the errors and the ``max_decompressed`` cap are the same as the
        module's own decompression gives. ``host_decompress=False`` leaves every batch to
        the module."""
        return cast(FetchFrame, self._decode_frame_records(frame, 1, api_version, verify_crc, max_decompressed, fallback, copy, host_decompress))

    def decode_produce(
        self,
        frame: BytesLike,
        *,
        verify_crc: bool = True,
        max_decompressed: int = 0,
        fallback: bool = False,
        copy: bool = False,
        host_decompress: bool = True,
    ) -> ProduceFrame:
        """Decodes a whole Produce request frame; records (``copy``, ``host_decompress``) as
        in decode_fetch."""
        return cast(ProduceFrame, self._decode_frame_records(frame, 0, -1, verify_crc, max_decompressed, fallback, copy, host_decompress))

    def host_codecs(self) -> List[str]:
        """The codecs decode_fetch and decode_produce decompress with this host's own code
        ("gzip"; "zstd" with zstandard installed); none with a module before ABI 1.3."""
        return host_codecs() if self._inst.abi_minor >= 3 else []

    def host_decompressed(self) -> Dict[str, int]:
        """How many batches, and decompressed bytes, the host decompressed for this
        instance so far: {"batches": n, "bytes": n}."""
        return dict(self._host_stats)

    def _inflated(self, frame: BytesLike, listed: bytes, key: int, api_version: int, flags: int, max_decompressed: int) -> bytes:
        """The table kw_decode_frame_records_inflated makes of a frame whose batch list
        (ABI 1.3) the host decompressed. A batch the host cannot decompress (corrupt, cut
        short, past the cap) is left out: the module decompresses it and gives its own
        error."""
        limit = max_decompressed or _DEFAULT_MAX_DECOMPRESSED
        (count,) = _I32.unpack_from(listed, _abi.KW_BATCH_LIST_COUNT)
        w = _abi.KW_BATCH_STRIDE // 4
        words = struct.unpack_from("<%di" % (w * count), listed, _abi.KW_BATCH_LIST_HEADER_SIZE)
        fv = memoryview(frame).cast("B")
        pairs: List[int] = []
        outs: List[bytes] = []
        get = HOST_DECOMPRESSORS.get
        for i in range(0, w * count, w):
            inflate = get(words[i + _BATCH_COMPRESSION])
            if inflate is None:
                continue
            at = words[i + _BATCH_DATA_OFFSET]
            out = inflate(fv[at : at + words[i + _BATCH_DATA_LENGTH]], limit)
            if out is not None:
                pairs += (at, len(out))
                outs.append(out)
        total = sum(map(len, outs))
        if fv.nbytes + 4 + 8 * len(outs) + total > MAX_ALLOC:
            pairs, outs, total = [], [], 0  # too much to hand over at once: the module decompresses them
        head = struct.pack("<%di" % (1 + len(pairs)), len(outs), *pairs)
        self._host_stats["batches"] += len(outs)
        self._host_stats["bytes"] += total
        with self._lock:
            placed = self._inst.put(frame, head, *outs)
            try:
                return self._inst.call_out(
                    "kw_decode_frame_records_inflated", placed[0], placed[1], key, api_version, flags, max_decompressed, placed[2], len(head) + total
                )
            finally:
                self._inst.release_input()

    def _decode_frame_records(
        self,
        frame: BytesLike,
        api_key: int,
        api_version: int,
        verify_crc: bool,
        max_decompressed: int,
        fallback: bool,
        copy: bool,
        host_decompress: bool = True,
    ) -> Dict[str, Any]:
        check_int32("api_version", api_version)
        check_int32("max_decompressed", max_decompressed)
        flags = 0 if verify_crc else RECORDS_SKIP_CRC
        table: Optional[RecordTable] = None
        if not fallback and self.has_frame_records():
            # ABI 1.2: records stored uncompressed are not copied; their spans index the
            # caller's frame (a layout-3 table), unless the caller asked for a copy.
            spans = not copy and self._inst.abi_minor >= 2
            if spans:
                flags |= RECORDS_INPUT_SPANS
            # ABI 1.4: the records as columns (a layout-4 table), which Python reads as
            # memoryview casts and makes records of with C-level passes.
            columns = self._columns and self._inst.abi_minor >= 4
            if columns:
                flags |= RECORDS_COLUMNS
            layout = 4 if columns else 3 if spans else 2
            # ABI 1.3: batches of a codec the host decompresses faster (zlib's gzip,
            # zstandard's zstd) come back as a batch list, which the host decompresses and
            # hands to the module.
            host = _HOST_FLAGS if host_decompress and self._inst.abi_minor >= 3 else 0
            if api_key == 0:
                raw = self._one_in("kw_decode_request_frame_records", frame, flags | host, max_decompressed)
            else:
                raw = self._one_in("kw_decode_response_frame_records", frame, api_key, api_version, flags | host, max_decompressed)
            if host and raw[:4] == _BATCH_LIST_MAGIC:
                raw = self._inflated(frame, raw, -1 if api_key == 0 else api_key, api_version, flags, max_decompressed)
            table = RecordTable(raw, frame if spans else None, _trusted=True)
            if table.layout != layout or spans != (table.input is not None):
                raise error_for(ERR_INTERNAL, f"kwire: the frame-records call returned a layout {table.layout} table for flags {flags}")
            text = table.json_text()
            if text is None:
                raise error_for(ERR_INTERNAL, f"kwire: the frame-records call returned a layout {table.layout} table (no frame JSON)")
            f: Dict[str, Any] = loads(text)
        elif api_key == 0:
            f = dict(self.decode_request_frame(frame))
        else:
            f = dict(self.decode_response_frame(frame, api_key, api_version))
        if f.get("apiKey") != api_key:
            what = "decode_produce" if api_key == 0 else "decode_fetch"
            raise TypeError(f"kwire: {what} got a frame of api key {f.get('apiKey')}")
        topics_key, parts_key, index_key, name_key = (
            ("topicData", "partitionData", "index", "name") if api_key == 0 else ("responses", "partitions", "partitionIndex", "topic")
        )
        partitions: List[PartitionRecords] = []
        invalid: List[Dict[str, Any]] = []
        for ti, t in enumerate(f["body"].get(topics_key) or []):
            topic = t.get("topicId", t.get(name_key))
            for pi, p in enumerate(t.get(parts_key) or []):
                r = p.get("records")
                if r is None:
                    continue
                if table is not None:
                    rs = table.slice(r["firstRecord"], r["recordCount"], r["skippedBytes"], r["size"], r.get("invalid"))
                else:
                    data = base64.b64decode(r)
                    try:
                        t1 = self.decode_records(data, verify_crc=verify_crc, max_decompressed=max_decompressed)
                    except KwireError as e:
                        raise _with_partition(e, f"{topics_key}[{ti}].{parts_key}[{pi}].records", topic, p[index_key]) from None
                    verdict = produce_verdict(f["apiVersion"], data) if api_key == 0 else None
                    rs = t1.slice(0, len(t1), t1.skipped_bytes, len(data), verdict)
                p["records"] = rs
                partitions.append(PartitionRecords(topic, p[index_key], rs))
                if rs.invalid is not None:
                    invalid.append({"topic": topic, "partition": p[index_key], **rs.invalid})
        f["partitions"] = partitions
        if api_key == 0:
            f["invalidPartitions"] = invalid
        return f

    def encode_produce(self, frame: Mapping[str, Any], *, fallback: bool = False) -> bytes:
        """Encodes a Produce request frame ({"header", "body"}) in which each partition's
        records field may be None, bytes-like or base64 text (the field as it goes on the
        wire), a RecordSet (its records written as one new batch), or a batch to build: a
        mapping with "records" (a list of records as encode_records takes them, or a
        RecordSet) and optionally "compression" ("none", "gzip", "snappy", "lz4", "zstd")
        and kw_records_encode's batch keys in their JSON names (magic, baseOffset,
        producerId, producerEpoch, baseSequence, transactional, partitionLeaderEpoch,
        timestampType, logAppendTime, level). With the frame-records calls every batch's
        records go to the module in one record table; without them each batch is built
        with kw_records_encode first."""
        fast = not fallback and self.has_frame_records()
        builder = RecordTableBuilder() if fast else None
        body = dict(frame.get("body") or {})
        topics = []
        for t in body.get("topicData") or []:
            t = dict(t)
            parts = []
            for p in t.get("partitionData") or []:
                p = dict(p)
                r = p.get("records")
                if r is None or isinstance(r, (str, bytes, bytearray, memoryview)):
                    parts.append(p)
                    continue
                spec: Mapping[str, Any] = {"records": r} if isinstance(r, RecordSet) else r
                if not isinstance(spec, Mapping) or "records" not in spec:
                    raise TypeError("kwire: a records field must be None, bytes, base64 text, a RecordSet or a mapping with 'records'")
                batch = {k: v for k, v in spec.items() if k not in ("records", "compression")}
                compression = spec.get("compression", "none")
                code = _records.compression_code(compression)
                if not 0 <= code < len(_records.COMPRESSIONS):
                    raise error_for(ERR_ARG, f"kwire: unknown compression {compression!r}", {"category": "arg"})
                if builder is None:
                    recs = [_records.record_json(x, i) for i, x in enumerate(spec["records"])]
                    p["records"] = self.encode_records_json(dumps({**batch, "records": recs}), code)
                else:
                    first = builder.add_all(spec["records"])
                    p["records"] = {"firstRecord": first, "recordCount": len(builder) - first,
                                    "compression": _records.COMPRESSIONS[code], **batch}
                parts.append(p)
            t["partitionData"] = parts
            topics.append(t)
        body["topicData"] = topics
        f = {k: v for k, v in frame.items() if k != "partitions"}
        f["body"] = body
        if builder is None:
            return self.encode_request_frame(f)
        table = builder.build()
        with self._lock:
            jp, jn, tp, tn = self._inst.put(dumps(f), table)
            try:
                return self._inst.call_out("kw_encode_request_frame_records", jp, jn, tp, tn)
            finally:
                self._inst.release_input()

    # ---- plumbing ------------------------------------------------------------------------

    def runtime_stats(self) -> Dict[str, int]:
        """kw_runtime_stats (ABI 1.2): figures of the module's Go runtime and of the buffers
        the binding holds in it: gcCycles, heapAllocs, heapAllocBytes, heapLiveBytes,
        runtimeBytes, liveBuffers, liveBufferBytes (see capi/kwire.h). UnsupportedError
        when the loaded module is older."""
        if "kw_runtime_stats" not in self._inst.optional:
            raise error_for(ERR_UNSUPPORTED, f"kwire: the loaded module (ABI 1.{self._inst.abi_minor}) has no kw_runtime_stats (ABI 1.2)",
                            {"category": "unsupported"})
        with self._lock:
            return cast(Dict[str, int], json.loads(self._inst.call_out("kw_runtime_stats")))

    def _one_in(self, fn: str, data: BytesLike, *args: int) -> bytes:
        for i, a in enumerate(args):
            check_int32(f"argument {i + 2} of {fn}", a)
        with self._lock:
            p, n = self._inst.put(data)
            try:
                return self._inst.call_out(fn, p, n, *args)
            finally:
                self._inst.release_input()


def _with_partition(e: KwireError, path: str, topic: Any, partition: Any) -> KwireError:
    """e with the topic and partition of the per-partition path in its text and details."""
    d = dict(e.details)
    d["path"] = f"{path} ({e.path})" if e.path else path
    d["topic"], d["partition"] = topic, partition
    text = e.text[len("kwire: ") :] if e.text.startswith("kwire: ") else e.text
    return error_for(e.status, f"kwire: topic {topic} partition {partition}: {text}", d)


def _records_bytes(data: RecordsData) -> BytesLike:
    """A records field's bytes: base64 text (as the frame decoders give it) decoded."""
    if not isinstance(data, str):
        return data
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as e:
        raise error_for(ERR_ARG, f"kwire: records given as text must be base64 (as decode_*_frame gives them): {e}", {"category": "arg"}) from None


_default: Optional[Kwire] = None
_default_lock = threading.Lock()


def default() -> Kwire:
    """The shared instance the module-level functions use (created on first use)."""
    global _default
    k = _default
    if k is None:
        with _default_lock:
            if _default is None:
                _default = Kwire()
            k = _default
    return k
