package proxywasm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	fkerr "github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
)

// tenancyConfig: a virtual cluster with a name prefix, and the broker's address
// rewritten to the proxy's.
const tenancyConfig = `{"tenant":{"prefix":"%s"},"brokers":{"1":"%s"}}`

var tenancyRuns atomic.Int64

// tenantLines are the lines TenantClients prints when every step works: the
// tenant's own names, unprefixed, and none of another tenant's.
var tenantLines = []string{
	"create ok",
	"produce ok orders 0 0",
	"produce ok orders 0 1",
	"produce ok orders 0 2",
	"consumed orders 0 0 r1",
	"consumed orders 0 1 r2",
	"consumed orders 0 2 r3",
	"commit ok",
	"txn ok orders 0 3",
	"topics orders",
	"groups g",
	"offsets orders-0=3",
	"transactions tx",
}

// TestEndToEndTenancy runs two tenants (virtual clusters) on one broker, each
// through its own proxy with a tenant prefix: Java clients of each create a topic,
// produce (idempotent and transactional), consume in a group and commit, and list
// topics, groups, offsets and transactions, all under the same unprefixed names,
// and see only their own; the other tenant's topic, named with its prefix, is
// unknown. The broker holds the prefixed names. A franz-go client through each
// proxy lists and consumes the same way. An api a tenant may not use is left out
// of ApiVersions and answered with CLUSTER_AUTHORIZATION_FAILED, as is a request a
// prefix cannot keep the meaning of. Whole reads, 1-byte reads and random sizes.
func TestEndToEndTenancy(t *testing.T) {
	java := javaClients(t)
	java[len(java)-1] = "io.kwire.proxywasm.TenantClients"
	for _, tc := range []struct {
		name         string
		sizeA, sizeB func() int
	}{
		{"whole", nil, nil},
		{"bytewise", func() int { return 1 }, func() int { return 1 }},
		{"random", randomReads(13), randomReads(17)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type tenant struct {
				name, prefix, other string
				s                   *e2eSetup
				out                 []byte
				err                 error
				stderr              bytes.Buffer
			}
			// Prefixes unique per run: the broker is shared by every run of the test
			// binary (-count).
			run := tenancyRuns.Add(1)
			a := &tenant{name: "a", prefix: fmt.Sprintf("ta%d-%s.", run, tc.name), other: fmt.Sprintf("tb%d-%s.", run, tc.name)}
			b := &tenant{name: "b", prefix: a.other, other: a.prefix}
			a.s = startE2EWith(t, func(addr string) string { return fmt.Sprintf(tenancyConfig, a.prefix, addr) }, tc.sizeA)
			b.s = startE2EWith(t, func(addr string) string { return fmt.Sprintf(tenancyConfig, b.prefix, addr) }, tc.sizeB)
			tenants := []*tenant{a, b}

			// Java clients of both tenants at once.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			var wg sync.WaitGroup
			for _, tn := range tenants {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cmd := exec.CommandContext(ctx, java[0], append(java[1:], tn.s.proxy.Addr(), tn.other)...)
					cmd.Stderr = &tn.stderr
					tn.out, tn.err = cmd.Output()
				}()
			}
			wg.Wait()
			for _, tn := range tenants {
				t.Logf("Java clients of tenant %s (%s):\n%s", tn.name, tn.prefix, tn.out)
				if tn.err != nil {
					t.Fatalf("Java clients of tenant %s: %v\n%s", tn.name, tn.err, tn.stderr.String())
				}
			}
			for _, tn := range tenants {
				var lines []string
				sc := bufio.NewScanner(bytes.NewReader(tn.out))
				for sc.Scan() {
					lines = append(lines, sc.Text())
				}
				for _, want := range tenantLines {
					if !slices.Contains(lines, want) {
						t.Errorf("tenant %s: no line %q", tn.name, want)
					}
				}
				other := ""
				for _, l := range lines {
					if name, rest, _ := strings.Cut(l, " "); name == "other-describe" {
						other = rest
						continue
					}
					if strings.Contains(l, tn.prefix) || strings.Contains(l, tn.other) {
						t.Errorf("tenant %s sees a prefixed name: %q", tn.name, l)
					}
				}
				if want := "error UnknownTopicOrPartitionException"; !strings.HasPrefix(other, want) {
					t.Errorf("tenant %s: describing %sorders gives %q, want %q", tn.name, tn.other, other, want)
				}
			}

			// What the broker holds, read directly: each tenant's names with its
			// prefix, and nothing named with both prefixes.
			direct := dialKafka(t, a.s.b.Addr("PLAINTEXT"))
			all := codec.NewMetadataRequest()
			all.Topics = nil
			all.AllowAutoTopicCreation = false
			brokerTopics := map[string]int16{}
			for _, tp := range direct.call(12, all).(*codec.MetadataResponse).Topics {
				if tp.Name != nil {
					brokerTopics[*tp.Name] = tp.ErrorCode
				}
			}
			for name := range brokerTopics {
				if strings.HasPrefix(name, a.prefix+b.prefix) || strings.HasPrefix(name, b.prefix+a.prefix) {
					t.Errorf("the broker holds %s: a tenant's request for the other's topic created it", name)
				}
			}
			lg := direct.call(5, codec.NewListGroupsRequest()).(*codec.ListGroupsResponse)
			if lg.ErrorCode != 0 {
				t.Errorf("ListGroups on the broker: %s", kerr.Code(lg.ErrorCode))
			}
			var brokerGroups []string
			for _, g := range lg.Groups {
				brokerGroups = append(brokerGroups, g.GroupID)
			}
			lt := direct.call(1, codec.NewListTransactionsRequest()).(*codec.ListTransactionsResponse)
			if lt.ErrorCode != 0 {
				t.Errorf("ListTransactions on the broker: %s", kerr.Code(lt.ErrorCode))
			}
			var brokerTxns []string
			for _, tx := range lt.TransactionStates {
				brokerTxns = append(brokerTxns, tx.TransactionalID)
			}
			for _, tn := range tenants {
				topic, group := tn.prefix+"orders", tn.prefix+"g"
				if code, ok := brokerTopics[topic]; !ok || code != 0 {
					t.Errorf("the broker has no topic %s (listed %v, error %s)", topic, ok, kerr.Code(code))
				}
				var vals []string
				for _, m := range fetchAll(t, direct, topic, 0) {
					vals = append(vals, string(m.Value))
				}
				if got := strings.Join(vals, " "); got != "r1 r2 r3 t1" {
					t.Errorf("%s holds %q, want \"r1 r2 r3 t1\"", topic, got)
				}
				if !slices.Contains(brokerGroups, group) {
					t.Errorf("the broker's groups %v lack %s", brokerGroups, group)
				}
				if !slices.Contains(brokerTxns, tn.prefix+"tx") {
					t.Errorf("the broker's transactional ids %v lack %stx", brokerTxns, tn.prefix)
				}
				of := codec.NewOffsetFetchRequest()
				of.GroupID = group
				of.Topics = []codec.OffsetFetchRequestTopic{{Name: topic, PartitionIndexes: []int32{0}}}
				or := direct.call(7, of).(*codec.OffsetFetchResponse)
				committed := "none"
				if or.ErrorCode != 0 {
					committed = kerr.Code(or.ErrorCode).String()
				}
				for _, ot := range or.Topics {
					for _, p := range ot.Partitions {
						if ot.Name == topic && p.PartitionIndex == 0 {
							committed = fmt.Sprint(p.CommittedOffset)
							if p.ErrorCode != 0 {
								committed = kerr.Code(p.ErrorCode).String()
							}
						}
					}
				}
				if committed != "3" {
					t.Errorf("group %s has committed %s for %s/0, want 3", group, committed, topic)
				}
			}

			// A franz-go client through each proxy.
			for _, tn := range tenants {
				franzTenant(t, tn.name, tn.s.proxy.Addr(), tn.other)
			}
			// A classic consumer group at the versions librdkafka sends.
			for _, tn := range tenants {
				classicGroupTenant(t, tn.name, tn.prefix, tn.s.proxy.Addr(), direct)
			}

			for _, tn := range tenants {
				if n := metricValue(tn.s.plugin, "tenant.refused"); n != 0 {
					t.Errorf("tenant %s: tenant.refused = %d, want 0", tn.name, n)
				}
				for _, m := range []string{"tenant.requests_renamed", "tenant.responses_renamed", "tenant.entities_hidden"} {
					if n := metricValue(tn.s.plugin, m); n <= 0 {
						t.Errorf("tenant %s: %s = %d, want > 0", tn.name, m, n)
					}
				}
				if n := tn.s.proxy.VMErrors(); n != 0 {
					t.Errorf("tenant %s: %d connections ended by a VM failure", tn.name, n)
				}
			}

			// An api a tenant may not use: gone from ApiVersions, and answered by the
			// filter as a denied api key when sent anyway (request.denied). A request of
			// a mapped api whose meaning a prefix cannot keep, a transactional id
			// pattern, is answered the same way and counted as tenant.refused.
			k := dialKafka(t, a.s.proxy.Addr())
			avr := codec.NewAPIVersionsRequest()
			avr.ClientSoftwareName, avr.ClientSoftwareVersion = "kwire-e2e", "1"
			av := k.call(3, avr).(*codec.APIVersionsResponse)
			if av.ErrorCode != 0 {
				t.Fatalf("ApiVersions through the proxy: %s", kerr.Code(av.ErrorCode))
			}
			for _, api := range av.APIKeys {
				if api.APIKey == 29 {
					t.Errorf("ApiVersions through the proxy offers DescribeAcls v%d-%d", api.MinVersion, api.MaxVersion)
				}
			}
			denied := metricValue(a.s.plugin, "request.denied")
			da := codec.NewDescribeACLsRequest()
			da.ResourceTypeFilter, da.PatternTypeFilter, da.PermissionType, da.Operation = 1, 1, 1, 1
			if dr := k.call(3, da).(*codec.DescribeACLsResponse); kerr.Code(dr.ErrorCode) != kerr.ClusterAuthorizationFailed {
				t.Errorf("DescribeAcls through the proxy: %s, want CLUSTER_AUTHORIZATION_FAILED", kerr.Code(dr.ErrorCode))
			}
			if n := metricValue(a.s.plugin, "request.denied"); n != denied+1 {
				t.Errorf("request.denied = %d after one DescribeAcls, want %d", n, denied+1)
			}
			pattern := "t.*"
			ltp := codec.NewListTransactionsRequest()
			ltp.TransactionalIDPattern = &pattern
			if r := k.call(2, ltp).(*codec.ListTransactionsResponse); kerr.Code(r.ErrorCode) != kerr.ClusterAuthorizationFailed || len(r.TransactionStates) != 0 {
				t.Errorf("ListTransactions with a pattern through the proxy: %s, %d transactions; want CLUSTER_AUTHORIZATION_FAILED and none",
					kerr.Code(r.ErrorCode), len(r.TransactionStates))
			}
			if n := metricValue(a.s.plugin, "tenant.refused"); n != 1 {
				t.Errorf("tenant.refused = %d after one ListTransactions with a pattern, want 1", n)
			}
			// The connection is still in order.
			if r := k.call(1, codec.NewListTransactionsRequest()).(*codec.ListTransactionsResponse); r.ErrorCode != 0 || len(r.TransactionStates) != 1 || r.TransactionStates[0].TransactionalID != "tx" {
				t.Errorf("ListTransactions through the proxy: %s, %v; want tx only", kerr.Code(r.ErrorCode), r.TransactionStates)
			}
		})
	}
}

// classicGroupTenant joins a classic consumer group through a tenant's proxy at the
// versions librdkafka sends (JoinGroup v5 and SyncGroup v3, whose responses and whose
// SyncGroup request do not say the protocol type), subscribed to "orders" and assigned
// its partition 0. The member sees its own topic names; the broker holds the prefixed
// ones in the member's subscription and assignment, so it knows the group reads its
// topic: deleting the group's offsets of it is refused (GROUP_SUBSCRIBED_TO_TOPIC), as
// for any subscribed group.
func classicGroupTenant(t *testing.T, name, prefix, proxyAddr string, direct *kconn) {
	t.Helper()
	k := dialKafka(t, proxyAddr)
	sub := codec.NewConsumerProtocolSubscription()
	sub.Topics = []string{"orders"}
	meta, err := sub.Encode([]byte{0, 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	join := codec.NewJoinGroupRequest()
	join.GroupID, join.SessionTimeoutMs, join.RebalanceTimeoutMs, join.ProtocolType = "classic", 30000, 30000, "consumer"
	join.Protocols = []codec.JoinGroupRequestProtocol{{Name: "range", Metadata: meta}}
	jr := k.call(5, join).(*codec.JoinGroupResponse)
	if kerr.Code(jr.ErrorCode) == kerr.MemberIDRequired {
		join.MemberID = jr.MemberID
		jr = k.call(5, join).(*codec.JoinGroupResponse)
	}
	if jr.ErrorCode != 0 || jr.Leader != jr.MemberID || len(jr.Members) != 1 {
		t.Fatalf("tenant %s: JoinGroup v5 through the proxy: %s, leader %q, member %q, %d members", name, kerr.Code(jr.ErrorCode), jr.Leader, jr.MemberID, len(jr.Members))
	}
	if got := topicsOf(t, jr.Members[0].Metadata, false); got != "orders" {
		t.Errorf("tenant %s: the leader sees a member subscribed to %q, want \"orders\"", name, got)
	}
	as := codec.NewConsumerProtocolAssignment()
	as.AssignedPartitions = []codec.ConsumerProtocolAssignmentTopicPartition{{Topic: "orders", Partitions: []int32{0}}}
	assign, err := as.Encode([]byte{0, 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	sync := codec.NewSyncGroupRequest()
	sync.GroupID, sync.GenerationID, sync.MemberID = "classic", jr.GenerationID, jr.MemberID
	sync.Assignments = []codec.SyncGroupRequestAssignment{{MemberID: jr.MemberID, Assignment: assign}}
	sr := k.call(3, sync).(*codec.SyncGroupResponse)
	if sr.ErrorCode != 0 {
		t.Fatalf("tenant %s: SyncGroup v3 through the proxy: %s", name, kerr.Code(sr.ErrorCode))
	}
	if got := topicsOf(t, sr.Assignment, true); got != "orders" {
		t.Errorf("tenant %s: the member is assigned %q, want \"orders\"", name, got)
	}
	// The broker's view, and the tenant's.
	dg := codec.NewDescribeGroupsRequest()
	dg.Groups = []string{prefix + "classic"}
	for _, view := range []struct {
		who, topic string
		c          *kconn
	}{{"the broker", prefix + "orders", direct}, {"tenant " + name, "orders", k}} {
		if view.c == k {
			dg.Groups = []string{"classic"}
		}
		d := view.c.call(5, dg).(*codec.DescribeGroupsResponse)
		if len(d.Groups) != 1 || len(d.Groups[0].Members) != 1 {
			t.Errorf("%s: DescribeGroups: %+v", view.who, d.Groups)
			continue
		}
		m := d.Groups[0].Members[0]
		if got, got2 := topicsOf(t, m.MemberMetadata, false), topicsOf(t, m.MemberAssignment, true); got != view.topic || got2 != view.topic {
			t.Errorf("%s sees the member subscribed to %q and assigned %q, want %q", view.who, got, got2, view.topic)
		}
	}
	od := codec.NewOffsetDeleteRequest()
	od.GroupID = "classic"
	od.Topics = []codec.OffsetDeleteRequestTopic{{Name: "orders", Partitions: []codec.OffsetDeleteRequestPartition{{PartitionIndex: 0}}}}
	odr := k.call(0, od).(*codec.OffsetDeleteResponse)
	code := kerr.Code(odr.ErrorCode)
	for _, tp := range odr.Topics {
		for _, p := range tp.Partitions {
			if tp.Name == "orders" && p.ErrorCode != 0 {
				code = kerr.Code(p.ErrorCode)
			}
		}
	}
	if code != kerr.GroupSubscribedToTopic {
		t.Errorf("tenant %s: deleting the offsets of a topic the group reads: %s, want GROUP_SUBSCRIBED_TO_TOPIC", name, code)
	}
	leave := codec.NewLeaveGroupRequest()
	leave.GroupID, leave.MemberID = "classic", jr.MemberID
	if lr := k.call(2, leave).(*codec.LeaveGroupResponse); lr.ErrorCode != 0 {
		t.Errorf("tenant %s: LeaveGroup: %s", name, kerr.Code(lr.ErrorCode))
	}
}

// topicsOf is the topic names in consumer-protocol bytes, joined with ",".
func topicsOf(t *testing.T, b []byte, assignment bool) string {
	t.Helper()
	if len(b) < 2 {
		return "(none)"
	}
	var names []string
	if assignment {
		a := codec.NewConsumerProtocolAssignment()
		if err := a.Decode(b[2:], min(int16(binary.BigEndian.Uint16(b)), 3)); err != nil {
			return "(not the consumer protocol: " + err.Error() + ")"
		}
		for _, p := range a.AssignedPartitions {
			names = append(names, p.Topic)
		}
	} else {
		s := codec.NewConsumerProtocolSubscription()
		if err := s.Decode(b[2:], min(int16(binary.BigEndian.Uint16(b)), 3)); err != nil {
			return "(not the consumer protocol: " + err.Error() + ")"
		}
		names = s.Topics
	}
	return strings.Join(names, ",")
}

// franzTenant lists and consumes through one tenant's proxy with franz-go: the
// tenant sees its topic "orders" and group "g" only, reads r1 r2 r3 t1 without a
// group, and the other tenant's topic, named with its prefix, is unknown.
func franzTenant(t *testing.T, name, addr, other string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestTimeoutOverhead(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if tds, err := adm.ListTopics(ctx); err != nil {
		t.Errorf("tenant %s: franz-go ListTopics: %v", name, err)
	} else if got := strings.Join(tds.Names(), ","); got != "orders" {
		t.Errorf("tenant %s: franz-go lists topics %q, want \"orders\"", name, got)
	}
	if groups, err := adm.ListGroups(ctx); err != nil {
		t.Errorf("tenant %s: franz-go ListGroups: %v", name, err)
	} else if got := strings.Join(groups.Groups(), ","); got != "g" {
		t.Errorf("tenant %s: franz-go lists groups %q, want \"g\"", name, got)
	}
	// DescribeTopicPartitions of every topic, one partition a page: the listing starts
	// at the tenant's names and ends with them (the broker's cursor would page on
	// through every other topic of the cluster).
	var paged []string
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit = 1
	for page := 0; ; page++ {
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Errorf("tenant %s: franz-go DescribeTopicPartitions page %d: %v", name, page, err)
			break
		}
		for _, tp := range resp.Topics {
			if tp.Topic != nil {
				paged = append(paged, fmt.Sprintf("%s/%d", *tp.Topic, len(tp.Partitions)))
			}
		}
		if resp.NextCursor == nil || page == 20 {
			break
		}
		req.Cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: resp.NextCursor.Topic, Partition: resp.NextCursor.Partition}
	}
	if got := strings.Join(paged, ","); got != "orders/1" {
		t.Errorf("tenant %s: franz-go pages through DescribeTopicPartitions of every topic: %q, want \"orders/1\"", name, got)
	}
	if tds, err := adm.ListTopics(ctx, other+"orders"); err != nil {
		t.Errorf("tenant %s: franz-go ListTopics %sorders: %v", name, other, err)
	} else if td, ok := tds[other+"orders"]; !ok || !errors.Is(td.Err, fkerr.UnknownTopicOrPartition) {
		t.Errorf("tenant %s: franz-go describes %sorders: listed %v, error %v; want UNKNOWN_TOPIC_OR_PARTITION (all: %v)",
			name, other, ok, td.Err, tds.Names())
	}

	consumer, err := kgo.NewClient(kgo.SeedBrokers(addr),
		kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	var vals []string
	cctx, ccancel := context.WithTimeout(ctx, 60*time.Second)
	defer ccancel()
	for len(vals) < 4 && cctx.Err() == nil {
		fs := consumer.PollFetches(cctx)
		fs.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				t.Errorf("tenant %s: franz-go fetching %s/%d: %v", name, topic, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			if r.Topic != "orders" || r.Partition != 0 {
				t.Errorf("tenant %s: franz-go reads a record of %s/%d", name, r.Topic, r.Partition)
			}
			vals = append(vals, string(r.Value))
		})
	}
	if got := strings.Join(vals, " "); got != "r1 r2 r3 t1" {
		t.Errorf("tenant %s: franz-go reads %q from orders, want \"r1 r2 r3 t1\"", name, got)
	}
}
