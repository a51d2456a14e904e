"""kwire's exceptions: one class per ABI status, each carrying the status and the text."""

import warnings
from typing import Any, Dict, Optional, Type

from . import _abi

# Status codes of the ABI (capi/kwire.h), from the generated _abi.
OK = _abi.KW_OK
ERR_ARG = _abi.KW_ERR_ARG
ERR_DECODE = _abi.KW_ERR_DECODE
ERR_ENCODE = _abi.KW_ERR_ENCODE
ERR_JSON = _abi.KW_ERR_JSON
ERR_UNKNOWN_API = _abi.KW_ERR_UNKNOWN_API
ERR_VERSION = _abi.KW_ERR_VERSION
ERR_TOO_LARGE = _abi.KW_ERR_TOO_LARGE
ERR_NOMEM = _abi.KW_ERR_NOMEM
ERR_UNSUPPORTED = _abi.KW_ERR_UNSUPPORTED
ERR_INTERNAL = _abi.KW_ERR_INTERNAL


class KwireError(Exception):
    """A kw_ call failed. Every error of the library is a KwireError (or a subclass).

    Attributes:
        status:   the ABI's negative status code (KW_ERR_*); an unknown code is kept as is.
        category: "arg", "decode", "encode", "json", "unknown_api", "version", "too_large",
                  "nomem", "unsupported", "internal" (or what a newer library reports).
        text:     the library's error text (kw_last_error).
        message_name: the name of the message the error concerns ("ProduceRequest"),
                  when known.
        message:  deprecated alias of message_name (it reads like the error's text,
                  which is ``text``, or ``str(e)``); warns DeprecationWarning.
        version:  the message version, when known.
        path:     the field path (decode/encode) or JSON path (JSON errors), when known.
        offset:   the byte offset in the input (or in the JSON text), when known.
        hint:     for a response that failed to decode, "the bytes decode as
                  FetchResponse v12: was the request v12?" when exactly one other
                  version of its api decodes the frame; else None.
        hint_version: the version of the hint (12 above), or None.
        topic, partition: the partition whose records failed, on decode_fetch's and
                  decode_produce's per-partition path; else None.
        details:  the whole kw_last_error_json object.
    """

    status: int
    category: str
    text: str
    message_name: Optional[str]
    version: Optional[int]
    path: Optional[str]
    offset: Optional[int]
    hint: Optional[str]
    hint_version: Optional[int]
    topic: Optional[str]
    partition: Optional[int]
    details: Dict[str, Any]

    def __init__(self, status: int, text: str, details: Optional[Dict[str, Any]] = None) -> None:
        d = dict(details or {})
        self.status = status
        self.text = text
        self.details = d
        self.category = str(d.get("category", _CATEGORIES.get(status, "error")))
        msg = d.get("message")
        self.message_name = msg if isinstance(msg, str) else None
        ver = d.get("version")
        self.version = ver if isinstance(ver, int) else None
        path = d.get("path")
        self.path = path if isinstance(path, str) else None
        off = d.get("offset")
        self.offset = off if isinstance(off, int) else None
        h = d.get("hint")
        self.hint = h.get("text") if isinstance(h, dict) and isinstance(h.get("text"), str) else None
        self.hint_version = h.get("version") if isinstance(h, dict) and isinstance(h.get("version"), int) else None
        t = d.get("topic")
        self.topic = t if isinstance(t, str) else None
        p = d.get("partition")
        self.partition = p if isinstance(p, int) else None
        super().__init__(status, text)

    @property
    def message(self) -> Optional[str]:
        """Deprecated: use message_name (the name of the message the error concerns)."""
        warnings.warn("KwireError.message is deprecated: use message_name", DeprecationWarning, stacklevel=2)
        return self.message_name

    def __str__(self) -> str:
        return f"{self.text} (status {self.status}, {self.category})"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.status!r}, {self.text!r})"


class ArgError(KwireError, ValueError):
    """KW_ERR_ARG: a bad argument (unknown compression, bad flag, negative size...)."""


class DecodeError(KwireError, ValueError):
    """KW_ERR_DECODE: the bytes are not a valid encoding (path and offset say where)."""


class EncodeError(KwireError, ValueError):
    """KW_ERR_ENCODE: the message cannot be encoded at that version (path says which field)."""


class JSONError(KwireError, ValueError):
    """KW_ERR_JSON: the JSON form does not match the message (path is the JSON path)."""


class UnknownAPIError(KwireError, LookupError):
    """KW_ERR_UNKNOWN_API: unknown api key or message name."""


class VersionError(KwireError, ValueError):
    """KW_ERR_VERSION: the version is not valid for that message or header."""


class TooLargeError(KwireError, ValueError):
    """KW_ERR_TOO_LARGE: a size above a limit (frame above 100 MiB, decompression cap...)."""


class OutOfMemoryError(KwireError):
    """KW_ERR_NOMEM: the library could not allocate memory."""


class UnsupportedError(KwireError):
    """KW_ERR_UNSUPPORTED: a feature the library does not read or write."""


class InternalError(KwireError):
    """KW_ERR_INTERNAL: a bug inside the library, caught; or the module trapped (the binding
    then replaced its instance with a new one)."""


_CLASSES: Dict[int, Type[KwireError]] = {
    ERR_ARG: ArgError,
    ERR_DECODE: DecodeError,
    ERR_ENCODE: EncodeError,
    ERR_JSON: JSONError,
    ERR_UNKNOWN_API: UnknownAPIError,
    ERR_VERSION: VersionError,
    ERR_TOO_LARGE: TooLargeError,
    ERR_NOMEM: OutOfMemoryError,
    ERR_UNSUPPORTED: UnsupportedError,
    ERR_INTERNAL: InternalError,
}

# The category of each error status (kw_last_error_json names it too).
_CATEGORIES: Dict[int, str] = {s: c for s, c in _abi.STATUS_CATEGORIES.items() if s != OK}


def error_for(status: int, text: str, details: Optional[Dict[str, Any]] = None) -> KwireError:
    """The exception for a status; an unknown negative status gives a plain KwireError."""
    cls = _CLASSES.get(status, KwireError)
    return cls(status, text, details)
