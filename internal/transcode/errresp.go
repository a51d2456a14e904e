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
//   - an array of structs whose elements can hold the error and that answers an array
//     of the request (the same name; elements with a field of the same entity type, as
//     topics[] answers topicData[]; a request array of names, as DeleteTopics'
//     topicNames answers responses[]; elements that share a key; or the elements of an
//     array nested in the request's, as AlterReplicaLogDirs' results[] answers
//     dirs[].topics[]) gets one element per request element, which carries over the
//     request element's identity only: its names and ids, its entity (topicName,
//     groupId, ...) and its partition index under any of its names. Nothing else of the
//     request comes back (not a requested partition count, timestamp or member id);
//   - the fields where Kafka's hand-written answers differ from the descriptors'
//     defaults get Kafka's values (kafkaValues: no offset, no node, no epoch: -1), and
//     the few arrays Kafka answers though they hold no error (identityArrays) and
//     AlterUserScramCredentials' results (one per user, sorted) are answered as Kafka does;
//   - every other field keeps its default.
//
// `make conformance-java` holds this to Kafka: its errors mode compares the error
// response to every random request of every api and version with the one Kafka's
// getErrorResponse builds (conformance/reference, ErrorResponses.java), and lists the
// differences it allows: kwire answers entities in arrays Kafka leaves empty beside its
// top-level error, keeps the request's order where Kafka's follows a hash map, and
// carries the refusal's message in every errorMessage.
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
	for i := range fieldsOf(rs) {
		f := &fieldsOf(rs)[i]
		if !f.ver.has(w.v) || f.tagged.has(w.v) {
			continue
		}
		at := len(b)
		b = jsonx.Key(b, first, f.name)
		vat := len(b)
		if b = w.value(b, f, rq, q); len(b) == vat {
			b = b[:at] // no value: the field keeps its default
			continue
		}
		first = false
	}
	return append(b, '}')
}

// value writes the value of response field f answering the request struct rq at node q
// (rq nil: nothing answered), or nothing when f keeps its default.
func (w *errWriter) value(b []byte, f *field, rq *structDesc, q Node) []byte {
	switch {
	case (f.name == "errorCode" || f.name == "partitionErrorCode") && f.typ == tInt16 && !f.isArray():
		if w.depth == 0 {
			w.top = true
		} else {
			w.nested++
		}
		b = jsonx.AppendInt(b, int64(w.code))
		return b
	case f.name == "errorMessage" && f.typ == tString && !f.isArray():
		b = jsonx.AppendString(b, w.msg)
		return b
	case f.typ == tStruct && f.isArray():
		if w.resp == "AlterUserScramCredentialsResponse" && f.name == "results" && rq != nil {
			b = w.scramResults(b, f, rq, q)
			return b
		}
		if g, mode := w.answers(f, rq); g != nil {
			b = w.array(b, f, g, mode, w.d.Field(q, g.name))
			return b
		}
		if val, ok := kafkaValue(w.resp, f, w.v); ok {
			b = append(b, val...)
		}
		return b // else the default: no element
	case f.typ == tStruct:
		if rq == nil {
			return b
		}
		g := fieldNamed(rq, f.name, w.v)
		if g == nil || g.typ != tStruct || g.isArray() {
			return b
		}
		sq := w.d.Field(q, g.name)
		if sq == NoNode || w.d.IsNull(sq) {
			return b
		}
		w.depth++
		b = w.object(b, &schemaStructs[f.sub], &schemaStructs[g.sub], sq)
		w.depth--
		return b
	case !f.isArray() && rq != nil:
		if g := keyField(rq, f, w.v, w.depth); g != nil {
			if n := w.d.Field(q, g.name); n != NoNode {
				b = w.scalar(b, f, n)
				return b
			}
		}
	}
	if val, ok := kafkaValue(w.resp, f, w.v); ok {
		b = append(b, val...)
	} else if f.defaultNil() && !(f.nullableEver() && f.nul.has(w.v)) {
		// A default of null where the version does not allow one: the empty value.
		b = w.empty(b, f)
	}
	return b
}

// kafkaValues are the fields Kafka's error responses set to something other than
// their descriptors' defaults (response.field: JSON value): no offset, no node, no
// epoch, no principal (-1, "User:ANONYMOUS"), empty records, or null. They are
// facts of Kafka's hand-written getErrorResponse methods, which the descriptors do
// not carry; the errors mode of conformance/reference compares every api's error
// response with Kafka's and finds any this list misses.
const kafkaValues = `
ProduceResponse.baseOffset=-1
FindCoordinatorResponse.nodeId=-1
FindCoordinatorResponse.port=-1
FetchResponse.highWatermark=-1
FetchResponse.records=""
OffsetFetchResponse.committedOffset=-1
DeleteRecordsResponse.lowWatermark=-1
InitProducerIdResponse.producerEpoch=-1
JoinGroupResponse.protocolName=null
DescribeClientQuotasResponse.entries=null
CreateDelegationTokenResponse.principalType="User"
CreateDelegationTokenResponse.principalName="ANONYMOUS"
CreateDelegationTokenResponse.tokenRequesterPrincipalType="User"
CreateDelegationTokenResponse.tokenRequesterPrincipalName="ANONYMOUS"
CreateDelegationTokenResponse.issueTimestampMs=-1
CreateDelegationTokenResponse.expiryTimestampMs=-1
CreateDelegationTokenResponse.maxTimestampMs=-1
`

// kafkaValue is field f's value in Kafka's error responses of message resp at version
// v when it is not the default (kafkaValues); a null only where v allows one.
func kafkaValue(resp string, f *field, v int16) (string, bool) {
	val, ok := tableValue(kafkaValues, resp, f.name)
	if !ok || f.isArray() && val != "null" || val == "null" && !(f.nullableEver() && f.nul.has(v)) {
		return "", false
	}
	return val, true
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
	// byNested: one response element per element of an array in the elements of the
	// request array (AlterReplicaLogDirs' results[] answers dirs[].topics[]).
	byNested
)

// answers is the request array (a field of rq) that the response array f answers.
func (w *errWriter) answers(f *field, rq *structDesc) (*field, int) {
	re := &schemaStructs[f.sub]
	if rq == nil || !carriesError(re, w.v) && !isIdentityArray(w.resp, f.name) {
		// Elements that cannot hold the error are no answer (a topic's configs, a
		// token list): the array keeps its default, as in Kafka's error responses.
		return nil, 0
	}
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
	for i := range fieldsOf(rq) {
		g := &fieldsOf(rq)[i]
		if g.isArray() && g.typ == tStruct && g.ver.has(w.v) && !g.tagged.has(w.v) && nestedAnswer(re, &schemaStructs[g.sub], w.v) != nil {
			return g, byNested
		}
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

// nestedAnswer is the array field of the request element qe whose elements the response
// element re answers (the same entity in both), or nil: the results of a request that
// groups its entities under something else (AlterReplicaLogDirs' topics under dirs).
func nestedAnswer(re, qe *structDesc, v int16) *field {
	for i := range fieldsOf(qe) {
		if g := &fieldsOf(qe)[i]; g.isArray() && g.typ == tStruct && g.ver.has(v) && !g.tagged.has(v) && entityShared(re, &schemaStructs[g.sub], v) {
			return g
		}
	}
	return nil
}

// scramResults writes AlterUserScramCredentials' results[]: one per user the request
// names, in its deletions[] or upsertions[], each once and in order of name, as Kafka's
// error response has them.
func (w *errWriter) scramResults(b []byte, f *field, rq *structDesc, q Node) []byte {
	var users []string
	for _, arr := range [...]string{"deletions", "upsertions"} {
		if fieldNamed(rq, arr, w.v) == nil {
			continue
		}
		for e := w.d.First(w.d.Field(q, arr)); e != NoNode; e = w.d.Next(e) {
			s, _ := w.d.Str(w.d.Field(e, "name"))
			users = append(users, string(s))
		}
	}
	for i := 1; i < len(users); i++ { // a few names: an insertion sort
		for j := i; j > 0 && users[j] < users[j-1]; j-- {
			users[j], users[j-1] = users[j-1], users[j]
		}
	}
	b = append(b, '[')
	w.depth++
	for i, u := range users {
		if i > 0 && u == users[i-1] {
			continue // each user once
		}
		if i > 0 {
			b = append(b, ',')
		}
		o := w.object(nil, &schemaStructs[f.sub], nil, NoNode)
		b = jsonx.Key(append(b, o[:len(o)-1]...), len(o) == 2, "user")
		b = append(jsonx.AppendString(b, u), '}')
	}
	w.depth--
	return append(b, ']')
}

// identityArrays are the arrays Kafka's error responses answer though their elements
// hold no error: they say which entity the error is about (a quota's entity, the topics
// and partitions whose reassignments were asked for).
const identityArrays = `
AlterClientQuotasResponse.entity=
ListPartitionReassignmentsResponse.topics=
ListPartitionReassignmentsResponse.partitions=
`

func isIdentityArray(message, field string) bool {
	_, ok := tableValue(identityArrays, message, field)
	return ok
}

// tableValue looks message.field up in a table of lines "message.field=value".
func tableValue(table, message, field string) (string, bool) {
	key := "\n" + message + "." + field + "="
	i := strings.Index(table, key)
	if i < 0 {
		return "", false
	}
	v := table[i+len(key):]
	return v[:strings.IndexByte(v, '\n')], true
}

// carriesError reports whether struct s, or a struct below it, has an error code field
// at version v.
func carriesError(s *structDesc, v int16) bool {
	if hasErrorCode(s, v) {
		return true
	}
	for i := range fieldsOf(s) {
		if f := &fieldsOf(s)[i]; f.typ == tStruct && f.ver.has(v) && !f.tagged.has(v) && carriesError(&schemaStructs[f.sub], v) {
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
	n := 0
	for e := w.d.First(q); e != NoNode; e = w.d.Next(e) {
		switch mode {
		case byElement:
			b = w.element(b, n)
			b = w.object(b, re, &schemaStructs[g.sub], e)
			n++
		case byNested:
			inner := nestedAnswer(re, &schemaStructs[g.sub], w.v)
			for ie := w.d.First(w.d.Field(e, inner.name)); ie != NoNode; ie = w.d.Next(ie) {
				b = w.element(b, n)
				b = w.object(b, re, &schemaStructs[inner.sub], ie)
				n++
			}
		default:
			// One element per value: the value in the response element's field of the
			// same entity, the rest as object writes it with no request struct.
			b = w.element(b, n)
			b = w.object(b, re, nil, NoNode)
			if ef := valueTarget(re, g, w.v); ef != nil {
				b = b[:len(b)-1] // reopen the object
				b = jsonx.Key(b, b[len(b)-1] == '{', ef.name)
				b = w.scalar(b, ef, e)
				b = append(b, '}')
			}
			n++
		}
	}
	w.depth--
	return append(b, ']')
}

// element starts the array element after n others.
func (w *errWriter) element(b []byte, n int) []byte {
	if n > 0 {
		b = append(b, ',')
	}
	return b
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
			// A topic named by id alone (a null name) is answered null, except by
			// Metadata, whose error response writes "" (its names were not nullable
			// before v12).
			if f.nullableEver() && f.nul.has(w.v) && w.resp != "MetadataResponse" {
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

// keyField is the field of rq whose value the response scalar f carries over, nil for
// none. Only an answered element's identity is carried (Kafka's getErrorResponse sets
// nothing else from the request): its names and ids (strings and uuids of the same
// name, a resource's type), its entity (of the same name, or a name of the same entity
// type under another name, as topic to name), its partition index under any of its
// names. Counts, offsets, epochs, timestamps and settings the request sent are not
// answers: the response keeps its defaults there. At the root only a fetch session's
// id is carried (Fetch answers within the session the client named).
func keyField(rq *structDesc, f *field, v int16, depth int) *field {
	if !copyable(f.typ) {
		return nil
	}
	if depth == 0 {
		if f.name == "sessionId" && f.typ == tInt32 {
			return fieldNamed(rq, f.name, v)
		}
		return nil
	}
	if g := fieldNamed(rq, f.name, v); g != nil {
		if g.typ != f.typ || g.isArray() {
			return nil
		}
		if f.typ == tString || f.typ == tUuid || f.entity != eNone || partitionKey(f.name) && f.typ == tInt32 || f.name == "resourceType" {
			return g
		}
		return nil
	}
	if f.entity != eNone && f.typ == tString {
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
		if keyField(b, f, v, 1) != nil {
			return true
		}
	}
	return false
}
