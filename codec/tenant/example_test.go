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
