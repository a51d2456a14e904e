package transcode

import (
	"errors"
	"strings"

	"github.com/kwire/kwire/internal/proto"
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

// Verdict is what a Filter function decides for one entity name.
type Verdict uint8

const (
	// Keep the (possibly renamed) name.
	Keep Verdict = iota
	// Drop the array element that holds the name (a topic of a Metadata response, a
	// group of a ListGroups response); a name in no array element refuses the message.
	Drop
	// Refuse the message.
	Refuse
)

// Rename appends to dst the message src (name at version) with every non-null string
// of an entity type in mask (bits 1 << Entity*) rewritten by fn, in strings and in
// arrays of strings, tagged fields included; it returns the message and how many names
// it rewrote. A message with none is appended unchanged.
func Rename(dst, src []byte, name string, version int16, mask uint32, fn Renamer) ([]byte, int, error) {
	out, n, _, err := Filter(dst, src, name, version, mask, func(e uint8, s string) (string, Verdict) {
		if r, ok := fn(e, s); ok {
			return r, Keep
		}
		return s, Refuse
	})
	return out, n, err
}

// Filter is Rename with element removal: fn renames a name (Keep), drops the array
// element that holds it (Drop: the element of the innermost array around it), or
// refuses the message (Refuse, ErrRenameRefused). It returns the message, the names
// kept and the elements dropped.
func Filter(dst, src []byte, name string, version int16, mask uint32, fn func(entity uint8, name string) (string, Verdict)) ([]byte, int, int, error) {
	var d Doc
	if err := d.Parse(src, name, version); err != nil {
		return dst, 0, 0, err
	}
	kept, dropped, err := d.FilterEntities(mask, fn)
	if err != nil {
		return dst, kept, dropped, err
	}
	out, err := d.AppendTo(dst)
	return out, kept, dropped, err
}

// FilterEntities is Filter on a parsed Doc: the edits are recorded in d, for AppendTo
// (with any others the caller makes). Elements already removed are not visited. The
// name fn gets is valid during the call only (it is the message's bytes).
func (d *Doc) FilterEntities(mask uint32, fn func(entity uint8, name string) (string, Verdict)) (kept, dropped int, err error) {
	for i := 1; i < len(d.nodes); i++ {
		p := &d.nodes[i]
		if p.f == nil || p.f.typ != tString || p.f.entity == eNone || mask&(1<<p.f.entity) == 0 || p.kind != dScalar {
			continue
		}
		if d.insideRemoved(int32(i)) {
			continue
		}
		// A string, or an element of an array of strings.
		s, null := d.Str(Node(i))
		if null {
			continue
		}
		r, v := fn(p.f.entity, unsafeString(s)) // fn keeps no name: no copy
		switch v {
		case Keep:
			if r != string(s) {
				if err := d.SetString(Node(i), r); err != nil {
					return kept, dropped, err
				}
			}
			kept++
		case Drop:
			e := d.enclosingElement(int32(i))
			if e < 0 {
				return kept, dropped, ErrRenameRefused
			}
			if err := d.Remove(Node(e)); err != nil {
				return kept, dropped, err
			}
			dropped++
		default:
			return kept, dropped, ErrRenameRefused
		}
	}
	return kept, dropped, nil
}

// ReplaceInMessages replaces every old in the free-text strings of the message (the
// fields named errorMessage or ending in ErrorMessage, and statusDetail) with new;
// it returns how many strings changed.
func (d *Doc) ReplaceInMessages(old, new string) (int, error) {
	if old == "" {
		return 0, nil
	}
	n := 0
	for i := 1; i < len(d.nodes); i++ {
		p := &d.nodes[i]
		if p.f == nil || p.f.typ != tString || p.kind != dScalar || !freeText(p.f.name) || d.insideRemoved(int32(i)) {
			continue
		}
		s, null := d.Str(Node(i))
		if null || !strings.Contains(string(s), old) {
			continue
		}
		if err := d.SetString(Node(i), strings.ReplaceAll(string(s), old, new)); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func freeText(name string) bool {
	return name == "errorMessage" || strings.HasSuffix(name, "ErrorMessage") || name == "statusDetail"
}

// HasEntities reports whether the request or response (kind) of api key at version has
// a string field of an entity type in mask (bits 1 << Entity*), at any depth.
func HasEntities(key int16, kind proto.Kind, version int16, mask uint32) bool {
	m := apiMessage(key, kind)
	return m != nil && m.valid.has(version) && structHasEntities(&schemaStructs[m.root], version, mask)
}

func structHasEntities(s *structDesc, v int16, mask uint32) bool {
	for i := range fieldsOf(s) {
		f := &fieldsOf(s)[i]
		if !f.ver.has(v) {
			continue
		}
		if f.typ == tString && f.entity != eNone && mask&(1<<f.entity) != 0 {
			return true
		}
		if f.typ == tStruct && structHasEntities(&schemaStructs[f.sub], v, mask) {
			return true
		}
	}
	return false
}

// enclosingElement is node i itself when it is an array element, else its nearest
// ancestor that is one; -1 for none.
func (d *Doc) enclosingElement(i int32) int32 {
	for ; i > 0; i = d.nodes[i].parent {
		if d.nodes[i].elem {
			return i
		}
	}
	return -1
}

// insideRemoved reports whether node i or an ancestor was removed, or lies in a
// struct SetStruct replaced.
func (d *Doc) insideRemoved(i int32) bool {
	for ; i > 0; i = d.nodes[i].parent {
		p := &d.nodes[i]
		if p.removed || p.edit >= 0 && (p.kind == dStruct || p.kind == dNull) {
			return true
		}
	}
	return false
}
