package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kwire/kwire/conformance/broker"
	"github.com/kwire/kwire/internal/proctest"
)

// envoyModuleT returns build/kwire-envoy.wasm of the checkout (make envoy). Without it
// the test is skipped, or fails under KWIRE_REQUIRE_BROKER=1 (make kwire-test, which
// builds it first).
func envoyModuleT(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../build/kwire-envoy.wasm")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv(broker.RequireEnv) == "1" {
			t.Fatalf("no filter module (make envoy): %v", err)
		}
		t.Skipf("no filter module (make envoy builds it): %v", err)
	}
	// The compiled code is cached under the user's cache directory: a test's own.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	return p
}

// TestEnvoyCheck: the example's envoy.yaml and a JSON configuration on stdin are
// accepted (exit 0, the filter's info line printed); a configuration with a rule that
// names no topic is refused with the filter's error line, its JSON path and offset,
// and exit status 1; a missing module is exit 3.
func TestEnvoyCheck(t *testing.T) {
	mod := envoyModuleT(t)
	var out, errOut bytes.Buffer
	code := run([]string{"envoy", "check", "--wasm", mod, "../../examples/envoy/envoy.yaml"}, nil, &out, &errOut)
	if code != 0 {
		t.Fatalf("envoy.yaml: exit %d\n%s%s", code, &out, &errOut)
	}
	for _, want := range []string{"kwire envoy check: module " + mod + " (", "envoy.yaml:", "info kwire kafka filter configured: schema policy enforcing",
		"envoy.yaml:" + strconv.Itoa(exampleConfigLine(t)) + ": accepted\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("envoy.yaml: output lacks %q:\n%s", want, &out)
		}
	}

	out.Reset()
	errOut.Reset()
	code = run([]string{"envoy", "check", "--wasm", mod, "--log-level", "warn", "-"}, strings.NewReader(`{"api_keys":{"deny":[20]}}`), &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "standard input: accepted") || strings.Contains(out.String(), " info ") {
		t.Errorf("stdin at warn: exit %d\n%s%s", code, &out, &errOut)
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"schema":{"rules":[{"policy":"enforce"}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	code = run([]string{"envoy", "check", "--wasm", mod, bad}, nil, &out, &errOut)
	if code != exitFrames {
		t.Errorf("bad config: exit %d, want %d", code, exitFrames)
	}
	for _, want := range []string{
		bad + ": error kwire: plugin configuration refused: kafka filter configuration: $.schema.rules[0]: needs a topic or a prefix (at byte ",
		bad + ": refused by proxy_on_configure: Envoy would refuse the listener\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("bad config: output lacks %q:\n%s", want, &out)
		}
	}
	if !strings.Contains(errOut.String(), "kwire: the filter refused the plugin configuration (1 of 1)") {
		t.Errorf("bad config: stderr %q", &errOut)
	}

	errOut.Reset()
	if code := run([]string{"envoy", "check", "--wasm", filepath.Join(t.TempDir(), "none.wasm"), bad}, nil, &out, &errOut); code != exitInput {
		t.Errorf("missing module: exit %d, want %d (%s)", code, exitInput, &errOut)
	}
	if code := run([]string{"envoy", "check", "--wasm", mod}, nil, &out, &errOut); code != exitUsage {
		t.Errorf("no CONFIG: exit %d, want %d", code, exitUsage)
	}
}

// exampleConfigLine is the line of examples/envoy/envoy.yaml with the plugin
// configuration's "value: |".
func exampleConfigLine(t *testing.T) int {
	data, err := os.ReadFile("../../examples/envoy/envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == "value: |" {
			return i + 1
		}
	}
	t.Fatal("envoy.yaml has no value: | line")
	return 0
}

// TestYAMLPluginConfigs: every "value: |" block under a "configuration:" key is read,
// dedented, with its line; other block scalars are not.
func TestYAMLPluginConfigs(t *testing.T) {
	y := `static_resources:
  listeners:
  - filter_chains:
    - filters:
      - name: envoy.filters.network.wasm
        typed_config:
          config:
            vm_config:
              code:
                local: { filename: /etc/envoy/kwire-envoy.wasm }
            configuration:
              "@type": type.googleapis.com/google.protobuf.StringValue
              value: |
                {
                  "stat_prefix": "kafka.a"
                }
          other:
            value: |
              not a configuration
      - name: second
        typed_config:
          config:
            configuration:
              value: |-
                {"stat_prefix": "kafka.b",

                 "tick_ms": 5}
            root_id: kwire
`
	got := yamlPluginConfigs("f.yaml", []byte(y))
	want := []pluginConfig{
		{"f.yaml:13", []byte("{\n  \"stat_prefix\": \"kafka.a\"\n}")},
		{"f.yaml:24", []byte("{\"stat_prefix\": \"kafka.b\",\n\n \"tick_ms\": 5}")},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d configurations: %q", len(got), got)
	}
	for i := range want {
		if got[i].where != want[i].where || !bytes.Equal(got[i].data, want[i].data) {
			t.Errorf("%d: got %s %q, want %s %q", i, got[i].where, got[i].data, want[i].where, want[i].data)
		}
		if !json.Valid(got[i].data) {
			t.Errorf("%d: not JSON: %q", i, got[i].data)
		}
	}
}

// TestEnvoyProxyRealBroker runs kwire envoy proxy (this test binary as the command) in
// front of a real 4.4.0 broker, with the filter rewriting the broker's address to the
// proxy's: a franz-go client produces three records and reads them back through it;
// on SIGINT the command exits 0 and prints the filter's metrics, whose request and
// response counts per api equal what the client wrote and read.
func TestEnvoyProxyRealBroker(t *testing.T) {
	mod := envoyModuleT(t)
	b := broker.SharedT(t, broker.Options{Version: "4.4.0"})
	if b == nil {
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A free port for the proxy, so that the configuration can name it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := filepath.Join(t.TempDir(), "plugin.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"brokers": {"1": %q}, "stat_prefix": "kafka.try"}`, addr)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "envoy", "proxy", "--wasm", mod, "--config", cfg, "--listen", addr, "--upstream", b.Addr("PLAINTEXT"))
	cmd.Env = append(os.Environ(), "KWIRE_TEST_MAIN=1")
	p := proctest.Start(t, cmd)
	stdout, stderr := p.Stdout, p.Stderr
	listening := func() bool { return strings.Contains(stderr.String(), "kwire envoy proxy: listening on "+addr) }
	if err := p.Await(listening, 2*time.Minute); err != nil {
		t.Fatalf("kwire envoy proxy: %v:\n%s", err, stderr)
	}

	// The client counts what it writes and reads per api key.
	var mu sync.Mutex
	wrote, read := map[int16]int{}, map[int16]int{}
	var dialled []string
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic := "envoy-proxy"
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic(topic),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.WithHooks(countHook{&mu, wrote, read}),
		kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
			mu.Lock()
			dialled = append(dialled, host)
			mu.Unlock()
			var d net.Dialer
			return d.DialContext(ctx, network, host)
		}))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("through the filter " + strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatalf("produce: %v\n%s", err, stderr)
		}
	}
	for got := 0; got < 3; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume: %v", err)
		}
		got += fs.NumRecords()
	}
	cl.Close()
	for _, h := range dialled {
		if h != addr {
			t.Errorf("the client dialled %s, not the proxy %s (dialled %v)", h, addr, dialled)
		}
	}

	// Connections are closed; give the proxy a moment to see it, then stop it.
	time.Sleep(200 * time.Millisecond)
	if err := p.Interrupt(time.Minute); err != nil {
		t.Fatalf("kwire envoy proxy after SIGINT: %v\n%s", err, stderr)
	}
	metrics := parseMetrics(t, stdout.String())
	mu.Lock()
	defer mu.Unlock()
	for key, name := range map[int16]string{0: "produce", 1: "fetch", 3: "metadata", 18: "api_versions"} {
		reqs, resps := metrics["kafka.try.request."+name], metrics["kafka.try.response."+name]
		if reqs == 0 || reqs != int64(wrote[key]) {
			t.Errorf("request.%s = %d, the client wrote %d", name, reqs, wrote[key])
		}
		// The filter counts a response as it passes; a client that closes with a Fetch in
		// flight may not read the one passing then.
		if resps != int64(read[key]) && (key != 1 || resps < int64(read[key]) || resps > reqs) {
			t.Errorf("response.%s = %d, the client read %d", name, resps, read[key])
		}
		if n := metrics["kafka.try.response."+name+"_duration_ms.count"]; n != resps {
			t.Errorf("response.%s_duration_ms has %d values, want %d", name, n, resps)
		}
	}
	if metrics["kafka.try.rewrite.broker_addresses"] == 0 {
		t.Errorf("no broker address rewritten:\n%s", stdout)
	}
	if metrics["kafka.try.connections.total"] == 0 || metrics["kafka.try.connections.active"] != 0 {
		t.Errorf("connections: total %d, active %d", metrics["kafka.try.connections.total"], metrics["kafka.try.connections.active"])
	}
	if !strings.Contains(stderr.String(), "info kwire kafka filter configured: no schema policy, 1 broker address rewrites") {
		t.Errorf("stderr lacks the filter's log line as it came:\n%s", stderr)
	}
	t.Logf("client wrote %v, read %v; stdout:\n%s", wrote, read, stdout)
}

// countHook counts the requests a franz-go client writes and the responses it reads.
type countHook struct {
	mu          *sync.Mutex
	wrote, read map[int16]int
}

func (h countHook) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err == nil {
		h.mu.Lock()
		h.wrote[key]++
		h.mu.Unlock()
	}
}

func (h countHook) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err == nil {
		h.mu.Lock()
		h.read[key]++
		h.mu.Unlock()
	}
}

var (
	_ kgo.HookBrokerWrite = countHook{}
	_ kgo.HookBrokerRead  = countHook{}
)

var histogramLine = regexp.MustCompile(`^count (\d+), p50 \d+, p99 \d+, max \d+$`)

// parseMetrics reads kwire envoy proxy's metrics ("name: value", and for histograms
// "name: count N, ..." as name.count).
func parseMetrics(t *testing.T, out string) map[string]int64 {
	t.Helper()
	ms := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			t.Fatalf("metrics line %q", sc.Text())
		}
		if m := histogramLine.FindStringSubmatch(value); m != nil {
			ms[name+".count"], _ = strconv.ParseInt(m[1], 10, 64)
			continue
		}
		if value == "no recorded values" {
			ms[name+".count"] = 0
			continue
		}
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			t.Fatalf("metrics line %q", sc.Text())
		}
		ms[name] = n
	}
	if len(ms) == 0 {
		t.Fatal("no metrics printed")
	}
	return ms
}

// TestFindModule: without --wasm the module is build/kwire-envoy.wasm under the working
// directory when none is beside the executable; when there is none, the error names
// where it looked and how to build one; --wasm names a file exactly.
func TestFindModule(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	_, err := findModule("")
	if err == nil || !strings.Contains(err.Error(), filepath.Join("build", "kwire-envoy.wasm")) || !strings.Contains(err.Error(), "make envoy") {
		t.Fatalf("no module: %v", err)
	}
	if err := os.Mkdir("build", 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"build/kwire-envoy.wasm": "module", "build/kwire-envoy.wasm.version": "kwire-envoy 9.9.9 (abc)\n", "other.wasm": "other"} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := findModule("")
	if err != nil || m.path != filepath.Join("build", "kwire-envoy.wasm") || string(m.code) != "module" || m.version != "kwire-envoy 9.9.9 (abc)" {
		t.Fatalf("build/: %+v, %v", m, err)
	}
	if d := m.describe(); !strings.Contains(d, "(6 bytes, sha256 ") || !strings.HasSuffix(d, ", kwire-envoy 9.9.9 (abc))") {
		t.Errorf("describe: %s", d)
	}
	if m, err := findModule("other.wasm"); err != nil || string(m.code) != "other" {
		t.Errorf("--wasm other.wasm: %+v, %v", m, err)
	}
	if _, err := findModule("missing.wasm"); err == nil {
		t.Error("--wasm missing.wasm: no error")
	}
}
