package tenant

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/internal/transcode"
)

// subscription is a consumer's JoinGroup metadata: version, then the body at that
// version (up to 3), then trailing bytes (a newer version's fields).
func subscription(t testing.TB, version int16, topics []string, owned map[string][]int32, trailing []byte) []byte {
	t.Helper()
	s := codec.NewConsumerProtocolSubscription()
	s.Topics = topics
	for _, name := range sortedKeys(owned) {
		s.OwnedPartitions = append(s.OwnedPartitions, codec.ConsumerProtocolSubscriptionTopicPartition{Topic: name, Partitions: owned[name]})
	}
	s.UserData = []byte("user data")
	b, err := s.Encode(binary.BigEndian.AppendUint16(nil, uint16(version)), min(version, 3))
	if err != nil {
		t.Fatal(err)
	}
	return append(b, trailing...)
}

func assignment(t testing.TB, version int16, parts map[string][]int32) []byte {
	t.Helper()
	a := codec.NewConsumerProtocolAssignment()
	for _, name := range sortedKeys(parts) {
		a.AssignedPartitions = append(a.AssignedPartitions, codec.ConsumerProtocolAssignmentTopicPartition{Topic: name, Partitions: parts[name]})
	}
	b, err := a.Encode(binary.BigEndian.AppendUint16(nil, uint16(version)), min(version, 3))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sortedKeys(m map[string][]int32) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func encodeBody(t testing.TB, m interface {
	Encode([]byte, int16) ([]byte, error)
}, version int16) []byte {
	t.Helper()
	b, err := m.Encode(nil, version)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A consumer group's subscriptions and assignments reach the broker with the tenant's
// topic names, and come back with the client's, at every version of JoinGroup and
// SyncGroup, including those that do not carry the protocol type (the Session
// remembers it), and in DescribeGroups; other protocols' bytes pass untouched.
func TestConsumerProtocolMapped(t *testing.T) {
	ten, err := New("team-a.")
	if err != nil {
		t.Fatal(err)
	}
	owned := map[string][]int32{"orders": {0, 1}}
	for _, sv := range []int16{0, 1, 3, 4} { // 4: a newer version than kwire knows, its fields kept
		var trailing []byte
		if sv == 4 {
			trailing = []byte{0, 0, 0, 7}
		}
		client := subscription(t, sv, []string{"orders", "payments"}, owned, trailing)
		broker := subscription(t, sv, []string{"team-a.orders", "team-a.payments"}, map[string][]int32{"team-a.orders": {0, 1}}, trailing)
		if sv == 0 {
			broker = subscription(t, 0, []string{"team-a.orders", "team-a.payments"}, nil, nil) // v0 owns nothing
			client = subscription(t, 0, []string{"orders", "payments"}, nil, nil)
		}
		for _, jv := range []int16{0, 5, 6, 7, 9} {
			s := ten.NewSession()
			req := codec.NewJoinGroupRequest()
			req.GroupID, req.MemberID, req.ProtocolType = "g", "", "consumer"
			req.Protocols = []codec.JoinGroupRequestProtocol{{Name: "range", Metadata: client}}
			out, c, err := s.Request(nil, encodeBody(t, req, jv), 11, jv)
			if err != nil {
				t.Fatalf("JoinGroup v%d, subscription v%d: %v", jv, sv, err)
			}
			got := codec.NewJoinGroupRequest()
			if err := got.Decode(out, jv); err != nil {
				t.Fatal(err)
			}
			if got.GroupID != "team-a.g" || !bytes.Equal(got.Protocols[0].Metadata, broker) || !c.ConsumerGroup {
				t.Errorf("JoinGroup v%d, subscription v%d: group %q, metadata %x, want %x (consumer %v)", jv, sv, got.GroupID, got.Protocols[0].Metadata, broker, c.ConsumerGroup)
			}
			// The leader's response lists every member's subscription.
			resp := codec.NewJoinGroupResponse()
			resp.Members = []codec.JoinGroupResponseMember{{MemberID: "m-1", Metadata: broker}}
			if jv >= 7 {
				p := "consumer"
				resp.ProtocolType = &p
			}
			back, _, err := s.Response(nil, encodeBody(t, resp, jv), 11, jv, c.ConsumerGroup)
			if err != nil {
				t.Fatal(err)
			}
			gotResp := codec.NewJoinGroupResponse()
			if err := gotResp.Decode(back, jv); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gotResp.Members[0].Metadata, client) {
				t.Errorf("JoinGroup v%d response, subscription v%d: metadata %x, want %x", jv, sv, gotResp.Members[0].Metadata, client)
			}
			// SyncGroup on the same connection: before v5 it does not say the protocol.
			for _, yv := range []int16{0, 3, 4, 5} {
				sync := codec.NewSyncGroupRequest()
				sync.GroupID, sync.MemberID = "g", "m-1"
				if yv >= 5 {
					p := "consumer"
					sync.ProtocolType = &p
				}
				sync.Assignments = []codec.SyncGroupRequestAssignment{{MemberID: "m-1", Assignment: assignment(t, 1, map[string][]int32{"orders": {0}})}}
				out, c, err := s.Request(nil, encodeBody(t, sync, yv), 14, yv)
				if err != nil {
					t.Fatal(err)
				}
				gotSync := codec.NewSyncGroupRequest()
				if err := gotSync.Decode(out, yv); err != nil {
					t.Fatal(err)
				}
				want := assignment(t, 1, map[string][]int32{"team-a.orders": {0}})
				if !bytes.Equal(gotSync.Assignments[0].Assignment, want) || !c.ConsumerGroup {
					t.Errorf("SyncGroup v%d after JoinGroup v%d: assignment %x, want %x (consumer %v)", yv, jv, gotSync.Assignments[0].Assignment, want, c.ConsumerGroup)
				}
				sresp := codec.NewSyncGroupResponse()
				sresp.Assignment = want
				back, _, err := s.Response(nil, encodeBody(t, sresp, yv), 14, yv, c.ConsumerGroup)
				if err != nil {
					t.Fatal(err)
				}
				gotSresp := codec.NewSyncGroupResponse()
				if err := gotSresp.Decode(back, yv); err != nil {
					t.Fatal(err)
				}
				if wantBack := assignment(t, 1, map[string][]int32{"orders": {0}}); !bytes.Equal(gotSresp.Assignment, wantBack) {
					t.Errorf("SyncGroup v%d response: assignment %x, want %x", yv, gotSresp.Assignment, wantBack)
				}
			}
		}
	}
}

// Bytes of other protocols (Kafka Connect's, a custom one) and bytes that are not the
// consumer protocol pass as they are; so do names outside the tenant in a response
// (the tenant's own members wrote them) and a SyncGroup of a group this connection did
// not join with the consumer protocol.
func TestConsumerProtocolLeftAlone(t *testing.T) {
	ten, _ := New("team-a.")
	sub := subscription(t, 1, []string{"orders"}, nil, nil)
	for _, tc := range []struct {
		what, protocolType string
		metadata           []byte
	}{
		{"connect protocol", "connect", sub},
		{"not the consumer protocol", "consumer", []byte{0, 1, 0xff}},
		{"empty", "consumer", nil},
		{"negative version", "consumer", []byte{0x80, 0, 0, 0, 0, 0}},
	} {
		s := ten.NewSession()
		req := codec.NewJoinGroupRequest()
		req.GroupID, req.ProtocolType = "g", tc.protocolType
		req.Protocols = []codec.JoinGroupRequestProtocol{{Name: "p", Metadata: tc.metadata}}
		out, _, err := s.Request(nil, encodeBody(t, req, 9), 11, 9)
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		got := codec.NewJoinGroupRequest()
		if err := got.Decode(out, 9); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Protocols[0].Metadata, tc.metadata) && !(len(tc.metadata) == 0 && len(got.Protocols[0].Metadata) == 0) {
			t.Errorf("%s: metadata %x, want it unchanged %x", tc.what, got.Protocols[0].Metadata, tc.metadata)
		}
	}
	// A SyncGroup v3 on a connection that joined nothing: the protocol is unknown.
	s := ten.NewSession()
	sync := codec.NewSyncGroupRequest()
	sync.GroupID = "g"
	a := assignment(t, 1, map[string][]int32{"orders": {0}})
	sync.Assignments = []codec.SyncGroupRequestAssignment{{MemberID: "m", Assignment: a}}
	out, c, err := s.Request(nil, encodeBody(t, sync, 3), 14, 3)
	if err != nil {
		t.Fatal(err)
	}
	got := codec.NewSyncGroupRequest()
	if err := got.Decode(out, 3); err != nil || !bytes.Equal(got.Assignments[0].Assignment, a) || c.ConsumerGroup {
		t.Errorf("SyncGroup v3 of a group not joined here: %x, %v (consumer %v)", got.Assignments[0].Assignment, err, c.ConsumerGroup)
	}
	// A response name without the prefix stays as it is.
	resp := codec.NewSyncGroupResponse()
	resp.Assignment = a
	back, _, err := s.Response(nil, encodeBody(t, resp, 3), 14, 3, true)
	gotResp := codec.NewSyncGroupResponse()
	if err != nil || gotResp.Decode(back, 3) != nil || !bytes.Equal(gotResp.Assignment, a) {
		t.Errorf("SyncGroup response naming no prefixed topic: %x, %v", gotResp.Assignment, err)
	}
}

// DescribeGroups shows a consumer group's members with the client's topic names.
func TestDescribeGroupsConsumerBytes(t *testing.T) {
	ten, _ := New("team-a.")
	for _, v := range []int16{0, 4, 5, 6} {
		resp := codec.NewDescribeGroupsResponse()
		g := codec.NewDescribeGroupsResponseDescribedGroup()
		g.GroupID, g.ProtocolType, g.ProtocolData = "team-a.g", "consumer", "range"
		m := codec.NewDescribeGroupsResponseDescribedGroupMember()
		m.MemberID = "m"
		m.MemberMetadata = subscription(t, 1, []string{"team-a.orders"}, nil, nil)
		m.MemberAssignment = assignment(t, 1, map[string][]int32{"team-a.orders": {2}})
		g.Members = []codec.DescribeGroupsResponseDescribedGroupMember{*m}
		resp.Groups = []codec.DescribeGroupsResponseDescribedGroup{*g}
		out, _, err := ten.Response(nil, encodeBody(t, resp, v), 15, v)
		if err != nil {
			t.Fatal(err)
		}
		got := codec.NewDescribeGroupsResponse()
		if err := got.Decode(out, v); err != nil {
			t.Fatal(err)
		}
		gm := got.Groups[0].Members[0]
		wantSub := subscription(t, 1, []string{"orders"}, nil, nil)
		wantA := assignment(t, 1, map[string][]int32{"orders": {2}})
		if got.Groups[0].GroupID != "g" || !reflect.DeepEqual(gm.MemberMetadata, wantSub) || !reflect.DeepEqual(gm.MemberAssignment, wantA) {
			t.Errorf("DescribeGroups v%d: %q %x %x", v, got.Groups[0].GroupID, gm.MemberMetadata, gm.MemberAssignment)
		}
	}
}

// consumerField is a consumer-protocol bytes field of a message.
type consumerField struct {
	n          transcode.Node
	assignment bool
}

// consumerFields lists the consumer-protocol bytes of a JoinGroup, SyncGroup or
// DescribeGroups message that a tenant maps (consumer: the group's protocol where the
// message does not say it): the test's own reading of which fields those are.
func consumerFields(d *transcode.Doc, key int16, request, consumer bool) []consumerField {
	root := d.Root()
	if n := d.Field(root, "protocolType"); n != transcode.NoNode {
		if s, null := d.Str(n); !null {
			consumer = string(s) == "consumer"
		}
	}
	var out []consumerField
	each := func(n transcode.Node, list, field string, assignment bool) {
		for e := d.First(d.Field(n, list)); e != transcode.NoNode; e = d.Next(e) {
			out = append(out, consumerField{d.Field(e, field), assignment})
		}
	}
	switch {
	case key == keyDescribeGroups && !request:
		for g := d.First(d.Field(root, "groups")); g != transcode.NoNode; g = d.Next(g) {
			if s, _ := d.Str(d.Field(g, "protocolType")); string(s) == "consumer" {
				each(g, "members", "memberMetadata", false)
				each(g, "members", "memberAssignment", true)
			}
		}
	case !consumer:
	case key == keyJoinGroup && request:
		each(root, "protocols", "metadata", false)
	case key == keyJoinGroup:
		each(root, "members", "metadata", false)
	case key == keySyncGroup && request:
		each(root, "assignments", "assignment", true)
	case key == keySyncGroup:
		out = append(out, consumerField{d.Field(root, "assignment"), true})
	}
	return out
}

// consumerTopics decodes consumer-protocol bytes with the codec's types and returns the
// topic names in them; ok is false for bytes that are not the consumer protocol.
func consumerTopics(b []byte, assignment bool) (names []string, ok bool) {
	if len(b) < 2 || int16(binary.BigEndian.Uint16(b)) < 0 {
		return nil, false
	}
	v := min(int16(binary.BigEndian.Uint16(b)), 3)
	if assignment {
		a := codec.NewConsumerProtocolAssignment()
		if a.Decode(b[2:], v) != nil {
			return nil, false
		}
		for _, p := range a.AssignedPartitions {
			names = append(names, p.Topic)
		}
		return names, true
	}
	s := codec.NewConsumerProtocolSubscription()
	if s.Decode(b[2:], v) != nil {
		return nil, false
	}
	names = append(names, s.Topics...)
	for _, p := range s.OwnedPartitions {
		names = append(names, p.Topic)
	}
	return names, true
}

// consumerSeeds are fuzz seeds with the consumer protocol's bytes: JoinGroup and
// SyncGroup requests and responses, and a DescribeGroups response.
func consumerSeeds(f *testing.F) (out []struct {
	key, version int16
	response     bool
	body         []byte
}) {
	add := func(key, version int16, response bool, body []byte) {
		out = append(out, struct {
			key, version int16
			response     bool
			body         []byte
		}{key, version, response, body})
	}
	sub := subscription(f, 3, []string{"orders", "team-a.x"}, map[string][]int32{"orders": {1}}, []byte{9})
	for _, v := range []int16{5, 9} {
		req := codec.NewJoinGroupRequest()
		req.GroupID, req.ProtocolType = "g", "consumer"
		req.Protocols = []codec.JoinGroupRequestProtocol{{Name: "range", Metadata: sub}}
		add(11, v, false, encodeBody(f, req, v))
		resp := codec.NewJoinGroupResponse()
		p := "consumer"
		resp.ProtocolType = &p
		resp.Members = []codec.JoinGroupResponseMember{{MemberID: "m", Metadata: subscription(f, 1, []string{"team-a.orders", "x"}, nil, nil)}}
		add(11, v, true, encodeBody(f, resp, v))
	}
	sync := codec.NewSyncGroupRequest()
	sync.GroupID = "g"
	p := "consumer"
	sync.ProtocolType = &p
	sync.Assignments = []codec.SyncGroupRequestAssignment{{MemberID: "m", Assignment: assignment(f, 0, map[string][]int32{"orders": {0, 1}})}}
	add(14, 5, false, encodeBody(f, sync, 5))
	sresp := codec.NewSyncGroupResponse()
	sresp.ProtocolType = &p
	sresp.Assignment = assignment(f, 3, map[string][]int32{"team-a.orders": {0}})
	add(14, 5, true, encodeBody(f, sresp, 5))
	return out
}
