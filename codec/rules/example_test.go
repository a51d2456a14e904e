package rules_test

import (
	"fmt"
	"log"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/rules"
)

func Example() {
	set, err := rules.Parse([]byte(`[
		{"api": "CreateTopics", "field": "topics[].replicationFactor", "min": 3},
		{"api": "CreateTopics", "field": "topics[].numPartitions", "max": 64},
		{"api": "Produce", "field": "acks", "in": [-1]},
		{"api": "JoinGroup", "field": "sessionTimeoutMs", "max": 30000},
		{"api": "*", "field": "header.clientId", "pattern": "^[a-z0-9-]+$"}
	]`))
	if err != nil {
		log.Fatal(err)
	}

	// A CreateTopics request whose second topic has one replica, as a client sends
	// it at version 7.
	req := codec.NewCreateTopicsRequest()
	req.Topics = []codec.CreateTopicsRequestCreatableTopic{
		{Name: "orders", NumPartitions: 12, ReplicationFactor: 3},
		{Name: "scratch", NumPartitions: 1, ReplicationFactor: 1},
	}
	body, err := req.Encode(nil, 7)
	if err != nil {
		log.Fatal(err)
	}
	clientID := "admin-1"
	v, err := set.Check(req.APIKey(), 7, &clientID, body)
	if err != nil {
		log.Fatal(err) // an unreadable body: refuse the request
	}
	fmt.Printf("rule %d: %s\n", v.Rule, v.Message)

	// A typo in a path is caught when the rules load.
	_, err = rules.Parse([]byte(`[{"api": "JoinGroup", "field": "sessionTimeout", "max": 30000}]`))
	fmt.Println(err)
	// Output:
	// rule 0: topics[1].replicationFactor is 1, below the minimum 3
	// rules: $[0].field: JoinGroupRequest has no field sessionTimeout in any version; did you mean sessionTimeoutMs? (at byte 31)
}
