package rules_test

import (
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/rules"
)

// safeguards is the rule set of the example, plus rules that reach into
// nested arrays, count an array and refuse a field a version lacks.
const safeguards = `[
 {"api": "CreateTopics", "field": "topics[].replicationFactor", "min": 3},
 {"api": "CreateTopics", "field": "topics[].numPartitions", "max": 64},
 {"api": "Produce", "field": "acks", "in": [-1]},
 {"api": "JoinGroup", "field": "sessionTimeoutMs", "max": 30000, "message": "session timeouts above 30s are not allowed"},
 {"api": "*", "field": "header.clientId", "pattern": "^[a-z0-9-]+$"},
 {"api": "CreateTopics", "field": "topics", "maxItems": 3},
 {"api": "CreateTopics", "field": "topics[].configs[].name", "in": ["cleanup.policy", "retention.ms"]},
 {"api": "CreateTopics", "field": "topics[].assignments[].brokerIds[]", "min": 0},
 {"api": "JoinGroup", "field": "groupInstanceId", "required": true, "ifMissing": "refuse"},
 {"api": "JoinGroup", "field": "reason", "absent": true},
 {"api": "Produce", "field": "transactionalId", "pattern": "^tx-"},
 {"api": "Produce", "field": "topicData[].partitionData[].index", "max": 99}
]`

func ptr(s string) *string { return &s }

type topic struct {
	name    string
	np      int32
	rf      int16
	configs []string
	brokers []int32
}

func createTopics(ts ...topic) *codec.CreateTopicsRequest {
	m := codec.NewCreateTopicsRequest()
	for _, t := range ts {
		ct := codec.CreateTopicsRequestCreatableTopic{Name: t.name, NumPartitions: t.np, ReplicationFactor: t.rf}
		for _, c := range t.configs {
			ct.Configs = append(ct.Configs, codec.CreateTopicsRequestCreatableTopicConfig{Name: c, Value: ptr("1")})
		}
		if t.brokers != nil {
			ct.Assignments = append(ct.Assignments, codec.CreateTopicsRequestCreatableReplicaAssignment{BrokerIDs: t.brokers})
		}
		m.Topics = append(m.Topics, ct)
	}
	return m
}

func produce(acks int16, txn *string, partitions ...int32) *codec.ProduceRequest {
	m := codec.NewProduceRequest()
	m.Acks, m.TransactionalID = acks, txn
	td := codec.ProduceRequestTopicProduceData{Name: "orders"}
	for _, p := range partitions {
		td.PartitionData = append(td.PartitionData, codec.ProduceRequestPartitionProduceData{Index: p})
	}
	m.TopicData = append(m.TopicData, td)
	return m
}

func joinGroup(session int32, instance, reason *string) *codec.JoinGroupRequest {
	m := codec.NewJoinGroupRequest()
	m.GroupID, m.SessionTimeoutMs, m.ProtocolType = "g", session, "consumer"
	m.GroupInstanceID, m.Reason = instance, reason
	return m
}

func encode(t testing.TB, m codec.Request, v int16) []byte {
	t.Helper()
	b, err := m.Encode(nil, v)
	if err != nil {
		t.Fatalf("%s v%d: %v", m.MessageName(), v, err)
	}
	return b
}

func TestCheck(t *testing.T) {
	set, err := rules.Parse([]byte(safeguards))
	if err != nil {
		t.Fatal(err)
	}
	good := topic{name: "a", np: 6, rf: 3, configs: []string{"retention.ms"}, brokers: []int32{1, 2, 3}}
	for _, tc := range []struct {
		name     string
		msg      codec.Request
		versions []int16
		clientID *string
		rule     int // -1: passes
		path     string
		value    string
		message  string
	}{
		{"create topics that follow the rules", createTopics(good, good), []int16{0, 4, 5, 7}, ptr("admin-1"), -1, "", "", ""},
		{"no client id: pattern passes on null", createTopics(good), []int16{0, 7}, nil, -1, "", "", ""},
		{"replication factor of the second topic", createTopics(good, topic{name: "b", np: 1, rf: 1}), []int16{0, 7}, ptr("admin"), 0,
			"topics[1].replicationFactor", "1", "topics[1].replicationFactor is 1, below the minimum 3"},
		{"too many partitions", createTopics(topic{name: "b", np: 100, rf: 3}), []int16{1, 6}, ptr("admin"), 1,
			"topics[0].numPartitions", "100", "topics[0].numPartitions is 100, above the maximum 64"},
		{"too many topics", createTopics(good, good, good, good), []int16{2, 7}, ptr("admin"), 5,
			"topics", "4", "topics has 4 items, more than the maximum 3"},
		{"a config not allowed, nested", createTopics(good, topic{name: "c", np: 1, rf: 3, configs: []string{"retention.ms", "segment.bytes"}}), []int16{0, 7}, ptr("admin"), 6,
			"topics[1].configs[1].name", `"segment.bytes"`, `topics[1].configs[1].name is "segment.bytes", not one of ["cleanup.policy", "retention.ms"]`},
		{"an array of integers, element by element", createTopics(topic{name: "d", np: -1, rf: 3, brokers: []int32{1, -2}}), []int16{0, 7}, ptr("admin"), 7,
			"topics[0].assignments[0].brokerIds[1]", "-2", "topics[0].assignments[0].brokerIds[1] is -2, below the minimum 0"},
		{"client id pattern", createTopics(good), []int16{7}, ptr("Admin Tool"), 4,
			"header.clientId", `"Admin Tool"`, `header.clientId is "Admin Tool", which does not match ^[a-z0-9-]+$`},
		{"produce acks=-1", produce(-1, nil, 0, 1), []int16{3, 9, 11}, ptr("app"), -1, "", "", ""},
		{"produce acks=1", produce(1, nil, 0), []int16{3, 9}, ptr("app"), 2, "acks", "1", "acks is 1, not one of [-1]"},
		{"produce transactional id", produce(-1, ptr("app-7"), 0), []int16{3, 9}, ptr("app"), 10,
			"transactionalId", `"app-7"`, `transactionalId is "app-7", which does not match ^tx-`},
		{"produce transactional id that matches", produce(-1, ptr("tx-7"), 0), []int16{3, 9}, ptr("app"), -1, "", "", ""},
		{"produce partition index", produce(-1, nil, 5, 100), []int16{3, 9}, ptr("app"), 11,
			"topicData[0].partitionData[1].index", "100", "topicData[0].partitionData[1].index is 100, above the maximum 99"},
		// JoinGroup: groupInstanceId is in v5 on, reason in v8 on.
		{"join group before group instance ids: refused", joinGroup(10000, nil, nil), []int16{0, 4}, ptr("app"), 8,
			"groupInstanceId", "", "groupInstanceId is not in JoinGroupRequest v"},
		{"join group with a null group instance id", joinGroup(10000, nil, nil), []int16{5, 9}, ptr("app"), 8,
			"groupInstanceId", "null", "groupInstanceId is null; it is required"},
		{"join group that follows the rules", joinGroup(10000, ptr("i-1"), nil), []int16{5, 9}, ptr("app"), -1, "", "", ""},
		{"join group session timeout, with the rule's message", joinGroup(45000, ptr("i-1"), nil), []int16{5, 9}, ptr("app"), 3,
			"sessionTimeoutMs", "45000", "session timeouts above 30s are not allowed"},
		{"join group reason must be absent", joinGroup(10000, ptr("i-1"), ptr("why")), []int16{8, 9}, ptr("app"), 9,
			"reason", `"why"`, `reason is "why"; it must be absent`},
	} {
		for _, v := range tc.versions {
			got, err := set.Check(tc.msg.APIKey(), v, tc.clientID, encode(t, tc.msg, v))
			if err != nil {
				t.Errorf("%s v%d: %v", tc.name, v, err)
				continue
			}
			if tc.rule < 0 {
				if got != nil {
					t.Errorf("%s v%d: violation %+v", tc.name, v, got)
				}
				continue
			}
			msg := tc.message
			if msg == "groupInstanceId is not in JoinGroupRequest v" {
				msg += string(rune('0' + v))
			}
			if got == nil {
				t.Errorf("%s v%d: no violation", tc.name, v)
				continue
			}
			if got.Rule != tc.rule || got.Path != tc.path || got.Value != tc.value || got.Message != msg {
				t.Errorf("%s v%d:\n got %d %q %q %q\nwant %d %q %q %q", tc.name, v, got.Rule, got.Path, got.Value, got.Message, tc.rule, tc.path, tc.value, msg)
			}
		}
	}
}

func TestCheckIfMissingPass(t *testing.T) {
	// By default a rule on a field the version lacks passes; so does required.
	set, err := rules.Parse([]byte(`[
		{"api": "JoinGroup", "field": "groupInstanceId", "required": true},
		{"api": "JoinGroup", "field": "rebalanceTimeoutMs", "max": 1000},
		{"api": "CreateTopics", "field": "validateOnly", "absent": true, "ifMissing": "refuse"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := set.Check(11, 0, nil, encode(t, joinGroup(1, nil, nil), 0)); v != nil || err != nil {
		t.Errorf("JoinGroup v0: %v %v", v, err)
	}
	jg := joinGroup(1, nil, nil)
	jg.RebalanceTimeoutMs = 5000
	if v, err := set.Check(11, 1, nil, encode(t, jg, 1)); v == nil || v.Message != "rebalanceTimeoutMs is 5000, above the maximum 1000" || err != nil {
		t.Errorf("JoinGroup v1: %v %v", v, err)
	}
	// absent holds where the version lacks the field, ifMissing or not; a bool
	// present is set.
	if v, err := set.Check(19, 0, nil, encode(t, createTopics(), 0)); v != nil || err != nil {
		t.Errorf("CreateTopics v0: %v %v", v, err)
	}
	if v, err := set.Check(19, 1, nil, encode(t, createTopics(), 1)); v == nil || v.Message != "validateOnly is false; it must be absent" {
		t.Errorf("CreateTopics v1: %v %v", v, err)
	}
}

func TestCheckTaggedFieldLeftOut(t *testing.T) {
	// A tagged field the client left out counts as missing: ifMissing decides.
	set, err := rules.Parse([]byte(`[{"api": "Fetch", "field": "clusterId", "pattern": "^c1$", "ifMissing": "refuse"}]`))
	if err != nil {
		t.Fatal(err)
	}
	m := codec.NewFetchRequest()
	v, err := set.Check(1, 12, nil, encode(t, m, 12))
	if err != nil || v == nil || v.Message != "clusterId is not in FetchRequest v12" {
		t.Errorf("left out: %v %v", v, err)
	}
	m.ClusterID = ptr("c2")
	v, err = set.Check(1, 12, nil, encode(t, m, 12))
	if err != nil || v == nil || v.Message != `clusterId is "c2", which does not match ^c1$` {
		t.Errorf("sent: %v %v", v, err)
	}
	m.ClusterID = ptr("c1")
	if v, err = set.Check(1, 13, nil, encode(t, m, 13)); err != nil || v != nil {
		t.Errorf("matching: %v %v", v, err)
	}
}

func TestCheckUnreadableAndUnruled(t *testing.T) {
	set, err := rules.Parse([]byte(safeguards))
	if err != nil {
		t.Fatal(err)
	}
	body := encode(t, createTopics(topic{name: "a", np: 1, rf: 3}), 7)
	for _, tc := range []struct {
		name string
		key  int16
		v    int16
		body []byte
	}{
		{"truncated", 19, 7, body[:len(body)-3]},
		{"a count beyond the body", 19, 7, []byte{0xff, 0xff, 0xff, 0x0f}},
		{"empty", 19, 0, nil},
		{"no such version", 19, 99, body},
		{"wrong version", 19, 0, body},
	} {
		if v, err := set.Check(tc.key, tc.v, ptr("a"), tc.body); err == nil {
			t.Errorf("%s: no error (%v)", tc.name, v)
		}
	}
	// An api no rule names is not read; nor is the body when only header rules apply.
	for _, key := range []int16{1, 3, 18, 999, -1} {
		if v, err := set.Check(key, 0, ptr("ok"), []byte("not a body")); v != nil || err != nil {
			t.Errorf("api %d: %v %v", key, v, err)
		}
		if v, err := set.Check(key, 0, ptr("Not OK"), nil); v == nil || v.Rule != 4 || err != nil {
			t.Errorf("api %d, header rule: %v %v", key, v, err)
		}
	}
	if set.Applies(1) != true || set.Len() != 12 {
		t.Errorf("Applies(1) %v, Len %d", set.Applies(1), set.Len())
	}
	only, _ := rules.Parse([]byte(`[{"api": "Produce", "field": "acks", "in": [-1]}]`))
	if only.Applies(1) || !only.Applies(0) {
		t.Errorf("Applies: Fetch %v, Produce %v", only.Applies(1), only.Applies(0))
	}
}

func TestCheckAllocations(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts")
	}
	set, err := rules.Parse([]byte(safeguards))
	if err != nil {
		t.Fatal(err)
	}
	id := "app-1"
	for _, tc := range []struct {
		key, v int16
		body   []byte
	}{
		{19, 7, benchCreateTopics(t)},
		{0, 9, benchProduce(t)},
		{1, 12, encode(t, codec.NewFetchRequest(), 12)},
	} {
		set.Check(tc.key, tc.v, &id, tc.body) // warm the pool
		if n := testing.AllocsPerRun(100, func() { set.Check(tc.key, tc.v, &id, tc.body) }); n > 0 {
			t.Errorf("api %d: %v allocations per passing check", tc.key, n)
		}
	}
}

func TestCheckAbsent(t *testing.T) {
	set, err := rules.Parse([]byte(`[
		{"api": "Produce", "field": "topicData[].topicId", "absent": true, "ifMissing": "refuse"},
		{"api": "Produce", "field": "topicData[].partitionData[].records", "absent": true}]`))
	if err != nil {
		t.Fatal(err)
	}
	m := produce(-1, nil, 0)
	// Before v13 topics have no id: absent holds even with ifMissing refuse.
	if v, err := set.Check(0, 9, nil, encode(t, m, 9)); v != nil || err != nil {
		t.Errorf("v9: %v %v", v, err)
	}
	m.TopicData[0].TopicID = codec.UUID{1}
	if v, err := set.Check(0, 13, nil, encode(t, m, 13)); v == nil || v.Message != "topicData[0].topicId is AQAAAAAAAAAAAAAAAAAAAA; it must be absent" || err != nil {
		t.Errorf("v13: %v %v", v, err)
	}
	m = produce(-1, nil, 0, 1)
	m.TopicData[0].PartitionData[1].Records = []byte{1, 2, 3}
	if v, err := set.Check(0, 9, nil, encode(t, m, 9)); v == nil || v.Message != "topicData[0].partitionData[1].records is (3 bytes); it must be absent" || err != nil {
		t.Errorf("records: %v %v", v, err)
	}
}

func TestReadsAndOnlyReads(t *testing.T) {
	set, err := rules.Parse([]byte(`[{"api":"Produce","field":"acks","in":[-1]},
		{"api":"*","field":"header.clientId","pattern":"^a"},
		{"api":"CreateTopics","field":"topics[].numPartitions","max":3}]`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  int16
		name string
		want bool
	}{{0, "acks", true}, {0, "topicData", false}, {19, "topics", true}, {19, "numPartitions", true}, {19, "acks", false}} {
		if got := set.Reads(tc.key, tc.name); got != tc.want {
			t.Errorf("Reads(%d, %s) = %v", tc.key, tc.name, got)
		}
	}
	if !set.OnlyReads(0, "acks", "timeoutMs") || set.OnlyReads(0, "timeoutMs") || set.OnlyReads(19, "acks") || !set.OnlyReads(3) {
		t.Error("OnlyReads")
	}
}
