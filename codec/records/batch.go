package records

import "github.com/kwire/kwire/internal/proto"

// Layout of a magic 2 record batch header (61 bytes).
const (
	offBaseOffset      = 0
	offLength          = 8
	offLeaderEpoch     = 12
	offMagic           = 16
	offCRC             = 17
	offAttributes      = 21
	offLastOffsetDelta = 23
	offBaseTimestamp   = 27
	offMaxTimestamp    = 35
	offProducerID      = 43
	offProducerEpoch   = 51
	offBaseSequence    = 53
	offNumRecords      = 57
	// BatchHeaderSize is the size of a magic 2 batch header, up to the records.
	BatchHeaderSize = 61
	// LogOverhead is the offset and length prefix every batch and legacy message starts with.
	LogOverhead = 12
	// minRecordSize: a record with null key and value and no headers is 7 bytes.
	minRecordSize = 7
)

// Attribute bits of a magic 2 batch.
const (
	AttrCompressionMask  int16 = 0x07
	AttrLogAppendTime    int16 = 0x08
	AttrTransactional    int16 = 0x10
	AttrControl          int16 = 0x20
	AttrHasDeleteHorizon int16 = 0x40
)

// TimestampType says what a record's timestamp means.
type TimestampType int8

// The timestamp types: the producer's time or the broker's.
const (
	// NoTimestampType: magic 0 messages carry no timestamp.
	NoTimestampType TimestampType = -1
	CreateTime      TimestampType = 0 // set by the producer
	LogAppendTime   TimestampType = 1 // set by the broker when it appends the batch
)

// String is the type's name in Kafka's spelling.
func (t TimestampType) String() string {
	return proto.EnumString(timestampTypeNames[:], int(NoTimestampType), int(t), "TimestampType")
}

// timestampTypeNames are the names of the timestamp types from NoTimestampType
// (-1) up.
var timestampTypeNames = [...]string{"NoTimestampType", "CreateTime", "LogAppendTime"}

// Batch is a magic 2 record batch header. Records holds the records section as
// it is on the wire (compressed when the batch is), aliasing the input.
type Batch struct {
	BaseOffset           int64
	Length               int32 // bytes after the Length field
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32 // CRC32C of everything from Attributes to the end
	Attributes           int16
	LastOffsetDelta      int32
	BaseTimestamp        int64 // the delete horizon when HasDeleteHorizon
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
	Records              []byte
}

// Compression is the codec of the batch's records (attribute bits 0-2).
func (b *Batch) Compression() Compression { return Compression(b.Attributes & AttrCompressionMask) }

// TimestampType is CreateTime or LogAppendTime (attribute bit 3).
func (b *Batch) TimestampType() TimestampType {
	if b.Attributes&AttrLogAppendTime != 0 {
		return LogAppendTime
	}
	return CreateTime
}

// IsTransactional reports attribute bit 4: the batch belongs to a transaction.
func (b *Batch) IsTransactional() bool { return b.Attributes&AttrTransactional != 0 }

// IsControl reports attribute bit 5: the batch holds control records.
func (b *Batch) IsControl() bool { return b.Attributes&AttrControl != 0 }

// HasDeleteHorizon reports attribute bit 6: BaseTimestamp is the delete horizon of
// a compacted batch.
func (b *Batch) HasDeleteHorizon() bool { return b.Attributes&AttrHasDeleteHorizon != 0 }

// DeleteHorizonMs is the delete horizon of a compacted batch, or -1 when unset.
func (b *Batch) DeleteHorizonMs() int64 {
	if b.HasDeleteHorizon() {
		return b.BaseTimestamp
	}
	return -1
}

// LastOffset is the offset of the batch's last record.
func (b *Batch) LastOffset() int64 { return b.BaseOffset + int64(b.LastOffsetDelta) }

// Size is the size of the whole batch on the wire.
func (b *Batch) Size() int { return LogOverhead + int(b.Length) }

// PeekEntry looks at the start of src, where a batch or legacy message begins.
// It returns the entry's size and magic. size is 0 (and err nil) when src does
// not hold the whole entry: a fetch response may end with a partial batch, which
// Kafka's readers skip. A length too small for any entry is an error.
func PeekEntry(src []byte) (size int, magic int8, err error) {
	if len(src) < LogOverhead {
		return 0, 0, nil
	}
	length := int32(be.Uint32(src[offLength:]))
	base := int64(be.Uint64(src))
	if length < legacyMinSize(0) {
		return 0, 0, newErr(base, -1, "length", offLength, detail(ErrCorrupt, "entry length %d is below the minimum of %d", length, legacyMinSize(0)))
	}
	if int64(length) > int64(len(src)-LogOverhead) {
		return 0, 0, nil
	}
	return LogOverhead + int(length), int8(src[offMagic]), nil
}

// ParseBatch reads the magic 2 batch at the start of src and returns it with its
// size. It checks the length, magic, record count and (unless skipCRC) the CRC;
// it does not look at the records. An input shorter than the batch's length is
// ErrTruncated.
func ParseBatch(src []byte, skipCRC bool) (Batch, int, error) {
	var b Batch
	if len(src) < LogOverhead {
		return b, 0, newErr(-1, -1, "length", len(src), detail(ErrTruncated, "%d bytes, need %d for offset and length", len(src), LogOverhead))
	}
	b.BaseOffset = int64(be.Uint64(src))
	b.Length = int32(be.Uint32(src[offLength:]))
	if b.Length < BatchHeaderSize-LogOverhead {
		return b, 0, newErr(b.BaseOffset, -1, "length", offLength, detail(ErrCorrupt, "batch length %d is below the header size %d", b.Length, BatchHeaderSize-LogOverhead))
	}
	if int64(b.Length) > int64(len(src)-LogOverhead) {
		return b, 0, newErr(b.BaseOffset, -1, "length", offLength, detail(ErrTruncated, "batch length %d, %d bytes present", b.Length, len(src)-LogOverhead))
	}
	size := LogOverhead + int(b.Length)
	src = src[:size]
	b.PartitionLeaderEpoch = int32(be.Uint32(src[offLeaderEpoch:]))
	b.Magic = int8(src[offMagic])
	if b.Magic != 2 {
		return b, 0, newErr(b.BaseOffset, -1, "magic", offMagic, detail(ErrUnsupported, "magic %d is not a record batch (want 2)", b.Magic))
	}
	b.CRC = be.Uint32(src[offCRC:])
	b.Attributes = int16(be.Uint16(src[offAttributes:]))
	b.LastOffsetDelta = int32(be.Uint32(src[offLastOffsetDelta:]))
	b.BaseTimestamp = int64(be.Uint64(src[offBaseTimestamp:]))
	b.MaxTimestamp = int64(be.Uint64(src[offMaxTimestamp:]))
	b.ProducerID = int64(be.Uint64(src[offProducerID:]))
	b.ProducerEpoch = int16(be.Uint16(src[offProducerEpoch:]))
	b.BaseSequence = int32(be.Uint32(src[offBaseSequence:]))
	b.NumRecords = int32(be.Uint32(src[offNumRecords:]))
	b.Records = src[BatchHeaderSize:size:size]
	if !skipCRC {
		if c := CRC32C(src[offAttributes:]); c != b.CRC {
			return b, 0, newErr(b.BaseOffset, -1, "crc", offCRC, detail(ErrCRC, "stored %#08x, computed %#08x", b.CRC, c))
		}
	}
	if b.NumRecords < 0 {
		return b, 0, newErr(b.BaseOffset, -1, "recordCount", offNumRecords, detail(ErrCorrupt, "negative record count %d", b.NumRecords))
	}
	if b.Compression() == CompressionNone && int64(b.NumRecords)*minRecordSize > int64(len(b.Records)) {
		return b, 0, newErr(b.BaseOffset, -1, "recordCount", offNumRecords, detail(ErrCorrupt, "%d records cannot fit in %d bytes", b.NumRecords, len(b.Records)))
	}
	if c := b.Compression(); c > CompressionZstd {
		return b, 0, newErr(b.BaseOffset, -1, "attributes", offAttributes, detail(ErrUnsupported, "compression codec %d", int(c)))
	}
	return b, size, nil
}

// AppendHeader appends the 61-byte header of b as it stands (no length or CRC
// computed) to dst.
func (b *Batch) AppendHeader(dst []byte) []byte {
	dst = be.AppendUint64(dst, uint64(b.BaseOffset))
	dst = be.AppendUint32(dst, uint32(b.Length))
	dst = be.AppendUint32(dst, uint32(b.PartitionLeaderEpoch))
	dst = append(dst, byte(b.Magic))
	dst = be.AppendUint32(dst, b.CRC)
	dst = be.AppendUint16(dst, uint16(b.Attributes))
	dst = be.AppendUint32(dst, uint32(b.LastOffsetDelta))
	dst = be.AppendUint64(dst, uint64(b.BaseTimestamp))
	dst = be.AppendUint64(dst, uint64(b.MaxTimestamp))
	dst = be.AppendUint64(dst, uint64(b.ProducerID))
	dst = be.AppendUint16(dst, uint16(b.ProducerEpoch))
	dst = be.AppendUint32(dst, uint32(b.BaseSequence))
	dst = be.AppendUint32(dst, uint32(b.NumRecords))
	return dst
}
