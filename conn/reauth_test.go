package conn

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/conformance/broker"
)

// reauthMs is the brokers' connections.max.reauth.ms in TestBroker: short enough for
// many re-authentications within one test.
const reauthMs = 4000

// unsignedJWT is a token for Kafka's unsecured OAUTHBEARER validator: an unsigned JWS
// whose "exp" is ttl from now.
func unsignedJWT(sub string, ttl time.Duration) string {
	enc := base64.RawURLEncoding.EncodeToString
	now := time.Now()
	claims := fmt.Sprintf(`{"sub":%q,"iat":%d,"exp":%d}`, sub, now.Unix(), now.Add(ttl).Unix())
	return enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(claims)) + "."
}

func metadataReq() *codec.MetadataRequest {
	md := codec.NewMetadataRequest()
	md.Topics = []codec.MetadataRequestTopic{}
	return md
}

// testOAuthBearer authenticates with an unsigned token on both SASL listeners; an expired
// token and a failing callback give AuthErrors.
func testOAuthBearer(t *testing.T, b *broker.Broker) {
	for _, listener := range []string{"SASL_PLAINTEXT", "SASL_SSL"} {
		t.Run(listener, func(t *testing.T) {
			var calls atomic.Int32
			opts := []Option{WithSASL(SASL{Mechanism: "OAUTHBEARER", Token: func(context.Context) (string, error) {
				calls.Add(1)
				return unsignedJWT("kwire-oauth", time.Hour), nil
			}})}
			if listener == "SASL_SSL" {
				opts = append(opts, WithTLS(b.TLSConfig()))
			}
			c := dialT(t, b.Addr(listener), opts...)
			if _, err := c.Do(testCtx(t), metadataReq()); err != nil {
				t.Fatalf("Metadata after OAUTHBEARER: %v", err)
			}
			if calls.Load() != 1 {
				t.Errorf("token callback called %d times, want 1", calls.Load())
			}
			if st := c.Stats(); st.SessionLifetime <= 0 || st.SessionLifetime > reauthMs*time.Millisecond {
				t.Errorf("session lifetime %v, want (0, %dms]", st.SessionLifetime, reauthMs)
			}
		})
	}
	_, err := Dial(testCtx(t), b.Addr("SASL_PLAINTEXT"), WithSASL(SASL{Mechanism: "OAUTHBEARER", Token: func(context.Context) (string, error) {
		return unsignedJWT("kwire-oauth", -time.Hour), nil
	}}))
	var ae *AuthError
	if !errors.As(err, &ae) || ae.Code != kerr.SaslAuthenticationFailed {
		t.Fatalf("expired token: %v, want an AuthError with SASL_AUTHENTICATION_FAILED", err)
	}
	t.Logf("expired token: %v", err)
	_, err = Dial(testCtx(t), b.Addr("SASL_PLAINTEXT"), WithSASL(SASL{Mechanism: "OAUTHBEARER", Token: func(context.Context) (string, error) {
		return "", errors.New("identity provider down")
	}}))
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "identity provider down") {
		t.Fatalf("failing callback: %v", err)
	}
}

// testReauthRequired is the control: a connection that does not re-authenticate is cut
// by the broker once its session lifetime is over.
func testReauthRequired(t *testing.T, b *broker.Broker) {
	user, pass := b.User("SCRAM-SHA-256")
	c := dialT(t, b.Addr("SASL_PLAINTEXT"), WithSASL(SASL{Mechanism: "SCRAM-SHA-256", Username: user, Password: pass}),
		func(o *options) { o.noReauth = true })
	if _, err := c.Do(testCtx(t), metadataReq()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(reauthMs*time.Millisecond + 500*time.Millisecond)
	_, err := c.Do(testCtx(t), metadataReq())
	if !errors.Is(err, ErrConnectionClosed) {
		t.Fatalf("request after the session lifetime without re-authentication: %v, want ErrConnectionClosed", err)
	}
	t.Logf("without re-authentication, %v after the start: %v", reauthMs*time.Millisecond+500*time.Millisecond, err)
}

// testReauthUnderLoad keeps two connections (SCRAM-SHA-512 on SASL_SSL, OAUTHBEARER on
// SASL_PLAINTEXT) busy for 30 s: a producer of numbered records, one request after the
// other, and two callers of Metadata pipelined beside it. No request may fail, every
// record must come back in order, and the wire must show at least 5 re-authentications
// per connection.
func testReauthUnderLoad(t *testing.T, b *broker.Broker) {
	duration := 30 * time.Second
	if d, err := time.ParseDuration(os.Getenv("KWIRE_REAUTH_DURATION")); err == nil {
		duration = d // a shorter run while working on this test
	}
	user, pass := b.User("SCRAM-SHA-512")
	var tokens atomic.Int32
	setups := []struct {
		name, listener string
		sasl           SASL
		tls            bool
		stepsPerAuth   int
	}{
		{"SCRAM-SHA-512/SASL_SSL", "SASL_SSL", SASL{Mechanism: "SCRAM-SHA-512", Username: user, Password: pass}, true, 2},
		{"OAUTHBEARER/SASL_PLAINTEXT", "SASL_PLAINTEXT", SASL{Mechanism: "OAUTHBEARER", Token: func(context.Context) (string, error) {
			tokens.Add(1)
			return unsignedJWT("kwire-oauth", time.Hour), nil
		}}, false, 1},
	}
	// The broker's side: its log has a line for every re-authentication it begins.
	logBefore := b.LogContains(broker.ReauthLogLine)
	var reauths atomic.Int64
	t.Cleanup(func() { // after both parallel subtests
		logged := b.LogContains(broker.ReauthLogLine) - logBefore
		t.Logf("broker log: %d lines %q during the run; the two connections counted %d re-authentications", logged, broker.ReauthLogLine, reauths.Load())
		if int64(logged) != reauths.Load() {
			t.Errorf("the broker logged %d re-authentications, the connections made %d", logged, reauths.Load())
		}
		// With the SASL server at debug level, no password reaches the broker's log.
		for _, m := range broker.Mechanisms {
			if _, pw := b.User(m); b.LogContains(pw) != 0 {
				t.Errorf("the broker log shows the %s password", m)
			}
		}
	})
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			raw, err := net.Dial("tcp", b.Addr(s.listener))
			if err != nil {
				t.Fatal(err)
			}
			if s.tls {
				raw = tlsClient(raw, b)
			}
			cc := &countingConn{Conn: raw} // counts Kafka frames (above TLS)
			c, err := Open(testCtx(t), cc, WithSASL(s.sasl))
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			defer c.Close()
			tp := createTopic(t, c, "reauth")
			// Timestamps of now: a record stamped 1970 would be deleted by the broker's
			// retention check (7 days) within the test.
			now := func() int64 { return time.Now().UnixMilli() }
			produce(t, c, tp, []records.Message{{Value: []byte("0"), Timestamp: now()}}, records.CompressionNone)
			stop := time.Now().Add(duration)
			var failed atomic.Int64
			var requests atomic.Int64
			var lw sync.WaitGroup
			for i := 0; i < 2; i++ {
				lw.Add(1)
				go func() {
					defer lw.Done()
					for time.Now().Before(stop) {
						if _, err := c.Do(testCtx(t), metadataReq()); err != nil {
							failed.Add(1)
							t.Errorf("%s: Metadata: %v", s.name, err)
							return
						}
						requests.Add(1)
						time.Sleep(5 * time.Millisecond)
					}
				}()
			}
			n := 1
			for ; time.Now().Before(stop); n++ {
				produce(t, c, tp, []records.Message{{Value: []byte(fmt.Sprint(n)), Timestamp: now()}}, records.CompressionNone)
				requests.Add(1)
				time.Sleep(20 * time.Millisecond)
			}
			lw.Wait()
			if end := endOffset(t, c, tp); end != int64(n) {
				t.Fatalf("%s: end offset %d after %d records produced", s.name, end, n)
			}
			var got []records.Message
			for len(got) < n {
				ms := fetchMessages(t, c, tp, int64(len(got)), 1<<20)
				if len(ms) == 0 {
					break
				}
				got = append(got, ms...)
			}
			if len(got) != n {
				t.Errorf("%s: fetched %d records, want %d", s.name, len(got), n)
			}
			for i, m := range got {
				if string(m.Value) != fmt.Sprint(i) {
					t.Errorf("%s: record %d is %q", s.name, i, m.Value)
					break
				}
			}
			// Counters and frames are read with no exchange under way: one that began
			// at the end of the run would count a handshake but no re-authentication.
			c.stopReauth()
			st := c.Stats()
			reauths.Add(st.Reauthentications)
			wire := cc.framesOf(36) // SaslAuthenticate
			hs := cc.framesOf(17)   // SaslHandshake
			t.Logf("%s: %v, %d requests (%d produced records), 0 failed of them: %d; on the wire: %d SaslHandshake, %d SaslAuthenticate; %d re-authentications; session lifetime %v; conn error %v",
				s.name, duration, requests.Load(), n, failed.Load(), hs, wire, st.Reauthentications, st.SessionLifetime, c.Err())
			if st.Reauthentications < 5 || hs != int(st.Reauthentications)+1 || wire != s.stepsPerAuth*hs || int64(wire) != st.SaslAuthenticates {
				t.Errorf("%s: %d re-authentications, %d SaslHandshake and %d SaslAuthenticate frames on the wire (Stats: %d); want >= 5 re-authentications, each one handshake and %d authenticate steps",
					s.name, st.Reauthentications, hs, wire, st.SaslAuthenticates, s.stepsPerAuth)
			}
			if c.Err() != nil {
				t.Errorf("%s: connection died: %v", s.name, c.Err())
			}
			if s.sasl.Token != nil && int(tokens.Load()) != hs {
				t.Errorf("OAUTHBEARER token callback called %d times for %d authentications", tokens.Load(), hs)
			}
		})
	}
}

// tlsClient wraps nc in TLS trusting the broker (the handshake runs on first use).
func tlsClient(nc net.Conn, b *broker.Broker) net.Conn { return tls.Client(nc, b.TLSConfig()) }

// testNoAnswer pauses the broker (SIGSTOP): a request on a live SASL connection times out
// at its deadline, and once the broker continues the next request on the same connection
// works and the late response is dropped.
func testNoAnswer(t *testing.T, b *broker.Broker) {
	user, pass := b.User("PLAIN")
	c := dialT(t, b.Addr("SASL_PLAINTEXT"), WithSASL(SASL{Mechanism: "PLAIN", Username: user, Password: pass}))
	if err := b.Pause(); err != nil {
		t.Fatal(err)
	}
	paused := true
	defer func() {
		if paused {
			b.Continue()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	t0 := time.Now()
	_, err := c.Do(ctx, metadataReq())
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("request to a paused broker: %v, want context.DeadlineExceeded", err)
	}
	took := time.Since(t0)
	b.Continue()
	paused = false
	if _, err := c.Do(testCtx(t), metadataReq()); err != nil {
		t.Fatalf("request after the broker continued: %v", err)
	}
	if st := c.Stats(); st.Dropped != 1 {
		t.Errorf("dropped %d responses, want 1 (the late answer)", st.Dropped)
	}
	t.Logf("paused broker: the request gave up after %v; the next one worked", took.Round(time.Millisecond))
}

// testRestart restarts the broker (clean stop, start on the same ports and data) under a
// SASL connection: the connection fails with ErrConnectionClosed, a new one
// authenticates, and the topic written before is still there.
func testRestart(t *testing.T, b *broker.Broker) {
	user, pass := b.User("SCRAM-SHA-256")
	sasl := WithSASL(SASL{Mechanism: "SCRAM-SHA-256", Username: user, Password: pass})
	c := dialT(t, b.Addr("SASL_PLAINTEXT"), sasl)
	tp := createTopic(t, c, "restart")
	produce(t, c, tp, []records.Message{{Value: []byte("before"), Timestamp: time.Now().UnixMilli()}}, records.CompressionNone)
	t0 := time.Now()
	if err := b.Halt(); err != nil {
		t.Fatal(err)
	}
	halt := time.Since(t0)
	if err := b.Resume(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection outlived the broker's restart")
	}
	if !errors.Is(c.Err(), ErrConnectionClosed) {
		t.Errorf("after the restart: %v", c.Err())
	}
	c2 := dialT(t, b.Addr("SASL_PLAINTEXT"), sasl)
	produce(t, c2, tp, []records.Message{{Value: []byte("after"), Timestamp: time.Now().UnixMilli()}}, records.CompressionNone)
	ms := fetchMessages(t, c2, tp, 0, 1<<20)
	if len(ms) != 2 || string(ms[0].Value) != "before" || string(ms[1].Value) != "after" {
		t.Fatalf("after the restart the partition holds %d records", len(ms))
	}
	t.Logf("restart took %v (clean stop %v)", took.Round(time.Millisecond), halt.Round(time.Millisecond))
}

// TestMechanismNotEnabled: a broker that does not enable the mechanism answers the
// handshake with UNSUPPORTED_SASL_MECHANISM and its list, which the error shows.
func TestMechanismNotEnabled(t *testing.T) {
	srv := newFakeServer(t, func(w net.Conn, h codec.PeekedHeader, frame []byte) bool {
		if h.APIKey != 17 {
			return false
		}
		r := codec.NewSaslHandshakeResponse()
		r.ErrorCode = int16(kerr.UnsupportedSaslMechanism)
		r.Mechanisms = []string{"GSSAPI", "PLAIN"}
		w.Write(answer(t, h, r))
		return true
	})
	_, err := Dial(testCtx(t), srv.addr(), WithSASL(SASL{Mechanism: "SCRAM-SHA-256", Username: "u", Password: "secret-pw"}))
	var ae *AuthError
	if !errors.As(err, &ae) || ae.Code != kerr.UnsupportedSaslMechanism || !strings.Contains(err.Error(), "GSSAPI, PLAIN") {
		t.Fatalf("got %v", err)
	}
	if strings.Contains(err.Error(), "secret-pw") {
		t.Fatalf("the error shows the password: %v", err)
	}
}

// TestReauthFailureFailsConn: a fake broker grants a 200 ms session and refuses the
// re-authentication; the connection dies with an error that says so, and a pending
// caller gets it.
func TestReauthFailureFailsConn(t *testing.T) {
	var auths atomic.Int32
	srv := newFakeServer(t, func(w net.Conn, h codec.PeekedHeader, frame []byte) bool {
		switch h.APIKey {
		case 17:
			w.Write(answer(t, h, codec.NewSaslHandshakeResponse()))
		case 36:
			r := codec.NewSaslAuthenticateResponse()
			if auths.Add(1) == 1 {
				r.SessionLifetimeMs = 200
			} else {
				r.ErrorCode = int16(kerr.SaslAuthenticationFailed)
				msg := "Authentication failed: credentials revoked"
				r.ErrorMessage = &msg
			}
			w.Write(answer(t, h, r))
		default:
			return false
		}
		return true
	})
	c, err := Dial(testCtx(t), srv.addr(), WithSASL(SASL{Mechanism: "PLAIN", Username: "u", Password: "secret-pw"}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the connection lives on after a failed re-authentication")
	}
	err = c.Err()
	if !errors.Is(err, ErrConnectionClosed) || !errors.Is(err, ErrAuthentication) || !strings.Contains(err.Error(), "re-authentication") ||
		!strings.Contains(err.Error(), "credentials revoked") || strings.Contains(err.Error(), "secret-pw") {
		t.Fatalf("connection error %v", err)
	}
	if _, err := c.Do(testCtx(t), codec.NewAPIVersionsRequest()); !errors.Is(err, ErrConnectionClosed) {
		t.Fatalf("call after: %v", err)
	}
	t.Logf("%v", err)
}
