package tenant

import (
	"bytes"
	"errors"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/conformance"
	"github.com/kwire/kwire/internal/proto"
	"github.com/kwire/kwire/internal/transcode"
)

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		err    string
	}{
		{"team-a.", ""},
		{"A_b-9.", ""},
		{"", "want 1 to 200 characters"},
		{strings.Repeat("x", 201), "want 1 to 200 characters"},
		{"team a.", "character ' ' at 4"},
		{"team/a", "character '/' at 4"},
	} {
		_, err := New(tc.prefix)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("New(%q): %v, want %q", tc.prefix, err, tc.err)
		}
	}
}

// The apis no tenant may reach, by name: a change to the access table that opens one
// fails here.
func TestClusterWideApisRefused(t *testing.T) {
	for _, name := range []string{
		"LeaderAndIsr", "StopReplica", "UpdateMetadata", "ControlledShutdown", "WriteTxnMarkers",
		"DescribeAcls", "CreateAcls", "DeleteAcls", "AlterReplicaLogDirs", "DescribeLogDirs",
		"CreateDelegationToken", "RenewDelegationToken", "ExpireDelegationToken", "DescribeDelegationToken",
		"ElectLeaders", "AlterPartitionReassignments", "ListPartitionReassignments",
		"DescribeClientQuotas", "AlterClientQuotas", "DescribeUserScramCredentials", "AlterUserScramCredentials",
		"Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "DescribeQuorum", "AlterPartition", "UpdateFeatures",
		"Envelope", "FetchSnapshot", "BrokerRegistration", "BrokerHeartbeat", "UnregisterBroker",
		"AllocateProducerIds", "ControllerRegistration", "GetTelemetrySubscriptions", "PushTelemetry",
		"AssignReplicasToDirs", "ListConfigResources", "AddRaftVoter", "RemoveRaftVoter", "UpdateRaftVoter",
		"InitializeShareGroupState", "ReadShareGroupState", "WriteShareGroupState", "DeleteShareGroupState",
		"ReadShareGroupStateSummary", "StreamsGroupHeartbeat", "StreamsGroupDescribe",
		"StreamsGroupTopologyDescriptionUpdate", "UnregisterController",
	} {
		key := apiKeyNamed(t, name)
		if key < 0 {
			continue // not in this build's descriptors
		}
		if a := APIAccess(key); a != Refused {
			t.Errorf("%s (key %d) is %s, want refused", name, key, a)
		}
		if RequestNames(key, 0) || ResponseNames(key, 0) {
			t.Errorf("%s: a refused api reports names to map", name)
		}
	}
	if APIAccess(-1) != Refused || APIAccess(1000) != Refused {
		t.Error("an unknown api key is not refused")
	}
}

func apiKeyNamed(t *testing.T, name string) int16 {
	t.Helper()
	for k := int16(0); k < 200; k++ {
		if api, ok := codec.LookupAPI(k); ok && api.Name == name {
			return k
		}
	}
	return -1
}

// notEntities are the string fields of Mapped apis that name no tenant entity, by
// JSON name (or dotted path where a name is ambiguous), reviewed against the
// descriptors; fieldsMappedByHand are the ones this package maps from another field.
// A new string field without an entityType in a Mapped api fails
// TestEveryStringFieldReviewed until it is placed in one list or the other, so that
// a field carrying a name never passes unrenamed.
var notEntities = map[string]bool{
	"clusterId": true, "rackId": true, "host": true, "rack": true, "errorMessage": true, "batchIndexErrorMessage": true,
	"memberId": true, "groupInstanceId": true, "instanceId": true, "protocolType": true, "protocolName": true,
	"name":   true, // protocols[].name of JoinGroup and configs[].name; every entity "name" declares its type
	"leader": true, "reason": true, "committedMetadata": true, "metadata": true, "groupState": true,
	"protocolData": true, "clientId": true, "clientHost": true, "statesFilter": true, "typesFilter": true,
	"groupType": true, "value": true, "transactionState": true, "stateFilters": true, "unknownStateFilters": true,
	"serverAssignor": true, "assignorName": true, "subscribedTopicRegex": true, "transactionalIdPattern": true,
	"configurationKeys": true, "documentation": true, "acknowledgeErrorMessage": true,
	"mechanism": true, "mechanisms": true, "clientSoftwareName": true, "clientSoftwareVersion": true,
	"supportedFeatures.name": true, "finalizedFeatures.name": true,
}

var fieldsMappedByHand = map[string]bool{
	"FindCoordinator key": true, "FindCoordinator coordinatorKeys": true,
	"DescribeConfigs resourceName": true, "AlterConfigs resourceName": true, "IncrementalAlterConfigs resourceName": true,
}

func TestEveryStringFieldReviewed(t *testing.T) {
	seen := 0
	for key := int16(0); key < 200; key++ {
		api, ok := codec.LookupAPI(key)
		if !ok || APIAccess(key) == Refused {
			continue
		}
		for _, kind := range []proto.Kind{proto.KindRequest, proto.KindResponse} {
			tree, _ := transcode.MessageTree(key, kind)
			var walk func(path string, fs []*transcode.TreeField)
			walk = func(path string, fs []*transcode.TreeField) {
				for _, f := range fs {
					if f.Kind == transcode.TreeStruct {
						walk(path+f.Name+".", f.Fields)
						continue
					}
					if f.Kind != transcode.TreeString {
						continue
					}
					seen++
					last := path[strings.LastIndexByte(path[:max(len(path)-1, 0)], '.')+1:]
					switch {
					case entityField(f):
					case fieldsMappedByHand[api.Name+" "+f.Name]:
					case notEntities[f.Name] || notEntities[last+f.Name]:
					default:
						t.Errorf("%s %v: string field %s%s is neither an entity, mapped by hand nor reviewed as no entity", api.Name, kind, path, f.Name)
					}
				}
			}
			walk("", tree)
		}
	}
	if seen < 100 {
		t.Fatalf("only %d string fields seen", seen)
	}
}

// entityField reports whether the descriptors type f as an entity a tenant's prefix
// applies to.
func entityField(f *transcode.TreeField) bool {
	return f.Entity == transcode.EntityTopicName || f.Entity == transcode.EntityGroupID || f.Entity == transcode.EntityTransactionalID
}

const testPrefix = "zq-tenant."

// vectors reads the conformance vectors of Mapped apis.
func vectors(t testing.TB) []conformance.Vector {
	t.Helper()
	files, _ := filepath.Glob("../../conformance/vectors/kafka-clients-*.jsonl")
	if len(files) == 0 {
		t.Fatal("no conformance vectors")
	}
	var out []conformance.Vector
	for _, f := range files {
		vs, err := conformance.ReadVectors(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			if (v.Kind == "request" || v.Kind == "response") && APIAccess(v.APIKey) != Refused {
				out = append(out, v)
			}
		}
	}
	return out
}

// handFields is the strings of a message that carry an entity without an entityType
// (FindCoordinator's keys, the config apis' resource names of TOPIC and GROUP).
func handFields(d *transcode.Doc, key int16, kind string) []transcode.Node {
	root := d.Root()
	var out []transcode.Node
	switch {
	case key == keyFindCoordinator && kind == "request":
		if n := d.Field(root, "key"); n != transcode.NoNode {
			out = append(out, n)
		}
		for n := d.First(d.Field(root, "coordinatorKeys")); n != transcode.NoNode; n = d.Next(n) {
			out = append(out, n)
		}
	case key == keyFindCoordinator:
		for n := d.First(d.Field(root, "coordinators")); n != transcode.NoNode; n = d.Next(n) {
			out = append(out, d.Field(n, "key"))
		}
	case key == keyDescribeConfigs || key == keyAlterConfigs || key == keyIncrementalAlterConfigs:
		list := "resources"
		if kind == "response" {
			list = "responses"
			if key == keyDescribeConfigs {
				list = "results"
			}
		}
		for r := d.First(d.Field(root, list)); r != transcode.NoNode; r = d.Next(r) {
			if typ := d.Int(d.Field(r, "resourceType")); typ == resourceTopic || typ == resourceGroup {
				out = append(out, d.Field(r, "resourceName"))
			}
		}
	}
	return out
}

// regexFields is the topic regexes of a message (ConsumerGroupHeartbeat's, and its
// members' in ConsumerGroupDescribe), which the tenant wraps behind its prefix.
func regexFields(d *transcode.Doc, key int16, kind string) []transcode.Node {
	root := d.Root()
	var out []transcode.Node
	add := func(n transcode.Node) {
		// A request's empty regex is no regex; a response's was the tenant's, wrapped.
		if s, null := d.Str(n); n != transcode.NoNode && !null && (len(s) > 0 || kind == "response") {
			out = append(out, n)
		}
	}
	switch {
	case key == keyConsumerGroupHeartbeat && kind == "request":
		add(d.Field(root, "subscribedTopicRegex"))
	case key == keyConsumerGroupDescribe && kind == "response":
		for g := d.First(d.Field(root, "groups")); g != transcode.NoNode; g = d.Next(g) {
			for m := d.First(d.Field(g, "members")); m != transcode.NoNode; m = d.Next(m) {
				add(d.Field(m, "subscribedTopicRegex"))
			}
		}
	}
	return out
}

// brokerSide is what the broker sees or says: every entity name of the message
// (descriptor-typed and mapped by hand) with the prefix.
func brokerSide(t *testing.T, v conformance.Vector) []byte {
	t.Helper()
	kind := proto.KindRequest
	if v.Kind == "response" {
		kind = proto.KindResponse
	}
	src := v.Bytes
	if v.APIKey == keyDescribeTopics && v.Kind == "request" {
		src = withListingCursor(t, src, v.Version)
	}
	var d transcode.Doc
	if err := d.ParseAPI(src, v.APIKey, kind, v.Version); err != nil {
		t.Fatalf("%s: %v", v.ID, err)
	}
	for _, n := range handFields(&d, v.APIKey, v.Kind) {
		if s, null := d.Str(n); !null {
			if err := d.SetString(n, testPrefix+string(s)); err != nil {
				t.Fatal(err)
			}
		}
	}
	tn, _ := New(testPrefix)
	for _, n := range regexFields(&d, v.APIKey, v.Kind) {
		s, _ := d.Str(n)
		if err := d.SetString(n, tn.quotedPrefix()+"(?:"+string(s)+")"); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := d.FilterEntities(entities, func(_ uint8, s string) (string, transcode.Verdict) {
		return testPrefix + s, transcode.Keep
	}); err != nil {
		t.Fatal(err)
	}
	out, err := d.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// withListingCursor is a DescribeTopicPartitions request that lists every topic (no
// topics, no cursor) with a cursor at the empty name: once prefixed, the start of the
// tenant's names, where a tenant's listing starts. Other requests are returned as
// they are.
func withListingCursor(t testing.TB, body []byte, version int16) []byte {
	t.Helper()
	m := codec.NewDescribeTopicPartitionsRequest()
	if err := m.Decode(body, version); err != nil || len(m.Topics) > 0 || m.Cursor != nil {
		return body
	}
	m.Cursor = &codec.DescribeTopicPartitionsRequestCursor{}
	out, err := m.Encode(nil, version)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every request and response vector of every api a tenant may use, at every version:
// a request gets the prefix on exactly its entity names (those the descriptors type,
// and those mapped by hand), and the broker's response to it (the vector's response
// with the prefix on its names) comes back to the client as the vector was, byte for
// byte. A refused request is one of the cases this package refuses, by reason.
func TestEveryVectorBothWays(t *testing.T) {
	tn, err := New(testPrefix)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, v := range vectors(t) {
		kind := proto.KindRequest
		if v.Kind == "response" {
			kind = proto.KindResponse
		}
		if (&transcode.Doc{}).ParseAPI(v.Bytes, v.APIKey, kind, v.Version) != nil {
			continue // a version this build's schema refuses (superseded)
		}
		if APIAccess(v.APIKey) == Passed {
			got, c, err := tn.Request(nil, v.Bytes, v.APIKey, v.Version)
			if v.Kind == "response" {
				got, c, err = tn.Response(nil, v.Bytes, v.APIKey, v.Version)
			}
			if err != nil || c.Renamed != 0 || !bytes.Equal(got, v.Bytes) {
				t.Fatalf("%s (passed): %v, %+v, unchanged %v", v.ID, err, c, bytes.Equal(got, v.Bytes))
			}
			counts["passed"]++
			continue
		}
		want := brokerSide(t, v)
		if v.Kind == "request" {
			got, c, err := tn.Request(nil, v.Bytes, v.APIKey, v.Version)
			if err != nil {
				if !errors.Is(err, ErrRefused) {
					if strings.Contains(err.Error(), "too long") {
						counts["too long once prefixed"]++
						continue
					}
					t.Fatalf("%s: %v", v.ID, err)
				}
				counts["refused: "+err.Error()[len(ErrRefused.Error())+2:]]++
				continue
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: the request with the prefix differs from every entity name prefixed (first diff at %d)", v.ID, conformance.FirstDiff(got, want))
			}
			if c.Renamed == 0 && !bytes.Equal(got, v.Bytes) || c.Renamed > 0 && bytes.Equal(got, v.Bytes) {
				t.Fatalf("%s: %d renamed, changed %v", v.ID, c.Renamed, !bytes.Equal(got, v.Bytes))
			}
			if RequestNames(v.APIKey, v.Version) == false && c.Renamed > 0 {
				t.Fatalf("%s: RequestNames says no names, %d renamed", v.ID, c.Renamed)
			}
			counts["requests"]++
			counts["names"] += c.Renamed
			continue
		}
		got, c, err := tn.Response(nil, want, v.APIKey, v.Version)
		if err != nil {
			t.Fatalf("%s: %v", v.ID, err)
		}
		if !bytes.Equal(got, v.Bytes) {
			t.Fatalf("%s: the broker's response, stripped, differs from the vector (first diff at %d)", v.ID, conformance.FirstDiff(got, v.Bytes))
		}
		if c.Hidden != 0 || !ResponseNames(v.APIKey, v.Version) && c.Renamed > 0 {
			t.Fatalf("%s: %+v (ResponseNames %v)", v.ID, c, ResponseNames(v.APIKey, v.Version))
		}
		counts["responses"]++
		counts["names"] += c.Renamed
	}
	var lines []string
	for k, n := range counts {
		lines = append(lines, k+": "+strconv.Itoa(n))
	}
	sort.Strings(lines)
	t.Logf("%s", strings.Join(lines, "\n"))
	if counts["requests"] < 500 || counts["responses"] < 500 || counts["names"] < 1000 {
		t.Errorf("too few vectors mapped: %v", counts)
	}
}

// A response that names entities outside the tenant (the vectors' own names, without
// the prefix) reaches the client with none of them: each list element that holds one is
// left out, and where none can be, the response is refused.
func TestOtherTenantsNeverReachTheClient(t *testing.T) {
	tn, _ := New(testPrefix)
	hidden, refusedN := 0, 0
	for _, v := range vectors(t) {
		if v.Kind != "response" || APIAccess(v.APIKey) != Mapped {
			continue
		}
		var d transcode.Doc
		if d.ParseAPI(v.Bytes, v.APIKey, proto.KindResponse, v.Version) != nil {
			continue
		}
		got, c, err := tn.Response(nil, v.Bytes, v.APIKey, v.Version)
		if err != nil {
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("%s: %v", v.ID, err)
			}
			refusedN++
			continue
		}
		hidden += c.Hidden
		// What reaches the client names nothing: every name it held was outside.
		var out transcode.Doc
		if err := out.ParseAPI(got, v.APIKey, proto.KindResponse, v.Version); err != nil {
			t.Fatalf("%s: the response does not parse once mapped: %v", v.ID, err)
		}
		for _, n := range append(handFields(&out, v.APIKey, "response"), regexFields(&out, v.APIKey, "response")...) {
			if _, null := out.Str(n); !null {
				t.Fatalf("%s: %s reaches the client", v.ID, out.Path(n))
			}
		}
		if _, _, err := out.FilterEntities(entities, func(_ uint8, s string) (string, transcode.Verdict) {
			t.Fatalf("%s: entity %q reaches the client", v.ID, s)
			return s, transcode.Keep
		}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d elements left out, %d responses refused", hidden, refusedN)
	if hidden < 500 || refusedN == 0 {
		t.Errorf("hidden %d, refused %d: the vectors did not exercise both", hidden, refusedN)
	}
}

// A DescribeTopicPartitions listing of every topic is paged by a cursor over names in
// order. A tenant's listing starts at its prefix (the broker starts at the first name
// at or after the cursor's) and ends where the prefix's names end: a next cursor past
// them is null, so the client stops instead of paging through other tenants' topics.
func TestDescribeTopicsListing(t *testing.T) {
	tn, _ := New(testPrefix)
	req := func(c *codec.DescribeTopicPartitionsRequestCursor, topics ...string) *codec.DescribeTopicPartitionsRequest {
		m := codec.NewDescribeTopicPartitionsRequest()
		m.Cursor = c
		for _, name := range topics {
			m.Topics = append(m.Topics, codec.DescribeTopicPartitionsRequestTopicRequest{Name: name})
		}
		body, err := m.Encode(nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out, _, err := tn.Request(nil, body, keyDescribeTopics, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := codec.NewDescribeTopicPartitionsRequest()
		if err := got.Decode(out, 0); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := req(nil); got.Cursor == nil || got.Cursor.TopicName != testPrefix || got.Cursor.PartitionIndex != 0 {
		t.Errorf("every topic, no cursor: the broker gets cursor %+v, want {%s 0}", got.Cursor, testPrefix)
	}
	if got := req(&codec.DescribeTopicPartitionsRequestCursor{TopicName: "orders", PartitionIndex: 3}); got.Cursor == nil || got.Cursor.TopicName != testPrefix+"orders" || got.Cursor.PartitionIndex != 3 {
		t.Errorf("a cursor: the broker gets %+v", got.Cursor)
	}
	if got := req(nil, "orders"); got.Cursor != nil || len(got.Topics) != 1 || got.Topics[0].Name != testPrefix+"orders" {
		t.Errorf("named topics: the broker gets %+v cursor %+v", got.Topics, got.Cursor)
	}

	for _, tc := range []struct {
		name       string
		next       *codec.DescribeTopicPartitionsResponseCursor
		wantNext   *codec.DescribeTopicPartitionsResponseCursor
		wantHidden int
	}{
		{"next cursor past the tenant", &codec.DescribeTopicPartitionsResponseCursor{TopicName: "zz-other.t", PartitionIndex: 0}, nil, 2},
		{"next cursor in the tenant", &codec.DescribeTopicPartitionsResponseCursor{TopicName: testPrefix + "payments", PartitionIndex: 7},
			&codec.DescribeTopicPartitionsResponseCursor{TopicName: "payments", PartitionIndex: 7}, 1},
		{"last page", nil, nil, 1},
	} {
		m := codec.NewDescribeTopicPartitionsResponse()
		for _, name := range []string{testPrefix + "orders", "zz-other.t"} {
			m.Topics = append(m.Topics, codec.DescribeTopicPartitionsResponseTopic{Name: &name})
		}
		m.NextCursor = tc.next
		body, err := m.Encode(nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out, c, err := tn.Response(nil, body, keyDescribeTopics, 0)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := codec.NewDescribeTopicPartitionsResponse()
		if err := got.Decode(out, 0); err != nil {
			t.Fatal(err)
		}
		if len(got.Topics) != 1 || *got.Topics[0].Name != "orders" || c.Hidden != tc.wantHidden {
			t.Errorf("%s: topics %d (%+v), hidden %d, want [orders] and %d hidden", tc.name, len(got.Topics), got.Topics, c.Hidden, tc.wantHidden)
		}
		if (got.NextCursor == nil) != (tc.wantNext == nil) || got.NextCursor != nil && (got.NextCursor.TopicName != tc.wantNext.TopicName || got.NextCursor.PartitionIndex != tc.wantNext.PartitionIndex) {
			t.Errorf("%s: next cursor %+v, want %+v", tc.name, got.NextCursor, tc.wantNext)
		}
	}
}
