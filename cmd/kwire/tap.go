package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kwire/kwire/cmd/kwire/internal/frames"
	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/transcode"
)

// netError is a failure to listen or to reach the upstream broker.
type netError struct{ err error }

// Error says what failed on the network.
func (e *netError) Error() string { return e.err.Error() }

// Unwrap returns the cause.
func (e *netError) Unwrap() error { return e.err }

// Api keys whose responses carry broker addresses that --rewrite points at the tap.
const (
	apiMetadata        = 3
	apiFindCoordinator = 10
	apiDescribeCluster = 60
)

// tap is a logging proxy: every frame between a client and the upstream broker is
// forwarded unchanged (or with its broker addresses rewritten) and printed as a line.
type tap struct {
	upstream  string
	rewrite   bool
	host      string // the tap's address that rewritten responses carry
	port      int32
	out       *lineWriter
	mu        sync.Mutex // serialises output lines
	maxFrame  int
	stderr    io.Writer
	rewritten int
}

func cmdTap(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tap", stderr)
	listen := fs.String("listen", "", "address to accept clients on, e.g. 127.0.0.1:19092")
	upstream := fs.String("upstream", "", "the broker to forward to, e.g. 127.0.0.1:9092")
	rewrite := fs.Bool("rewrite", false, "point the broker addresses of Metadata, FindCoordinator and DescribeCluster responses at the tap")
	advertise := fs.String("advertise", "", "with --rewrite, the host:port written into responses (default: the listen address)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *listen == "" || *upstream == "" {
		return &usageError{"tap needs --listen ADDR and --upstream ADDR"}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return &netError{err}
	}
	defer ln.Close()
	t := &tap{upstream: *upstream, rewrite: *rewrite, out: newLineWriter(stdout), maxFrame: codec.DefaultMaxFrameSize, stderr: stderr}
	adv := *advertise
	if adv == "" {
		adv = ln.Addr().String()
	}
	h, p, err := net.SplitHostPort(adv)
	if err != nil {
		return &usageError{fmt.Sprintf("--advertise %q: %v", adv, err)}
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return &usageError{fmt.Sprintf("--advertise %q: bad port", adv)}
	}
	t.host, t.port = h, int32(port)
	fmt.Fprintf(stderr, "kwire tap: listening on %s, forwarding to %s\n", ln.Addr(), *upstream)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	go func() {
		<-sig
		ln.Close()
	}()
	return t.serveAll(ln)
}

// serveAll accepts clients until ln is closed.
func (t *tap) serveAll(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				t.mu.Lock()
				defer t.mu.Unlock()
				return t.out.Flush()
			}
			return &netError{err}
		}
		go t.serve(c)
	}
}

type tapPending struct {
	key, version int16
	at           time.Time
}

func (t *tap) serve(client net.Conn) {
	defer client.Close()
	up, err := net.DialTimeout("tcp", t.upstream, 10*time.Second)
	if err != nil {
		fmt.Fprintf(t.stderr, "kwire tap: %s: cannot reach upstream %s: %v\n", client.RemoteAddr(), t.upstream, err)
		return
	}
	defer up.Close()
	conn := client.RemoteAddr().String() + " > " + up.RemoteAddr().String()
	var mu sync.Mutex
	pending := map[int32]tapPending{}
	done := make(chan struct{}, 2)
	// client -> upstream: requests
	go func() {
		defer func() { done <- struct{}{} }()
		w := frames.NewWriter(false)
		var line []byte
		t.frames(client, up, func(frame []byte) []byte {
			now := time.Now()
			if h, ok := frames.PeekRequest(frame); ok {
				mu.Lock()
				if len(pending) >= 1<<14 {
					clear(pending) // requests never answered (Produce with acks=0)
				}
				pending[h.CorrelationID] = tapPending{h.APIKey, h.APIVersion, now}
				mu.Unlock()
			}
			line, _ = w.AppendRequest(line[:0], &frames.Meta{Time: now, Conn: conn, Latency: -1}, frame)
			t.print(line)
			return frame
		})
		up.(*net.TCPConn).CloseWrite()
	}()
	// upstream -> client: responses
	go func() {
		defer func() { done <- struct{}{} }()
		w := frames.NewWriter(false)
		var line []byte
		var doc transcode.Doc
		t.frames(up, client, func(frame []byte) []byte {
			now := time.Now()
			id, _ := frames.PeekResponse(frame)
			mu.Lock()
			p, ok := pending[id]
			delete(pending, id)
			mu.Unlock()
			meta := frames.Meta{Time: now, Conn: conn, Latency: -1}
			if !ok {
				t.print(w.AppendUnmatched(line[:0], &meta, frame))
				return frame
			}
			if t.rewrite && (p.key == apiMetadata || p.key == apiFindCoordinator || p.key == apiDescribeCluster) {
				if nf, err := t.rewriteFrame(&doc, frame, p.key, p.version); err != nil {
					fmt.Fprintf(t.stderr, "kwire tap: %s: cannot rewrite %d v%d response: %v\n", conn, p.key, p.version, err)
				} else if nf != nil {
					frame = nf
				}
			}
			meta.Latency = now.Sub(p.at)
			line, _ = w.AppendResponse(line[:0], &meta, frame, p.key, p.version)
			t.print(line)
			return frame
		})
		client.(*net.TCPConn).CloseWrite()
	}()
	<-done
	<-done
	t.reportUnanswered(conn, pending)
}

// reportUnanswered says on stderr which requests of a finished connection got no
// response: a client closing with a long-polling Fetch in flight leaves one, and a
// request line without its response should not go unexplained.
func (t *tap) reportUnanswered(conn string, pending map[int32]tapPending) {
	if len(pending) == 0 {
		return
	}
	ids := slices.Sorted(maps.Keys(pending))
	var b strings.Builder
	for i, id := range ids {
		if i == 8 {
			fmt.Fprintf(&b, ", ... (%d more)", len(ids)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		p := pending[id]
		name := "api key " + strconv.Itoa(int(p.key))
		if api, ok := codec.LookupAPI(p.key); ok {
			name = api.Name
		}
		fmt.Fprintf(&b, "%s v%d (correlation id %d)", name, p.version, id)
	}
	fmt.Fprintf(t.stderr, "kwire tap: %s: connection closed with %s unanswered: %s\n", conn, plural(len(ids), "request"), b.String())
}

func (t *tap) print(line []byte) {
	t.mu.Lock()
	t.out.Line(line)
	t.mu.Unlock()
}

// frames copies frames from src to dst, handing each to fn, which returns the bytes to
// forward. It returns when src ends or either side fails.
func (t *tap) frames(src io.Reader, dst io.Writer, fn func(frame []byte) []byte) {
	var size [4]byte
	var buf []byte
	for {
		if _, err := io.ReadFull(src, size[:]); err != nil {
			return
		}
		n := int(int32(binary.BigEndian.Uint32(size[:])))
		if n < 0 || n > t.maxFrame {
			fmt.Fprintf(t.stderr, "kwire tap: frame size %d is outside 0..%d: closing the connection\n", n, t.maxFrame)
			return
		}
		buf = append(buf[:0], size[:]...)
		buf = grow(buf, n)
		if _, err := io.ReadFull(src, buf[4:]); err != nil {
			return
		}
		if _, err := dst.Write(fn(buf)); err != nil {
			return
		}
	}
}

// rewriteFrame points every broker address of the response (a struct with host, port
// and nodeId or brokerId) at the tap. It returns nil when nothing changed.
func (t *tap) rewriteFrame(d *transcode.Doc, frame []byte, key, version int16) ([]byte, error) {
	hlen, err := codec.ResponseHeaderLen(frame, key, version)
	if err != nil {
		return nil, err
	}
	if err := d.ParseAPI(frame[hlen:], key, codec.KindResponse, version); err != nil {
		return nil, err
	}
	changed, err := d.RewriteAddresses(d.Root(), t.toTap)
	if err != nil || !changed {
		return nil, err
	}
	out := append([]byte{}, frame[:hlen]...)
	out, err = d.AppendTo(out)
	if err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	return out, nil
}

// toTap is a transcode.AddressMap sending every broker address to the tap.
func (t *tap) toTap(int32, string, int32) (string, int32, bool) { return t.host, t.port, true }
