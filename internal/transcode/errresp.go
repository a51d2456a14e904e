package transcode

import (
	"errors"
	"strconv"
	"strings"

	"github.com/kwire/kwire/internal/jsonx"
	"github.com/kwire/kwire/internal/proto"
)

// Error responses built from the descriptors: the answer a broker gives to a request it
// refuses as a whole with one error, in the api's own response shape, for every api and
// version — what Kafka's AbstractRequest.getErrorResponse writes by hand api by api.
//
// The response is read field by field from the descriptors and written as its JSON form:
//   - every errorCode field gets the code, and every errorMessage field the message;
//   - an array of structs that answers an array of the request (the same name; elements
//     with a field of the same entity type, as topics[] answers topicData[]; a request
//     array of names, as DeleteTopics' topicNames answers responses[]; or elements that
//     share a field name) gets one element per request element, which carries over the
//     request element's key fields: those of the same name and type, of the same entity
//     type (topicName, groupId, ...), and partition indexes under their several names;
//   - a Produce partition's baseOffset and a coordinator's nodeId and port are -1, as
//     Kafka's error responses have them (no offset, no node);
//   - every other field keeps its default.
//
// Where the error lands says what the client sees: at the top level (the response has
// an errorCode of its own), per entity (only in the answered elements), or nowhere (the
// response has no error field, or the request named no entity to carry it): then the
// only refusal left to a proxy is to close the connection.

// ErrorPlace is where an error response carries its error.
type ErrorPlace uint8

const (
	// NoErrorField: the response has no error field that the error could reach.
	NoErrorField ErrorPlace = iota
	// TopLevel: the response's own errorCode holds it (entities, if any, do too).
	TopLevel
	// PerEntity: only the answered entities' errorCode fields hold it.
	PerEntity
)

func (p ErrorPlace) String() string {
	return [...]string{"none", "top-level", "per-entity"}[p]
}

// ErrorResponseJSON returns the JSON form of the response of api key at version ver
// answering the request body req (the bytes after the request header) with the error
// code and message: see above. The body must be a valid request of that version.
func ErrorResponseJSON(key, ver int16, req []byte, code int16, message string) ([]byte, ErrorPlace, error) {
	resp := apiMessage(key, proto.KindResponse)
	if resp == nil || !resp.valid.has(ver) {
		return nil, NoErrorField, errors.New("kwire: no response of api key " + strconv.Itoa(int(key)) + " at version " + strconv.Itoa(int(ver)))
	}
	var d Doc
	if err := d.ParseAPI(req, key, proto.KindRequest, ver); err != nil {
		return nil, NoErrorField, err
	}
	w := errWriter{d: &d, resp: resp.name, v: ver, code: code, msg: message}
	rq := &schemaStructs[apiMessage(key, proto.KindRequest).root]
	out := w.object(nil, &schemaStructs[resp.root], rq, d.Root())
	place := NoErrorField
	switch {
	case w.top:
		place = TopLevel
	case w.nested > 0:
		place = PerEntity
	}
	return out, place, nil
}

// ErrorResponse is ErrorResponseJSON's response as its wire body (no header).
func ErrorResponse(key, ver int16, req []byte, code int16, message string) ([]byte, ErrorPlace, error) {
	j, place, err := ErrorResponseJSON(key, ver, req, code, message)
	if err != nil {
		return nil, place, err
	}
	body, err := AppendWire(nil, apiMessage(key, proto.KindResponse).name, ver, j)
	return body, place, err
}

type errWriter struct {
	d      *Doc
	resp   string // the response message's name
	v      int16
	code   int16
	msg    string
	top    bool // the root's errorCode was set
	nested int  // errorCode fields set below the root
	depth  int
}

func fieldsOf(s *structDesc) []field { return schemaFields[s.first : s.first+s.n] }

// object writes one response struct rs answering the request struct rq at node q
// (rq nil: nothing answered, defaults only).
func (w *errWriter) object(b []byte, rs, rq *structDesc, q Node) []byte {
	b = append(b, '{')
	first := true
	key := func(name string) {
		b = jsonx.Key(b, first, name)
		first = false
	}
	for i := range fieldsOf(rs) {
		f := &fieldsOf(rs)[i]
		if !f.ver.has(w.v) || f.tagged.has(w.v) {
			continue
		}
		at := len(b)
		wrote := true
		switch {
		case (f.name == "errorCode" || f.name == "partitionErrorCode") && f.typ == tInt16 && !f.isArray():
			key(f.name)
			b = jsonx.AppendInt(b, int64(w.code))
			if w.depth == 0 {
				w.top = true
			} else {
				w.nested++
			}
		case f.name == "errorMessage" && f.typ == tString && !f.isArray():
			key(f.name)
			b = jsonx.AppendString(b, w.msg)
		case f.typ == tStruct && f.isArray():
			g, mode := w.answers(f, rq)
			if g == nil {
				continue // the default: no element
			}
			key(f.name)
			b = w.array(b, f, g, mode, w.d.Field(q, g.name))
		case f.typ == tStruct:
			var sub *structDesc
			sq := NoNode
			if rq != nil {
				if g := fieldNamed(rq, f.name, w.v); g != nil && g.typ == tStruct && !g.isArray() {
					sub, sq = &schemaStructs[g.sub], w.d.Field(q, g.name)
				}
			}
			if sq == NoNode || w.d.IsNull(sq) {
				continue
			}
			key(f.name)
			w.depth++
			b = w.object(b, &schemaStructs[f.sub], sub, sq)
			w.depth--
		case !f.isArray() && rq != nil:
			wrote = false
			if g := keyField(rq, f, w.v); g != nil {
				if n := w.d.Field(q, g.name); n != NoNode {
					key(f.name)
					b = w.scalar(b, f, n)
					wrote = true
				}
			}
		default:
			wrote = false
		}
		if len(b) == at && !wrote && f.typ >= tInt8 && f.typ <= tInt64 && noValue(w.resp, f.name) {
			key(f.name)
			b = append(b, "-1"...)
		}
		if len(b) == at && !wrote && f.defaultNil() && !(f.nullableEver() && f.nul.has(w.v)) {
			// A default of null where the version does not allow one: the empty value.
			key(f.name)
			b = w.empty(b, f)
		}
	}
	return append(b, '}')
}

// noValue reports whether field name of response message resp is one Kafka's
// getErrorResponse sets to -1 (no offset, no node) where its descriptor's default is 0:
// a Produce partition's baseOffset, a coordinator's nodeId and port.
func noValue(resp, name string) bool {
	switch resp {
	case "ProduceResponse":
		return name == "baseOffset"
	case "FindCoordinatorResponse":
		return name == "nodeId" || name == "port"
	}
	return false
}

// empty writes the empty value of f (not null): [], "", or a struct of defaults.
func (w *errWriter) empty(b []byte, f *field) []byte {
	switch {
	case f.isArray():
		return append(b, "[]"...)
	case f.typ == tStruct:
		w.depth++
		b = w.object(b, &schemaStructs[f.sub], nil, NoNode)
		w.depth--
		return b
	}
	return append(b, `""`...)
}

// Modes of an answered array: element by element, or (a request array of names or
// ids) one response element per value, which goes into its field of that entity.
const (
	byElement = iota
	byValue
)

// answers is the request array (a field of rq) that the response array f answers.
func (w *errWriter) answers(f *field, rq *structDesc) (*field, int) {
	if rq == nil {
		return nil, 0
	}
	re := &schemaStructs[f.sub]
	var shared *field
	for i := range fieldsOf(rq) {
		g := &fieldsOf(rq)[i]
		if !g.isArray() || !g.ver.has(w.v) || g.tagged.has(w.v) {
			continue
		}
		if g.typ == tStruct {
			if g.name == f.name {
				return g, byElement
			}
			qe := &schemaStructs[g.sub]
			if entityShared(re, qe, w.v) && shared == nil {
				shared = g
			}
			continue
		}
		if valueTarget(re, g, w.v) != nil && shared == nil {
			return g, byValue
		}
	}
	if shared != nil {
		return shared, byElement
	}
	// Elements that share a key field by name (partitions[].index and
	// partitionResponses[].index).
	var only *field
	arrays := 0
	for i := range fieldsOf(rq) {
		g := &fieldsOf(rq)[i]
		if g.isArray() && g.typ == tStruct && g.ver.has(w.v) && !g.tagged.has(w.v) {
			if keysShared(re, &schemaStructs[g.sub], w.v) {
				return g, byElement
			}
			only = g
			arrays++
		}
	}
	// Results in the order of the request's one array (CreateAcls' creations[] and
	// results[]), when the element carries an error and no key.
	if arrays == 1 && hasErrorCode(re, w.v) {
		return only, byElement
	}
	return nil, 0
}

// hasErrorCode reports whether struct s has an error code field at version v.
func hasErrorCode(s *structDesc, v int16) bool {
	for i := range fieldsOf(s) {
		if f := &fieldsOf(s)[i]; (f.name == "errorCode" || f.name == "partitionErrorCode") && f.ver.has(v) && !f.tagged.has(v) {
			return true
		}
	}
	return false
}

// array writes the response array f answering the request array g at node q.
func (w *errWriter) array(b []byte, f, g *field, mode int, q Node) []byte {
	b = append(b, '[')
	re := &schemaStructs[f.sub]
	w.depth++
	for e, i := w.d.First(q), 0; e != NoNode; e, i = w.d.Next(e), i+1 {
		if i > 0 {
			b = append(b, ',')
		}
		if mode == byElement {
			b = w.object(b, re, &schemaStructs[g.sub], e)
			continue
		}
		// One element per value: the value in the response element's field of the same
		// entity, the rest as object writes it with no request struct.
		b = w.object(b, re, nil, NoNode)
		if ef := valueTarget(re, g, w.v); ef != nil {
			b = b[:len(b)-1] // reopen the object
			b = jsonx.Key(b, b[len(b)-1] == '{', ef.name)
			b = w.scalar(b, ef, e)
			b = append(b, '}')
		}
	}
	w.depth--
	return append(b, ']')
}

// scalar writes the request value at n as the response field f's value.
func (w *errWriter) scalar(b []byte, f *field, n Node) []byte {
	switch f.typ {
	case tInt8, tInt16, tUint16, tInt32, tUint32:
		return jsonx.AppendInt(b, w.d.Int(n))
	case tInt64:
		return jsonx.AppendInt64(b, w.d.Int(n))
	case tUuid:
		return jsonx.AppendUUID(b, w.d.UUID(n))
	case tBool:
		return jsonx.AppendBool(b, w.d.Int(n) != 0)
	case tString:
		s, null := w.d.Str(n)
		if null {
			if f.nullableEver() && f.nul.has(w.v) {
				return append(b, "null"...)
			}
			return append(b, `""`...)
		}
		return jsonx.AppendString(b, string(s))
	}
	return append(b, "null"...) // not reached: keyField copies the types above only
}

// fieldNamed is rq's field called name at version v, or nil.
func fieldNamed(rq *structDesc, name string, v int16) *field {
	for i := range fieldsOf(rq) {
		if g := &fieldsOf(rq)[i]; g.name == name && g.ver.has(v) && !g.tagged.has(v) {
			return g
		}
	}
	return nil
}

// copyable reports whether a scalar of type t is carried from request to response.
func copyable(t uint8) bool {
	switch t {
	case tInt8, tInt16, tUint16, tInt32, tUint32, tInt64, tUuid, tBool, tString:
		return true
	}
	return false
}

// partitionKey reports whether name is one of the names a partition index goes by in
// requests and responses.
func partitionKey(name string) bool {
	switch name {
	case "partition", "partitionIndex", "index", "partitionId":
		return true
	}
	return false
}

// keyField is the field of rq whose value the response scalar f carries over: the same
// name and type, the same entity type and type, or a partition index under another of
// its names; nil for none.
func keyField(rq *structDesc, f *field, v int16) *field {
	if !copyable(f.typ) {
		return nil
	}
	if g := fieldNamed(rq, f.name, v); g != nil {
		if g.typ == f.typ && !g.isArray() {
			return g
		}
		return nil
	}
	if f.entity != eNone {
		return entityField(rq, f.entity, f.typ, v)
	}
	if partitionKey(f.name) && f.typ == tInt32 {
		for i := range fieldsOf(rq) {
			if g := &fieldsOf(rq)[i]; partitionKey(g.name) && g.typ == tInt32 && !g.isArray() && g.ver.has(v) && !g.tagged.has(v) {
				return g
			}
		}
	}
	return nil
}

// valueTarget is the field of the response element re that takes a value of the
// request's array of scalars g: of g's entity type, or, for an array of partition
// indexes, the element's partition index; nil for none.
func valueTarget(re *structDesc, g *field, v int16) *field {
	if g.entity != eNone {
		return entityField(re, g.entity, g.typ, v)
	}
	if g.typ == tString && strings.HasSuffix(g.name, "Keys") {
		// FindCoordinator's coordinatorKeys (group or transactional ids: no entity type
		// declared), each answered in coordinators[].key.
		for i := range fieldsOf(re) {
			if f := &fieldsOf(re)[i]; f.name == "key" && f.typ == tString && !f.isArray() && f.ver.has(v) && !f.tagged.has(v) {
				return f
			}
		}
	}
	if g.typ == tInt32 && strings.Contains(strings.ToLower(g.name), "partition") {
		for i := range fieldsOf(re) {
			if f := &fieldsOf(re)[i]; partitionKey(f.name) && f.typ == tInt32 && !f.isArray() && f.ver.has(v) && !f.tagged.has(v) {
				return f
			}
		}
	}
	return nil
}

// entityField is s's scalar field of entity e and type t at version v, or nil.
func entityField(s *structDesc, e, t uint8, v int16) *field {
	for i := range fieldsOf(s) {
		if g := &fieldsOf(s)[i]; g.entity == e && g.typ == t && !g.isArray() && g.ver.has(v) && !g.tagged.has(v) {
			return g
		}
	}
	return nil
}

// entityShared reports whether the structs a and b have scalar fields of one entity
// type (and value type) at version v.
func entityShared(a, b *structDesc, v int16) bool {
	for i := range fieldsOf(a) {
		if f := &fieldsOf(a)[i]; f.entity != eNone && !f.isArray() && f.ver.has(v) && entityField(b, f.entity, f.typ, v) != nil {
			return true
		}
	}
	return false
}

// keysShared reports whether the structs a and b share a scalar key: a field of the same
// name and type, or a partition index.
func keysShared(a, b *structDesc, v int16) bool {
	for i := range fieldsOf(a) {
		f := &fieldsOf(a)[i]
		if f.isArray() || !f.ver.has(v) || f.name == "errorCode" || f.name == "errorMessage" {
			continue
		}
		if keyField(b, f, v) != nil {
			return true
		}
	}
	return false
}
