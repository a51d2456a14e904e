package records

import (
	"strconv"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
)

// ProduceVerdict is what a broker's first check of one partition's records in a
// Produce request decides (Kafka's ProduceRequest.validateRecords). A zero Code
// (kerr.None) means the records pass; otherwise Code is the error Kafka answers for
// that partition, and the other partitions of the request are not affected.
type ProduceVerdict struct {
	Code kerr.Code
	// Reason says why, in words: "Produce v9 needs exactly one record batch per
	// partition, found 2".
	Reason string
}

// OK reports whether the records pass.
func (v ProduceVerdict) OK() bool { return v.Code == kerr.None }

// ValidateProduceRecords applies Kafka's rules for the records field of one
// partition of a Produce request of the given version, as the broker does before
// appending anything (ProduceRequest.validateRecords, KafkaApis):
//
//   - From v3 on, the field holds exactly one complete record batch of magic 2.
//     No complete batch (an empty field, or a batch cut short), a batch of magic 0
//     or 1 first, or a second complete batch is INVALID_RECORD.
//   - Before v7, that batch may not be compressed with zstd:
//     UNSUPPORTED_COMPRESSION_TYPE. (A compression id Kafka does not know makes
//     Kafka throw outside its error mapping; the verdict is then
//     UNKNOWN_SERVER_ERROR.)
//   - Walking the batches, an entry whose length is below 14 bytes or whose magic
//     is not 0, 1 or 2 is CORRUPT_MESSAGE, as Kafka's batch reader refuses it.
//   - Bytes after the first complete batch that do not make a whole entry are
//     ignored, as Kafka's reader ignores them (the log trims them).
//   - Versions 0 to 2 get no check (Kafka keeps accepting what old clients sent),
//     and neither does a null records field.
//
// Only the batch headers are read: CRCs and the records themselves are checked
// later by the broker's log layer, and by Decoder when the records are decoded.
// ValidateProduceRecords allocates nothing when the records pass.
func ValidateProduceRecords(version int16, records []byte) ProduceVerdict {
	if version < 3 || records == nil {
		return ProduceVerdict{}
	}
	pos := 0
	batches := 0
	for pos < len(records) && batches < 2 {
		src := records[pos:]
		if len(src) < LogOverhead {
			break
		}
		length := int32(be.Uint32(src[offLength:]))
		if length < legacyMinSize(0) {
			return ProduceVerdict{Code: kerr.CorruptMessage, Reason: "record size " + strconv.Itoa(int(length)) +
				" is less than the minimum record overhead (14), at byte " + strconv.Itoa(pos)}
		}
		if len(src) < offMagic+1 {
			break
		}
		magic := int8(src[offMagic])
		if magic < 0 || magic > 2 {
			return ProduceVerdict{Code: kerr.CorruptMessage, Reason: "invalid magic " + strconv.Itoa(int(magic)) + " at byte " + strconv.Itoa(pos+offMagic)}
		}
		if int64(length) > int64(len(src)-LogOverhead) {
			break // a partial entry: Kafka's reader stops here
		}
		if batches == 0 {
			if magic != 2 {
				return ProduceVerdict{Code: kerr.InvalidRecord, Reason: "Produce v" + strconv.Itoa(int(version)) +
					" allows only record batches of magic 2, found magic " + strconv.Itoa(int(magic))}
			}
			if version < 7 && len(src) >= offAttributes+2 {
				switch c := Compression(be.Uint16(src[offAttributes:]) & uint16(AttrCompressionMask)); {
				case c == CompressionZstd:
					return ProduceVerdict{Code: kerr.UnsupportedCompressionType, Reason: "Produce v" + strconv.Itoa(int(version)) +
						" may not use zstd compression (from v7 on)"}
				case c > CompressionZstd:
					return ProduceVerdict{Code: kerr.UnknownServerError, Reason: "compression id " + strconv.Itoa(int(c)) + " is unknown"}
				}
			}
		}
		batches++
		pos += LogOverhead + int(length)
	}
	switch batches {
	case 0:
		reason := "Produce v" + strconv.Itoa(int(version)) + " needs one record batch per partition, found none"
		if len(records) > 0 {
			reason += " complete (" + strconv.Itoa(len(records)) + " bytes of a partial batch)"
		}
		return ProduceVerdict{Code: kerr.InvalidRecord, Reason: reason}
	case 1:
		return ProduceVerdict{}
	}
	return ProduceVerdict{Code: kerr.InvalidRecord, Reason: "Produce v" + strconv.Itoa(int(version)) +
		" allows exactly one record batch per partition, found more"}
}

// PartitionVerdict is the verdict on one partition of a Produce request.
type PartitionVerdict struct {
	Topic     string     // the topic's name (before v13)
	TopicID   codec.UUID // the topic's id (v13 on)
	Partition int32
	ProduceVerdict
}

// ValidateProduceRequest runs ValidateProduceRecords on every partition of req and
// returns the partitions that fail, in request order; nil when all pass.
func ValidateProduceRequest(req *codec.ProduceRequest, version int16) []PartitionVerdict {
	var out []PartitionVerdict
	for i := range req.TopicData {
		t := &req.TopicData[i]
		for j := range t.PartitionData {
			p := &t.PartitionData[j]
			if v := ValidateProduceRecords(version, p.Records); !v.OK() {
				out = append(out, PartitionVerdict{Topic: t.Name, TopicID: t.TopicID, Partition: p.Index, ProduceVerdict: v})
			}
		}
	}
	return out
}
