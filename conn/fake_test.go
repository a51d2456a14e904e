package conn

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/session"
)

// fakeServer accepts one connection on a loopback port and hands each request frame to
// handle, which writes whatever it likes. ApiVersions requests are answered with kwire's
// own version table unless handle returns true for them.
type fakeServer struct {
	ln     net.Listener
	handle func(w net.Conn, h codec.PeekedHeader, frame []byte) bool
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
}

func newFakeServer(t *testing.T, handle func(w net.Conn, h codec.PeekedHeader, frame []byte) bool) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{ln: ln, handle: handle}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(s.close)
	return s
}

func (s *fakeServer) addr() string { return s.ln.Addr().String() }

func (s *fakeServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *fakeServer) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			for {
				var size [4]byte
				if _, err := io.ReadFull(c, size[:]); err != nil {
					return
				}
				frame := make([]byte, 4+binary.BigEndian.Uint32(size[:]))
				copy(frame, size[:])
				if _, err := io.ReadFull(c, frame[4:]); err != nil {
					return
				}
				h, err := codec.PeekRequestHeader(frame)
				if err != nil {
					return
				}
				if s.handle != nil && s.handle(c, h, frame) {
					continue
				}
				if h.APIKey == 18 {
					c.Write(apiVersionsAnswer(h))
				}
			}
		}()
	}
}

// apiVersionsAnswer lists every api at kwire's own range.
func apiVersionsAnswer(h codec.PeekedHeader) []byte {
	resp := codec.NewAPIVersionsResponse()
	for _, a := range codec.APIs() {
		resp.APIKeys = append(resp.APIKeys, codec.APIVersionsResponseAPIVersion{APIKey: a.Key, MinVersion: a.Request.MinVersion, MaxVersion: a.Request.MaxVersion})
	}
	f, err := codec.EncodeResponseFrame(nil, &codec.ResponseHeader{CorrelationID: h.CorrelationID}, h.APIVersion, resp)
	if err != nil {
		panic(err)
	}
	return f
}

func answer(t *testing.T, h codec.PeekedHeader, body codec.Response) []byte {
	f, err := codec.EncodeResponseFrame(nil, &codec.ResponseHeader{CorrelationID: h.CorrelationID}, h.APIVersion, body)
	if err != nil {
		t.Error(err)
	}
	return f
}

// TestFrameTooLarge: a server announcing a 200 MiB frame fails the connection cleanly,
// without allocating anything like the frame.
func TestFrameTooLarge(t *testing.T) {
	srv := newFakeServer(t, func(w net.Conn, h codec.PeekedHeader, frame []byte) bool {
		if h.APIKey == 3 {
			w.Write(binary.BigEndian.AppendUint32(nil, 200<<20))
			w.Write(make([]byte, 1000))
			return true
		}
		return false
	})
	c := dialT(t, srv.addr())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := c.Do(testCtx(t), codec.NewMetadataRequest())
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrConnectionClosed) || !errors.Is(err, session.ErrFrameTooLarge) {
		t.Fatalf("200 MiB frame: %v, want ErrConnectionClosed and ErrFrameTooLarge", err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 4<<20 {
		t.Fatalf("refusing the frame allocated %d bytes", d)
	}
	t.Logf("%v (allocated %d bytes meanwhile)", err, after.TotalAlloc-before.TotalAlloc)
	if _, err := c.Do(testCtx(t), codec.NewAPIVersionsRequest()); !errors.Is(err, ErrConnectionClosed) {
		t.Fatalf("call after death: %v", err)
	}
}

// TestMalformedResponseFailsOneCaller: a truncated body fails its caller only.
func TestMalformedResponseFailsOneCaller(t *testing.T) {
	srv := newFakeServer(t, func(w net.Conn, h codec.PeekedHeader, frame []byte) bool {
		switch h.APIKey {
		case 3: // Metadata: a header, then a body cut short
			f := answer(t, h, codec.NewMetadataResponse())
			f = f[:len(f)-2]
			binary.BigEndian.PutUint32(f, uint32(len(f)-4))
			w.Write(f)
			return true
		case 60: // DescribeCluster: fine
			w.Write(answer(t, h, codec.NewDescribeClusterResponse()))
			return true
		}
		return false
	})
	c := dialT(t, srv.addr())
	_, err := c.Do(testCtx(t), codec.NewMetadataRequest())
	var de *codec.DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("malformed response: %v, want a *codec.DecodeError", err)
	}
	t.Logf("the malformed response's caller got: %v", err)
	if _, err := c.Do(testCtx(t), codec.NewDescribeClusterRequest()); err != nil || c.Err() != nil {
		t.Fatalf("next call: %v (conn %v)", err, c.Err())
	}
}

// TestUnknownCorrelationKillsConn: a response nobody asked for kills the connection.
func TestUnknownCorrelationKillsConn(t *testing.T) {
	srv := newFakeServer(t, func(w net.Conn, h codec.PeekedHeader, frame []byte) bool {
		if h.APIKey == 3 {
			h.CorrelationID += 1000
			w.Write(answer(t, h, codec.NewMetadataResponse()))
			return true
		}
		return false
	})
	c := dialT(t, srv.addr())
	_, err := c.Do(testCtx(t), codec.NewMetadataRequest())
	if !errors.Is(err, ErrConnectionClosed) || !errors.Is(err, session.ErrUnknownCorrelation) {
		t.Fatalf("unknown correlation id: %v", err)
	}
}

// TestDeathFailsEveryPendingCaller: the server hangs up under 5 pending calls; each gets
// ErrConnectionClosed, and a call waiting for a permit too.
func TestDeathFailsEveryPendingCaller(t *testing.T) {
	hang := make(chan struct{})
	got := make(chan struct{}, 16)
	srv := newFakeServer(t, func(w net.Conn, h codec.PeekedHeader, frame []byte) bool {
		if h.APIKey == 3 {
			got <- struct{}{}
			if len(got) == 5 {
				<-hang
				w.Close()
			}
			return true
		}
		return false
	})
	c := dialT(t, srv.addr())
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		go func() {
			_, err := c.Do(context.Background(), codec.NewMetadataRequest())
			errs <- err
		}()
	}
	waitFor(t, "5 requests at the server", func() bool { return len(got) == 5 })
	close(hang)
	for i := 0; i < 6; i++ {
		if err := <-errs; !errors.Is(err, ErrConnectionClosed) {
			t.Errorf("caller %d: %v", i, err)
		}
	}
	<-c.Done()
	if _, err := c.RoundTrip(context.Background(), 18, 0, nil); !errors.Is(err, ErrConnectionClosed) {
		t.Errorf("later call: %v", err)
	}
}

// TestPermitWait: with one permit held by an unanswered call, a second caller whose
// context ends while it waits returns the context's error and takes nothing.
func TestPermitWait(t *testing.T) {
	srv := newFakeServer(t, func(w net.Conn, h codec.PeekedHeader, frame []byte) bool {
		return h.APIKey == 3 // never answered
	})
	c := dialT(t, srv.addr(), WithMaxInFlight(0))
	go c.Do(context.Background(), codec.NewMetadataRequest())
	waitFor(t, "the first call in flight", func() bool { return c.Stats().InFlight == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Do(ctx, codec.NewAPIVersionsRequest()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second call: %v", err)
	}
	if st := c.Stats(); st.InFlight != 1 || st.RequestsSent != 2 { // negotiation + the first call
		t.Fatalf("stats %+v", st)
	}
	c.Close()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestAcksZero: a Produce with acks=0 returns once written; nothing waits for an answer.
func TestAcksZero(t *testing.T) {
	seen := make(chan int16, 1)
	srv := newFakeServer(t, func(w net.Conn, h codec.PeekedHeader, frame []byte) bool {
		if h.APIKey == 0 {
			seen <- h.APIVersion
			return true
		}
		return false
	})
	c := dialT(t, srv.addr())
	p := codec.NewProduceRequest()
	p.Acks = 0
	resp, err := c.Do(testCtx(t), p)
	if err != nil || resp != nil {
		t.Fatalf("acks=0: %v %v", resp, err)
	}
	if v := <-seen; v != codec.LookupMessage(0, codec.KindRequest).Info().MaxVersion {
		t.Errorf("produce sent at v%d", v)
	}
	if st := c.Stats(); st.InFlight != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestWithoutNegotiation: requests name their version; the negotiated one is refused.
func TestWithoutNegotiation(t *testing.T) {
	srv := newFakeServer(t, nil)
	c := dialT(t, srv.addr(), WithoutNegotiation())
	if _, err := c.Do(testCtx(t), codec.NewAPIVersionsRequest()); !errors.Is(err, session.ErrNotNegotiated) {
		t.Fatalf("negotiated version without negotiation: %v", err)
	}
	resp, err := c.DoVersion(testCtx(t), codec.NewAPIVersionsRequest(), 3)
	if err != nil || len(resp.(*codec.APIVersionsResponse).APIKeys) == 0 {
		t.Fatalf("ApiVersions v3: %v", err)
	}
	if c.Stats().RequestsSent != 1 {
		t.Errorf("stats %+v", c.Stats())
	}
}

// TestClientSoftware: negotiation and an ApiVersions request left empty report the
// configured client software (by default kwire-go and codec.Version); a value Kafka
// refuses fails Dial before anything is sent.
func TestClientSoftware(t *testing.T) {
	for _, c := range []struct {
		opts          []Option
		name, version string
	}{
		{nil, "kwire-go", codec.Version},
		{[]Option{WithClientSoftware("my-app", "3.1")}, "my-app", "3.1"},
	} {
		var mu sync.Mutex
		var seen [][2]string
		srv := newFakeServer(t, func(w net.Conn, h codec.PeekedHeader, frame []byte) bool {
			if h.APIKey == 18 {
				f, err := codec.DecodeRequestFrame(frame)
				if err != nil {
					t.Error(err)
					return false
				}
				req := f.Body.(*codec.APIVersionsRequest)
				mu.Lock()
				seen = append(seen, [2]string{req.ClientSoftwareName, req.ClientSoftwareVersion})
				mu.Unlock()
			}
			return false
		})
		conn := dialT(t, srv.addr(), c.opts...)
		if _, err := conn.Do(testCtx(t), codec.NewAPIVersionsRequest()); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if want := [2]string{c.name, c.version}; len(seen) != 2 || seen[0] != want || seen[1] != want {
			t.Errorf("ApiVersions requests carried %v, want %v twice", seen, want)
		}
		mu.Unlock()
	}
	srv := newFakeServer(t, func(net.Conn, codec.PeekedHeader, []byte) bool {
		t.Error("a request reached the server")
		return true
	})
	_, err := Dial(testCtx(t), srv.addr(), WithClientSoftware("my app", "1"))
	if !errors.Is(err, session.ErrInvalidField) {
		t.Fatalf("Dial with a name Kafka refuses: %v", err)
	}
}
