"""Decodes the sample frames in examples/data with kwire's Python binding and prints every
message in the format all the language examples share (examples/README.md)."""

import base64
import sys
from pathlib import Path
from typing import Optional

import kwire


def quote(b: Optional[memoryview]) -> str:
    """A JSON string as Go's encoding/json writes it: HTML characters, U+2028/9 and each
    byte of invalid UTF-8 (as \\ufffd) escaped."""
    if b is None:
        return "null"
    s = bytes(b).decode("utf-8", "surrogateescape")
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif 0xDC80 <= c <= 0xDCFF:  # an invalid byte
            out.append("\\ufffd")
        elif c < 0x20 or ch in "<>&\u2028\u2029":
            out.append(f"\\u{c:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def line(topic: str, partition: int, r: kwire.Record) -> str:
    hs = " ".join(f"{k}={quote(v)}" for k, v in r.headers)
    return (
        f"  {topic}/{partition} offset {r.offset} timestamp {r.timestamp} {r.compression} "
        f"key {quote(r.key)} value {quote(r.value)} headers [{hs}]"
    )


def main() -> None:
    data = Path(sys.argv[1] if len(sys.argv) > 1 else "examples/data")
    kw = kwire.Kwire()

    req = kw.decode_request_frame((data / "produce-request.bin").read_bytes())
    h = req["header"]
    api = kw.api(h["requestApiKey"])
    print(f"request: {api['name']} v{h['requestApiVersion']} correlation {h['correlationId']} client {h.get('clientId')}")
    for t in req["body"]["topicData"]:
        for p in t["partitionData"]:
            if p["records"]:
                for r in kw.decode_records(base64.b64decode(p["records"])):
                    print(line(t["name"], p["index"], r))

    resp = kw.decode_response_frame((data / "fetch-response.bin").read_bytes(), 1, 12)
    print(f"response: Fetch v12 correlation {resp['header']['correlationId']}")
    for t in resp["body"]["responses"]:
        for p in t["partitions"]:
            if p["records"]:
                for r in kw.decode_records(base64.b64decode(p["records"])):
                    print(line(t["topic"], p["partitionIndex"], r))


if __name__ == "__main__":
    try:
        main()
    except kwire.KwireError as e:
        print(f"example: {e}", file=sys.stderr)
        sys.exit(1)
