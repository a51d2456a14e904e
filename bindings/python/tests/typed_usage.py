"""Checked by mypy --strict (make python-test), not run: the public API is typed.

Each `# type: ignore[code]` marks a line that must be a type error; with --strict an
ignore that is not needed is itself an error, so these lines prove the types bite.
"""

from typing import List, Optional, Sequence, Tuple

import kwire
from kwire import messages


def typed_message(data: bytes) -> str:
    req = kwire.decode_message(messages.ProduceRequest, 9, data)
    topics: List[messages.ProduceRequestTopicProduceData] = req.get("topicData", [])
    acks: int = req.get("acks", -1)
    _ = acks
    wrong: int = req.get("transactionalId")  # type: ignore[assignment]
    _ = wrong
    return topics[0].get("name", "")


def by_name(data: bytes) -> object:
    d = kwire.decode_message("ProduceRequest", 9, data)
    return d["anything"]  # a name gives a plain dict


def frames(frame: bytes) -> Tuple[int, Optional[str]]:
    f: kwire.RequestFrame = kwire.decode_request_frame(frame)
    client: Optional[str] = f["header"].get("clientId")
    key: int = f["apiKey"]
    out: bytes = kwire.encode_request_frame(f)
    _ = out
    p = kwire.peek_request_header(frame)
    corr: int = p.correlation_id
    bad: str = p.api_key  # type: ignore[assignment]
    _ = (corr, bad)
    return key, client


def records(data: bytes) -> int:
    t: kwire.RecordTable = kwire.decode_records(data, verify_crc=False)
    total = 0
    for r in t:
        pid: int = r.producer_id
        v: Optional[memoryview] = r.value
        hs: Sequence[Tuple[str, Optional[memoryview]]] = r.headers  # Header is such a tuple
        named: List[kwire.Header] = r.headers
        hv: Optional[memoryview] = named[0].value if named else None
        src: int = r.source
        total += pid + len(v or b"") + len(hs) + len(hv or b"") + src
        r.key = None  # type: ignore[misc]
    first: kwire.Record = t[0]
    some: List[kwire.Record] = t[1:3]
    raw: bytes = kwire.encode_records([first, {"key": b"k", "value": None}], compression="zstd", producer_id=2**62 + 1)
    kwire.decode_records(data, verify_crc="no")  # type: ignore[arg-type]
    return total + len(some) + len(raw)


def catalogue() -> List[str]:
    c: kwire.Catalogue = kwire.api_catalogue()
    req, resp = kwire.header_versions(0, 9)
    _ = req + resp
    return [a["name"] for a in c["apis"]]


def errors() -> Optional[str]:
    try:
        kwire.decode_message("FetchResponse", 12, b"")
    except kwire.DecodeError as e:
        status: int = e.status
        text: str = e.text
        off: Optional[int] = e.offset
        name: Optional[str] = e.message_name
        _ = (status, text, off, name)
        return e.path
    return None


def frame_records(frame: bytes) -> None:
    f: kwire.FetchFrame = kwire.decode_fetch(frame, 12)
    for p in f["partitions"]:
        rs: kwire.RecordSet = p.records
        c: kwire.Columns = rs.columns()
        offsets: memoryview = c.offsets
        sources: memoryview = c.sources
        frame_view: Optional[memoryview] = c.input
        _ = (sources, frame_view)
        first: kwire.Record = rs[0]
        n: int = first.offset + offsets[0]
        print(n, p.topic, p.partition)
    b = kwire.RecordTableBuilder()
    b.add({"key": b"k", "value": None})
    t: bytes = b.build()
    print(t)
    kwire.decode_fetch(frame, "12")  # type: ignore[arg-type]
    kwire.decode_fetch(bytearray(frame), 12, copy=True)
    kwire.decode_fetch(frame, 12, host_decompress=False)
    kw = kwire.Kwire()
    codecs: List[str] = kw.host_codecs()
    done: int = kw.host_decompressed()["batches"]
    kw.decode_produce(frame, host_decompress=True)
    _ = (codecs, done, kwire.host_codecs(), kwire.host_decompressed()["bytes"])
    kwire.decode_records(kwire.decode_request_frame(frame)["body"]["topicData"][0]["partitionData"][0]["records"] or "")
