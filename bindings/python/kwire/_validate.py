"""Kafka's validateRecords for one Produce partition, for decode_produce's per-partition
path (fallback=True, or a module without the frame-records calls): the same rules and
verdicts as the module's (records.ValidateProduceRecords in the Go codec)."""

import struct
from typing import Any, Dict, Optional

from .constants import ErrorCode

_I32 = struct.Struct(">i")
_U16 = struct.Struct(">H")


def _bad(code: ErrorCode, reason: str) -> Dict[str, Any]:
    return {"errorCode": int(code), "error": code.name, "reason": reason}


def produce_verdict(version: int, b: Optional[bytes]) -> Optional[Dict[str, Any]]:
    """None when the records of a Produce partition at ``version`` pass, else
    {"errorCode", "error", "reason"}."""
    if version < 3 or b is None:
        return None
    v = f"Produce v{version}"
    pos = 0
    batches = 0
    while pos < len(b) and batches < 2:
        left = len(b) - pos
        if left < 12:
            break
        (length,) = _I32.unpack_from(b, pos + 8)
        if length < 14:
            return _bad(ErrorCode.CORRUPT_MESSAGE, f"record size {length} is less than the minimum record overhead (14), at byte {pos}")
        if left < 17:
            break
        magic = b[pos + 16]
        magic = magic - 256 if magic > 127 else magic
        if magic < 0 or magic > 2:
            return _bad(ErrorCode.CORRUPT_MESSAGE, f"invalid magic {magic} at byte {pos + 16}")
        if length > left - 12:
            break
        if batches == 0:
            if magic != 2:
                return _bad(ErrorCode.INVALID_RECORD, f"{v} allows only record batches of magic 2, found magic {magic}")
            if version < 7 and left >= 23:
                c = _U16.unpack_from(b, pos + 21)[0] & 7
                if c == 4:
                    return _bad(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, f"{v} may not use zstd compression (from v7 on)")
                if c > 4:
                    return _bad(ErrorCode.UNKNOWN_SERVER_ERROR, f"compression id {c} is unknown")
        batches += 1
        pos += 12 + length
    if batches == 0:
        reason = f"{v} needs one record batch per partition, found none"
        if len(b) > 0:
            reason += f" complete ({len(b)} bytes of a partial batch)"
        return _bad(ErrorCode.INVALID_RECORD, reason)
    if batches == 1:
        return None
    return _bad(ErrorCode.INVALID_RECORD, f"{v} allows exactly one record batch per partition, found more")
