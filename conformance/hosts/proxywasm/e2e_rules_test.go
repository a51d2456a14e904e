package proxywasm

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kwire/kwire/codec"
)

// safeguardsConfig: request rules on CreateTopics and Produce, and the broker's
// address rewritten to the proxy's.
const safeguardsConfig = `{"rules":[
	{"api":"CreateTopics","field":"topics[].numPartitions","max":4,"message":"at most 4 partitions per topic"},
	{"api":"Produce","field":"acks","in":[-1],"message":"acks must be all"}],
	"brokers":{"1":"%s"}}`

// TestEndToEndSafeguards runs a Java admin client and producers through the proxy
// with request rules, to a real broker: a CreateTopics that breaks a rule gets
// PolicyViolationException with the rule's message and creates nothing; one that
// follows the rules creates its topic; a producer with acks=1 gets the broker's
// error for a policy refusal (PolicyViolationException) and writes nothing, one with
// acks=all writes. Whole reads, 1-byte reads and random sizes.
func TestEndToEndSafeguards(t *testing.T) {
	java := javaClients(t)
	java[len(java)-1] = "io.kwire.proxywasm.SafeguardClients"
	for _, tc := range []struct {
		name string
		size func() int
	}{{"whole", nil}, {"bytewise", func() int { return 1 }}, {"random", randomReads(11)}} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := "rules" + tc.name
			s := startE2EWith(t, func(addr string) string { return fmt.Sprintf(safeguardsConfig, addr) }, tc.size)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, java[0], append(java[1:], s.proxy.Addr(), prefix)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			t.Logf("Java clients:\n%s", out)
			if err != nil {
				t.Fatalf("Java clients: %v\n%s", err, stderr.String())
			}
			got := map[string]string{}
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				if name, rest, ok := strings.Cut(sc.Text(), " "); ok {
					got[name] = rest
				}
			}
			for name, want := range map[string]string{
				"create-wide":   "error PolicyViolationException at most 4 partitions per topic",
				"create-narrow": "ok",
				"send-acks-1":   "error PolicyViolationException acks must be all",
				"send-acks-all": "ok " + prefix + ".narrow ",
			} {
				if !strings.HasPrefix(got[name], want) {
					t.Errorf("%s: %q, want %q", name, got[name], want)
				}
			}
			// What the broker holds, read directly: the narrow topic with the acks=all
			// record only, and no wide topic.
			direct := dialKafka(t, s.b.Addr("PLAINTEXT"))
			md := codec.NewMetadataRequest()
			wide, narrow := prefix+".wide", prefix+".narrow"
			md.Topics = []codec.MetadataRequestTopic{{Name: &wide}, {Name: &narrow}}
			mr := direct.call(12, md).(*codec.MetadataResponse)
			for _, tp := range mr.Topics {
				switch {
				case *tp.Name == wide && tp.ErrorCode == 0:
					t.Errorf("the broker holds %s, which the rule refused", wide)
				case *tp.Name == narrow && (tp.ErrorCode != 0 || len(tp.Partitions) != 2):
					t.Errorf("%s: error %d, %d partitions", narrow, tp.ErrorCode, len(tp.Partitions))
				}
			}
			var vals []string
			for p := int32(0); p < 2; p++ {
				for _, m := range fetchAll(t, direct, narrow, p) {
					vals = append(vals, string(m.Value))
				}
			}
			if strings.Join(vals, " ") != "send-acks-all" {
				t.Errorf("%s holds %q, want only the acks=all record", narrow, vals)
			}
			if n := metricValue(s.plugin, "rules.requests_refused"); n != 2 {
				t.Errorf("rules.requests_refused = %d, want 2", n)
			}
		})
	}
}

// randomReads returns read sizes of 1 to 1500 bytes from its own seeded source, safe
// for the proxy's two directions at once.
func randomReads(seed int64) func() int {
	r := rand.New(rand.NewSource(seed))
	var mu sync.Mutex
	return func() int { mu.Lock(); defer mu.Unlock(); return 1 + r.Intn(1500) }
}
