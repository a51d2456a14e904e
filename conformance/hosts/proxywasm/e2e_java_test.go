package proxywasm

import (
	"bufio"
	"bytes"
	"context"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kwire/kwire/conformance/broker"
)

// javaClients builds the Maven project in java/ (kafka-clients 4.4.0, the release
// conformance/reference pins) and returns the java command line that runs its
// JavaClients class. Without java or mvn the test skips, unless
// KWIRE_REQUIRE_BROKER=1, which makes it fail.
func javaClients(t *testing.T) []string {
	t.Helper()
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv(broker.RequireEnv) == "1" {
				t.Fatalf("%s not found: %v", tool, err)
			}
			t.Skipf("%s not found: %v", tool, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "mvn", "-q", "-f", "java/pom.xml", "compile")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the Java clients: %v\n%s", err, out)
	}
	dir, err := filepath.Abs("../../../build/proxywasm-java")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := os.ReadFile(filepath.Join(dir, "classpath.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return []string{"java", "-cp", filepath.Join(dir, "classes") + string(os.PathListSeparator) + strings.TrimSpace(string(cp)),
		"io.kwire.proxywasm.JavaClients"}
}

// perAPIRequests sums the filter's request counters of api keys (request.<api>).
func perAPIRequests(p *Plugin) (sum int64, byAPI map[string]int64) {
	byAPI = map[string]int64{}
	p.Tick() // the filter's counters reach the host on a tick
	for _, m := range p.Metrics() {
		api, ok := strings.CutPrefix(m.Name, "kafka.kwire.request.")
		if !ok {
			continue
		}
		switch api {
		case "unknown", "failure", "denied", "refused", "answered_locally":
			continue
		}
		byAPI[api] = m.Value
		sum += m.Value
	}
	return sum, byAPI
}

// TestEndToEndJavaClients sends a Java producer's and consumer's traffic through
// the harness proxy to a real broker: records with an allowed schema id land,
// records without one, with a wrong one or with a malformed schema.id header get
// INVALID_RECORD in the producer's callback, warn passes and counts, the consumer
// reads through the proxy (Metadata rewritten to the proxy's address), and the
// filter's metrics equal what the clients sent. It runs twice: with the proxy
// reading whole chunks, and reading random sizes (1 to 1500 bytes) so that frames
// reach the filter cut anywhere.
func TestEndToEndJavaClients(t *testing.T) {
	java := javaClients(t)
	r := rand.New(rand.NewSource(5))
	var mu sync.Mutex
	randomSize := func() int { mu.Lock(); defer mu.Unlock(); return 1 + r.Intn(1500) }
	for _, tc := range []struct {
		name string
		size func() int
	}{{"whole", nil}, {"random", randomSize}} {
		t.Run(tc.name, func(t *testing.T) { javaScenario(t, java, "java"+tc.name, tc.size) })
	}
}

func javaScenario(t *testing.T, java []string, prefix string, readSize func() int) {
	s := startE2E(t, prefix, readSize)
	direct := dialKafka(t, s.b.Addr("PLAINTEXT"))
	orders, audit, free := prefix+".orders", prefix+".audit", prefix+".free"
	createTopics(t, direct, 1, orders, audit, free)

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
	sends := map[string]string{}
	var consumed []string
	counts := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 3 && f[0] == "send":
			sends[f[1]] = strings.Join(f[2:], " ")
		case len(f) == 5 && f[0] == "consumed":
			consumed = append(consumed, f[1]+"/"+f[2]+" "+f[4])
		case len(f) == 2 && strings.HasSuffix(f[0], ".requests"):
			counts[f[0]], _ = strconv.ParseInt(f[1], 10, 64)
		case len(f) == 3 && f[0] == "producer.records":
			counts[f[1]], _ = strconv.ParseInt(f[2], 10, 64)
		}
	}
	for name, want := range map[string]string{
		"prefix-id-1":      "ok " + orders + " 0 0",
		"header-id-2":      "ok " + orders + " 0 1",
		"no-schema":        "error InvalidRecordException",
		"wrong-id":         "error InvalidRecordException",
		"malformed-header": "error InvalidRecordException",
		"warned":           "ok " + audit + " 0 0",
		"free":             "ok " + free + " 0 0",
	} {
		if !strings.HasPrefix(sends[name], want) {
			t.Errorf("send %s: %q, want %q", name, sends[name], want)
		}
	}
	sort.Strings(consumed)
	if got, want := strings.Join(consumed, ", "), audit+"/0 warned, "+free+"/0 free, "+orders+"/0 j1, "+orders+"/0 j2"; got != want {
		t.Errorf("the consumer read %q through the proxy, want %q", got, want)
	}
	// What the broker holds, read directly.
	for topic, want := range map[string]string{orders: "j1 j2", audit: "warned", free: "free"} {
		var vals []string
		for _, m := range fetchAll(t, direct, topic, 0) {
			v := m.Value
			if len(v) >= 5 && v[0] == 0 {
				v = v[5:]
			}
			vals = append(vals, string(v))
		}
		if got := strings.Join(vals, " "); got != want {
			t.Errorf("%s holds %q, want %q", topic, got, want)
		}
	}
	// The filter's metrics equal what the clients sent. Requests written by the
	// clients may still be in the proxy when they exit: wait for the counts to settle.
	clientRequests := counts["producer.requests"] + counts["consumer.requests"]
	var total int64
	var byAPI map[string]int64
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if total, byAPI = perAPIRequests(s.plugin); total >= clientRequests {
			break
		}
	}
	if clientRequests == 0 || total != clientRequests {
		t.Errorf("the filter counted %d requests %v, the clients sent %d (producer %d, consumer %d)",
			total, byAPI, clientRequests, counts["producer.requests"], counts["consumer.requests"])
	}
	if byAPI["produce"] != 7 || byAPI["fetch"] == 0 || byAPI["metadata"] == 0 {
		t.Errorf("per api %v: want 7 produce requests (one per record) and the consumer's fetches", byAPI)
	}
	if got, want := metricValue(s.plugin, "response.produce"), int64(7); got != want {
		t.Errorf("response.produce = %d, want %d", got, want)
	}
	checked := counts[orders] + counts[audit]
	for name, want := range map[string]int64{
		"policy.records_checked":     checked,
		"policy.records_failed":      4, // three rejected, one warned
		"policy.records_rejected":    3,
		"policy.records_warned":      1,
		"policy.partitions_rejected": 3,
		"policy.partitions_accepted": 4, // two of orders, audit's, free's (not checked)
		"request.denied":             0,
	} {
		if got := metricValue(s.plugin, name); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
	if checked != 6 {
		t.Errorf("the producer reports %d records sent to the checked topics, want 6", checked)
	}
	// Metadata rewritten: each client's connection to node 1 goes to the proxy too,
	// besides its bootstrap connection (the produce and fetch counts above show the
	// traffic crossed the filter).
	if got := metricValue(s.plugin, "connections.total"); got < 4 {
		t.Errorf("connections.total = %d: the clients did not reconnect to the proxy for node 1", got)
	}
}
