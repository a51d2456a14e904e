package abi

import (
	"testing"

	"github.com/kwire/kwire/internal/abitable"
)

// The package's constants are the ABI table's: the version, every status with its
// category name, the allocation limit, the record flags and the batch list's layout.
func TestConstantsAreTheTables(t *testing.T) {
	if Major != abitable.Major || Minor != abitable.Minor {
		t.Errorf("abi %d.%d, table %d.%d", Major, Minor, abitable.Major, abitable.Minor)
	}
	ours := map[string]int32{
		"OK": StatusOK, "ERR_ARG": StatusArg, "ERR_DECODE": StatusDecode, "ERR_ENCODE": StatusEncode,
		"ERR_JSON": StatusJSON, "ERR_UNKNOWN_API": StatusUnknownAPI, "ERR_VERSION": StatusVersion,
		"ERR_TOO_LARGE": StatusTooLarge, "ERR_NOMEM": StatusNoMem, "ERR_UNSUPPORTED": StatusUnsupported,
		"ERR_INTERNAL": StatusInternal,
	}
	statuses := abitable.Group("status")
	if len(statuses) != len(ours) {
		t.Errorf("the table has %d statuses, package abi %d", len(statuses), len(ours))
	}
	for _, c := range statuses {
		s, ok := ours[c.Name]
		if !ok {
			t.Errorf("KW_%s (%d): no Status constant", c.Name, c.Value)
			continue
		}
		if int(s) != c.Value {
			t.Errorf("KW_%s: table %d, package abi %d", c.Name, c.Value, s)
		}
		if got := StatusName(s); got != c.Category {
			t.Errorf("StatusName(%d) = %q, the table's category is %q", s, got, c.Category)
		}
	}
	want := map[string]int{"MAX_ALLOC": MaxAlloc, "RECORDS_SKIP_CRC": FlagSkipCRC, "RECORDS_INPUT_SPANS": FlagInputSpans,
		"RECORDS_HOST_GZIP": FlagHostGzip, "RECORDS_HOST_SNAPPY": FlagHostSnappy, "RECORDS_HOST_LZ4": FlagHostLZ4,
		"RECORDS_HOST_ZSTD": FlagHostZstd, "BATCH_LIST_HEADER_SIZE": BatchListHeaderSize, "BATCH_STRIDE": 4 * CompressedBatchWords,
		"RECORDS_COLUMNS": FlagColumns, "TABLE_BATCH_COUNT": ColBatchCount, "TABLE_BATCH_STRIDE": ColBatchStride,
		"TABLE_BATCHES_OFFSET": ColBatches, "TABLE_COL_OFFSETS": ColOffsets, "TABLE_COL_TIMESTAMPS": ColTimestamps,
		"TABLE_COL_KEYS": ColKeys, "TABLE_COL_VALUES": ColValues, "TABLE_COL_HEADER_INDEX": ColHeaderIndex,
		"TABLE_COL_BATCH_INDEX": ColBatchIndex, "TABLE_COL_SOURCES": ColSources, "TABLE_COL_CONTROL_TYPES": ColControlTypes,
		"TABLE_COL_SCHEMAS": ColSchemas, "TABLE_HEADER_SIZE_4": TableHeaderSizeColumns,
		"RB_BASE_OFFSET": RBBaseOffset, "RB_PRODUCER_ID": RBProducerID, "RB_FIRST_RECORD": RBFirstRecord,
		"RB_RECORD_COUNT": RBRecordCount, "RB_BASE_SEQUENCE": RBBaseSequence, "RB_LEADER_EPOCH": RBLeaderEpoch,
		"RB_PRODUCER_EPOCH": RBProducerEpoch, "RB_MAGIC": RBMagic, "RB_COMPRESSION": RBCompression,
		"RB_TIMESTAMP_TYPE": RBTimestampType, "RB_FLAGS": RBFlags, "RB_SOURCE": RBSource, "RB_STRIDE": RBStride}
	seen := 0
	for _, c := range abitable.Consts {
		if v, ok := want[c.Name]; ok {
			seen++
			if v != c.Value {
				t.Errorf("KW_%s: table %d, package abi %d", c.Name, c.Value, v)
			}
		}
		if c.Name == "BATCH_LIST_MAGIC" && c.Str != BatchListMagic {
			t.Errorf("KW_BATCH_LIST_MAGIC: table %q, package abi %q", c.Str, BatchListMagic)
		}
	}
	if seen != len(want) {
		t.Errorf("%d of the %d constants are in the table", seen, len(want))
	}
}
