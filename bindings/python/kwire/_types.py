"""Typed shapes of what the ABI returns beyond the message bodies (those are in
kwire.messages, generated)."""

from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Optional, TypedDict, Union

from .messages import Base64, Int64, RequestHeader, ResponseHeader

if TYPE_CHECKING:
    from ._records import RecordSet


class _RequestFrameRequired(TypedDict):
    header: RequestHeader
    body: Dict[str, Any]


class RequestFrame(_RequestFrameRequired, total=False):
    """A request frame (kw_decode_request_frame). decode_request_frame always fills every
    key; encode_request_frame needs only header and body."""

    apiKey: int
    apiVersion: int
    headerVersion: int


class _ResponseFrameRequired(TypedDict):
    header: ResponseHeader
    body: Dict[str, Any]


class ResponseFrame(_ResponseFrameRequired, total=False):
    """A response frame (kw_decode_response_frame)."""

    apiKey: int
    apiVersion: int
    headerVersion: int


class PeekedHeader(NamedTuple):
    """What kw_peek_request_header reads from the first bytes of a request frame.

    ``client_id`` is decoded as UTF-8 (invalid sequences become U+FFFD), None when null or
    absent; its exact bytes are ``frame[client_id_offset:client_id_offset+client_id_length]``.
    """

    frame_size: int
    api_key: int
    api_version: int
    correlation_id: int
    header_version: int
    client_id: Optional[str]
    client_id_offset: int
    client_id_length: int


class CatalogueApi(TypedDict):
    apiKey: int
    name: str
    request: str
    response: str
    minVersion: int
    maxVersion: int
    flexibleMin: int
    latestVersionUnstable: bool
    listeners: List[str]


class FieldRename(TypedDict):
    path: str
    old: str
    new: str


class SupersededVersion(TypedDict):
    release: str
    version: int


class CatalogueMessage(TypedDict, total=False):
    name: str
    apiKey: int
    kind: str
    minVersion: int
    maxVersion: int
    flexibleMin: int
    deprecatedMin: int
    deprecatedMax: int
    latestVersionUnstable: bool
    releases: List[str]
    renames: List[FieldRename]
    superseded: List[SupersededVersion]


class Catalogue(TypedDict):
    """kw_api_catalogue: every api and message the library knows."""

    abiVersion: str
    specReleases: List[str]
    apis: List[CatalogueApi]
    messages: List[CatalogueMessage]


class RecordHeaderJSON(TypedDict):
    key: str
    value: Optional[Base64]


class RecordJSON(TypedDict):
    """One record of kw_records_decode_json (the JSON form: int64 as decimal strings,
    bytes as base64). decode_records gives the same as Python values, faster."""

    offset: Int64
    timestamp: Int64
    timestampType: str
    key: Optional[Base64]
    value: Optional[Base64]
    headers: List[RecordHeaderJSON]
    producerId: Int64
    producerEpoch: int
    sequence: int
    leaderEpoch: int
    magic: int
    compression: str
    transactional: bool
    control: bool
    controlType: int
    schemaSource: str
    schemaId: int
    schemaVersion: int


class RecordsJSON(TypedDict):
    records: List[RecordJSON]
    skippedBytes: int


class PartitionRecords(NamedTuple):
    """One partition's records in decode_fetch / decode_produce: the topic's name, or its
    topic id (base64) in the versions that carry ids; the partition index; the records;
    for a Produce request (v3 on), ``invalid``: None, or why a broker refuses these records
    (Kafka's validateRecords: {"errorCode", "error", "reason"}, as RecordSet.invalid)."""

    topic: str
    partition: int
    records: "RecordSet"

    @property
    def invalid(self) -> Optional[Dict[str, Any]]:
        """records.invalid: None, or Kafka's verdict refusing this Produce partition."""
        return self.records.invalid


class FetchFrame(TypedDict):
    """decode_fetch's result: decode_response_frame's frame, except that each non-null
    records field of body is a RecordSet, and ``partitions`` lists every partition with
    records in frame order."""

    apiKey: int
    apiVersion: int
    headerVersion: int
    header: ResponseHeader
    body: Dict[str, Any]
    partitions: List[PartitionRecords]


class ProduceFrame(TypedDict):
    """decode_produce's result: decode_request_frame's frame with RecordSets for records."""

    apiKey: int
    apiVersion: int
    headerVersion: int
    header: RequestHeader
    body: Dict[str, Any]
    partitions: List[PartitionRecords]
    #: The partitions a broker would refuse (Kafka's validateRecords, v3 on): each
    #: {"topic", "partition", "errorCode", "error", "reason"}; empty when none.
    invalidPartitions: List[Dict[str, Any]]
