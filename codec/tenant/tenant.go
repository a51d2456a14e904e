// Package tenant maps Kafka requests and responses between a tenant's view of a
// cluster and the shared cluster behind it (a "virtual cluster"): every topic name,
// group id and transactional id a tenant's client sends gets the tenant's prefix, and
// every one the broker answers with has it removed, with the entities of other tenants
// (and the cluster's internal topics) left out of lists.
//
// The fields to rename are found from Kafka's message descriptors: every string field
// whose entityType is topicName, groupId or transactionalId, in every api and version,
// tagged fields included. A few fields carry an entity without declaring it, and are
// mapped by the field that says what they hold: FindCoordinator's key and
// coordinatorKeys (by keyType), the config apis' resourceName (by resourceType), and
// the topics in a classic consumer group's subscriptions and assignments, bytes the
// descriptors call opaque (by protocolType; see Session).
//
// Tenancy fails closed. An api is Mapped (its entity names are renamed both ways),
// Passed (it names no entity: ApiVersions, SASL, DescribeCluster) or Refused: every
// api a tenant must not use (ACLs, quotas, SCRAM credentials, delegation tokens,
// partition reassignment, leader election, log dirs, features, telemetry, Kafka
// Streams groups, inter-broker and controller apis) and every api key this package
// does not know. A consumer group's topic regex is matched behind the prefix. A Mapped
// request whose meaning a prefix cannot keep (a topic regex with anchors, a
// transactional id pattern, a config resource of another type) is refused, and so
// is a response that names an entity outside the tenant where it cannot be left out.
//
// What a tenant still observes: broker ids, hosts and racks (Metadata,
// DescribeCluster, FindCoordinator), the cluster id, the cluster's api versions and
// features, producer ids and epochs, and the broker configs (DescribeConfigs of a
// BROKER resource, read only). Quotas, ACLs and credentials are not reachable.
package tenant

import (
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/kwire/kwire/internal/proto"
	"github.com/kwire/kwire/internal/transcode"
	"github.com/kwire/kwire/internal/wire"
)

// Access is what a tenant may do with an api.
type Access uint8

const (
	// Refused: the api is answered with CLUSTER_AUTHORIZATION_FAILED (or the
	// connection closed where its response has no error field) and never reaches the
	// broker; a proxy also leaves it out of ApiVersions responses.
	Refused Access = iota
	// Passed: the api names no tenant entity; it is forwarded unchanged.
	Passed
	// Mapped: the api's entity names are prefixed in requests and stripped in
	// responses.
	Mapped
)

func (a Access) String() string {
	switch a {
	case Passed:
		return "passed"
	case Mapped:
		return "mapped"
	}
	return "refused"
}

// Api keys with fields mapped by hand.
const (
	keyFindCoordinator         = 10
	keyJoinGroup               = 11 // and SyncGroup, DescribeGroups: consumer-protocol bytes
	keySyncGroup               = 14
	keyDescribeGroups          = 15
	keyDescribeConfigs         = 32
	keyAlterConfigs            = 33
	keyIncrementalAlterConfigs = 44
	keyListTransactions        = 66
	keyConsumerGroupHeartbeat  = 68
	keyConsumerGroupDescribe   = 69
	keyDescribeTopics          = 75 // DescribeTopicPartitions
)

// access is the table of api keys a tenant may use; every other key is Refused.
var access = map[int16]Access{
	0:  Mapped, // Produce
	1:  Mapped, // Fetch
	2:  Mapped, // ListOffsets
	3:  Mapped, // Metadata
	8:  Mapped, // OffsetCommit
	9:  Mapped, // OffsetFetch
	10: Mapped, // FindCoordinator (key by keyType)
	11: Mapped, // JoinGroup
	12: Mapped, // Heartbeat
	13: Mapped, // LeaveGroup
	14: Mapped, // SyncGroup
	15: Mapped, // DescribeGroups
	16: Mapped, // ListGroups
	17: Passed, // SaslHandshake
	18: Passed, // ApiVersions
	19: Mapped, // CreateTopics
	20: Mapped, // DeleteTopics
	21: Mapped, // DeleteRecords
	22: Mapped, // InitProducerId
	23: Mapped, // OffsetForLeaderEpoch
	24: Mapped, // AddPartitionsToTxn
	25: Mapped, // AddOffsetsToTxn
	26: Mapped, // EndTxn
	28: Mapped, // TxnOffsetCommit
	32: Mapped, // DescribeConfigs (TOPIC and GROUP resources renamed, BROKER read)
	33: Mapped, // AlterConfigs (TOPIC and GROUP resources)
	36: Passed, // SaslAuthenticate
	37: Mapped, // CreatePartitions
	42: Mapped, // DeleteGroups
	44: Mapped, // IncrementalAlterConfigs (TOPIC and GROUP resources)
	47: Mapped, // OffsetDelete
	60: Passed, // DescribeCluster
	61: Mapped, // DescribeProducers
	65: Mapped, // DescribeTransactions
	66: Mapped, // ListTransactions (no transactionalIdPattern)
	68: Mapped, // ConsumerGroupHeartbeat (subscribedTopicRegex behind the prefix)
	69: Mapped, // ConsumerGroupDescribe
	75: Mapped, // DescribeTopicPartitions
	76: Mapped, // ShareGroupHeartbeat
	77: Mapped, // ShareGroupDescribe
	78: Mapped, // ShareFetch
	79: Mapped, // ShareAcknowledge
	90: Mapped, // DescribeShareGroupOffsets
	91: Mapped, // AlterShareGroupOffsets
	92: Mapped, // DeleteShareGroupOffsets
}

// APIAccess is what a tenant may do with api key.
func APIAccess(key int16) Access {
	return access[key] // Refused for every key not listed
}

// entities is the mask of entity types a tenant's prefix applies to.
const entities = 1<<transcode.EntityTopicName | 1<<transcode.EntityGroupID | 1<<transcode.EntityTransactionalID

// RequestNames reports whether a request of api key at version may carry a name to
// prefix: a Mapped api whose request has, at that version, a field of an entity type
// or one mapped by hand. A proxy forwards other requests of Mapped and Passed apis
// unread.
func RequestNames(key, version int16) bool {
	if access[key] != Mapped {
		return false
	}
	switch key {
	case keyFindCoordinator, keyDescribeConfigs, keyAlterConfigs, keyIncrementalAlterConfigs:
		return true
	case keyListTransactions:
		return version >= 2 // transactionalIdPattern is refused
	}
	return hasNames(key, proto.KindRequest, version)
}

// names[kind][key] has bit v set when the request (kind 0) or response (1) of api key
// at version v (below 64) has an entity field: computed once, as a proxy asks per
// request.
var (
	namesOnce sync.Once
	names     [2][]uint64
)

func hasNames(key int16, kind proto.Kind, version int16) bool {
	namesOnce.Do(func() {
		for k, kd := range []proto.Kind{proto.KindRequest, proto.KindResponse} {
			names[k] = make([]uint64, 128)
			for key := range names[k] {
				for v := int16(0); v < 64; v++ {
					if transcode.HasEntities(int16(key), kd, v, entities) {
						names[k][key] |= 1 << v
					}
				}
			}
		}
	})
	k := 0
	if kind == proto.KindResponse {
		k = 1
	}
	if key < 0 || int(key) >= len(names[k]) || version < 0 || version >= 64 {
		return transcode.HasEntities(key, kind, version, entities)
	}
	return names[k][key]&(1<<version) != 0
}

// ResponseNames is RequestNames for the response of api key at version: whether it
// may carry a name to strip (or an entity to leave out).
func ResponseNames(key, version int16) bool {
	if access[key] != Mapped {
		return false
	}
	switch key {
	case keyFindCoordinator:
		return version >= 4 // coordinators[].key
	case keyJoinGroup, keySyncGroup:
		return true // a consumer group's subscriptions and assignments
	case keyDescribeConfigs, keyAlterConfigs, keyIncrementalAlterConfigs:
		return true
	}
	return hasNames(key, proto.KindResponse, version)
}

// Tenant maps messages for one tenant prefix. It is safe for concurrent use.
type Tenant struct {
	prefix string
	docs   sync.Pool
}

// ErrRefused is the error of a request or response a tenant may not pass (errors.Is);
// the error's text says why.
var ErrRefused = errors.New("kwire: refused for the tenant")

func refused(why string) error {
	return &refusal{why}
}

type refusal struct{ why string }

func (e *refusal) Error() string        { return ErrRefused.Error() + ": " + e.why }
func (e *refusal) Is(target error) bool { return target == ErrRefused }

// New returns the Tenant of prefix, which must be 1 to 200 characters Kafka allows in
// topic names (ASCII letters, digits, '.', '_' and '-').
func New(prefix string) (*Tenant, error) {
	if prefix == "" || len(prefix) > 200 {
		return nil, errors.New("tenant prefix " + strconv.Quote(prefix) + ": want 1 to 200 characters")
	}
	for i := 0; i < len(prefix); i++ {
		c := prefix[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return nil, errors.New("tenant prefix " + strconv.Quote(prefix) + ": character " + strconv.QuoteRune(rune(c)) + " at " + strconv.Itoa(i) +
				" is not allowed in a topic name (letters, digits, '.', '_', '-')")
		}
	}
	return &Tenant{prefix: prefix}, nil
}

// Prefix is the tenant's prefix.
func (t *Tenant) Prefix() string { return t.prefix }

// Counts says what a mapping did.
type Counts struct {
	// Renamed is the number of names prefixed (requests) or stripped (responses).
	Renamed int
	// Hidden is the number of list elements left out of a response: entities of other
	// tenants, and the cluster's internal topics.
	Hidden int
	// ConsumerGroup is set for a JoinGroup or SyncGroup request of a group that uses
	// the consumer protocol: Session.Response needs it for the response.
	ConsumerGroup bool
}

// parse indexes a message of a Mapped api in a pooled Doc (put it back when done). For
// a Refused api it returns no Doc and the refusal; for a Passed one, no Doc and dst
// with the body appended unchanged; for a body that does not parse, no Doc and the
// error.
func (t *Tenant) parse(dst, body []byte, key, version int16, kind proto.Kind) (*transcode.Doc, []byte, error) {
	switch access[key] {
	case Refused:
		return nil, dst, refused("api key " + strconv.Itoa(int(key)) + " is not open to tenants")
	case Passed:
		return nil, append(dst, body...), nil
	}
	d, ok := t.docs.Get().(*transcode.Doc)
	if !ok {
		d = new(transcode.Doc)
	}
	if err := d.ParseAPI(body, key, kind, version); err != nil {
		t.docs.Put(d)
		return nil, dst, err
	}
	return d, dst, nil
}

// Request appends to dst the request body (no header) of api key at version with every
// entity name prefixed. A Refused api, or a request a prefix cannot map, is an error
// (ErrRefused); so is a body that does not parse. A proxy maps a connection's messages
// with a Session, which also maps the SyncGroup requests before v5 of consumer groups.
func (t *Tenant) Request(dst, body []byte, key, version int16) ([]byte, Counts, error) {
	return t.request(dst, body, key, version, nil)
}

func (t *Tenant) request(dst, body []byte, key, version int16, s *Session) ([]byte, Counts, error) {
	var c Counts
	d, out, err := t.parse(dst, body, key, version, proto.KindRequest)
	if d == nil {
		return out, c, err
	}
	defer t.docs.Put(d)
	root := d.Root()
	switch key {
	case keyFindCoordinator:
		keyType := int64(0) // v0: groups only
		if n := d.Field(root, "keyType"); n != transcode.NoNode {
			keyType = d.Int(n)
		}
		if keyType < 0 || keyType > 2 { // group, transaction, share group
			return dst, c, refused("FindCoordinator keyType " + strconv.FormatInt(keyType, 10) + " is not a group or a transaction")
		}
		if n := d.Field(root, "key"); n != transcode.NoNode {
			if err := t.prefixName(d, n, &c); err != nil {
				return dst, c, err
			}
		}
		for n := d.First(d.Field(root, "coordinatorKeys")); n != transcode.NoNode; n = d.Next(n) {
			if err := t.prefixName(d, n, &c); err != nil {
				return dst, c, err
			}
		}
	case keyDescribeConfigs, keyAlterConfigs, keyIncrementalAlterConfigs:
		for r := d.First(d.Field(root, "resources")); r != transcode.NoNode; r = d.Next(r) {
			switch typ := d.Int(d.Field(r, "resourceType")); {
			case typ == resourceTopic || typ == resourceGroup:
				if err := t.prefixName(d, d.Field(r, "resourceName"), &c); err != nil {
					return dst, c, err
				}
			case typ == resourceBroker && key == keyDescribeConfigs:
			default:
				return dst, c, refused("config resource type " + strconv.FormatInt(typ, 10) + " is not open to tenants")
			}
		}
	case keyListTransactions:
		if n := d.Field(root, "transactionalIdPattern"); n != transcode.NoNode && !d.IsNull(n) {
			return dst, c, refused("ListTransactions with a transactionalIdPattern")
		}
	case keyJoinGroup, keySyncGroup:
		group, _ := d.Str(d.Field(root, "groupId"))
		consumer, known := isConsumer(d, d.Field(root, "protocolType"))
		if key == keyJoinGroup && s != nil {
			s.joined(string(group), consumer)
		}
		if !known && s != nil {
			consumer = s.consumerGroup(string(group))
		}
		k, err := t.mapGroupBytes(d, key, true, consumer)
		if err != nil {
			return dst, c, err
		}
		c.Renamed += k
		c.ConsumerGroup = consumer
	case keyDescribeTopics:
		// Every topic (an empty list) is a listing from a cursor, in name order: a
		// tenant's listing starts at its prefix (the broker starts at the first name at
		// or after the cursor's, which need not exist), and Response ends it where the
		// prefix's names end.
		if n := d.Field(root, "cursor"); d.Len(d.Field(root, "topics")) == 0 && d.IsNull(n) {
			cursor := append(wire.AppendString([]byte{1}, t.prefix, true), 0, 0, 0, 0, 0) // present, topicName, partitionIndex 0, no tags
			if err := d.SetStruct(n, cursor); err != nil {
				return dst, c, err
			}
			c.Renamed++ // the cursor's name: the (empty) start of the tenant's names, prefixed
		}
	case keyConsumerGroupHeartbeat:
		if n := d.Field(root, "subscribedTopicRegex"); n != transcode.NoNode && !d.IsNull(n) {
			if s, _ := d.Str(n); len(s) > 0 {
				r, ok := t.wrapRegex(string(s))
				if !ok {
					return dst, c, refused("ConsumerGroupHeartbeat with a subscribedTopicRegex that has anchors (^ or $)")
				}
				if err := d.SetString(n, r); err != nil {
					return dst, c, err
				}
				c.Renamed++
			}
		}
	}
	kept, _, err := d.FilterEntities(entities, func(_ uint8, name string) (string, transcode.Verdict) {
		return t.prefix + name, transcode.Keep
	})
	c.Renamed += kept
	if err != nil {
		return dst, c, err
	}
	out, err = d.AppendTo(dst)
	return out, c, err
}

// prefixName prefixes the name at n (a field mapped by hand), counting it in c.
func (t *Tenant) prefixName(d *transcode.Doc, n transcode.Node, c *Counts) error {
	s, null := d.Str(n)
	if null {
		return nil
	}
	c.Renamed++
	return d.SetString(n, t.prefix+string(s))
}

// stripName strips the prefix from the name at n (what it is, for the error of a
// name outside the tenant), counting it in c.
func (t *Tenant) stripName(d *transcode.Doc, n transcode.Node, what string, c *Counts) error {
	s, null := d.Str(n)
	if null {
		return nil
	}
	rest, ok := strings.CutPrefix(string(s), t.prefix)
	if !ok {
		return refused(what + " " + strconv.Quote(string(s)) + " is outside the tenant")
	}
	c.Renamed++
	return d.SetString(n, rest)
}

// wrapRegex is a topic regex of the tenant's view as the broker must see it. The
// broker matches a consumer group's regex against whole topic names (RE2/J, full
// match), so the tenant's regex r matches a name of its own exactly when
// "<prefix, quoted>(?:r)" matches the prefixed name. Anchors would lose their meaning
// behind the prefix: a regex with ^ or $ is refused.
func (t *Tenant) wrapRegex(r string) (string, bool) {
	if strings.ContainsAny(r, "^$") {
		return "", false
	}
	return t.quotedPrefix() + "(?:" + r + ")", true
}

// unwrapRegex is wrapRegex undone; ok is false for a regex it did not write.
func (t *Tenant) unwrapRegex(r string) (string, bool) {
	inner, ok := strings.CutPrefix(r, t.quotedPrefix()+"(?:")
	if !ok || !strings.HasSuffix(inner, ")") {
		return "", false
	}
	return inner[:len(inner)-1], true
}

// quotedPrefix is the prefix as a regex: of the characters a prefix may have, only
// '.' means something in a regex.
func (t *Tenant) quotedPrefix() string { return strings.ReplaceAll(t.prefix, ".", `\.`) }

// Config resource types (ConfigResource.Type).
const (
	resourceTopic  = 2
	resourceBroker = 4
	resourceGroup  = 32
)

// Response appends to dst the response body (no header) of api key at version with the
// prefix stripped from every entity name, every array element that names an entity
// outside the tenant left out, and the prefix removed from error messages. An entity
// outside the tenant where no element can be left out is an error (ErrRefused): the
// response must not reach the tenant. JoinGroup responses before v7 and SyncGroup
// responses before v5 do not say whether their group uses the consumer protocol:
// Session.Response maps them.
func (t *Tenant) Response(dst, body []byte, key, version int16) ([]byte, Counts, error) {
	return t.response(dst, body, key, version, false)
}

func (t *Tenant) response(dst, body []byte, key, version int16, consumer bool) ([]byte, Counts, error) {
	var c Counts
	d, out, err := t.parse(dst, body, key, version, proto.KindResponse)
	if d == nil {
		return out, c, err
	}
	defer t.docs.Put(d)
	root := d.Root()
	switch key {
	case keyFindCoordinator:
		for n := d.First(d.Field(root, "coordinators")); n != transcode.NoNode; n = d.Next(n) {
			if err := t.stripName(d, d.Field(n, "key"), "coordinator key", &c); err != nil {
				return dst, c, err
			}
		}
	case keyJoinGroup, keySyncGroup, keyDescribeGroups:
		k, err := t.mapGroupBytes(d, key, false, consumer)
		if err != nil {
			return dst, c, err
		}
		c.Renamed += k
	case keyConsumerGroupDescribe:
		for g := d.First(d.Field(root, "groups")); g != transcode.NoNode; g = d.Next(g) {
			for m := d.First(d.Field(g, "members")); m != transcode.NoNode; m = d.Next(m) {
				n := d.Field(m, "subscribedTopicRegex")
				s, null := d.Str(n)
				if n == transcode.NoNode || null {
					continue
				}
				r, ok := t.unwrapRegex(string(s))
				if !ok {
					return dst, c, refused("a member's subscribedTopicRegex " + strconv.Quote(string(s)) + " is not the tenant's")
				}
				if err := d.SetString(n, r); err != nil {
					return dst, c, err
				}
				c.Renamed++
			}
		}
	case keyDescribeTopics:
		// A next cursor past the tenant's names ends its listing: names are listed in
		// order, and the prefix's are contiguous.
		if n := d.Field(root, "nextCursor"); n != transcode.NoNode && !d.IsNull(n) {
			if s, _ := d.Str(d.Field(n, "topicName")); !strings.HasPrefix(string(s), t.prefix) {
				if err := d.SetStruct(n, []byte{0xff}); err != nil {
					return dst, c, err
				}
				c.Hidden++
			}
		}
	case keyDescribeConfigs, keyAlterConfigs, keyIncrementalAlterConfigs:
		list := "results"
		if key != keyDescribeConfigs {
			list = "responses"
		}
		for r := d.First(d.Field(root, list)); r != transcode.NoNode; r = d.Next(r) {
			if typ := d.Int(d.Field(r, "resourceType")); typ == resourceTopic || typ == resourceGroup {
				if err := t.stripName(d, d.Field(r, "resourceName"), "config resource", &c); err != nil {
					return dst, c, err
				}
			}
		}
	}
	kept, dropped, err := d.FilterEntities(entities, func(_ uint8, name string) (string, transcode.Verdict) {
		if rest, ok := strings.CutPrefix(name, t.prefix); ok {
			return rest, transcode.Keep
		}
		return name, transcode.Drop
	})
	c.Renamed += kept
	c.Hidden += dropped
	if err != nil {
		if errors.Is(err, transcode.ErrRenameRefused) {
			return dst, c, refused("the response names an entity outside the tenant outside any list")
		}
		return dst, c, err
	}
	if _, err := d.ReplaceInMessages(t.prefix, ""); err != nil {
		return dst, c, err
	}
	out, err = d.AppendTo(dst)
	return out, c, err
}
