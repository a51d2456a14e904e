"""The host's own decompressors, used in place of the module's where they are faster
(the frame-records calls with KW_RECORDS_HOST_* flags list the batches of those codecs;
kw_decode_frame_records_inflated reads what the host made of them; see capi/kwire.h).

- gzip: the standard library's zlib (native code). Against the module's inflate kernel,
  decode_fetch's columns on the bench's frames are 1.23-1.3x as fast with zlib on
  ~100 B values and 0.91x on 200-600 B values: zlib stays, as it wins by more where it
  wins.
- zstd: the ``zstandard`` package when it is installed (``pip install kwire[fast]``);
  without it the module decompresses zstd.
- snappy and LZ4 stay in the module, whose kernels run them about as fast as native code.

A decompressor returns the decompressed bytes when its input is exactly one valid
stream (gzip: one or more members, as Kafka's reader reads them; zstd: one frame, as
every Kafka producer writes) of at most ``limit`` bytes, else None: the batch is then
left to the module, whose decompressor gives its own verdict or error. So a host
decompressor can make a decode faster, never change what it returns.
"""

import zlib
from typing import Callable, Dict, List, Optional

Decompressor = Callable[[memoryview, int], Optional[bytes]]

COMPRESSION_GZIP = 1
COMPRESSION_ZSTD = 4


def _gunzip(data: memoryview, limit: int) -> Optional[bytes]:
    parts: List[bytes] = []
    total = 0
    rest: "memoryview | bytes" = data
    try:
        while True:
            d = zlib.decompressobj(31)
            out = d.decompress(rest, limit - total + 1)
            total += len(out)
            if total > limit or not d.eof:
                return None  # past the cap, or the stream is cut short
            parts.append(out)
            rest = d.unused_data
            if not rest:
                break  # another member follows when bytes remain; else they are corrupt
    except zlib.error:
        return None
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _zstd() -> Optional[Decompressor]:
    try:
        import zstandard  # optional: kwire[fast]
    except ImportError:
        return None
    dctx = zstandard.ZstdDecompressor()
    content_size = zstandard.frame_content_size

    def unzstd(data: memoryview, limit: int) -> Optional[bytes]:
        try:
            # A frame that states its size is decompressed to that size whatever
            # max_output_size says: refuse one that states more than the cap first.
            if content_size(data) > limit:
                return None
            out: bytes = dctx.decompress(data, max_output_size=limit, allow_extra_data=False)
        except (zstandard.ZstdError, ValueError, MemoryError):
            return None
        return out if len(out) <= limit else None

    return unzstd


def _build() -> Dict[int, Decompressor]:
    d: Dict[int, Decompressor] = {COMPRESSION_GZIP: _gunzip}
    z = _zstd()
    if z is not None:
        d[COMPRESSION_ZSTD] = z
    return d


HOST_DECOMPRESSORS: Dict[int, Decompressor] = _build()

_NAMES = {COMPRESSION_GZIP: "gzip", COMPRESSION_ZSTD: "zstd"}


def host_codecs() -> List[str]:
    """The names of the codecs this host decompresses itself ("gzip", and "zstd" with
    zstandard installed)."""
    return [_NAMES[c] for c in sorted(HOST_DECOMPRESSORS)]
