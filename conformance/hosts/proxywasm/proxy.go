package proxywasm

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// Proxy is a TCP proxy on loopback: each accepted connection is dialed through to
// Upstream, and its bytes go through a stream context of the plugin in both
// directions (or straight through when the plugin is nil, for comparison).
type Proxy struct {
	plugin   *Plugin
	upstream string
	ln       net.Listener
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	closed   bool
	// Errors counts connections that ended because the VM failed.
	errs     atomic.Int64
	readSize func() int
}

// NewProxy listens on 127.0.0.1 (a free port) and serves until Close.
func NewProxy(plugin *Plugin, upstream string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return NewProxyOn(ln, plugin, upstream, nil), nil
}

// NewProxyOn serves on ln (so that its address can go into the plugin's
// configuration before the plugin exists). readSize, when not nil, gives the size
// of each socket read (the chunks the filter sees); the default is 64 KiB.
func NewProxyOn(ln net.Listener, plugin *Plugin, upstream string, readSize func() int) *Proxy {
	if readSize == nil {
		readSize = func() int { return 64 << 10 }
	}
	x := &Proxy{plugin: plugin, upstream: upstream, ln: ln, conns: map[net.Conn]struct{}{}, readSize: readSize}
	x.wg.Add(1)
	go x.serve()
	return x
}

// Addr is the listening address (host:port).
func (x *Proxy) Addr() string { return x.ln.Addr().String() }

// VMErrors counts connections closed because a call into the VM failed.
func (x *Proxy) VMErrors() int64 { return x.errs.Load() }

// Close stops listening, closes every connection and waits for their goroutines.
func (x *Proxy) Close() error {
	x.mu.Lock()
	x.closed = true
	for c := range x.conns {
		c.Close()
	}
	x.mu.Unlock()
	err := x.ln.Close()
	x.wg.Wait()
	return err
}

func (x *Proxy) track(c net.Conn) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		c.Close()
		return false
	}
	x.conns[c] = struct{}{}
	return true
}

func (x *Proxy) untrack(c net.Conn) {
	x.mu.Lock()
	delete(x.conns, c)
	x.mu.Unlock()
	c.Close()
}

func (x *Proxy) serve() {
	defer x.wg.Done()
	for {
		c, err := x.ln.Accept()
		if err != nil {
			return
		}
		if !x.track(c) {
			continue
		}
		x.wg.Add(1)
		go x.handle(c)
	}
}

func (x *Proxy) handle(client net.Conn) {
	defer x.wg.Done()
	defer x.untrack(client)
	up, err := net.Dial("tcp", x.upstream)
	if err != nil {
		return
	}
	if !x.track(up) {
		return
	}
	defer x.untrack(up)
	var s *Stream
	if x.plugin != nil {
		if s, err = x.plugin.NewStream(); err != nil {
			x.errs.Add(1)
			return
		}
		s.Source, s.Destination = client.RemoteAddr().String(), up.RemoteAddr().String()
		if s.CloseRequested() {
			s.Close(PeerLocal)
			return
		}
	}
	var once sync.Once
	peer := int32(PeerRemote)
	shut := func(p int32) {
		once.Do(func() {
			peer = p
			client.Close()
			up.Close()
		})
	}
	if s != nil {
		s.OnCloseRequest(func() { shut(PeerLocal) })
	}
	var wg sync.WaitGroup
	wg.Add(2)
	pump := func(from, to net.Conn, downstream bool) {
		defer wg.Done()
		buf := make([]byte, 64<<10)
		for {
			n, rerr := from.Read(buf[:max(1, min(len(buf), x.readSize()))])
			if n > 0 {
				out := buf[:n]
				if s != nil {
					var err error
					if downstream {
						out, err = s.Downstream(buf[:n], false)
					} else {
						out, err = s.Upstream(buf[:n], false)
					}
					if err != nil {
						x.errs.Add(1)
						shut(PeerLocal)
						return
					}
				}
				if len(out) > 0 {
					if _, err := to.Write(out); err != nil {
						shut(PeerRemote)
						return
					}
				}
				if s != nil && s.CloseRequested() {
					shut(PeerLocal)
					return
				}
			}
			if rerr != nil {
				if !errors.Is(rerr, io.EOF) {
					shut(PeerRemote)
					return
				}
				shut(PeerRemote)
				return
			}
		}
	}
	go pump(client, up, true)
	go pump(up, client, false)
	wg.Wait()
	if s != nil {
		s.Close(peer)
	}
}
