package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kwire/kwire/cmd/kwire/internal/brokercapture"
	"github.com/kwire/kwire/conformance/broker"
)

// need finds a tool, failing the test (not skipping it) when KWIRE_REQUIRE_BROKER=1.
func need(t *testing.T, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		if os.Getenv(broker.RequireEnv) == "1" {
			t.Fatalf("%s not found (cmd/kwire/ci-install.sh installs it): %v", tool, err)
		}
		t.Skipf("%s not found: %v (set %s=1 to fail instead)", tool, err, broker.RequireEnv)
	}
	return p
}

// javaClients compiles testdata/java/KwireClients.java against the launcher's
// kafka-clients jars and runs it against the broker.
func javaClients(t *testing.T, bootstrap, topic string, n int) map[string][2]int {
	t.Helper()
	need(t, "javac")
	java := need(t, "java")
	lib, err := broker.LibDir("4.4.0")
	if err != nil {
		t.Fatalf("kafka jars: %v", err)
	}
	cp := filepath.Join(lib, "*")
	classes := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "javac", "-cp", cp, "-d", classes, "testdata/java/KwireClients.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, java, "-cp", classes+string(os.PathListSeparator)+cp, "KwireClients", bootstrap, topic, strconv.Itoa(n)).CombinedOutput()
	if err != nil {
		t.Fatalf("java clients: %v\n%s", err, out)
	}
	counts := map[string][2]int{}
	for _, l := range strings.Split(string(out), "\n") {
		var id string
		var req, resp int
		if _, err := fmt.Sscanf(l, "client %s requests %d responses %d", &id, &req, &resp); err == nil {
			counts[id] = [2]int{req, resp}
		}
	}
	if len(counts) != 7 {
		t.Fatalf("java clients printed %d counts, want 7:\n%s", len(counts), out)
	}
	return counts
}

// hooks counts the requests a franz-go client wrote and the responses it read.
type hooks struct{ req, resp atomic.Int64 }

func (h *hooks) OnBrokerWrite(_ kgo.BrokerMetadata, _ int16, _ int, _, _ time.Duration, err error) {
	if err == nil {
		h.req.Add(1)
	}
}

func (h *hooks) OnBrokerRead(_ kgo.BrokerMetadata, _ int16, _ int, _, _ time.Duration, err error) {
	if err == nil {
		h.resp.Add(1)
	}
}

// franzClients produces n records with franz-go and consumes them back in a group.
func franzClients(t *testing.T, bootstrap, topic string, n int) map[string][2]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var ph, ch hooks
	p, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ClientID("franz-producer"), kgo.WithHooks(&ph),
		kgo.AllowAutoTopicCreation(), kgo.ProducerBatchCompression(kgo.ZstdCompression()), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		r := &kgo.Record{Key: []byte("franz-" + strconv.Itoa(i)), Value: []byte(fmt.Sprintf("franz value %d", i)),
			Headers: []kgo.RecordHeader{{Key: "schema.id", Value: []byte("7")}}}
		if err := p.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("franz-go produce: %v", err)
		}
	}
	p.Close()
	c, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ClientID("franz-consumer"), kgo.WithHooks(&ch),
		kgo.ConsumeTopics(topic), kgo.ConsumerGroup("franz-capture"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for got < n {
		fs := c.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("franz-go consume after %d records: %v", got, err)
		}
		got += fs.NumRecords()
	}
	if err := c.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close()
	return map[string][2]int{
		"franz-producer": {int(ph.req.Load()), int(ph.resp.Load())},
		"franz-consumer": {int(ch.req.Load()), int(ch.resp.Load())},
	}
}

// pcapLine is what the tests read of a kwire pcap line.
type pcapLine struct {
	Time          time.Time       `json:"time"`
	Conn          string          `json:"conn"`
	Dir           string          `json:"dir"`
	APIKey        int16           `json:"apiKey"`
	APIVersion    int16           `json:"apiVersion"`
	CorrelationID int32           `json:"correlationId"`
	Size          int             `json:"size"`
	LatencyUs     *int64          `json:"latencyUs"`
	Header        json.RawMessage `json:"header"`
	Body          json.RawMessage `json:"body"`
	Error         json.RawMessage `json:"error"`
}

func runPcapRaw(args ...string) (string, int, string) {
	var out, errOut bytes.Buffer
	code := run(append([]string{"pcap"}, args...), nil, &out, &errOut)
	return out.String(), code, errOut.String()
}

func runPcap(t *testing.T, args ...string) ([]pcapLine, int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append([]string{"pcap"}, args...), nil, &out, &errOut)
	var lines []pcapLine
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 256<<20)
	for sc.Scan() {
		var l pcapLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("kwire pcap printed a line that is not JSON: %v\n%.300s", err, sc.Text())
		}
		lines = append(lines, l)
	}
	return lines, code, errOut.String()
}

// frameKey names a frame the way both kwire and tshark can: the client's port, the
// direction and the correlation id.
type frameKey struct {
	clientPort int
	response   bool
	corr       int32
}

func clientPort(conn string) int {
	c, _, _ := strings.Cut(conn, " > ")
	i := strings.LastIndexByte(c, ':')
	p, _ := strconv.Atoi(c[i+1:])
	return p
}

// captureRuns numbers the captures a test process takes.
var captureRuns atomic.Int32

// TestCaptureRealClients captures a Java producer, consumer and admin client and a
// franz-go producer and consumer talking to a real 4.4.0 broker, and checks kwire pcap
// on the capture: every frame decodes; each client's requests and responses are what
// the client counted; kwire agrees with tshark's Kafka dissector on the api key,
// version and correlation id of every frame tshark decodes without marking it
// malformed; and the same capture cut in mid-stream, or with segments reordered and
// duplicated, still gives every frame that is whole in it.
func TestCaptureRealClients(t *testing.T) {
	need(t, "tcpdump")
	need(t, "tshark")
	need(t, "java")
	b := broker.SharedT(t, broker.Options{Version: "4.4.0"})
	if b == nil {
		return
	}
	addr := b.Addr("PLAINTEXT")
	_, ps, _ := strings.Cut(addr, ":")
	port, _ := strconv.Atoi(ps)
	dir := t.TempDir()
	tcpdump := need(t, "tcpdump")

	// A capture the kernel dropped packets from (its buffer full on a busy machine)
	// cannot be held to the clients' counts; it is taken again, with new topics, up to
	// three times. The drops are tcpdump's own count, not kwire's.
	const n = 60
	var file string
	want := map[string][2]int{}
	for attempt := 1; ; attempt++ {
		file = filepath.Join(dir, fmt.Sprintf("clients-%d.pcap", attempt))
		dump, err := brokercapture.StartDump(tcpdump, file, addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { dump.Stop(5 * time.Second) }) // a client that failed the test leaves no tcpdump running
		var wg sync.WaitGroup
		var javaCounts, franzCounts map[string][2]int
		suffix := fmt.Sprintf("-%d", captureRuns.Add(1)) // topics of their own (the broker is shared, -count may be above 1)
		wg.Add(1)
		go func() { defer wg.Done(); franzCounts = franzClients(t, addr, "franz-topic"+suffix, n) }()
		javaCounts = javaClients(t, addr, "java-topic"+suffix, n)
		wg.Wait()
		tail, err := dump.Stop(30 * time.Second)
		if t.Failed() {
			return
		}
		if errors.Is(err, brokercapture.ErrDropped) && attempt < 3 {
			t.Logf("capture %d: %v; capturing again", attempt, err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("capture %d: %s", attempt, strings.ReplaceAll(tail, "\n", "; "))
		for k, v := range javaCounts {
			want[k] = v
		}
		for k, v := range franzCounts {
			want[k] = v
		}
		break
	}
	if out := os.Getenv("KWIRE_KEEP_CAPTURE"); out != "" {
		data, _ := os.ReadFile(file)
		os.WriteFile(out, data, 0o644)
	}

	lines, code, stderr := runPcap(t, file, "--port", ps)
	if code != 0 {
		t.Errorf("kwire pcap exited %d: %s", code, stderr)
	}
	// Every frame decodes, and each client's counts are its own.
	got := map[string][2]int{}
	connClient := map[string]string{}
	kw := map[frameKey][2]int16{}
	for _, l := range lines {
		if l.Error != nil {
			t.Errorf("frame did not decode: %s %s %d v%d corr %d: %s", l.Conn, l.Dir, l.APIKey, l.APIVersion, l.CorrelationID, l.Error)
			continue
		}
		kw[frameKey{clientPort(l.Conn), l.Dir == "response", l.CorrelationID}] = [2]int16{l.APIKey, l.APIVersion}
		if l.Dir == "request" {
			var h struct {
				ClientID string `json:"clientId"`
			}
			json.Unmarshal(l.Header, &h)
			connClient[l.Conn] = h.ClientID
		}
	}
	for _, l := range lines {
		id := connClient[l.Conn]
		c := got[id]
		if l.Dir == "request" {
			c[0]++
		} else {
			c[1]++
			if l.LatencyUs == nil || *l.LatencyUs < 0 {
				t.Errorf("response without latency: %+v", l)
			}
		}
		got[id] = c
	}
	// Requests are what the client wrote, exactly. Responses are what it read, but for
	// the long-poll Fetch a consumer may leave in flight on each connection when it
	// closes: its response may be on the wire and unread (franz-go), or counted by the
	// client and not on the wire (the Java consumer counts the abandoned request's
	// disconnection as a response). So responses may differ by at most the number of the
	// client's connections that carried Fetch requests.
	fetchConns := map[string]int{}
	seenFetch := map[string]bool{}
	for _, l := range lines {
		if l.Dir == "request" && l.APIKey == 1 && !seenFetch[l.Conn] {
			seenFetch[l.Conn] = true
			fetchConns[connClient[l.Conn]]++
		}
	}
	for id, w := range want {
		g := got[id]
		d := g[1] - w[1]
		if d < 0 {
			d = -d
		}
		if g[0] != w[0] || d > fetchConns[id] || g[1] > g[0] {
			t.Errorf("client %s: kwire pcap saw %d requests and %d responses, the client wrote %d and read %d (%d fetching connections)", id, g[0], g[1], w[0], w[1], fetchConns[id])
			// What the capture holds of this client, connection by connection, and the
			// reader's own counts (gaps skipped, boundaries lost), to tell a capture
			// that lost packets from a reader that lost frames.
			seq := map[string][]string{}
			for _, l := range lines {
				if connClient[l.Conn] == id {
					seq[l.Conn] = append(seq[l.Conn], fmt.Sprintf("%.3s:%d/%d", l.Dir, l.APIKey, l.CorrelationID))
				}
			}
			for c, s := range seq {
				t.Logf("  %s: %s", c, strings.Join(s, " "))
			}
			sum, _, _ := runPcapRaw(file, "--port", ps, "--summary")
			t.Logf("kwire pcap --summary:\n%s", sum)
		}
	}
	t.Logf("kwire pcap: %d frames from %d clients: %v", len(lines), len(want), got)

	compareTshark(t, file, port, kw)
	damaged(t, dir, file, ps, lines)
}

// compareTshark reads the capture with tshark's Kafka dissector and compares every PDU
// it decodes without marking the packet malformed.
func compareTshark(t *testing.T, file string, port int, kw map[frameKey][2]int16) {
	t.Helper()
	ps := strconv.Itoa(port)
	out, err := exec.Command(need(t, "tshark"), "-r", file, "-d", "tcp.port=="+ps+",kafka", "-Y", "kafka", "-T", "fields",
		"-E", "occurrence=a", "-E", "separator=/t", "-E", "aggregator=,",
		"-e", "frame.number", "-e", "tcp.srcport", "-e", "tcp.dstport", "-e", "kafka.request_key", "-e", "kafka.request.version",
		"-e", "kafka.correlation_id", "-e", "_ws.malformed", "-e", "kafka.response_key", "-e", "kafka.response.version").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	compared, malformed, disagree, unmatched := 0, 0, 0, 0
	for _, row := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(row, "\t")
		if len(f) < 9 {
			continue
		}
		corrs := strings.Split(f[5], ",")
		if f[6] != "" {
			malformed += len(corrs)
			continue
		}
		resp := f[1] == ps
		keys, vers := strings.Split(f[3], ","), strings.Split(f[4], ",")
		if resp {
			keys, vers = strings.Split(f[7], ","), strings.Split(f[8], ",")
		}
		cp := f[1] // a request's source is the client
		if resp {
			cp = f[2]
		}
		cport, _ := strconv.Atoi(cp)
		if len(keys) != len(corrs) || len(vers) != len(corrs) {
			t.Errorf("tshark row %s: %d api keys, %d versions, %d correlation ids", f[0], len(keys), len(vers), len(corrs))
			continue
		}
		for i := range corrs {
			if keys[i] == "" || vers[i] == "" {
				unmatched++ // a response tshark could not pair with its request
				continue
			}
			c, _ := strconv.Atoi(corrs[i])
			k, _ := strconv.Atoi(keys[i])
			v, _ := strconv.Atoi(vers[i])
			compared++
			g, ok := kw[frameKey{cport, resp, int32(c)}]
			if !ok || g != [2]int16{int16(k), int16(v)} {
				disagree++
				if disagree <= 10 {
					t.Errorf("tshark frame %s (port %d response=%v corr %d): tshark says api %d v%d, kwire %v (found %v)", f[0], cport, resp, c, k, v, g, ok)
				}
			}
		}
	}
	if compared == 0 {
		t.Fatal("tshark decoded no Kafka frame: nothing compared")
	}
	t.Logf("tshark agreement: %d frames compared, %d disagree; tshark could not decode %d (%d in packets it marks malformed, %d responses it did not pair with a request)",
		compared, disagree, malformed+unmatched, malformed, unmatched)
}
