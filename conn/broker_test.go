package conn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/conformance/broker"
)

// TestBroker runs every check against a real broker of each release, the two releases
// side by side. The last check kills the broker.
func TestBroker(t *testing.T) {
	for _, v := range broker.Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			b := broker.StartT(t, broker.Options{Version: v, ReauthMs: reauthMs})
			t.Run("Negotiation", func(t *testing.T) { testNegotiation(t, b) })
			t.Run("ForcedUnsupportedVersion", func(t *testing.T) { testForcedUnsupported(t, b) })
			t.Run("ProduceFetchCompression", func(t *testing.T) { testCompression(t, b) })
			t.Run("FiveInFlight", func(t *testing.T) { testInFlight(t, b) })
			t.Run("CancelMidFlight", func(t *testing.T) { testCancel(t, b) })
			t.Run("CountersMatchWire", func(t *testing.T) { testCounters(t, b) })
			t.Run("TLS", func(t *testing.T) { testTLS(t, b) })
			t.Run("SASL", func(t *testing.T) { testSASL(t, b) })
			t.Run("WrongPassword", func(t *testing.T) { testWrongPassword(t, b) })
			t.Run("OAuthBearer", func(t *testing.T) { testOAuthBearer(t, b) })
			t.Run("ReauthRequired", func(t *testing.T) { testReauthRequired(t, b) })
			t.Run("Reauth30s", func(t *testing.T) { testReauthUnderLoad(t, b) })
			t.Run("NoAnswerTimeout", func(t *testing.T) { testNoAnswer(t, b) })
			t.Run("Restart", func(t *testing.T) { testRestart(t, b) })
			t.Run("BackwardScan", func(t *testing.T) { testBackwardScan(t, b) })
			t.Run("BrokerKilled", func(t *testing.T) { testKilled(t, b) })
			t.Logf("broker %s: all checks in %v (start %v)", v, time.Since(start).Round(time.Millisecond), b.StartDuration().Round(time.Millisecond))
		})
	}
}

func testNegotiation(t *testing.T, b *broker.Broker) {
	c := dialT(t, b.Addr("PLAINTEXT"))
	table := c.BrokerVersions()
	if len(table) < 20 {
		t.Fatalf("broker table lists %d apis", len(table))
	}
	kwAV, _ := codec.LookupAPI(18)
	sent := c.NegotiationVersions()
	if sent[0] != kwAV.Request.MaxVersion {
		t.Errorf("bootstrap ApiVersions v%d, want kwire's highest v%d", sent[0], kwAV.Request.MaxVersion)
	}
	// A broker that knows less retries once, at its highest.
	if bmax := table[18].Max; bmax < kwAV.Request.MaxVersion {
		if !slices.Equal(sent, []int16{kwAV.Request.MaxVersion, bmax}) {
			t.Errorf("ApiVersions sent at %v, want [%d %d]", sent, kwAV.Request.MaxVersion, bmax)
		}
	} else if len(sent) != 1 {
		t.Errorf("ApiVersions sent at %v, want one request", sent)
	}
	t.Logf("negotiation: ApiVersions sent at %v; broker ApiVersions v%d-%d", sent, table[18].Min, table[18].Max)
	checked := 0
	for key, r := range table {
		api, ok := codec.LookupAPI(key)
		if !ok {
			continue
		}
		v, err := c.VersionFor(key)
		lo, hi := max(api.Request.MinVersion, r.Min), min(api.Request.MaxVersion, r.Max)
		if hi < lo {
			if err == nil {
				t.Errorf("%s: v%d although kwire knows %d-%d and the broker %d-%d", api.Name, v, api.Request.MinVersion, api.Request.MaxVersion, r.Min, r.Max)
			}
			continue
		}
		if err != nil || v != hi {
			t.Errorf("%s: v%d %v, want v%d", api.Name, v, err, hi)
		}
		checked++
	}
	pv, _ := c.VersionFor(0)
	fv, _ := c.VersionFor(1)
	t.Logf("%d apis negotiated; Produce v%d, Fetch v%d", checked, pv, fv)
	// The negotiated versions work: Metadata at its negotiated version.
	md := codec.NewMetadataRequest()
	md.Topics = []codec.MetadataRequestTopic{}
	resp, err := c.Do(testCtx(t), md)
	if err != nil || len(resp.(*codec.MetadataResponse).Brokers) != 1 {
		t.Fatalf("Metadata: %v", err)
	}
}

func testForcedUnsupported(t *testing.T, b *broker.Broker) {
	kwAV, _ := codec.LookupAPI(18)
	above := kwAV.Request.MaxVersion + 1
	c := dialT(t, b.Addr("PLAINTEXT"), WithBootstrapVersion(above))
	sent := c.NegotiationVersions()
	want := min(kwAV.Request.MaxVersion, c.BrokerVersions()[18].Max)
	if !slices.Equal(sent, []int16{above, want}) {
		t.Fatalf("ApiVersions sent at %v, want [%d %d]", sent, above, want)
	}
	// An ApiVersions request with its client software fields left empty: the session
	// fills them (Kafka answers INVALID_REQUEST and no apis without them, from v3 on).
	req := codec.NewAPIVersionsRequest()
	resp, err := c.Do(testCtx(t), req)
	if err != nil {
		t.Fatalf("ApiVersions after the retry: %v", err)
	}
	av := resp.(*codec.APIVersionsResponse)
	if v, _ := c.VersionFor(18); v < 3 || av.ErrorCode != 0 || len(av.APIKeys) < 20 {
		t.Fatalf("ApiVersions v%d with empty client software fields: error code %d, %d apis", v, av.ErrorCode, len(av.APIKeys))
	}
	if req.ClientSoftwareName != "" || req.ClientSoftwareVersion != "" {
		t.Errorf("the caller's request was changed: %q %q", req.ClientSoftwareName, req.ClientSoftwareVersion)
	}
}

func testCompression(t *testing.T, b *broker.Broker) {
	c := dialT(t, b.Addr("PLAINTEXT"))
	tp := createTopic(t, c, "compression")
	comps := []records.Compression{records.CompressionNone, records.CompressionGzip, records.CompressionSnappy, records.CompressionLZ4, records.CompressionZstd}
	var want []records.Message
	var wantComp []records.Compression
	ts := time.Now().UnixMilli()
	for ci, comp := range comps {
		var msgs []records.Message
		for i := 0; i < 20; i++ {
			m := records.Message{
				Key:       []byte(fmt.Sprintf("%s-key-%d", comp, i)),
				Value:     []byte(strings.Repeat(fmt.Sprintf("%s value %d; ", comp, i), 1+i)),
				Timestamp: ts + int64(ci*100+i),
				Headers:   []records.Header{{Key: []byte("codec"), Value: []byte(comp.String())}, {Key: []byte("null"), Value: nil}},
			}
			if i == 3 {
				m.Key = nil
			}
			if i == 4 {
				m.Value = nil
			}
			msgs = append(msgs, m)
			wantComp = append(wantComp, comp)
		}
		base := produce(t, c, tp, msgs, comp)
		if base != int64(ci*20) {
			t.Errorf("%s batch at offset %d, want %d", comp, base, ci*20)
		}
		want = append(want, msgs...)
	}
	var got []records.Message
	for len(got) < len(want) {
		ms := fetchMessages(t, c, tp, int64(len(got)), 1<<20)
		if len(ms) == 0 {
			t.Fatalf("fetch from %d returned nothing", len(got))
		}
		got = append(got, ms...)
	}
	if len(got) != len(want) {
		t.Fatalf("fetched %d messages, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Offset != int64(i) {
			t.Fatalf("message %d at offset %d", i, got[i].Offset)
		}
		if got[i].Compression != wantComp[i] {
			t.Errorf("message %d came back with %s, want %s", i, got[i].Compression, wantComp[i])
		}
		if err := sameMessage(got[i], want[i]); err != nil {
			t.Errorf("message %d (%s): %v", i, wantComp[i], err)
		}
	}
}

// testInFlight holds every response back (a gate on the socket's reads) while 8 callers
// send: exactly 5 requests reach the wire, then all 8 complete once the gate opens.
func testInFlight(t *testing.T, b *broker.Broker) {
	c, cc := dialCounting(t, b.Addr("PLAINTEXT"))
	if c.MaxInFlight() != DefaultMaxInFlight {
		t.Fatalf("MaxInFlight %d", c.MaxInFlight())
	}
	before := cc.framesWritten()
	open := cc.closeGate()
	defer open()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.Do(testCtx(t), codec.NewAPIVersionsRequest())
			errs <- err
		}()
	}
	waitFor(t, "5 requests on the wire", func() bool { return cc.framesWritten()-before >= 5 && c.Stats().InFlight >= 5 })
	// The other three wait for a permit: nothing more is written while the gate is shut.
	time.Sleep(200 * time.Millisecond)
	onWire, inFlight := cc.framesWritten()-before, c.Stats().InFlight
	if onWire != 5 || inFlight != 5 || len(errs) != 0 {
		t.Errorf("with responses held back: %d requests written, %d in flight, %d calls returned; want 5, 5, 0", onWire, inFlight, len(errs))
	}
	t.Logf("measured: %d requests on the wire and %d in flight before any response was read", onWire, inFlight)
	open()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := cc.framesWritten() - before; n != 8 || c.Stats().InFlight != 0 {
		t.Errorf("after: %d written, %d in flight", n, c.Stats().InFlight)
	}

	// MaxInFlight 0 is clamped to 1.
	c1 := dialT(t, b.Addr("PLAINTEXT"), WithMaxInFlight(0))
	if c1.MaxInFlight() != 1 {
		t.Errorf("WithMaxInFlight(0) gives %d", c1.MaxInFlight())
	}
}

// testCancel abandons a Fetch the broker holds for 3 s: the caller returns at once, the
// next request on the same connection works, and the dropped response is counted.
func testCancel(t *testing.T, b *broker.Broker) {
	c := dialT(t, b.Addr("PLAINTEXT"))
	tp := createTopic(t, c, "cancel")
	produce(t, c, tp, []records.Message{{Value: []byte("x")}}, records.CompressionNone)
	sent := c.Stats().RequestsSent
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, fetchReq(tp, 1, 1<<20, 3000)) // offset 1: nothing yet, the broker waits
		done <- err
	}()
	waitFor(t, "the fetch on the wire", func() bool { return c.Stats().RequestsSent > sent })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled fetch returned %v, want context.Canceled", err)
	}
	if c.Stats().InFlight != 1 {
		t.Errorf("in flight after the cancel: %d, want 1 (the permit is held until the response is read)", c.Stats().InFlight)
	}
	ms := fetchMessages(t, c, tp, 0, 1<<20)
	if len(ms) != 1 || string(ms[0].Value) != "x" {
		t.Fatalf("fetch after the cancel: %v", ms)
	}
	st := c.Stats()
	if st.Dropped != 1 || st.InFlight != 0 || c.Err() != nil {
		t.Errorf("stats %+v, err %v; want 1 dropped, none in flight", st, c.Err())
	}
}

// testCounters compares the connection's counters with the bytes counted on the socket.
func testCounters(t *testing.T, b *broker.Broker) {
	c, cc := dialCounting(t, b.Addr("PLAINTEXT"))
	tp := createTopic(t, c, "counters")
	produce(t, c, tp, []records.Message{{Value: []byte("counted")}}, records.CompressionGzip)
	fetchMessages(t, c, tp, 0, 1<<20)
	for i := 0; i < 10; i++ {
		if _, err := c.Do(testCtx(t), codec.NewAPIVersionsRequest()); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	st, sc := c.Stats(), c.SessionCounters()
	if st.BytesWritten != cc.written.Load() || st.BytesRead != cc.read.Load() {
		t.Errorf("Stats bytes %d written / %d read, socket %d / %d", st.BytesWritten, st.BytesRead, cc.written.Load(), cc.read.Load())
	}
	if sc.BytesSent != st.BytesWritten || sc.BytesReceived != st.BytesRead {
		t.Errorf("session bytes %d sent / %d received, socket %d / %d", sc.BytesSent, sc.BytesReceived, st.BytesWritten, st.BytesRead)
	}
	if int(st.RequestsSent) != cc.framesWritten() || st.RequestsSent != st.ResponsesReceived || sc.RequestsSent != st.RequestsSent || sc.ResponsesReceived != st.ResponsesReceived {
		t.Errorf("requests: stats %+v, session %+v, frames on the socket %d", st, sc, cc.framesWritten())
	}
	t.Logf("counters: %+v", st)
}

func testTLS(t *testing.T, b *broker.Broker) {
	c := dialT(t, b.Addr("SSL"), WithTLS(b.TLSConfig()))
	tp := createTopic(t, c, "tls")
	produce(t, c, tp, []records.Message{{Value: []byte("over tls")}}, records.CompressionLZ4)
	if ms := fetchMessages(t, c, tp, 0, 1<<20); len(ms) != 1 || string(ms[0].Value) != "over tls" {
		t.Fatalf("fetch over TLS: %v", ms)
	}
	// Without the broker's certificate the handshake fails.
	_, err := Dial(testCtx(t), b.Addr("SSL"), WithTLS(&tls.Config{MinVersion: tls.VersionTLS12}))
	if err == nil || !strings.Contains(err.Error(), "TLS handshake") {
		t.Fatalf("dial without trusting the broker: %v", err)
	}
}

func testSASL(t *testing.T, b *broker.Broker) {
	for _, mech := range broker.Mechanisms {
		for _, listener := range []string{"SASL_PLAINTEXT", "SASL_SSL"} {
			t.Run(mech+"/"+listener, func(t *testing.T) {
				user, pass := b.User(mech)
				opts := []Option{WithSASL(SASL{Mechanism: mech, Username: user, Password: pass})}
				if listener == "SASL_SSL" {
					opts = append(opts, WithTLS(b.TLSConfig()))
				}
				c := dialT(t, b.Addr(listener), opts...)
				md := codec.NewMetadataRequest()
				md.Topics = []codec.MetadataRequestTopic{}
				if _, err := c.Do(testCtx(t), md); err != nil {
					t.Fatalf("Metadata after SASL: %v", err)
				}
			})
		}
	}
	// Without authenticating, a SASL listener refuses Metadata: the broker closes the
	// connection.
	c := dialT(t, b.Addr("SASL_PLAINTEXT"))
	md := codec.NewMetadataRequest()
	md.Topics = []codec.MetadataRequestTopic{}
	if _, err := c.Do(testCtx(t), md); !errors.Is(err, ErrConnectionClosed) {
		t.Fatalf("Metadata without SASL: %v, want ErrConnectionClosed", err)
	}
}

func testWrongPassword(t *testing.T, b *broker.Broker) {
	for _, mech := range broker.Mechanisms {
		t.Run(mech, func(t *testing.T) {
			user, pass := b.User(mech)
			_, err := Dial(testCtx(t), b.Addr("SASL_PLAINTEXT"), WithSASL(SASL{Mechanism: mech, Username: user, Password: pass + "-wrong"}))
			var ae *AuthError
			if !errors.Is(err, ErrAuthentication) || !errors.As(err, &ae) || ae.Code != kerr.SaslAuthenticationFailed {
				t.Fatalf("wrong password: %v, want an AuthError with SASL_AUTHENTICATION_FAILED", err)
			}
			if strings.Contains(err.Error(), pass) {
				t.Fatalf("the error shows the password: %v", err)
			}
			t.Logf("%v", err)
		})
	}
	// An unknown user, and a mechanism the broker does not enable.
	_, err := Dial(testCtx(t), b.Addr("SASL_PLAINTEXT"), WithSASL(SASL{Mechanism: "SCRAM-SHA-256", Username: "nobody", Password: "x"}))
	if !errors.Is(err, ErrAuthentication) {
		t.Errorf("unknown user: %v", err)
	}
	_, err = Dial(testCtx(t), b.Addr("SASL_PLAINTEXT"), WithSASL(SASL{Mechanism: "GSSAPI", Username: "u", Password: "p"}))
	if !errors.Is(err, ErrAuthentication) {
		t.Errorf("unsupported mechanism: %v", err)
	}
	// A mechanism kwire does not speak fails before anything is sent (the case of one
	// the broker does not enable is TestMechanismNotEnabled's, against a fake broker).
	var ae *AuthError
	_, err = Dial(testCtx(t), b.Addr("SASL_PLAINTEXT"), WithSASL(SASL{Mechanism: "SCRAM-SHA-1", Username: "u", Password: "p"}))
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "kwire supports") {
		t.Errorf("SCRAM-SHA-1: %v", err)
	}
}

// testBackwardScan writes 100,000 records in 100 batches, then reads the last 500 with a
// bounded fetch from end-500: the bytes read must be under 5% of the partition's.
func testBackwardScan(t *testing.T, b *broker.Broker) {
	const total, perBatch, tailN = 100_000, 1000, 500
	c := dialT(t, b.Addr("PLAINTEXT"))
	tp := createTopic(t, c, "scan")
	produce(t, c, tp, []records.Message{{Value: []byte("first")}}, records.CompressionNone) // leader ready
	rng := rand.New(rand.NewSource(7))
	value := func(i int) []byte {
		v := make([]byte, 100)
		rng.Read(v)
		copy(v, fmt.Sprintf("record %d ", i))
		return v
	}
	v, _ := c.VersionFor(0)
	var reqs []*codec.ProduceRequest
	var enc records.Encoder
	for n := 1; n < total; {
		var msgs []records.Message
		for i := 0; i < perBatch && n < total; i++ {
			msgs = append(msgs, records.Message{Topic: tp.name, TopicID: tp.id, Key: []byte(fmt.Sprint(n)), Value: value(n), Timestamp: int64(n)})
			n++
		}
		req := codec.NewProduceRequest()
		req.Acks = 1
		req.TimeoutMs = 30000
		if err := enc.AppendProduceMessages(req, v, msgs, records.ProduceOptions{PartitionLeaderEpoch: -1}); err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, req)
	}
	// Pipelined: five callers share the connection; Kafka appends one connection's
	// requests in order.
	var wg sync.WaitGroup
	errs := make(chan error, len(reqs))
	sem := make(chan struct{}, DefaultMaxInFlight)
	for _, req := range reqs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			resp, err := c.Do(testCtx(t), req)
			if err == nil {
				if code := kerr.Code(resp.(*codec.ProduceResponse).Responses[0].PartitionResponses[0].ErrorCode); code != 0 {
					err = code.Err()
				}
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	end := endOffset(t, c, tp)
	if end != total {
		t.Fatalf("end offset %d, want %d", end, total)
	}
	size := partitionSize(t, c, tp)

	before := c.Stats().BytesRead
	from := end - tailN
	var got []records.Message
	for off := from; off < end; {
		ms := fetchMessages(t, c, tp, off, 64<<10)
		if len(ms) == 0 {
			t.Fatalf("fetch from %d returned nothing", off)
		}
		got = append(got, ms...)
		off = ms[len(ms)-1].Offset + 1
	}
	read := c.Stats().BytesRead - before
	if len(got) != tailN {
		t.Fatalf("read %d records, want the last %d", len(got), tailN)
	}
	for i, m := range got {
		// Five callers produced side by side, so batches landed in any order; each
		// record still carries its key in its value.
		if m.Offset != from+int64(i) || !strings.HasPrefix(string(m.Value), "record "+string(m.Key)+" ") {
			t.Fatalf("record %d: offset %d, key %q, value %q", i, m.Offset, m.Key, m.Value[:20])
		}
	}
	pct := 100 * float64(read) / float64(size)
	t.Logf("backward scan: last %d of %d records: %d bytes read of a %d-byte partition = %.2f%%", tailN, total, read, size, pct)
	if pct >= 5 {
		t.Errorf("reading the last %d records read %.2f%% of the partition's bytes, want < 5%%", tailN, pct)
	}
}

// testKilled kills the broker under 5 pending fetches: every caller gets
// ErrConnectionClosed within a second, and later calls fail at once.
func testKilled(t *testing.T, b *broker.Broker) {
	c := dialT(t, b.Addr("PLAINTEXT"))
	tp := createTopic(t, c, "killed")
	produce(t, c, tp, []records.Message{{Value: []byte("x")}}, records.CompressionNone)
	sent := c.Stats().RequestsSent
	type res struct {
		err error
		at  time.Time
	}
	results := make(chan res, 5)
	for i := 0; i < 5; i++ {
		go func() {
			_, err := c.Do(context.Background(), fetchReq(tp, 1, 1<<20, 60000))
			results <- res{err, time.Now()}
		}()
	}
	waitFor(t, "5 fetches on the wire", func() bool { return c.Stats().RequestsSent-sent == 5 })
	killAt := time.Now()
	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		r := <-results
		if !errors.Is(r.err, ErrConnectionClosed) {
			t.Errorf("pending caller got %v, want ErrConnectionClosed", r.err)
		}
		if d := r.at.Sub(killAt); d > time.Second {
			t.Errorf("pending caller returned %v after the kill", d)
		}
	}
	t0 := time.Now()
	_, err := c.Do(context.Background(), codec.NewAPIVersionsRequest())
	if !errors.Is(err, ErrConnectionClosed) {
		t.Errorf("call after death: %v", err)
	}
	t.Logf("after the kill: callers failed, a new call failed in %v: %v", time.Since(t0), err)
	if _, err := net.DialTimeout("tcp", b.Addr("PLAINTEXT"), time.Second); err == nil {
		t.Error("the killed broker still accepts connections")
	}
}
