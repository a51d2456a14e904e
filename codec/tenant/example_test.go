package tenant_test

import (
	"fmt"
	"log"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/tenant"
)

func Example() {
	t, err := tenant.New("team-a.")
	if err != nil {
		log.Fatal(err)
	}

	// A client of team A asks for the metadata of its topic "orders" (Metadata v12).
	req := codec.NewMetadataRequest()
	name := "orders"
	req.Topics = []codec.MetadataRequestTopic{{Name: &name}}
	body, err := req.Encode(nil, 12)
	if err != nil {
		log.Fatal(err)
	}
	toBroker, n, err := t.Request(nil, body, req.APIKey(), 12)
	if err != nil {
		log.Fatal(err)
	}
	var seen codec.MetadataRequest
	if err := seen.Decode(toBroker, 12); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("the broker is asked for %s (%d name renamed)\n", *seen.Topics[0].Name, n.Renamed)

	// The broker answers for every topic it holds, as for a request of all topics:
	// team B's and the internal ones are left out, team A's lose the prefix.
	resp := codec.NewMetadataResponse()
	for _, topic := range []string{"team-a.orders", "team-b.orders", "__consumer_offsets"} {
		tp := codec.NewMetadataResponseTopic()
		tp.Name = &topic
		resp.Topics = append(resp.Topics, *tp)
	}
	fromBroker, err := resp.Encode(nil, 12)
	if err != nil {
		log.Fatal(err)
	}
	toClient, n, err := t.Response(nil, fromBroker, resp.APIKey(), 12)
	if err != nil {
		log.Fatal(err)
	}
	var got codec.MetadataResponse
	if err := got.Decode(toClient, 12); err != nil {
		log.Fatal(err)
	}
	for _, tp := range got.Topics {
		fmt.Println("the client sees", *tp.Name)
	}
	fmt.Printf("%d left out\n", n.Hidden)

	// Apis a tenant may not use are refused.
	fmt.Println(tenant.APIAccess(codec.NewDescribeACLsRequest().APIKey()))
	// Output:
	// the broker is asked for team-a.orders (1 name renamed)
	// the client sees orders
	// 2 left out
	// refused
}

// A proxy maps each connection with a Session: a classic consumer group's SyncGroup
// before v5 (librdkafka sends v3) does not say the group's protocol type, and its
// assignment's topic names are mapped because the same connection joined the group
// with protocol type "consumer".
func ExampleSession() {
	t, err := tenant.New("team-a.")
	if err != nil {
		log.Fatal(err)
	}
	s := t.NewSession()
	encode := func(m interface {
		Encode([]byte, int16) ([]byte, error)
	}, version int16, prefix ...byte) []byte {
		b, err := m.Encode(prefix, version)
		if err != nil {
			log.Fatal(err)
		}
		return b
	}
	decode := func(m interface{ Decode([]byte, int16) error }, b []byte, version int16) {
		if err := m.Decode(b, version); err != nil {
			log.Fatal(err)
		}
	}

	// JoinGroup v5: the member subscribes to "orders".
	sub := codec.NewConsumerProtocolSubscription()
	sub.Topics = []string{"orders"}
	join := codec.NewJoinGroupRequest()
	join.GroupID, join.ProtocolType = "g", "consumer"
	join.Protocols = []codec.JoinGroupRequestProtocol{{Name: "range", Metadata: encode(sub, 1, 0, 1)}}
	out, _, err := s.Request(nil, encode(join, 5), join.APIKey(), 5)
	if err != nil {
		log.Fatal(err)
	}
	var seenJoin codec.JoinGroupRequest
	decode(&seenJoin, out, 5)
	var seenSub codec.ConsumerProtocolSubscription
	decode(&seenSub, seenJoin.Protocols[0].Metadata[2:], 1)
	fmt.Println("the broker sees group", seenJoin.GroupID, "subscribed to", seenSub.Topics)

	// SyncGroup v3: the leader assigns "orders" partition 0.
	as := codec.NewConsumerProtocolAssignment()
	as.AssignedPartitions = []codec.ConsumerProtocolAssignmentTopicPartition{{Topic: "orders", Partitions: []int32{0}}}
	sync := codec.NewSyncGroupRequest()
	sync.GroupID, sync.MemberID = "g", "m-1"
	sync.Assignments = []codec.SyncGroupRequestAssignment{{MemberID: "m-1", Assignment: encode(as, 1, 0, 1)}}
	out, n, err := s.Request(nil, encode(sync, 3), sync.APIKey(), 3)
	if err != nil {
		log.Fatal(err)
	}
	var seenSync codec.SyncGroupRequest
	decode(&seenSync, out, 3)
	var seenAs codec.ConsumerProtocolAssignment
	decode(&seenAs, seenSync.Assignments[0].Assignment[2:], 1)
	fmt.Printf("and the assignment of %s (consumer group: %v)\n", seenAs.AssignedPartitions[0].Topic, n.ConsumerGroup)

	// Its response, which does not say the protocol either, goes back with the
	// client's names when Response is told what the request was.
	resp := codec.NewSyncGroupResponse()
	resp.Assignment = seenSync.Assignments[0].Assignment
	back, _, err := s.Response(nil, encode(resp, 3), resp.APIKey(), 3, n.ConsumerGroup)
	if err != nil {
		log.Fatal(err)
	}
	var got codec.SyncGroupResponse
	decode(&got, back, 3)
	var gotAs codec.ConsumerProtocolAssignment
	decode(&gotAs, got.Assignment[2:], 1)
	fmt.Println("the member is assigned", gotAs.AssignedPartitions[0].Topic)
	// Output:
	// the broker sees group team-a.g subscribed to [team-a.orders]
	// and the assignment of team-a.orders (consumer group: true)
	// the member is assigned orders
}
