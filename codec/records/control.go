package records

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
	switch t {
	case ControlAbort:
		return "ABORT"
	case ControlCommit:
		return "COMMIT"
	case ControlLeaderChange:
		return "LEADER_CHANGE"
	case ControlSnapshotHeader:
		return "SNAPSHOT_HEADER"
	case ControlSnapshotFooter:
		return "SNAPSHOT_FOOTER"
	case ControlKRaftVersion:
		return "KRAFT_VERSION"
	case ControlKRaftVoters:
		return "KRAFT_VOTERS"
	}
	return "UNKNOWN(" + itoa(int64(t)) + ")"
}

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
	if len(key) < 4 {
		return c, detail(ErrCorrupt, "control record key of %d bytes, need 4", len(key))
	}
	c.KeyVersion = int16(be.Uint16(key))
	if c.KeyVersion < 0 {
		return c, detail(ErrCorrupt, "control record key version %d", c.KeyVersion)
	}
	c.Type = ControlType(be.Uint16(key[2:]))
	c.Value = value
	if c.IsEndTxnMarker() {
		if len(value) < 6 {
			return c, detail(ErrCorrupt, "end transaction marker value of %d bytes, need 6", len(value))
		}
		c.MarkerVersion = int16(be.Uint16(value))
		if c.MarkerVersion < 0 {
			return c, detail(ErrCorrupt, "end transaction marker version %d", c.MarkerVersion)
		}
		c.CoordinatorEpoch = int32(be.Uint32(value[2:]))
	}
	return c, nil
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
