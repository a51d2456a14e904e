package kafkafilter

import (
	"sort"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/codec/tenant"
	"github.com/kwire/kwire/envoy/kafkatest"
	"github.com/kwire/kwire/internal/proto"
	"github.com/kwire/kwire/internal/transcode"
)

// reply decodes the client's reply of api key at version.
func reply(t *testing.T, frame []byte, key, ver int16) codec.Response {
	t.Helper()
	rf, err := codec.DecodeResponseFrame(frame, key, ver)
	if err != nil {
		t.Fatalf("reply to api %d v%d: %v", key, ver, err)
	}
	return rf.Body
}

// A listener with a tenant prefix: the broker sees every name prefixed, the client
// sees none of the prefix and none of the other tenant's entities or the internal
// topics, the apis a tenant may not use are answered with CLUSTER_AUTHORIZATION_FAILED
// without reaching the broker and are left out of ApiVersions. Whole, byte by byte
// and in random chunks.
func TestTenant(t *testing.T) {
	for name, chunk := range map[string]chunker{"whole": whole, "bytewise": bytewise, "random": randomly(3)} {
		t.Run(name, func(t *testing.T) {
			h := newHost()
			f := mustFilter(t, h, `{"tenant":{"prefix":"team-a."}}`)
			p := newPipe(t, f, chunk)
			p.br.Topics = []string{"team-a.orders", "team-b.orders", "__consumer_offsets", "team-a.audit"}
			p.br.Groups = []string{"team-b.g", "team-a.g", "other"}

			av := codec.NewAPIVersionsRequest()
			av.ClientSoftwareName, av.ClientSoftwareVersion = "t", "1"
			fc := codec.NewFindCoordinatorRequest()
			fc.KeyType, fc.CoordinatorKeys = 0, []string{"g"}
			acls := codec.NewDescribeACLsRequest()
			lg := codec.NewListGroupsRequest()
			p.send(
				kafkatest.MustRequest(1, 3, av),
				kafkatest.MustRequest(2, 12, &codec.MetadataRequest{}), // all topics (null list at v12)
				metadataFrame(3, 12, "orders"),
				createTopicsFrame(4, 1, "new"),
				produceFrame(t, 5, 9, -1, records.CompressionNone, rec("orders", 1, []byte("v"))),
				kafkatest.MustRequest(6, 4, fc),
				kafkatest.MustRequest(7, 3, acls),
				kafkatest.MustRequest(8, 5, lg),
			)
			if p.closed || len(p.replies) != 8 {
				t.Fatalf("closed %v, %d replies, want 8 (logs %v)", p.closed, len(p.replies), h.logs)
			}
			// ApiVersions: the refused apis are left out, the others kept.
			keys := map[int16]bool{}
			for _, k := range reply(t, p.replies[0], 18, 3).(*codec.APIVersionsResponse).APIKeys {
				keys[k.APIKey] = true
			}
			if keys[29] || keys[4] || keys[72] || !keys[0] || !keys[3] || !keys[19] || !keys[60] {
				t.Errorf("ApiVersions keys %v", keys)
			}
			var all []string
			for _, tp := range reply(t, p.replies[1], 3, 12).(*codec.MetadataResponse).Topics {
				all = append(all, *tp.Name)
			}
			sort.Strings(all)
			if strings.Join(all, ",") != "audit,orders" {
				t.Errorf("all topics: %v, want the tenant's only, unprefixed", all)
			}
			if ts := reply(t, p.replies[2], 3, 12).(*codec.MetadataResponse).Topics; len(ts) != 1 || *ts[0].Name != "orders" {
				t.Errorf("metadata orders: %+v", ts)
			}
			if ts := reply(t, p.replies[3], 19, 7).(*codec.CreateTopicsResponse).Topics; len(ts) != 1 || ts[0].Name != "new" {
				t.Errorf("create topics: %+v", ts)
			}
			if got := codes(decodeProduce(t, p.replies[4], 9)); strings.Join(got, " ") != "orders/1=0" {
				t.Errorf("produce: %v", got)
			}
			if cs := reply(t, p.replies[5], 10, 4).(*codec.FindCoordinatorResponse).Coordinators; len(cs) != 1 || cs[0].Key != "g" {
				t.Errorf("find coordinator: %+v", cs)
			}
			if r := reply(t, p.replies[6], 29, 3).(*codec.DescribeACLsResponse); r.ErrorCode != 31 {
				t.Errorf("describe acls: error %d, want 31", r.ErrorCode)
			}
			var groups []string
			for _, g := range reply(t, p.replies[7], 16, 5).(*codec.ListGroupsResponse).Groups {
				groups = append(groups, g.GroupID)
			}
			if strings.Join(groups, ",") != "g" {
				t.Errorf("groups %v, want g only", groups)
			}
			// What reached the broker: every entity name under the prefix, and no DescribeAcls.
			names := 0
			for _, fr := range p.upFrames {
				names += checkPrefixed(t, fr, "team-a.")
			}
			if names < 4 {
				t.Errorf("only %d names reached the broker", names)
			}
			if pr := p.br.Produced(); len(pr) != 1 || pr[0].Topic != "team-a.orders" {
				t.Errorf("produced %+v", pr)
			}
			if r := p.br.Requests(); r[29] != 0 || r[18] != 2 {
				t.Errorf("broker saw %v: DescribeAcls must not reach it (ApiVersions in its place)", r)
			}
			for name, want := range map[string]int64{"tenant.requests_renamed": 4, "tenant.entities_hidden": 4, "request.denied": 1, "tenant.refused": 0} {
				if got := h.value(name); got != want {
					t.Errorf("%s = %d, want %d", name, got, want)
				}
			}
		})
	}
}

// checkPrefixed fails unless every entity name of the request frame has the prefix; it
// returns how many there are.
func checkPrefixed(t *testing.T, frame []byte, prefix string) int {
	t.Helper()
	rf, err := codec.DecodeRequestFrame(frame)
	if err != nil {
		t.Fatal(err)
	}
	hlen, _ := codec.RequestHeaderLen(frame)
	var d transcode.Doc
	key, ver := rf.Header.RequestAPIKey, rf.Header.RequestAPIVersion
	if err := d.ParseAPI(frame[hlen:], key, proto.KindRequest, ver); err != nil {
		t.Fatal(err)
	}
	n := 0
	mask := uint32(1<<transcode.EntityTopicName | 1<<transcode.EntityGroupID | 1<<transcode.EntityTransactionalID)
	d.FilterEntities(mask, func(_ uint8, s string) (string, transcode.Verdict) {
		if !strings.HasPrefix(s, prefix) {
			t.Errorf("api %d v%d: %q reached the broker without the prefix", key, ver, s)
		}
		n++
		return s, transcode.Keep
	})
	if key == 10 {
		for k := d.First(d.Field(d.Root(), "coordinatorKeys")); k != transcode.NoNode; k = d.Next(k) {
			if s, _ := d.Str(k); !strings.HasPrefix(string(s), prefix) {
				t.Errorf("coordinator key %q reached the broker without the prefix", s)
			}
			n++
		}
	}
	return n
}

// A response naming an entity of another tenant where no list element can be left
// out closes the connection and forwards nothing of it; a request the prefix cannot
// map is answered with the deny error and never reaches the broker.
func TestTenantFailsClosed(t *testing.T) {
	h := newHost()
	f := mustFilter(t, h, `{"tenant":{"prefix":"team-a."}}`)
	p := newPipe(t, f, whole)
	lt := codec.NewListTransactionsRequest()
	pat := "^tx"
	lt.TransactionalIDPattern = &pat
	p.send(kafkatest.MustRequest(1, 2, lt))
	if p.closed || len(p.replies) != 1 || p.br.Requests()[66] != 0 {
		t.Fatalf("closed %v, %d replies, broker saw %v", p.closed, len(p.replies), p.br.Requests())
	}
	if r := reply(t, p.replies[0], 66, 2).(*codec.ListTransactionsResponse); r.ErrorCode != 31 {
		t.Errorf("ListTransactions with a pattern: error %d, want 31", r.ErrorCode)
	}
	if h.value("tenant.refused") != 1 {
		t.Errorf("tenant.refused = %d", h.value("tenant.refused"))
	}

	// The response path: a FindCoordinator answer whose key is outside the tenant.
	c := f.NewConn()
	var dn, up proxyDir
	fc := codec.NewFindCoordinatorRequest()
	fc.CoordinatorKeys = []string{"g"}
	if _, closed := dn.deliver(t, c, kafkatest.MustRequest(9, 4, fc), true); closed {
		t.Fatal("closed on the request")
	}
	resp := codec.NewFindCoordinatorResponse()
	resp.Coordinators = []codec.FindCoordinatorResponseCoordinator{{Key: "team-b.g", NodeID: 1, Host: "h", Port: 1}}
	out, closed := up.deliver(t, c, mustResponse(t, 9, 4, resp), false)
	if !closed || len(out) != 0 {
		t.Fatalf("a response outside the tenant: closed %v, %d bytes forwarded", closed, len(out))
	}
	if tenant.APIAccess(10) != tenant.Mapped {
		t.Fatal("FindCoordinator is not mapped")
	}
}

func mustResponse(t *testing.T, corr int32, ver int16, body codec.Response) []byte {
	t.Helper()
	b, err := codec.EncodeResponseFrame(nil, &codec.ResponseHeader{CorrelationID: corr}, ver, body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTenantBadConfig(t *testing.T) {
	for _, tc := range []struct{ cfg, want string }{
		{`{"tenant":{"prefix":""}}`, "tenant.prefix: tenant prefix \"\": want 1 to 200 characters"},
		{`{"tenant":{"prefix":"a b"}}`, "character ' ' at 1"},
		{`{"tenant":{"prefx":"a."}}`, "prefx"},
	} {
		_, err := New(newHost(), []byte(tc.cfg))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// Produce requests through a tenant's listener: a single-topic request up to v12 and
// every request from v13 have their names rewritten in their first bytes and their
// records streamed (not copied into the filter when whole); a request with several
// topics is held and mapped whole. The broker sees every name prefixed and every
// record; the client gets every answer in order.
func TestTenantProduceStreams(t *testing.T) {
	big := make([]byte, 32<<10)
	for i := range big {
		big[i] = byte(i * 7)
	}
	for name, chunk := range map[string]chunker{"whole": whole, "bytewise": bytewise, "random": randomly(5)} {
		t.Run(name, func(t *testing.T) {
			h := newHost()
			f := mustFilter(t, h, `{"tenant":{"prefix":"team-a."}}`)
			p := newPipe(t, f, chunk)
			v13 := func(corr int32, txn *string) []byte {
				req, err := kafkatest.Produce(13, -1, records.CompressionNone, []records.Message{rec("orders", 0, big)})
				if err != nil {
					t.Fatal(err)
				}
				req.TransactionalID = txn
				for i := range req.TopicData {
					req.TopicData[i].TopicID = kafkatest.TopicID("team-a.orders")
				}
				return kafkatest.MustRequest(corr, 13, req)
			}
			tx := "tx"
			frames := [][]byte{
				metadataFrame(1, 12, "orders"), // the broker learns the topic's id
				produceFrame(t, 2, 9, -1, records.CompressionNone, rec("orders", 0, big)),
				produceFrame(t, 3, 9, -1, records.CompressionNone, rec("orders", 0, []byte("a")), rec("audit", 1, []byte("b"))),
				v13(4, nil),
				v13(5, &tx),
				produceFrame(t, 6, 2, 1, records.CompressionNone, rec("orders", 2, []byte("v2"))),
				produceFrame(t, 7, 9, 0, records.CompressionNone, rec("orders", 1, []byte("acks0"))),
				metadataFrame(8, 12, "audit"),
			}
			for _, fr := range frames {
				p.send(fr) // each request starts a buffer of its own, as a client's writes do
			}
			if p.closed || len(p.replies) != 7 {
				t.Fatalf("closed %v, %d replies, want 7 (logs %v)", p.closed, len(p.replies), h.logs)
			}
			for i, want := range []int32{1, 2, 3, 4, 5, 6, 8} {
				if got := corrOf(p.replies[i]); got != want {
					t.Fatalf("reply %d answers %d, want %d", i, got, want)
				}
			}
			if got := codes(decodeProduce(t, p.replies[2], 9)); strings.Join(got, " ") != "orders/0=0 audit/1=0" {
				t.Errorf("two topics: %v", got)
			}
			var got []string
			for _, pr := range p.br.Produced() {
				got = append(got, pr.Topic+"/"+itoa(pr.Partition)+"="+itoa(int32(len(pr.Messages[0].Value))))
			}
			want := "team-a.orders/0=32768 team-a.orders/0=1 team-a.audit/1=1 team-a.orders/0=32768 team-a.orders/0=32768 team-a.orders/2=2 team-a.orders/1=5"
			if strings.Join(got, " ") != want {
				t.Errorf("the broker holds\n%s\nwant\n%s", strings.Join(got, " "), want)
			}
			for _, fr := range p.upFrames {
				checkPrefixed(t, fr, "team-a.")
			}
			if n := h.value("tenant.requests_renamed"); n != 7 { // both Metadata, 2, 3, 5, 6, 7
				t.Errorf("tenant.requests_renamed = %d, want 7", n)
			}
			if name == "whole" && p.c.Copied() > 16<<10 {
				t.Errorf("%d bytes copied into the filter: the records of the streamed requests were copied", p.c.Copied())
			}
		})
	}
}

// On a tenant's listener, request rules and the schema policy see the tenant's names,
// as its clients send them: a schema rule for "orders" covers the tenant's orders (the
// broker's team-a.orders), a name pattern checks the unprefixed name, and refusals
// name the topic unprefixed. Whole, byte by byte and in random chunks.
func TestTenantWithRulesAndPolicy(t *testing.T) {
	const cfg = `{"tenant":{"prefix":"team-a."},
		"rules":[{"api":"CreateTopics","field":"topics[].name","pattern":"^[a-z]+$","message":"lower-case names only"}],
		"schema":{"default":"none","rules":[{"topic":"orders","policy":"enforce","schema_ids":[1]}]}}`
	for name, chunk := range map[string]chunker{"whole": whole, "bytewise": bytewise, "random": randomly(11)} {
		t.Run(name, func(t *testing.T) {
			h := newHost()
			p := newPipe(t, mustFilter(t, h, cfg), chunk)
			p.send(
				createTopicsFrame(1, 1, "orders"),
				createTopicsFrame(2, 1, "Bad"),
				produceFrame(t, 3, 9, -1, records.CompressionNone, rec("orders", 0, prefixed(1)), rec("orders", 1, []byte("no schema id"))),
				produceFrame(t, 4, 9, -1, records.CompressionNone, rec("free", 0, []byte("anything"))),
			)
			if p.closed || len(p.replies) != 4 {
				t.Fatalf("closed %v, %d replies, want 4 (logs %v)", p.closed, len(p.replies), h.logs)
			}
			rf, err := codec.DecodeResponseFrame(p.replies[1], 19, 7)
			if err != nil {
				t.Fatal(err)
			}
			if ts := rf.Body.(*codec.CreateTopicsResponse).Topics; len(ts) != 1 || ts[0].Name != "Bad" || ts[0].ErrorCode != 44 {
				t.Errorf("a name the pattern refuses: %+v", ts)
			}
			if got := codes(decodeProduce(t, p.replies[2], 9)); strings.Join(got, " ") != "orders/0=0 orders/1=87" {
				t.Errorf("the policy on the tenant's orders: %v", got)
			}
			var got []string
			for _, pr := range p.br.Produced() {
				got = append(got, pr.Topic+"/"+itoa(pr.Partition))
			}
			if strings.Join(got, " ") != "team-a.orders/0 team-a.free/0" {
				t.Errorf("the broker holds %v, want team-a.orders/0 team-a.free/0", got)
			}
			for _, fr := range p.upFrames {
				checkPrefixed(t, fr, "team-a.")
			}
		})
	}
}

// FuzzTenantDownstream feeds arbitrary client bytes to a tenant's listener, in reads
// of any size: no panic, and every request that reaches the broker whole and readable
// names its topics, groups and transactional ids under the prefix (nothing
// un-renamed reaches the broker).
func FuzzTenantDownstream(f *testing.F) {
	tx := "tx"
	fc := codec.NewFindCoordinatorRequest()
	fc.CoordinatorKeys = []string{"g"}
	seeds := [][]byte{
		metadataFrame(1, 12, "orders"),
		produceFrame(&testing.T{}, 2, 9, -1, records.CompressionNone, rec("orders", 0, []byte("x"))),
		produceFrame(&testing.T{}, 3, 9, 1, records.CompressionNone, rec("orders", 0, []byte("x")), rec("b", 1, []byte("y"))),
		kafkatest.MustRequest(4, 4, fc),
		createTopicsFrame(5, 1, "new"),
	}
	if req, err := kafkatest.Produce(13, -1, records.CompressionNone, []records.Message{rec("orders", 0, []byte("z"))}); err == nil {
		req.TransactionalID = &tx
		seeds = append(seeds, kafkatest.MustRequest(6, 13, req))
	}
	for i, s := range seeds {
		f.Add(s, uint8(i*37))
	}
	f.Add(append(append([]byte(nil), seeds[0]...), seeds[1]...), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		h := newHost()
		fl, err := New(h, []byte(`{"tenant":{"prefix":"team-a."}}`))
		if err != nil {
			t.Fatal(err)
		}
		feedDownstream(t, fl.NewConn(), data, int(step)+1, func(fr []byte) {
			if _, err := codec.DecodeRequestFrame(fr); err == nil {
				checkPrefixed(t, fr, "team-a.")
			}
		})
	})
}
