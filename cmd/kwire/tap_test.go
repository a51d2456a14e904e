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
	"github.com/kwire/kwire/internal/proctest"
)

// pcapLines parses the JSON lines the tap printed to out.
func pcapLines(t *testing.T, out *proctest.Buffer) []pcapLine {
	var lines []pcapLine
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var l pcapLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("tap printed a line that is not JSON: %v: %.200s", err, sc.Text())
		}
		lines = append(lines, l)
	}
	return lines
}

// unansweredIn adds up the requests the tap reported unanswered on stderr.
func unansweredIn(t *testing.T, stderr string) int {
	n := 0
	for _, line := range strings.Split(stderr, "\n") {
		_, after, ok := strings.Cut(line, "connection closed with ")
		if !ok {
			continue
		}
		k, err := strconv.Atoi(strings.Fields(after)[0])
		if err != nil {
			t.Fatalf("tap stderr: %q", line)
		}
		n += k
	}
	return n
}

func startTap(t *testing.T, upstream string, rewrite bool) (addr string, out, stderr *proctest.Buffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	out, stderr = &proctest.Buffer{}, &proctest.Buffer{}
	h, p, _ := net.SplitHostPort(ln.Addr().String())
	port, _ := strconv.Atoi(p)
	tp := &tap{upstream: upstream, rewrite: rewrite, host: h, port: int32(port), out: newLineWriter(out),
		maxFrame: codec.DefaultMaxFrameSize, stderr: stderr}
	done := make(chan error, 1)
	go func() { done <- tp.serveAll(ln) }()
	t.Cleanup(func() {
		ln.Close()
		if err := <-done; err != nil {
			t.Errorf("tap: %v", err)
		}
	})
	return ln.Addr().String(), out, stderr
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
			addr, out, stderr := startTap(t, upstream, rewrite)
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
			// A request is answered or, when the client closed the connection with it in
			// flight (a long-polling Fetch), reported on stderr once the connection ends.
			var lines []pcapLine
			var reqs, resps, produced, unanswered int
			for wait := 0; wait < 100; wait++ {
				time.Sleep(50 * time.Millisecond)
				lines = pcapLines(t, out)
				reqs, resps, produced = 0, 0, 0
				for _, l := range lines {
					if l.Dir == "request" {
						reqs++
						if l.APIKey == 0 && strings.Contains(string(l.Body), `"value":{"text":"through the tap`) {
							produced++
						}
					} else {
						resps++
					}
				}
				unanswered = unansweredIn(t, stderr.String())
				if reqs == resps+unanswered {
					break
				}
			}
			for _, l := range lines {
				if l.Error != nil {
					t.Errorf("tap line with error: %s", l.Error)
				}
			}
			// With --rewrite everything goes through the tap, the records too; without it the
			// client leaves the tap after bootstrapping and produces to the broker directly.
			wantProduced := 0
			if rewrite {
				wantProduced = 5
			}
			if produced != wantProduced || reqs == 0 || resps+unanswered != reqs {
				t.Errorf("tap printed %d requests, %d responses, %d unanswered, %d produce requests with the records (want %d)\nstderr: %s", reqs, resps, unanswered, produced, wantProduced, stderr.String())
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
			t.Logf("rewrite=%v: %d requests, %d responses (%d unanswered at close) through the tap; client dialled %v; brokers in responses %v", rewrite, reqs, resps, unanswered, hosts, seen)
		})
	}
}

// TestTapReportsUnanswered: a client that closes with a request in flight leaves a
// request line without a response; the tap says so on stderr when the connection ends.
func TestTapReportsUnanswered(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(io.Discard, c); c.Close() }() // reads, never answers
		}
	}()
	addr, out, stderr := startTap(t, silent.Addr().String(), false)
	req := codec.NewRequest(18)
	frame, err := codec.EncodeRequestFrame(nil, codec.NewRequestHeaderFor(req, 3, 41, "c"), req)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(frame); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); len(pcapLines(t, out)) == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	c.Close()
	want := "connection closed with 1 request unanswered: ApiVersions v3 (correlation id 41)"
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(stderr.String(), want) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("tap stderr %q, want it to contain %q", stderr.String(), want)
	}
	if n := len(pcapLines(t, out)); n != 1 {
		t.Errorf("tap printed %d lines, want the request's", n)
	}
}
