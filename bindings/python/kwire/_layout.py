"""The record table's names: byte offsets of its fields and its codes, as capi/kwire.h
defines them (KW_TABLE_*, KW_REC_*, KW_HDR_*, KW_SOURCE_*, KW_RECORDS_*). kwire.h is the
one definition of the layout; tests/test_layout.py holds every name here to it. Each name
is the header's without its KW_ prefix (KW_REC_SOURCE is REC_SOURCE)."""

# ---- record decoding flags ----------------------------------------------------------

RECORDS_SKIP_CRC = 1
"""Do not verify batch checksums."""
RECORDS_INPUT_SPANS = 2
"""kw_decode_*_frame_records (ABI 1.2): a layout-3 table whose records stored
uncompressed point into the input frame instead of a copy."""

# ---- the table header -----------------------------------------------------------------

TABLE_MAGIC = b"KWRT"
TABLE_LAYOUT = 4  # i32 layout version: 1, 2 or 3
TABLE_RECORD_COUNT = 8
TABLE_RECORD_STRIDE = 12
TABLE_RECORDS_OFFSET = 16
TABLE_HEADER_COUNT = 20
TABLE_HEADER_STRIDE = 24
TABLE_HEADERS_OFFSET = 28
TABLE_SKIPPED_BYTES = 32
TABLE_TOTAL_SIZE = 36
TABLE_JSON_OFFSET = 40  # layouts 2 and 3
TABLE_JSON_LENGTH = 44  # layouts 2 and 3
TABLE_HEADER_SIZE_1 = 40  # the table header of layout 1
TABLE_HEADER_SIZE_2 = 48  # of layouts 2 and 3

# ---- a record entry ---------------------------------------------------------------------

REC_OFFSET = 0  # i64
REC_TIMESTAMP = 8  # i64
REC_PRODUCER_ID = 16  # i64
REC_KEY_OFFSET = 24
REC_KEY_LENGTH = 28
REC_VALUE_OFFSET = 32
REC_VALUE_LENGTH = 36
REC_FIRST_HEADER = 40
REC_HEADER_COUNT = 44
REC_SEQUENCE = 48
REC_LEADER_EPOCH = 52
REC_PRODUCER_EPOCH = 56
REC_MAGIC = 60
REC_COMPRESSION = 64
REC_TIMESTAMP_TYPE = 68
REC_FLAGS = 72
REC_CONTROL_TYPE = 76
REC_SCHEMA_SOURCE = 80
REC_SCHEMA_ID = 84
REC_SCHEMA_VERSION = 88
REC_SOURCE = 92  # layout 3: SOURCE_*; 0 before
REC_STRIDE = 96  # the record stride of layouts 1-3 (a later layout may grow it)

# ---- a header entry ---------------------------------------------------------------------

HDR_KEY_OFFSET = 0
HDR_KEY_LENGTH = 4
HDR_VALUE_OFFSET = 8
HDR_VALUE_LENGTH = 12
HDR_STRIDE = 16  # the header stride of layouts 1-3

# ---- where a record's spans point (REC_SOURCE): its key, value and headers ----------------

SOURCE_TABLE = 0
"""The spans index the table."""
SOURCE_INPUT = 1
"""The spans index the input frame the call was given (layout 3)."""
