package transcode

import (
	"errors"
)

// Renaming entities (virtual clusters): every string field whose descriptor names an
// entity type (topicName, groupId, transactionalId) is found from the schema, in every
// message and version, and rewritten; the message is written again with only those
// values and the lengths that enclose them changed.

// Entity kinds a rename applies to, as a mask of 1 << EntityX.
const (
	EntityTopicName       = eTopicName
	EntityGroupID         = eGroupID
	EntityTransactionalID = eTransactionalID
)

// Renamer rewrites one entity name: the new name, or ok false to refuse the message
// (the caller's reason is kept by the Renamer itself).
type Renamer func(entity uint8, name string) (renamed string, ok bool)

// ErrRenameRefused is Rename's error when the Renamer refused a name.
var ErrRenameRefused = errors.New("kwire: an entity name was refused")

// Rename appends to dst the message src (name at version) with every non-null string
// of an entity type in mask (bits 1 << Entity*) rewritten by fn, in strings and in
// arrays of strings, tagged fields included; it returns the message and how many names
// it rewrote. A message with none is appended unchanged.
func Rename(dst, src []byte, name string, version int16, mask uint32, fn Renamer) ([]byte, int, error) {
	var d Doc
	if err := d.Parse(src, name, version); err != nil {
		return dst, 0, err
	}
	n := 0
	for i := 1; i < len(d.nodes); i++ {
		p := &d.nodes[i]
		if p.f == nil || p.f.typ != tString || p.f.entity == eNone || mask&(1<<p.f.entity) == 0 || p.kind != dScalar {
			continue
		}
		// A string, or an element of an array of strings.
		s, null := d.Str(Node(i))
		if null {
			continue
		}
		r, ok := fn(p.f.entity, string(s))
		if !ok {
			return dst, n, ErrRenameRefused
		}
		if r != string(s) {
			if err := d.SetString(Node(i), r); err != nil {
				return dst, n, err
			}
		}
		n++
	}
	out, err := d.AppendTo(dst)
	return out, n, err
}
