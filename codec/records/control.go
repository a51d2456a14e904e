package records

import "github.com/kwire/kwire/internal/proto"

// ControlType is the type in a control record's key.
type ControlType int16

// The control record types (the key's type field).
const (
	ControlAbort          ControlType = 0
	ControlCommit         ControlType = 1
	ControlLeaderChange   ControlType = 2
	ControlSnapshotHeader ControlType = 3
	ControlSnapshotFooter ControlType = 4
	ControlKRaftVersion   ControlType = 5
	ControlKRaftVoters    ControlType = 6
)

// String is the type's name.
func (t ControlType) String() string {
	return proto.EnumString(controlTypeNames[:], 0, int(t), "UNKNOWN")
}

// controlTypeNames are the names of the control types from ControlAbort (0) up.
var controlTypeNames = [...]string{"ABORT", "COMMIT", "LEADER_CHANGE", "SNAPSHOT_HEADER", "SNAPSHOT_FOOTER", "KRAFT_VERSION", "KRAFT_VOTERS"}

// ControlRecord is the typed form of a control batch's record. The key is
// (version int16, type int16). For ABORT and COMMIT the value is the end
// transaction marker (version int16, coordinator epoch int32); the value of the
// other types is a KRaft message kept raw in Value.
type ControlRecord struct {
	KeyVersion       int16
	Type             ControlType
	MarkerVersion    int16 // ABORT and COMMIT only
	CoordinatorEpoch int32 // ABORT and COMMIT only
	Value            []byte
}

// IsEndTxnMarker reports whether the record ends a transaction.
func (c *ControlRecord) IsEndTxnMarker() bool {
	return c.Type == ControlAbort || c.Type == ControlCommit
}

// ParseControlRecord reads a control record from its key and value. Like
// Kafka, it reads the first 4 bytes of a longer key (newer key versions may
// append fields) and the first 6 bytes of a longer marker value.
func ParseControlRecord(key, value []byte) (ControlRecord, error) {
	var c ControlRecord
	var err error
	if c.KeyVersion, err = controlVersion(key, 4, "control record key", "control record key"); err != nil {
		return c, err
	}
	c.Type = ControlType(be.Uint16(key[2:]))
	c.Value = value
	if c.IsEndTxnMarker() {
		if c.MarkerVersion, err = controlVersion(value, 6, "end transaction marker value", "end transaction marker"); err != nil {
			return c, err
		}
		c.CoordinatorEpoch = int32(be.Uint32(value[2:]))
	}
	return c, nil
}

// controlVersion reads the version that starts b, a control record's key or
// marker value, which must be at least need bytes long; a negative version is
// corrupt. The errors name b as bytes and its version as version.
func controlVersion(b []byte, need int, bytes, version string) (int16, error) {
	if len(b) < need {
		return 0, detail(ErrCorrupt, "%v of %d bytes, need %d", bytes, len(b), need)
	}
	v := int16(be.Uint16(b))
	if v < 0 {
		return v, detail(ErrCorrupt, "%v version %d", version, v)
	}
	return v, nil
}

// AppendControlKey appends a version 0 control record key of type t.
func AppendControlKey(dst []byte, t ControlType) []byte {
	dst = be.AppendUint16(dst, 0)
	return be.AppendUint16(dst, uint16(t))
}

// AppendEndTxnMarker appends a version 0 end transaction marker value.
func AppendEndTxnMarker(dst []byte, coordinatorEpoch int32) []byte {
	dst = be.AppendUint16(dst, 0)
	return be.AppendUint32(dst, uint32(coordinatorEpoch))
}
