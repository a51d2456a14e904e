"""The record table's names: byte offsets of its fields and its codes, as capi/kwire.h
defines them (KW_TABLE_*, KW_REC_*, KW_RB_*, KW_HDR_*, KW_SOURCE_*, KW_RECORDS_*), taken from the
generated _abi; tests/test_layout.py holds every name here to kwire.h. Each name
is the header's without its KW_ prefix (KW_REC_SOURCE is REC_SOURCE)."""

from . import _abi

# ---- record decoding flags ----------------------------------------------------------

RECORDS_SKIP_CRC = _abi.KW_RECORDS_SKIP_CRC
"""Do not verify batch checksums."""
RECORDS_INPUT_SPANS = _abi.KW_RECORDS_INPUT_SPANS
"""kw_decode_*_frame_records (ABI 1.2): a layout-3 table whose records stored
uncompressed point into the input frame instead of a copy."""
RECORDS_HOST_GZIP = _abi.KW_RECORDS_HOST_GZIP
RECORDS_HOST_SNAPPY = _abi.KW_RECORDS_HOST_SNAPPY
RECORDS_HOST_LZ4 = _abi.KW_RECORDS_HOST_LZ4
RECORDS_HOST_ZSTD = _abi.KW_RECORDS_HOST_ZSTD
"""kw_decode_*_frame_records (ABI 1.3): the host decompresses batches of these codecs
itself; a frame with some returns their list (KW_BATCH_LIST_MAGIC), see _api._inflated."""
RECORDS_COLUMNS = _abi.KW_RECORDS_COLUMNS
"""kw_decode_*_frame_records and kw_decode_frame_records_inflated (ABI 1.4): a layout-4
table, the records' fields as columns."""

# ---- the table header -----------------------------------------------------------------

TABLE_MAGIC = _abi.KW_TABLE_MAGIC
TABLE_LAYOUT = _abi.KW_TABLE_LAYOUT  # i32 layout version: 1, 2, 3 or 4
TABLE_RECORD_COUNT = _abi.KW_TABLE_RECORD_COUNT
TABLE_RECORD_STRIDE = _abi.KW_TABLE_RECORD_STRIDE
TABLE_RECORDS_OFFSET = _abi.KW_TABLE_RECORDS_OFFSET
TABLE_HEADER_COUNT = _abi.KW_TABLE_HEADER_COUNT
TABLE_HEADER_STRIDE = _abi.KW_TABLE_HEADER_STRIDE
TABLE_HEADERS_OFFSET = _abi.KW_TABLE_HEADERS_OFFSET
TABLE_SKIPPED_BYTES = _abi.KW_TABLE_SKIPPED_BYTES
TABLE_TOTAL_SIZE = _abi.KW_TABLE_TOTAL_SIZE
TABLE_JSON_OFFSET = _abi.KW_TABLE_JSON_OFFSET  # layouts 2, 3 and 4
TABLE_JSON_LENGTH = _abi.KW_TABLE_JSON_LENGTH  # layouts 2, 3 and 4
TABLE_HEADER_SIZE_1 = _abi.KW_TABLE_HEADER_SIZE_1  # the table header of layout 1
TABLE_HEADER_SIZE_2 = _abi.KW_TABLE_HEADER_SIZE_2  # of layouts 2 and 3

# Layout 4: layout 2's header (record_stride 0, records_offset the offsets column), then the
# batch table and the offset of each column; every array 8-aligned, n = record_count.
TABLE_BATCH_COUNT = _abi.KW_TABLE_BATCH_COUNT  # i32 entries in the batch table
TABLE_BATCH_STRIDE = _abi.KW_TABLE_BATCH_STRIDE  # i32 bytes per batch entry (RB_STRIDE)
TABLE_BATCHES_OFFSET = _abi.KW_TABLE_BATCHES_OFFSET  # offset of batch entry 0 (RB_*)
TABLE_COL_OFFSETS = _abi.KW_TABLE_COL_OFFSETS  # i64[n]
TABLE_COL_TIMESTAMPS = _abi.KW_TABLE_COL_TIMESTAMPS  # i64[n]
TABLE_COL_KEYS = _abi.KW_TABLE_COL_KEYS  # i32[2n] (offset, length); length -1: null
TABLE_COL_VALUES = _abi.KW_TABLE_COL_VALUES  # i32[2n] (offset, length)
TABLE_COL_HEADER_INDEX = _abi.KW_TABLE_COL_HEADER_INDEX  # i32[2n] (first header entry, count)
TABLE_COL_BATCH_INDEX = _abi.KW_TABLE_COL_BATCH_INDEX  # i32[n] the record's batch entry
TABLE_COL_SOURCES = _abi.KW_TABLE_COL_SOURCES  # u8[n] SOURCE_*
TABLE_COL_CONTROL_TYPES = _abi.KW_TABLE_COL_CONTROL_TYPES  # i32[n] -1 unless a control record
TABLE_COL_SCHEMAS = _abi.KW_TABLE_COL_SCHEMAS  # i32[3n] (schema source, id, version)
TABLE_HEADER_SIZE_4 = _abi.KW_TABLE_HEADER_SIZE_4  # the table header of layout 4

# ---- a record entry ---------------------------------------------------------------------

REC_OFFSET = _abi.KW_REC_OFFSET  # i64
REC_TIMESTAMP = _abi.KW_REC_TIMESTAMP  # i64
REC_PRODUCER_ID = _abi.KW_REC_PRODUCER_ID  # i64
REC_KEY_OFFSET = _abi.KW_REC_KEY_OFFSET
REC_KEY_LENGTH = _abi.KW_REC_KEY_LENGTH
REC_VALUE_OFFSET = _abi.KW_REC_VALUE_OFFSET
REC_VALUE_LENGTH = _abi.KW_REC_VALUE_LENGTH
REC_FIRST_HEADER = _abi.KW_REC_FIRST_HEADER
REC_HEADER_COUNT = _abi.KW_REC_HEADER_COUNT
REC_SEQUENCE = _abi.KW_REC_SEQUENCE
REC_LEADER_EPOCH = _abi.KW_REC_LEADER_EPOCH
REC_PRODUCER_EPOCH = _abi.KW_REC_PRODUCER_EPOCH
REC_MAGIC = _abi.KW_REC_MAGIC
REC_COMPRESSION = _abi.KW_REC_COMPRESSION
REC_TIMESTAMP_TYPE = _abi.KW_REC_TIMESTAMP_TYPE
REC_FLAGS = _abi.KW_REC_FLAGS
REC_CONTROL_TYPE = _abi.KW_REC_CONTROL_TYPE
REC_SCHEMA_SOURCE = _abi.KW_REC_SCHEMA_SOURCE
REC_SCHEMA_ID = _abi.KW_REC_SCHEMA_ID
REC_SCHEMA_VERSION = _abi.KW_REC_SCHEMA_VERSION
REC_SOURCE = _abi.KW_REC_SOURCE  # layout 3: SOURCE_*; 0 before
REC_STRIDE = _abi.KW_REC_STRIDE  # the record stride of layouts 1-3 (a later layout may grow it)

# ---- a batch entry of layout 4 ------------------------------------------------------------

RB_BASE_OFFSET = _abi.KW_RB_BASE_OFFSET  # i64
RB_PRODUCER_ID = _abi.KW_RB_PRODUCER_ID  # i64 (-1 when none)
RB_FIRST_RECORD = _abi.KW_RB_FIRST_RECORD
RB_RECORD_COUNT = _abi.KW_RB_RECORD_COUNT
RB_BASE_SEQUENCE = _abi.KW_RB_BASE_SEQUENCE  # -1 when none
RB_LEADER_EPOCH = _abi.KW_RB_LEADER_EPOCH
RB_PRODUCER_EPOCH = _abi.KW_RB_PRODUCER_EPOCH
RB_MAGIC = _abi.KW_RB_MAGIC
RB_COMPRESSION = _abi.KW_RB_COMPRESSION
RB_TIMESTAMP_TYPE = _abi.KW_RB_TIMESTAMP_TYPE
RB_FLAGS = _abi.KW_RB_FLAGS  # bit 0 transactional, bit 1 control
RB_SOURCE = _abi.KW_RB_SOURCE
RB_STRIDE = _abi.KW_RB_STRIDE

# ---- a header entry ---------------------------------------------------------------------

HDR_KEY_OFFSET = _abi.KW_HDR_KEY_OFFSET
HDR_KEY_LENGTH = _abi.KW_HDR_KEY_LENGTH
HDR_VALUE_OFFSET = _abi.KW_HDR_VALUE_OFFSET
HDR_VALUE_LENGTH = _abi.KW_HDR_VALUE_LENGTH
HDR_STRIDE = _abi.KW_HDR_STRIDE  # the header stride of layouts 1-3

# ---- where a record's spans point (REC_SOURCE): its key, value and headers ----------------

SOURCE_TABLE = _abi.KW_SOURCE_TABLE
"""The spans index the table."""
SOURCE_INPUT = _abi.KW_SOURCE_INPUT
"""The spans index the input frame the call was given (layout 3)."""
