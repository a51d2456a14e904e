"""kwire: Kafka's wire protocol for Python, byte-exact with Apache Kafka's own serializers.

The codec runs as a WebAssembly module (kwire.wasm, shipped in this package) under
wasmtime. Every operation of the ABI (capi/kwire.h) is here, as a method of ``Kwire``
(one module instance) and as a module-level function over a shared default instance:

- frames: ``decode_request_frame``, ``encode_request_frame``, ``decode_response_frame``,
  ``encode_response_frame``, ``peek_request_header``;
- message bodies by name and version: ``decode_message``, ``encode_message``;
- records: ``decode_records`` (the record table fast path), ``decode_records_dict``,
  ``encode_records``;
- whole Fetch responses and Produce requests with their records in one record table
  (lazy records, columns; with a module of ABI 1.2, records stored uncompressed are
  views of the caller's frame, not copies: ``copy=True`` for a table of its own):
  ``decode_fetch``, ``decode_produce``, ``encode_produce``;
- ``api_catalogue``, ``api``, ``header_versions``, ``abi_version``;
  ``Kwire.runtime_stats`` (the module's runtime figures, ABI 1.2).

Messages are dicts in kwire's JSON form, typed by the TypedDicts of ``kwire.messages``:
int64 fields come out as decimal strings (and go in as ints or strings), bytes fields as
base64 (bytes-like values are accepted on input). Records decode to Python ints and
memoryviews. Each ``*_json`` variant takes or returns the JSON text instead of a dict.
Errors raise ``KwireError`` subclasses carrying the ABI status and text.
"""

# typing's names under private aliases, so that they are no attributes of the package.
from typing import Any as _Any, Dict as _Dict, Iterable as _Iterable, List as _List, Mapping as _Mapping, Tuple as _Tuple, Type as _Type
from typing import TypeVar as _TypeVar, Union as _Union, overload as _overload

from . import messages
from .constants import ApiKey, ErrorCode
from ._api import BytesLike, JSONText, Kwire, RecordsData, default, dumps, loads
from ._errors import (
    ArgError,
    DecodeError,
    EncodeError,
    InternalError,
    JSONError,
    KwireError,
    OutOfMemoryError,
    TooLargeError,
    UnknownAPIError,
    UnsupportedError,
    VersionError,
)
from ._layout import RECORDS_COLUMNS, RECORDS_INPUT_SPANS, RECORDS_SKIP_CRC, SOURCE_INPUT, SOURCE_TABLE
from ._records import COMPRESSIONS, Batch, Columns, Header, RawHeader, Record, RecordSet, RecordTable, RecordTableBuilder
from ._runtime import cache_dir, wasm_path
from ._types import (
    Catalogue,
    CatalogueApi,
    CatalogueMessage,
    FetchFrame,
    PartitionRecords,
    PeekedHeader,
    ProduceFrame,
    RecordJSON,
    RecordsJSON,
    RequestFrame,
    ResponseFrame,
)

from ._version import __version__ as __version__

_T = _TypeVar("_T")


def abi_version() -> int:
    """(major << 16) | minor of the loaded module's ABI."""
    return default().abi_version()


def host_codecs() -> _List[str]:
    """The codecs decode_fetch and decode_produce decompress with this host's own code
    ("gzip"; "zstd" with zstandard installed; see Kwire.host_codecs)."""
    return default().host_codecs()


def host_decompressed() -> _Dict[str, int]:
    """How many batches, and decompressed bytes, the host decompressed for the shared
    instance so far: {"batches": n, "bytes": n}."""
    return default().host_decompressed()


def api_catalogue() -> Catalogue:
    """Every api key and message the library knows."""
    return default().api_catalogue()


def api(api_key: int) -> CatalogueApi:
    """The catalogue entry of an api key."""
    return default().api(api_key)


def header_versions(api_key: int, api_version: int) -> _Tuple[int, int]:
    """(request header version, response header version) of (api_key, api_version)."""
    return default().header_versions(api_key, api_version)


@_overload
def decode_message(message: _Type[_T], version: int, data: BytesLike) -> _T: ...


@_overload
def decode_message(message: str, version: int, data: BytesLike) -> _Dict[str, _Any]: ...


def decode_message(message: _Any, version: int, data: BytesLike) -> _Any:
    """Decodes one message body (name or kwire.messages TypedDict) at a version."""
    return default().decode_message(message, version, data)


def encode_message(message: _Any, version: int, body: _Mapping[str, _Any]) -> bytes:
    """Encodes a message body at a version (body bytes only)."""
    return default().encode_message(message, version, body)


def decode_request_frame(frame: BytesLike) -> RequestFrame:
    """Decodes a whole request frame (size prefix included)."""
    return default().decode_request_frame(frame)


def encode_request_frame(frame: _Mapping[str, _Any]) -> bytes:
    """Encodes {"header", "body"} into a whole request frame."""
    return default().encode_request_frame(frame)


def decode_response_frame(frame: BytesLike, api_key: int, api_version: int) -> ResponseFrame:
    """Decodes a whole response frame answering (api_key, api_version)."""
    return default().decode_response_frame(frame, api_key, api_version)


def encode_response_frame(frame: _Mapping[str, _Any], api_key: int, api_version: int) -> bytes:
    """Encodes {"header", "body"} as the response frame of (api_key, api_version)."""
    return default().encode_response_frame(frame, api_key, api_version)


def peek_request_header(frame: BytesLike) -> PeekedHeader:
    """Reads the request header's fixed fields and client id without decoding the rest."""
    return default().peek_request_header(frame)


def decode_records(data: RecordsData, *, verify_crc: bool = True, max_decompressed: int = 0) -> RecordTable:
    """Decodes a records field (bytes, or the base64 text the frame decoders give) into a
    RecordTable (fast path)."""
    return default().decode_records(data, verify_crc=verify_crc, max_decompressed=max_decompressed)


def decode_records_dict(data: RecordsData, *, verify_crc: bool = True, max_decompressed: int = 0) -> RecordsJSON:
    """Decodes a records field into kw_records_decode_json's JSON form."""
    return default().decode_records_dict(data, verify_crc=verify_crc, max_decompressed=max_decompressed)


def decode_fetch(
    frame: BytesLike, api_version: int, *, verify_crc: bool = True, max_decompressed: int = 0, copy: bool = False, host_decompress: bool = True
) -> FetchFrame:
    """Decodes a whole Fetch response frame, records as RecordSets; uncompressed records
    are views of ``frame`` unless ``copy=True`` (see Kwire.decode_fetch)."""
    return default().decode_fetch(
        frame, api_version, verify_crc=verify_crc, max_decompressed=max_decompressed, copy=copy, host_decompress=host_decompress
    )


def decode_produce(
    frame: BytesLike, *, verify_crc: bool = True, max_decompressed: int = 0, copy: bool = False, host_decompress: bool = True
) -> ProduceFrame:
    """Decodes a whole Produce request frame, records as RecordSets (see Kwire.decode_produce)."""
    return default().decode_produce(frame, verify_crc=verify_crc, max_decompressed=max_decompressed, copy=copy, host_decompress=host_decompress)


def encode_produce(frame: _Mapping[str, _Any]) -> bytes:
    """Encodes a Produce request frame whose records fields may be batches to build (see
    Kwire.encode_produce)."""
    return default().encode_produce(frame)


def encode_records(
    records: _Iterable[_Any],
    *,
    compression: _Union[str, int] = "none",
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
    """Encodes records into one batch the way Kafka's producer does (see Kwire.encode_records)."""
    return default().encode_records(
        records,
        compression=compression,
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


__all__ = [
    "ApiKey",
    "ErrorCode",
    "COMPRESSIONS",
    "RECORDS_INPUT_SPANS",
    "RECORDS_COLUMNS",
    "RECORDS_SKIP_CRC",
    "SOURCE_INPUT",
    "SOURCE_TABLE",
    "ArgError",
    "BytesLike",
    "Catalogue",
    "CatalogueApi",
    "CatalogueMessage",
    "Columns",
    "FetchFrame",
    "Header",
    "PartitionRecords",
    "ProduceFrame",
    "RecordSet",
    "RecordTableBuilder",
    "DecodeError",
    "EncodeError",
    "InternalError",
    "JSONError",
    "JSONText",
    "Kwire",
    "KwireError",
    "OutOfMemoryError",
    "PeekedHeader",
    "Record",
    "Batch",
    "RawHeader",
    "RecordJSON",
    "RecordTable",
    "RecordsData",
    "RecordsJSON",
    "RequestFrame",
    "ResponseFrame",
    "TooLargeError",
    "UnknownAPIError",
    "UnsupportedError",
    "VersionError",
    "abi_version",
    "api",
    "api_catalogue",
    "cache_dir",
    "decode_fetch",
    "decode_message",
    "decode_produce",
    "decode_records",
    "decode_records_dict",
    "decode_request_frame",
    "decode_response_frame",
    "default",
    "dumps",
    "encode_message",
    "encode_produce",
    "encode_records",
    "encode_request_frame",
    "encode_response_frame",
    "header_versions",
    "host_codecs",
    "host_decompressed",
    "loads",
    "messages",
    "peek_request_header",
    "wasm_path",
]

# Sessions (kwire.session): the client side of one Kafka connection, over a socket or asyncio.
from .session import (  # noqa: E402
    AsyncSession,
    AuthenticationError,
    ConnectionClosedError,
    ReconnectingAsyncSession,
    ReconnectingSession,
    RequestTimeoutError,
    ResponseError,
    Session,
    SessionCore,
    SessionError,
)

__all__ += [
    "AsyncSession",
    "AuthenticationError",
    "ConnectionClosedError",
    "ReconnectingAsyncSession",
    "ReconnectingSession",
    "RequestTimeoutError",
    "ResponseError",
    "Session",
    "SessionCore",
    "SessionError",
]
