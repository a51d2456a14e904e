package tenant

import (
	"encoding/binary"
	"strings"

	"github.com/kwire/kwire/internal/transcode"
)

// Kafka's classic group protocol carries topic names inside bytes the descriptors
// declare opaque: when a group's protocol type is "consumer", each member's JoinGroup
// metadata is a ConsumerProtocolSubscription (the topics it subscribes to, the
// partitions it owns) and each assignment in SyncGroup a ConsumerProtocolAssignment.
// The broker reads them: a classic group's subscribed topics decide which of its
// committed offsets may expire and which OffsetDelete refuses, and a classic group
// that moves to the consumer protocol keeps them. So under a tenant they are mapped as
// the named fields are: prefixed toward the broker, stripped toward the client.
//
// The protocol type is in every JoinGroup request, but not in SyncGroup requests
// before v5, nor in JoinGroup responses before v7 and SyncGroup responses before v5:
// a Session remembers it for one connection.

// consumerProtocol is the protocol type of Kafka's consumer groups.
const consumerProtocol = "consumer"

// Session is a Tenant's mapping on one connection: it remembers the groups the
// connection joined with the consumer protocol, for the SyncGroup requests that do not
// say so, and Counts.ConsumerGroup tells the caller to pass that on to Response. It is
// not safe for concurrent use (one connection's requests come in order).
type Session struct {
	t      *Tenant
	groups []string // group ids (as the tenant names them) joined with the consumer protocol
}

// NewSession returns a Session of t for one connection.
func (t *Tenant) NewSession() *Session { return &Session{t: t} }

// Request is Tenant.Request on the session's connection.
func (s *Session) Request(dst, body []byte, key, version int16) ([]byte, Counts, error) {
	return s.t.request(dst, body, key, version, s)
}

// Response is Tenant.Response on the session's connection; consumerGroup is the
// Counts.ConsumerGroup of its request.
func (s *Session) Response(dst, body []byte, key, version int16, consumerGroup bool) ([]byte, Counts, error) {
	return s.t.response(dst, body, key, version, consumerGroup)
}

// joined records whether group uses the consumer protocol, as a JoinGroup said.
func (s *Session) joined(group string, consumer bool) {
	for i, g := range s.groups {
		if g == group {
			if !consumer {
				s.groups = append(s.groups[:i], s.groups[i+1:]...)
			}
			return
		}
	}
	if consumer && len(s.groups) < 64 { // a connection joins a few groups; bounded anyway
		s.groups = append(s.groups, group)
	}
}

// consumerGroup reports whether the connection joined group with the consumer protocol.
func (s *Session) consumerGroup(group string) bool {
	for _, g := range s.groups {
		if g == group {
			return true
		}
	}
	return false
}

// isConsumer reports whether the protocolType field of root says "consumer"; known is
// false when the message has no such field or it is null.
func isConsumer(d *transcode.Doc, n transcode.Node) (consumer, known bool) {
	if n == transcode.NoNode {
		return false, false
	}
	s, null := d.Str(n)
	return string(s) == consumerProtocol, !null
}

// consumerBytes maps the topic names in the consumer protocol's bytes b (a
// subscription, or an assignment when assignment is set): prefixed toward the broker
// (request), stripped where they have the prefix toward the client. Bytes that are not
// the consumer protocol come back as they are: the broker reads them as best it can,
// and they hold nothing of another tenant. A version newer than kwire knows is read as
// the newest it knows (the consumer protocol only appends fields), the rest kept.
func (t *Tenant) consumerBytes(b []byte, assignment, request bool) ([]byte, int) {
	if len(b) < 2 || b[0]&0x80 != 0 {
		return b, 0
	}
	name, list := "ConsumerProtocolSubscription", "ownedPartitions"
	if assignment {
		name, list = "ConsumerProtocolAssignment", "assignedPartitions"
	}
	d, ok := t.docs.Get().(*transcode.Doc)
	if !ok {
		d = new(transcode.Doc)
	}
	defer t.docs.Put(d)
	if d.Parse(b[2:], name, min(int16(binary.BigEndian.Uint16(b)), 3)) != nil {
		return b, 0
	}
	root := d.Root()
	n := 0
	for e := d.First(d.Field(root, "topics")); e != transcode.NoNode; e = d.Next(e) {
		n += t.rename(d, e, request) // a subscription's topics: strings of no declared entity type
	}
	for e := d.First(d.Field(root, list)); e != transcode.NoNode; e = d.Next(e) {
		n += t.rename(d, d.Field(e, "topic"), request)
	}
	if n == 0 {
		return b, 0
	}
	out, err := d.AppendTo(append(make([]byte, 0, len(b)+n*len(t.prefix)), b[:2]...))
	if err != nil {
		return b, 0
	}
	return out, n
}

// rename prefixes the name at n (request), or strips the prefix it has; it returns 1
// when it changed the name.
func (t *Tenant) rename(d *transcode.Doc, n transcode.Node, request bool) int {
	s, null := d.Str(n)
	if null {
		return 0
	}
	to := t.prefix + string(s)
	if !request {
		rest, ok := strings.CutPrefix(string(s), t.prefix)
		if !ok {
			return 0
		}
		to = rest
	}
	if d.SetString(n, to) != nil {
		return 0
	}
	return 1
}

// groupBytes maps the consumer-protocol bytes of field in each element of list under
// n (list "": the field of n itself).
func (t *Tenant) groupBytes(d *transcode.Doc, n transcode.Node, list, field string, assignment, request bool) (int, error) {
	e := n
	if list != "" {
		e = d.First(d.Field(n, list))
	}
	total := 0
	for ; e != transcode.NoNode; e = d.Next(e) {
		out, k := t.consumerBytes(d.Bytes(d.Field(e, field)), assignment, request)
		if k > 0 {
			if err := d.SetBytes(d.Field(e, field), out); err != nil {
				return total, err
			}
			total += k
		}
		if list == "" {
			break
		}
	}
	return total, nil
}

// mapGroupBytes maps the consumer-protocol bytes of a JoinGroup, SyncGroup or
// DescribeGroups message, for a group that uses the consumer protocol (consumer: what
// the caller knows when the message does not say). It returns the names mapped.
func (t *Tenant) mapGroupBytes(d *transcode.Doc, key int16, request, consumer bool) (int, error) {
	root := d.Root()
	if c, known := isConsumer(d, d.Field(root, "protocolType")); known {
		consumer = c
	}
	switch {
	case key == keyDescribeGroups:
		total := 0
		for g := d.First(d.Field(root, "groups")); g != transcode.NoNode; g = d.Next(g) {
			if c, _ := isConsumer(d, d.Field(g, "protocolType")); c {
				k, err := t.groupBytes(d, g, "members", "memberMetadata", false, false)
				total += k
				if err != nil {
					return total, err
				}
				k, err = t.groupBytes(d, g, "members", "memberAssignment", true, false)
				if total += k; err != nil {
					return total, err
				}
			}
		}
		return total, nil
	case !consumer:
		return 0, nil
	case key == keyJoinGroup && request:
		return t.groupBytes(d, root, "protocols", "metadata", false, true)
	case key == keyJoinGroup: // the leader's view of every member
		return t.groupBytes(d, root, "members", "metadata", false, false)
	case request: // SyncGroup
		return t.groupBytes(d, root, "assignments", "assignment", true, true)
	}
	return t.groupBytes(d, root, "", "assignment", true, false)
}
