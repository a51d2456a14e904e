package proxywasm

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"testing"
	"time"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/envoy/kafkatest"
)

// sink answers every request frame with the same small Produce v9 response
// (correlation id patched in), so the upstream costs the same with and without
// the filter and almost nothing.
func sink(t testing.TB) (addr string, stop func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := codec.NewProduceResponse()
	pr := codec.NewProduceResponsePartitionProduceResponse()
	r.Responses = []codec.ProduceResponseTopicProduceResponse{{Name: "bench", PartitionResponses: []codec.ProduceResponsePartitionProduceResponse{*pr}}}
	tmpl, err := codec.EncodeResponseFrame(nil, &codec.ResponseHeader{}, 9, r)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var sp kafkatest.Splitter
				buf := make([]byte, 256<<10)
				for {
					n, err := c.Read(buf)
					var out []byte
					for _, f := range sp.Push(buf[:n]) {
						resp := append([]byte(nil), tmpl...)
						copy(resp[4:8], f[8:12])
						out = append(out, resp...)
					}
					if len(out) > 0 {
						if _, werr := c.Write(out); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), func() { ln.Close() }
}

// benchTraffic is n Produce v9 requests of 64 records of 1 KiB each, lz4 batches,
// every record carrying an allowed schema id.
func benchTraffic(t testing.TB, n int) ([]byte, int) {
	var all []byte
	rnd := rand.New(rand.NewSource(1))
	for i := 0; i < n; i++ {
		var msgs []records.Message
		for j := 0; j < 64; j++ {
			v := make([]byte, 1024)
			v[0] = 0
			binary.BigEndian.PutUint32(v[1:], 1)
			rnd.Read(v[5:])
			msgs = append(msgs, records.Message{Topic: "bench", Partition: int32(j % 4), Value: v})
		}
		req, err := kafkatest.Produce(9, 1, records.CompressionLZ4, msgs)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, kafkatest.MustRequest(int32(i+1), 9, req)...)
	}
	return all, n
}

func runTraffic(t testing.TB, addr string, traffic []byte, n int) time.Duration {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Minute))
	start := time.Now()
	errc := make(chan error, 1)
	go func() { _, err := c.Write(traffic); errc <- err }()
	var sp kafkatest.Splitter
	got := 0
	buf := make([]byte, 64<<10)
	for got < n {
		k, err := c.Read(buf)
		got += len(sp.Push(buf[:k]))
		if err != nil && err != io.EOF {
			t.Fatalf("after %d responses: %v", got, err)
		}
		if err == io.EOF {
			t.Fatalf("EOF after %d responses", got)
		}
	}
	d := time.Since(start)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	return d
}

// TestProxyBenchTable compares the harness proxy with the filter (schema policy
// enforcing on the topic, every record checked, lz4 decompressed) against the same
// proxy without it, on the same traffic, in one run. KWIRE_BENCH=1 runs it.
func TestProxyBenchTable(t *testing.T) {
	if os.Getenv("KWIRE_BENCH") != "1" {
		t.Skip("set KWIRE_BENCH=1 (make envoy-bench)")
	}
	up, stop := sink(t)
	defer stop()
	p, err := NewPlugin(context.Background(), Config{Module: module(t), Cache: cache,
		PluginConfiguration: []byte(`{"schema":{"default":"none","rules":[{"topic":"bench","policy":"enforce","schema_ids":[1]}]}}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	with, err := NewProxy(p, up)
	if err != nil {
		t.Fatal(err)
	}
	defer with.Close()
	without, err := NewProxy(nil, up)
	if err != nil {
		t.Fatal(err)
	}
	defer without.Close()
	traffic, n := benchTraffic(t, 400)
	mib := float64(len(traffic)) / (1 << 20)
	// Warm up both, then alternate rounds and keep the best of each.
	runTraffic(t, with.Addr(), traffic[:len(traffic)/8], 0)
	best := map[string]time.Duration{}
	for round := 0; round < 5; round++ {
		for _, x := range []struct {
			name string
			px   *Proxy
		}{{"pass-through", without}, {"filter", with}} {
			d := runTraffic(t, x.px.Addr(), traffic, n)
			if best[x.name] == 0 || d < best[x.name] {
				best[x.name] = d
			}
		}
	}
	checked, _ := p.Metric("kafka.kwire.policy.records_checked")
	if checked.Value < int64(n*64) {
		t.Fatalf("the filter checked %d records, want at least %d", checked.Value, n*64)
	}
	pt, fl := best["pass-through"], best["filter"]
	fmt.Printf("proxy benchmark: %d Produce v9 requests, 64 x 1 KiB records each in lz4 batches, %.1f MiB on the wire\n", n, mib)
	fmt.Printf("  %-14s %8.1f ms  %8.1f MiB/s  %8.0f req/s\n", "pass-through", ms(pt), mib/pt.Seconds(), float64(n)/pt.Seconds())
	fmt.Printf("  %-14s %8.1f ms  %8.1f MiB/s  %8.0f req/s\n", "filter", ms(fl), mib/fl.Seconds(), float64(n)/fl.Seconds())
	fmt.Printf("  filter cost: %.2f ms per MiB, %.1f us per request; throughput ratio filter/pass-through %.2fx (target >= 0.8x)\n",
		(ms(fl)-ms(pt))/mib, float64((fl-pt).Microseconds())/float64(n), pt.Seconds()/fl.Seconds())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
