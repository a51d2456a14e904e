// Package conn is kwire's Go connection to a Kafka broker: one socket, one writer and
// one reader goroutine over the sans-IO session of codec/session, TLS through
// crypto/tls, SASL PLAIN and SCRAM-SHA-256/512, and per-connection counters.
//
// The reader only cuts frames and matches correlation ids; each response is decoded on
// the goroutine of the caller that asked for it, so a malformed response fails that call
// only. At most MaxInFlight requests (5 unless WithMaxInFlight says otherwise) are on the
// wire at once; a caller that gives up (its context ends) returns at once, and its
// response is still read off the socket and dropped, so the connection stays usable.
// When the connection dies (read or write error, a response the session cannot place,
// Close) every pending caller gets ErrConnectionClosed at once and later calls fail
// immediately with it.
//
// Open (or Dial) negotiates api versions with ApiVersions before returning, retrying at a
// lower version when the broker answers UNSUPPORTED_VERSION, and then authenticates with
// SASL when asked to. When the broker grants a session lifetime (connections.max.reauth.ms,
// or a token's expiry), the connection re-authenticates at 85-95% of it (at least a second before its end): new requests wait,
// the requests on the wire are answered, the SASL exchange runs again, and the waiting
// requests go out in their order. A failed re-authentication fails the connection. Do
// sends a typed request at the negotiated version.
package conn

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/session"
)

// ErrConnectionClosed is returned (wrapped with its cause) by every call pending when the
// connection dies and by every call made after.
var ErrConnectionClosed = errors.New("kwire conn: connection closed")

// DefaultMaxInFlight is the number of requests on the wire at once unless
// WithMaxInFlight says otherwise.
const DefaultMaxInFlight = 5

// options collects what the Option functions set.
type options struct {
	clientID      *string
	maxInFlight   int
	tls           *tls.Config
	sasl          *SASL
	maxFrame      int
	bootstrap     int16
	softwareName  string
	softwareVer   string
	noNegotiation bool
	dialer        *net.Dialer
	noReauth      bool // tests only: never re-authenticate
}

// Option configures Dial and Open.
type Option func(*options)

// WithClientID sets the client id of request headers (default "kwire").
func WithClientID(id string) Option { return func(o *options) { o.clientID = &id } }

// WithMaxInFlight bounds the requests on the wire at once; 0 or less is clamped to 1.
func WithMaxInFlight(n int) Option {
	return func(o *options) { o.maxInFlight = max(n, 1) }
}

// WithTLS makes Dial wrap the socket in TLS with cfg (its ServerName defaults to the
// address's host). Open ignores it: it takes the connection as given.
func WithTLS(cfg *tls.Config) Option { return func(o *options) { o.tls = cfg } }

// WithSASL authenticates after version negotiation (SaslHandshake v1, then
// SaslAuthenticate), and again whenever the broker's session lifetime runs out:
//
//	conn.WithSASL(conn.SASL{Mechanism: "SCRAM-SHA-512", Username: "u", Password: "p"})
//	conn.WithSASL(conn.SASL{Mechanism: "OAUTHBEARER", Token: fetchToken})
func WithSASL(s SASL) Option {
	return func(o *options) { o.sasl = &s }
}

// WithMaxFrameSize bounds the size of received frames (default 100 MiB).
func WithMaxFrameSize(n int) Option { return func(o *options) { o.maxFrame = n } }

// WithBootstrapVersion sets the version of the first ApiVersions request (default
// kwire's highest). A version the broker does not know is answered with
// UNSUPPORTED_VERSION and negotiation retries at the highest version both know.
func WithBootstrapVersion(v int16) Option { return func(o *options) { o.bootstrap = v } }

// WithClientSoftware sets the clientSoftwareName and clientSoftwareVersion that
// ApiVersions v3+ requests report: negotiation's, and those of any ApiVersions request
// that leaves them empty (default session.DefaultClientSoftwareName, "kwire-go", and
// codec.Version). Kafka accepts letters, digits, '-' and '.', beginning and ending with a
// letter or digit (session.SoftwarePattern); other values fail the request before it is
// sent.
func WithClientSoftware(name, version string) Option {
	return func(o *options) { o.softwareName, o.softwareVer = name, version }
}

// WithoutNegotiation skips ApiVersions: requests must then name their version (DoVersion,
// RoundTrip), and SASL is unavailable.
func WithoutNegotiation() Option { return func(o *options) { o.noNegotiation = true } }

// WithDialer sets the dialer Dial uses.
func WithDialer(d *net.Dialer) Option { return func(o *options) { o.dialer = d } }

// Stats are a connection's counters. Bytes are Kafka protocol bytes through the socket
// the connection holds (under TLS, the plaintext).
type Stats struct {
	BytesWritten, BytesRead int64
	// RequestsSent counts request frames written; ResponsesReceived response frames read.
	RequestsSent, ResponsesReceived int64
	// Dropped counts responses read for callers that had given up.
	Dropped int64
	// InFlight is the number of requests written or queued and not yet answered.
	InFlight int
	// SaslAuthenticates counts SaslAuthenticate requests sent (every step of every
	// authentication); Reauthentications the re-authentications completed.
	SaslAuthenticates, Reauthentications int64
	// SessionLifetime is the lifetime the broker granted at the last authentication (0:
	// none, or no SASL).
	SessionLifetime time.Duration
}

// Conn is a connection to one broker. Its methods are safe for concurrent use.
type Conn struct {
	nc   net.Conn
	opts options

	mu    sync.Mutex // guards sess, calls and dead
	sess  *session.Session
	calls map[int32]*call
	dead  bool
	// gate, while a re-authentication runs, holds every request but its own; idle is
	// closed when the last request on the wire is answered.
	gate, idle chan struct{}
	lifetime   time.Duration
	authSent   time.Time // when the last SaslAuthenticate was sent

	sem     chan struct{} // in-flight permits
	writeCh chan *call
	closed  chan struct{} // closed when the connection dies
	err     error         // why it died; set before closed is closed
	dieOnce sync.Once
	wg      sync.WaitGroup

	bytesWritten, bytesRead atomic.Int64
	requestsSent, responses atomic.Int64
	dropped                 atomic.Int64
	saslAuthenticates       atomic.Int64
	reauths                 atomic.Int64

	// reauthMu is held for the whole of a re-authentication; reauthStopped (under it)
	// ends the schedule. Tests stop it to read counters that no exchange is changing.
	reauthMu      sync.Mutex
	reauthStopped bool
}

// call is one request on its way.
type call struct {
	frame      []byte
	corr       int32
	noResponse bool
	done       chan result // capacity 1: the reader and writer never block on it
	abandoned  atomic.Bool
}

type result struct {
	resp session.Response
	err  error
}

// Dial connects to addr ("host:port"), wraps the socket in TLS when WithTLS is given,
// and Opens the connection. ctx bounds the whole setup; the connection outlives it.
func Dial(ctx context.Context, addr string, opts ...Option) (*Conn, error) {
	o := collect(opts)
	d := o.dialer
	if d == nil {
		d = &net.Dialer{}
	}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("kwire conn: dial %s: %w", addr, err)
	}
	if o.tls != nil {
		cfg := o.tls.Clone()
		if cfg.ServerName == "" {
			host, _, _ := net.SplitHostPort(addr)
			cfg.ServerName = host
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("kwire conn: TLS handshake with %s: %w", addr, err)
		}
		nc = tc
	}
	return Open(ctx, nc, opts...)
}

func collect(opts []Option) options {
	o := options{maxInFlight: DefaultMaxInFlight}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// Open runs a connection over nc, which it owns from now on (Close closes it): it starts
// the reader and writer, negotiates versions and authenticates. ctx bounds the setup.
// On failure nc is closed.
func Open(ctx context.Context, nc net.Conn, opts ...Option) (*Conn, error) {
	o := collect(opts)
	cfg := session.Config{ClientID: o.clientID, MaxFrameSize: o.maxFrame, BootstrapVersion: o.bootstrap,
		ClientSoftwareName: o.softwareName, ClientSoftwareVersion: o.softwareVer}
	c := &Conn{
		nc:      nc,
		opts:    o,
		sess:    session.New(cfg),
		calls:   make(map[int32]*call),
		sem:     make(chan struct{}, o.maxInFlight),
		writeCh: make(chan *call, o.maxInFlight),
		closed:  make(chan struct{}),
	}
	c.wg.Add(2)
	go c.reader()
	go c.writer()
	if !o.noNegotiation {
		if err := c.negotiate(ctx); err != nil {
			c.Close()
			return nil, err
		}
	}
	if o.sasl != nil {
		if o.noNegotiation {
			c.Close()
			return nil, errors.New("kwire conn: SASL needs version negotiation")
		}
		life, err := c.authenticate(ctx, o.sasl)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.scheduleReauth(life)
	}
	return c, nil
}

// negotiate sends ApiVersions, and again at a lower version after UNSUPPORTED_VERSION.
func (c *Conn) negotiate(ctx context.Context) error {
	frame, err := c.withSession(func(s *session.Session) ([]byte, error) { return s.BeginNegotiation() })
	if err != nil {
		return err
	}
	for {
		r, err := c.sendFrame(ctx, func(*session.Session) ([]byte, int32, bool, error) {
			return frame, int32(binary.BigEndian.Uint32(frame[8:])), true, nil
		})
		if err != nil {
			return fmt.Errorf("kwire conn: version negotiation: %w", err)
		}
		switch r.Negotiation {
		case session.NegotiationRetry:
			frame = r.Retry
		case session.NegotiationDone:
			return r.Err
		default:
			return fmt.Errorf("kwire conn: correlation id %d answered negotiation as an ordinary response", r.CorrelationID)
		}
	}
}

func (c *Conn) withSession(f func(s *session.Session) ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return nil, c.err
	}
	return f(c.sess)
}

// Do sends req at the negotiated version and decodes the response on the calling
// goroutine. A Produce with Acks == 0 returns (nil, nil) once written.
func (c *Conn) Do(ctx context.Context, req codec.Request) (codec.Response, error) {
	return c.DoVersion(ctx, req, -1)
}

// DoVersion is Do at an explicit version (-1: the negotiated one).
func (c *Conn) DoVersion(ctx context.Context, req codec.Request, version int16) (codec.Response, error) {
	r, err := c.sendFrame(ctx, func(s *session.Session) ([]byte, int32, bool, error) {
		frame, corr, _, err := s.AppendTyped(getFrame(), req, version)
		return frame, corr, session.ExpectsResponse(req), err
	})
	if err != nil || r.Frame == nil {
		return nil, err
	}
	return session.DecodeBody(r)
}

// RoundTrip sends a request given as its encoded body at (apiKey, version) (-1: the
// negotiated version) and returns the response frame undecoded.
func (c *Conn) RoundTrip(ctx context.Context, apiKey, version int16, body []byte) (session.Response, error) {
	return c.sendFrame(ctx, func(s *session.Session) ([]byte, int32, bool, error) {
		frame, corr, err := s.AppendRequest(getFrame(), apiKey, version, body)
		return frame, corr, true, err
	})
}

// sendFrame takes a permit, builds the frame under the session lock, queues it for the
// writer and waits for the answer, the caller's context or the connection's death.
func (c *Conn) sendFrame(ctx context.Context, build func(s *session.Session) ([]byte, int32, bool, error)) (session.Response, error) {
	select {
	case <-c.closed:
		return session.Response{}, c.err
	default:
	}
	if err := ctx.Err(); err != nil {
		return session.Response{}, err
	}
	auth := ctx.Value(authKey{}) != nil
	for {
		select {
		case c.sem <- struct{}{}:
		case <-ctx.Done():
			return session.Response{}, ctx.Err()
		case <-c.closed:
			return session.Response{}, c.err
		}
		c.mu.Lock()
		if c.dead {
			c.mu.Unlock()
			c.release()
			return session.Response{}, c.err
		}
		if c.gate == nil || auth {
			break
		}
		// A re-authentication runs: wait for it with the permit given back.
		gate := c.gate
		c.mu.Unlock()
		c.release()
		select {
		case <-gate:
		case <-ctx.Done():
			return session.Response{}, ctx.Err()
		case <-c.closed:
			return session.Response{}, c.err
		}
	}
	cl := &call{done: make(chan result, 1)}
	frame, corr, expect, err := build(c.sess)
	if err != nil {
		c.mu.Unlock()
		c.release()
		return session.Response{}, err
	}
	cl.frame, cl.corr, cl.noResponse = frame, corr, !expect
	if expect {
		c.calls[corr] = cl
	}
	c.writeCh <- cl // never blocks: a permit is held and the channel holds as many
	c.mu.Unlock()

	select {
	case r := <-cl.done:
		return r.resp, r.err
	case <-ctx.Done():
		// The request may already be on the wire: its response is read and dropped.
		cl.abandoned.Store(true)
		select {
		case r := <-cl.done: // it arrived meanwhile
			return r.resp, r.err
		default:
		}
		return session.Response{}, ctx.Err()
	case <-c.closed:
		select {
		case r := <-cl.done:
			return r.resp, r.err
		default:
		}
		return session.Response{}, c.err
	}
}

func (c *Conn) release() { <-c.sem }

// framePool recycles request frame buffers: a frame is built by its caller and dropped by
// the writer once written. Buffers above 64 KiB are left to the collector.
var framePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

const maxPooledFrame = 64 << 10

func getFrame() []byte { return (*framePool.Get().(*[]byte))[:0] }

func putFrame(b []byte) {
	if cap(b) <= maxPooledFrame {
		framePool.Put(&b)
	}
}

// writer writes queued frames, several per system call when they queue up.
func (c *Conn) writer() {
	defer c.wg.Done()
	batch := make([]*call, 0, cap(c.writeCh))
	var bufs net.Buffers
	for {
		select {
		case cl := <-c.writeCh:
			batch = append(batch[:0], cl)
		drain:
			for len(batch) < cap(batch) {
				select {
				case cl := <-c.writeCh:
					batch = append(batch, cl)
				default:
					break drain
				}
			}
			bufs = bufs[:0]
			var total int64
			for _, cl := range batch {
				bufs = append(bufs, cl.frame)
				total += int64(len(cl.frame))
			}
			// Counted before the write, so that a caller who has its answer sees its
			// request counted; a failed write takes back what did not go out.
			c.bytesWritten.Add(total)
			c.requestsSent.Add(int64(len(batch)))
			var n int64
			var err error
			if len(batch) == 1 {
				var m int
				m, err = c.nc.Write(batch[0].frame)
				n = int64(m)
			} else {
				b := bufs // WriteTo consumes the slice it is called on
				n, err = b.WriteTo(c.nc)
			}
			if err != nil {
				c.bytesWritten.Add(n - total)
				for _, cl := range batch {
					if n >= int64(len(cl.frame)) {
						n -= int64(len(cl.frame))
						continue
					}
					n = 0
					c.requestsSent.Add(-1)
				}
				c.die(fmt.Errorf("write: %w", err))
				return
			}
			for i, cl := range batch {
				putFrame(cl.frame)
				cl.frame = nil
				if cl.noResponse {
					c.release()
					cl.done <- result{}
				}
				batch[i] = nil
			}
		case <-c.closed:
			return
		}
	}
}

// reader feeds the session and hands each response to its caller.
func (c *Conn) reader() {
	defer c.wg.Done()
	buf := make([]byte, 64<<10)
	type delivery struct {
		cl *call
		r  session.Response
	}
	var ready []delivery
	for {
		n, rerr := c.nc.Read(buf)
		if n > 0 {
			c.bytesRead.Add(int64(n))
			c.mu.Lock()
			if err := c.sess.Feed(buf[:n]); err != nil {
				c.mu.Unlock()
				c.die(err)
				return
			}
			for {
				r, ok, err := c.sess.Next()
				if err != nil {
					c.mu.Unlock()
					c.die(err)
					return
				}
				if !ok {
					break
				}
				cl := c.calls[r.CorrelationID]
				delete(c.calls, r.CorrelationID)
				ready = append(ready, delivery{cl, r})
				if c.idle != nil && len(c.calls) == 0 {
					close(c.idle)
					c.idle = nil
				}
			}
			c.mu.Unlock()
			for i, d := range ready {
				c.responses.Add(1)
				if d.cl.abandoned.Load() {
					c.dropped.Add(1)
				}
				// The permit goes back before the caller wakes: once Do returns, its
				// request no longer counts as in flight.
				c.release()
				d.cl.done <- result{resp: d.r}
				ready[i] = delivery{}
			}
			ready = ready[:0]
		}
		if rerr != nil {
			c.die(fmt.Errorf("read: %w", rerr))
			return
		}
	}
}

// die closes the connection once and fails every pending call with cause.
func (c *Conn) die(cause error) {
	c.dieOnce.Do(func() {
		c.mu.Lock()
		c.dead = true
		c.err = fmt.Errorf("%w: %w", ErrConnectionClosed, cause)
		calls := c.calls
		c.calls = nil
		c.mu.Unlock()
		close(c.closed)
		c.nc.Close()
		for _, cl := range calls {
			select {
			case cl.done <- result{err: c.err}:
			default:
			}
		}
	})
}

// errClosedByCaller is the cause recorded by Close.
var errClosedByCaller = errors.New("closed by the caller")

// Close closes the connection (pending calls get ErrConnectionClosed) and waits for its
// goroutines to end. It returns nil; closing twice is harmless.
func (c *Conn) Close() error {
	c.die(errClosedByCaller)
	c.wg.Wait()
	return nil
}

// Done is closed when the connection has died.
func (c *Conn) Done() <-chan struct{} { return c.closed }

// Err returns why the connection died (wrapping ErrConnectionClosed), or nil while it lives.
func (c *Conn) Err() error {
	select {
	case <-c.closed:
		return c.err
	default:
		return nil
	}
}

// Stats returns the connection's counters.
func (c *Conn) Stats() Stats {
	return Stats{
		BytesWritten:      c.bytesWritten.Load(),
		BytesRead:         c.bytesRead.Load(),
		RequestsSent:      c.requestsSent.Load(),
		ResponsesReceived: c.responses.Load(),
		Dropped:           c.dropped.Load(),
		InFlight:          len(c.sem),
		SaslAuthenticates: c.saslAuthenticates.Load(),
		Reauthentications: c.reauths.Load(),
		SessionLifetime:   c.sessionLifetime(),
	}
}

func (c *Conn) sessionLifetime() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lifetime
}

// SessionCounters returns the counters of the underlying session: frames produced and
// bytes fed, as opposed to Stats' bytes through the socket.
func (c *Conn) SessionCounters() session.Counters {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess.Counters()
}

// VersionFor returns the negotiated version of an api (see session.Session.VersionFor).
func (c *Conn) VersionFor(apiKey int16) (int16, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess.VersionFor(apiKey)
}

// BrokerVersions returns the broker's api version table read during negotiation.
func (c *Conn) BrokerVersions() map[int16]session.VersionRange {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess.BrokerVersions()
}

// NegotiationVersions returns the ApiVersions versions sent during negotiation, in order.
func (c *Conn) NegotiationVersions() []int16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess.NegotiationVersions()
}

// MaxInFlight returns the connection's in-flight bound.
func (c *Conn) MaxInFlight() int { return cap(c.sem) }

// LocalAddr and RemoteAddr are the socket's addresses.
func (c *Conn) LocalAddr() net.Addr { return c.nc.LocalAddr() }

// RemoteAddr is the broker's address.
func (c *Conn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }
