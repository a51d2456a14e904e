package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/conformance/broker"
)

// syncBuffer is an output the tap's goroutines write to while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines(t *testing.T) []pcapLine {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []pcapLine
	sc := bufio.NewScanner(bytes.NewReader(s.b.Bytes()))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var l pcapLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("tap printed a line that is not JSON: %v: %.200s", err, sc.Text())
		}
		out = append(out, l)
	}
	return out
}

func startTap(t *testing.T, upstream string, rewrite bool) (string, *syncBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	h, p, _ := net.SplitHostPort(ln.Addr().String())
	port, _ := strconv.Atoi(p)
	tp := &tap{upstream: upstream, rewrite: rewrite, host: h, port: int32(port), out: newLineWriter(out),
		maxFrame: codec.DefaultMaxFrameSize, stderr: io.Discard}
	done := make(chan error, 1)
	go func() { done <- tp.serveAll(ln) }()
	t.Cleanup(func() {
		ln.Close()
		if err := <-done; err != nil {
			t.Errorf("tap: %v", err)
		}
	})
	return ln.Addr().String(), out
}

// brokersIn returns the host:port of every broker in Metadata and FindCoordinator
// response lines.
func brokersIn(t *testing.T, lines []pcapLine) map[string]int {
	seen := map[string]int{}
	for _, l := range lines {
		if l.Dir != "response" || (l.APIKey != 3 && l.APIKey != 10) {
			continue
		}
		var body struct {
			Brokers []struct {
				Host string `json:"host"`
				Port int    `json:"port"`
			} `json:"brokers"`
			Coordinators []struct {
				Host      string `json:"host"`
				Port      int    `json:"port"`
				ErrorCode int    `json:"errorCode"`
			} `json:"coordinators"`
		}
		if err := json.Unmarshal(l.Body, &body); err != nil {
			t.Fatalf("response body: %v", err)
		}
		for _, b := range body.Brokers {
			seen[net.JoinHostPort(b.Host, strconv.Itoa(b.Port))]++
		}
		for _, c := range body.Coordinators {
			if c.ErrorCode == 0 {
				seen[net.JoinHostPort(c.Host, strconv.Itoa(c.Port))]++
			}
		}
	}
	return seen
}

// TestTapRealBroker puts kwire tap between franz-go and a real 4.4.0 broker: the tap
// prints every frame of the traffic, decoded. Without --rewrite Metadata names the
// broker, and the client leaves the tap after bootstrapping; with it Metadata and
// FindCoordinator name the tap, every connection the client opens goes through it, and
// the tap prints the produced records.
func TestTapRealBroker(t *testing.T) {
	b := broker.SharedT(t, broker.Options{Version: "4.4.0"})
	if b == nil {
		return
	}
	upstream := b.Addr("PLAINTEXT")
	for _, rewrite := range []bool{false, true} {
		t.Run("rewrite="+strconv.FormatBool(rewrite), func(t *testing.T) {
			addr, out := startTap(t, upstream, rewrite)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			topic := "tap-" + strconv.FormatBool(rewrite)
			var dials sync.Map
			cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic(topic),
				kgo.ConsumeTopics(topic), kgo.ConsumerGroup("tap-group-"+topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
				kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
					dials.Store(host, true)
					var d net.Dialer
					return d.DialContext(ctx, network, host)
				}))
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 5; i++ {
				if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("through the tap " + strconv.Itoa(i))}).FirstErr(); err != nil {
					t.Fatalf("produce: %v", err)
				}
			}
			for got := 0; got < 5; {
				fs := cl.PollFetches(ctx)
				if err := fs.Err0(); err != nil {
					t.Fatalf("consume: %v", err)
				}
				got += fs.NumRecords()
			}
			cl.Close()
			time.Sleep(100 * time.Millisecond)
			lines := out.lines(t)
			reqs, resps, produced := 0, 0, 0
			for _, l := range lines {
				if l.Error != nil {
					t.Errorf("tap line with error: %s", l.Error)
				}
				if l.Dir == "request" {
					reqs++
					if l.APIKey == 0 && strings.Contains(string(l.Body), `"value":{"text":"through the tap`) {
						produced++
					}
				} else {
					resps++
				}
			}
			// With --rewrite everything goes through the tap, the records too; without it the
			// client leaves the tap after bootstrapping and produces to the broker directly.
			wantProduced := 0
			if rewrite {
				wantProduced = 5
			}
			if produced != wantProduced || reqs == 0 || resps != reqs {
				t.Errorf("tap printed %d requests, %d responses, %d produce requests with the records (want %d)", reqs, resps, produced, wantProduced)
			}
			seen := brokersIn(t, lines)
			want := upstream
			if rewrite {
				want = addr
			}
			if len(seen) != 1 || seen[want] == 0 {
				t.Errorf("broker addresses in Metadata and FindCoordinator responses: %v, want only %s", seen, want)
			}
			var hosts []string
			dials.Range(func(k, _ any) bool { hosts = append(hosts, k.(string)); return true })
			for _, h := range hosts {
				if rewrite && h != addr {
					t.Errorf("with --rewrite the client dialled %s, not the tap %s", h, addr)
				}
			}
			if !rewrite && len(hosts) < 2 {
				t.Errorf("without --rewrite the client should also dial the broker itself: dialled %v", hosts)
			}
			t.Logf("rewrite=%v: %d requests, %d responses through the tap; client dialled %v; brokers in responses %v", rewrite, reqs, resps, hosts, seen)
		})
	}
}
