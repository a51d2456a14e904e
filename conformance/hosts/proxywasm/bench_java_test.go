package proxywasm

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/conformance/broker"
	"github.com/kwire/kwire/envoy/kafkatest"
)

// TestProxyBenchJava measures a real Java 4.4 consumer reading a topic through the
// harness proxy with the filter (address rewriting on) against the same proxy with
// no module at all, in one run. The broker advertises the proxy's address, so that
// the consumer stays on the proxy in both cases; the two proxies take turns on that
// address. KWIRE_BENCH=1 runs it (make envoy-bench).
func TestProxyBenchJava(t *testing.T) {
	if os.Getenv("KWIRE_BENCH") != "1" {
		t.Skip("set KWIRE_BENCH=1 (make envoy-bench)")
	}
	java := javaClients(t)
	java[len(java)-1] = "io.kwire.proxywasm.ConsumeBench"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proxyAddr := ln.Addr().String()
	b := broker.StartT(t, broker.Options{Version: "4.4.0", Props: map[string]string{"advertised.listeners": "PLAINTEXT://" + proxyAddr, "log.retention.ms": "-1"}})
	defer b.Stop()
	up := b.Addr("PLAINTEXT")

	// 96 MiB of records in 4 partitions, lz4 batches of 1 KiB text records,
	// produced straight to the broker.
	k := dialKafka(t, up)
	createTopics(t, k, 4, "javabench")
	rnd := rand.New(rand.NewSource(3))
	words := strings.Fields("kafka record value order payment user event stream topic partition offset leader broker")
	requests, perRequest := 1536, 64
	if n, err := strconv.Atoi(os.Getenv("KWIRE_BENCH_JAVA_REQUESTS")); err == nil {
		requests = n
	}
	for i := 0; i < requests; i++ {
		var msgs []records.Message
		for j := 0; j < perRequest; j++ {
			var v []byte
			for len(v) < 1024 {
				v = append(v, words[rnd.Intn(len(words))]...)
				v = append(v, ' ')
			}
			// Stamped now: records stamped 1970 are deleted by the broker's first
			// retention check, 30 s after it starts.
			msgs = append(msgs, records.Message{Topic: "javabench", Partition: int32(i % 4), Value: v[:1024], Timestamp: time.Now().UnixMilli()})
		}
		req, err := kafkatest.Produce(9, -1, records.CompressionLZ4, msgs)
		if err != nil {
			t.Fatal(err)
		}
		r := k.call(9, req).(*codec.ProduceResponse)
		if code := r.Responses[0].PartitionResponses[0].ErrorCode; code != 0 {
			t.Fatalf("produce: error %d", code)
		}
	}
	total := requests * perRequest

	cfg := `{"brokers":{"1":"` + proxyAddr + `"}}`
	p, err := NewPlugin(context.Background(), Config{Module: module(t), Cache: cache, PluginConfiguration: []byte(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// The same consumer through a listener with the tenant prefix "java": it asks for
	// topic "bench", which the broker holds as "javabench".
	tcfg := `{"tenant":{"prefix":"java"},"brokers":{"1":"` + proxyAddr + `"}}`
	pt, err := NewPlugin(context.Background(), Config{Module: module(t), Cache: cache, PluginConfiguration: []byte(tcfg)})
	if err != nil {
		t.Fatal(err)
	}
	defer pt.Close()
	best := map[string]time.Duration{}
	var read int64
	for turn := 0; turn < 6; turn++ {
		name, plugin, topic := "no module", (*Plugin)(nil), "javabench"
		switch turn % 3 {
		case 1:
			name, plugin = "filter", p
		case 2:
			name, plugin, topic = "tenant", pt, "bench"
		}
		if ln == nil {
			if ln, err = net.Listen("tcp", proxyAddr); err != nil {
				t.Fatal(err)
			}
		}
		px := NewProxyOn(ln, plugin, up, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, java[0], append(java[1:], proxyAddr, topic, strconv.Itoa(total), "2")...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		cancel()
		px.Close()
		ln = nil
		if err != nil {
			if plugin == nil {
				plugin = p
			}
			var logs []string
			for _, l := range plugin.Logs() {
				if l.Level >= 2 {
					logs = append(logs, l.Message)
				}
			}
			var ms []string
			p.Tick()
			for _, m := range p.Metrics() {
				if m.Value != 0 || len(m.Samples) > 0 {
					ms = append(ms, fmt.Sprintf("%s=%d/%d", m.Name, m.Value, len(m.Samples)))
				}
			}
			if m, ok := p.Metric("kafka.kwire.response.fetch_duration_ms"); ok {
				t.Logf("fetch durations (ms): %v", m.Samples[:min(len(m.Samples), 60)])
			}
			t.Fatalf("%s: Java consumer: %v\n%s%s\nfilter logs: %q\nVM errors %d, broken %v, copied %d\nmetrics %v", name, err, out, stderr.Bytes(), logs[max(0, len(logs)-20):], px.VMErrors(), p.Broken(), p.BytesCopiedIn(), ms)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			// round N records R bytes B ms T
			f := strings.Fields(sc.Text())
			if len(f) != 8 || f[0] != "round" {
				t.Fatalf("%s: unexpected line %q", name, sc.Text())
			}
			if n, _ := strconv.Atoi(f[3]); n < total {
				t.Fatalf("%s: %d of %d records", name, n, total)
			}
			read, _ = strconv.ParseInt(f[5], 10, 64)
			ms, _ := strconv.Atoi(f[7])
			if d := time.Duration(ms) * time.Millisecond; best[name] == 0 || d < best[name] {
				best[name] = d
			}
		}
	}
	p.Tick() // the filters' counters reach the host on a tick
	pt.Tick()
	if m, _ := p.Metric("kafka.kwire.request.fetch"); m.Value == 0 {
		t.Fatal("the filter saw no Fetch request")
	}
	if m, _ := pt.Metric("kafka.kwire.tenant.requests_renamed"); m.Value == 0 {
		t.Fatal("the tenant's filter renamed no request")
	}
	mib := float64(read) / (1 << 20)
	nm, fl, tn := best["no module"], best["filter"], best["tenant"]
	fmt.Printf("Java 4.4 consumer, %d records (%.1f MiB of values) from a real 4.4.0 broker, best of 4 reads each:\n", total, mib)
	fmt.Printf("  %-10s %8.0f ms %8.1f MiB/s\n", "no module", float64(nm.Milliseconds()), mib/nm.Seconds())
	fmt.Printf("  %-10s %8.0f ms %8.1f MiB/s\n", "filter", float64(fl.Milliseconds()), mib/fl.Seconds())
	fmt.Printf("  %-10s %8.0f ms %8.1f MiB/s\n", "tenant", float64(tn.Milliseconds()), mib/tn.Seconds())
	fmt.Printf("envoy-bench java-consume: ratio %.2fx\n", nm.Seconds()/fl.Seconds())
	fmt.Printf("envoy-bench java-tenancy-consume: ratio %.2fx\n", nm.Seconds()/tn.Seconds())
}
