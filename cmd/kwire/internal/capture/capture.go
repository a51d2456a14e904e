// Package capture turns pcap and pcapng captures into Kafka frames: it reads the
// packets itself (pcapfile.go: memory bounded by the file's real size, whatever its
// headers claim), reassembles each TCP connection in both directions with
// gopacket's reassembly (retransmissions, out-of-order and duplicated segments), finds
// the Kafka server side, cuts the byte streams into frames, resynchronises at the next
// frame that parses when a capture starts (or loses bytes) in mid-stream, and pairs
// each response with its request by correlation id.
//
// Memory stays flat in the capture's size: packets are read one at a time, a
// connection holds at most its frame in progress and its out-of-order pages (bounded),
// and its unanswered requests (bounded).
package capture

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/reassembly"

	"github.com/kwire/kwire/cmd/kwire/internal/frames"
	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/transcode"
)

// Frame is one complete Kafka frame found in a capture. Data aliases the connection's
// buffer and is valid only during the Sink call.
type Frame struct {
	Time    time.Time // capture time of the frame's last segment
	Conn    string    // "client-ip:port > server-ip:port"
	Request bool
	Data    []byte // the frame, size prefix included
	// Responses: whether the request was seen, and if so its api key and version and
	// the time from the request's last segment to the response's.
	Matched            bool
	APIKey, APIVersion int16
	Latency            time.Duration
}

// Options tune a Reader.
type Options struct {
	// Ports are the servers' ports. When empty, port 9092 is a server port and any
	// other connection is probed: the side whose bytes parse as requests is the client.
	// When set, only connections to these ports are read.
	Ports []uint16
	// MaxFrameSize bounds a frame; zero means codec.DefaultMaxFrameSize.
	MaxFrameSize int
}

// Stats counts what a run saw.
type Stats struct {
	Packets, TCPPackets int
	Bytes               int64 // capture bytes read (packet data)
	Connections         int
	Requests, Responses int
	Unmatched           int // responses whose request was not in the capture
	Resyncs             int // times a stream lost its frame boundary and found it again
	SkippedBytes        int64
}

// Sink receives frames in capture order (per connection direction).
type Sink func(f *Frame)

// Reader reads captures into frames.
type Reader struct {
	opts      Options
	sink      Sink
	pool      *reassembly.StreamPool
	asm       *reassembly.Assembler
	stats     Stats
	parsers   map[layers.LinkType]*linkParser
	lastFlush time.Time
	probe     transcode.Framer
	probeBuf  []byte
	// OnProgress, when set, is called every few thousand packets with the bytes of
	// the current file read so far.
	OnProgress func(read int64)
}

// NewReader returns a Reader that hands frames to sink.
func NewReader(opts Options, sink Sink) *Reader {
	r := &Reader{opts: opts, sink: sink, parsers: map[layers.LinkType]*linkParser{}}
	r.pool = reassembly.NewStreamPool(&factory{r: r})
	r.asm = reassembly.NewAssembler(r.pool)
	r.asm.MaxBufferedPagesPerConnection = 2048 // about 4 MB waiting for a lost segment
	r.asm.MaxBufferedPagesTotal = 16384
	return r
}

// Stats returns the counts so far.
func (r *Reader) Stats() Stats { return r.stats }

func (r *Reader) maxFrame() int {
	if r.opts.MaxFrameSize > 0 {
		return r.opts.MaxFrameSize
	}
	return codec.DefaultMaxFrameSize
}

func (r *Reader) serverPort(p uint16) bool {
	if len(r.opts.Ports) == 0 {
		return p == 9092
	}
	for _, q := range r.opts.Ports {
		if q == p {
			return true
		}
	}
	return false
}

// ErrFormat is returned for input that is neither pcap nor pcapng.
var ErrFormat = errors.New("not a pcap or pcapng capture")

// countingReader counts the bytes read from the file, for progress.
type countingReader struct {
	r io.Reader
	n int64
}

// Read reads from the file and counts.
func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// ReadCapture reads one pcap or pcapng capture. Frames still incomplete at its end stay
// pending (a following file may continue the same connections); call Close after the
// last file.
func (r *Reader) ReadCapture(in io.Reader) error {
	cr := &countingReader{r: in}
	br := bufio.NewReaderSize(cr, 64<<10)
	magic, err := br.Peek(4)
	if err != nil {
		return fmt.Errorf("%w: %d bytes", ErrFormat, len(magic))
	}
	var src packetReader
	switch binary.LittleEndian.Uint32(magic) {
	case ngSectionHeader:
		if src, err = newNgReader(br); err != nil {
			return err
		}
	case 0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1:
		if src, err = newPcapReader(br); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: magic %#08x", ErrFormat, binary.BigEndian.Uint32(magic))
	}
	for {
		data, info, err := src.next()
		if err == io.EOF || errors.Is(err, errCut) {
			// At the end, or a capture cut while written (tcpdump killed): what was
			// read stands.
			break
		}
		if err != nil {
			return fmt.Errorf("reading packet %d: %w", r.stats.Packets+1, err)
		}
		r.stats.Packets++
		r.stats.Bytes += int64(len(data))
		r.packet(info.LinkType, data, gopacket.CaptureInfo{Timestamp: info.Timestamp, CaptureLength: info.CaptureLength, Length: info.OriginalLength})
		if r.stats.Packets&4095 == 0 && r.OnProgress != nil {
			r.OnProgress(cr.n - int64(br.Buffered()))
		}
	}
	if r.OnProgress != nil {
		r.OnProgress(cr.n)
	}
	return nil
}

// Close delivers what the reassembly still holds (segments after a gap) and ends every
// connection.
func (r *Reader) Close() {
	r.asm.FlushAll()
}

type linkParser struct {
	parser  *gopacket.DecodingLayerParser
	eth     layers.Ethernet
	sll     layers.LinuxSLL
	lo      layers.Loopback
	ip4     layers.IPv4
	ip6     layers.IPv6
	tcp     layers.TCP
	decoded []gopacket.LayerType
}

func (r *Reader) parserFor(lt layers.LinkType) *linkParser {
	if p, ok := r.parsers[lt]; ok {
		return p
	}
	p := &linkParser{}
	var first gopacket.LayerType
	switch lt {
	case layers.LinkTypeEthernet:
		first = layers.LayerTypeEthernet
	case layers.LinkTypeLinuxSLL:
		first = layers.LayerTypeLinuxSLL
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		first = layers.LayerTypeLoopback
	case layers.LinkTypeRaw, layers.LinkTypeIPv4, 12 /* DLT_RAW on some systems */ :
		first = layers.LayerTypeIPv4
	case layers.LinkTypeIPv6:
		first = layers.LayerTypeIPv6
	default:
		r.parsers[lt] = nil
		return nil
	}
	p.parser = gopacket.NewDecodingLayerParser(first, &p.eth, &p.sll, &p.lo, &p.ip4, &p.ip6, &p.tcp)
	p.parser.IgnoreUnsupported = true
	r.parsers[lt] = p
	return p
}

type context struct{ ci gopacket.CaptureInfo }

// GetCaptureInfo is the packet's capture time and lengths.
func (c *context) GetCaptureInfo() gopacket.CaptureInfo { return c.ci }

// linkTypeLinuxSLL2 is LINKTYPE_LINUX_SLL2, Linux's second cooked header, which
// tcpdump -i any writes: 20 bytes, the ethertype first. gopacket v1.1.19 has no layer
// for it (and its LinkType is a byte).
const linkTypeLinuxSLL2 = 276

func (r *Reader) packet(linkType uint32, data []byte, ci gopacket.CaptureInfo) {
	lt := layers.LinkType(linkType)
	if linkType == linkTypeLinuxSLL2 {
		if len(data) < 20 {
			return
		}
		switch binary.BigEndian.Uint16(data) {
		case uint16(layers.EthernetTypeIPv4):
			lt = layers.LinkTypeIPv4
		case uint16(layers.EthernetTypeIPv6):
			lt = layers.LinkTypeIPv6
		default:
			return
		}
		data = data[20:]
	} else if linkType > 0xff {
		return // a link type gopacket has no layer for
	}
	p := r.parserFor(lt)
	if p == nil {
		return
	}
	if (lt == layers.LinkTypeRaw || lt == 12) && len(data) > 0 && data[0]>>4 == 6 {
		// Raw IP may be either version.
		p6 := r.parserFor(layers.LinkTypeIPv6)
		p = p6
	}
	_ = p.parser.DecodeLayers(data, &p.decoded)
	var flow gopacket.Flow
	hasTCP, hasIP := false, false
	for _, t := range p.decoded {
		switch t {
		case layers.LayerTypeIPv4:
			flow, hasIP = p.ip4.NetworkFlow(), true
			if p.ip4.Flags&layers.IPv4MoreFragments != 0 || p.ip4.FragOffset != 0 {
				return // fragments are not reassembled (TCP on loopback never fragments)
			}
		case layers.LayerTypeIPv6:
			flow, hasIP = p.ip6.NetworkFlow(), true
		case layers.LayerTypeTCP:
			hasTCP = true
		}
	}
	if !hasTCP || !hasIP {
		return
	}
	r.stats.TCPPackets++
	c := context{ci: ci}
	r.asm.AssembleWithContext(flow, &p.tcp, &c)
	// Deliver data held after a lost segment once it is old, and end connections that
	// have been silent for long; measured in capture time.
	if ci.Timestamp.Sub(r.lastFlush) > 10*time.Second {
		if !r.lastFlush.IsZero() {
			r.asm.FlushWithOptions(reassembly.FlushOptions{T: ci.Timestamp.Add(-10 * time.Second), TC: ci.Timestamp.Add(-30 * time.Minute)})
		}
		r.lastFlush = ci.Timestamp
	}
}

type factory struct{ r *Reader }

// New is called by the reassembly for each new connection.
func (f *factory) New(netFlow, tcpFlow gopacket.Flow, tcp *layers.TCP, ac reassembly.AssemblerContext) reassembly.Stream {
	r := f.r
	r.stats.Connections++
	s := &stream{r: r, pending: map[int32]pending{}}
	// halves[0] carries the first packet's direction (reassembly's "client to server").
	src, dst := netFlow.Endpoints()
	sp, dp := tcpFlow.Endpoints()
	s.addr[0] = hostPort(src, sp)
	s.addr[1] = hostPort(dst, dp)
	srcPort := binary.BigEndian.Uint16(sp.Raw())
	dstPort := binary.BigEndian.Uint16(dp.Raw())
	switch {
	case r.serverPort(dstPort):
		s.setClient(0)
	case r.serverPort(srcPort):
		s.setClient(1)
	case len(r.opts.Ports) > 0:
		s.ignore = true
	case tcp.SYN && !tcp.ACK:
		s.setClient(0)
	case tcp.SYN && tcp.ACK:
		s.setClient(1)
	default:
		s.client = -1 // probe: the side whose bytes parse as requests
	}
	// A connection seen from its SYN is in sync from its first byte.
	if tcp.SYN {
		s.half[0].synced, s.half[1].synced = true, true
	}
	return s
}

func hostPort(host, port gopacket.Endpoint) string {
	return net.JoinHostPort(host.String(), strconv.Itoa(int(binary.BigEndian.Uint16(port.Raw()))))
}

type pending struct {
	key, version int16
	at           time.Time
}

// maxPending bounds the requests a connection remembers without their responses.
const maxPending = 1 << 14

// resyncWindow bounds the size a frame found while resynchronising may claim: a false
// boundary cannot make the stream wait for more than this.
const resyncWindow = 16 << 20

type half struct {
	buf    []byte
	off    int // start of unread bytes in buf
	synced bool
	// the capture times of the current scatter-gather, to date a frame's last segment
	sg       reassembly.ScatterGather
	sgBase   int       // buffer position (absolute, counting from buf[0]) of sg's first byte
	acTime   time.Time // capture time of the packet that delivered sg
	lastTime time.Time
}

type stream struct {
	r       *Reader
	addr    [2]string
	client  int // index of the client half, -1 while probing
	ignore  bool
	conn    string
	half    [2]half
	pending map[int32]pending
}

func (s *stream) setClient(i int) {
	s.client = i
	s.conn = s.addr[i] + " > " + s.addr[1-i]
}

// Accept takes every packet: a capture may start in mid-connection.
func (s *stream) Accept(tcp *layers.TCP, ci gopacket.CaptureInfo, dir reassembly.TCPFlowDirection, nextSeq reassembly.Sequence, start *bool, ac reassembly.AssemblerContext) bool {
	if s.ignore {
		return false
	}
	*start = true
	return true
}

// ReassembledSG receives the next in-order bytes of one direction.
func (s *stream) ReassembledSG(sg reassembly.ScatterGather, ac reassembly.AssemblerContext) {
	dir, _, _, skip := sg.Info()
	i := 0
	if dir == reassembly.TCPDirServerToClient {
		i = 1
	}
	n, _ := sg.Lengths()
	h := &s.half[i]
	if skip > 0 {
		// Bytes were lost: the frame in progress is gone.
		s.r.stats.SkippedBytes += int64(len(h.buf) - h.off + skip)
		h.buf, h.off = h.buf[:0], 0
		if h.synced {
			h.synced = false
		}
	}
	if n == 0 {
		return
	}
	if h.off > 0 && h.off == len(h.buf) {
		h.buf, h.off = h.buf[:0], 0
	} else if h.off > 1<<16 && h.off > len(h.buf)/2 {
		h.buf = h.buf[:copy(h.buf, h.buf[h.off:])]
		h.off = 0
	}
	h.sgBase = len(h.buf)
	h.sg = sg
	h.acTime = ac.GetCaptureInfo().Timestamp
	h.buf = append(h.buf, sg.Fetch(n)...)
	s.process(i)
	h.lastTime = h.timeAt(len(h.buf) - 1)
	h.sg = nil
}

// timeAt is the capture time of the segment holding buffer position pos.
func (h *half) timeAt(pos int) time.Time {
	if h.sg != nil && pos >= h.sgBase {
		return sgTime(h.sg, pos-h.sgBase, h.acTime)
	}
	return h.lastTime
}

// sgTime is the capture time of the segment holding byte off of sg.
//
// gopacket v1.1.19's reassembly keeps the capture context of a packet it had to queue
// (out of order) only on the first of the 1900-byte pages it copies the packet into;
// asking the later pages for it panics on the nil context. Every page of a queued
// packet but its last is full, so the packet's first page lies a whole number of
// pages before any of its later bytes: step back a page at a time until a page
// answers. That is the packet's own time. Only if none does (the pages were trimmed
// by an overlap) the time of the packet that delivered the bytes, fallback, is used.
func sgTime(sg reassembly.ScatterGather, off int, fallback time.Time) time.Time {
	for at := off; at >= 0; at -= reassemblyPageBytes {
		if ts, ok := sgTimeAt(sg, at); ok {
			if ts.IsZero() {
				return fallback
			}
			return ts
		}
	}
	return fallback
}

// reassemblyPageBytes is the size of gopacket v1.1.19's reassembly pages (its
// unexported pageBytes). A step no larger than a page cannot pass over a packet's
// first page; were the pages made smaller, TestQueuedPacketTime would fail.
const reassemblyPageBytes = 1900

// sgTimeAt asks sg for the capture time of byte off; ok is false where the reassembly
// kept no context for it.
func sgTimeAt(sg reassembly.ScatterGather, off int) (ts time.Time, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return sg.CaptureInfo(off).Timestamp, true
}

// ReassemblyComplete ends the connection.
func (s *stream) ReassemblyComplete(ac reassembly.AssemblerContext) bool {
	return true
}

func (s *stream) process(i int) {
	if s.client < 0 {
		s.probe(i)
		if s.client < 0 {
			return
		}
		// Now that the roles are known, the other side's bytes can be read too.
		s.process(1 - i)
		if i == 1-s.client {
			return
		}
	}
	if i == s.client {
		s.requests(&s.half[i])
	} else {
		s.responses(&s.half[i])
	}
}

// probe looks for a request frame in half i of a connection whose roles are unknown.
// Bytes before the first position that may still start a frame are dropped, and a frame
// found while probing may claim at most probeWindow bytes: a connection that is not
// Kafka holds little.
func (s *stream) probe(i int) {
	h := &s.half[i]
	at, ok := s.findRequest(h.buf[h.off:], true)
	h.off += at
	if ok {
		h.synced = true
		s.setClient(i)
	}
}

// probeWindow bounds the frame size a probed connection's first request may claim.
const probeWindow = 1 << 20

// plausibleRequest checks the header of a request frame at the start of b without
// decoding its body: the size, a known api key and version, a non-negative
// correlation id, and a client id that fits.
func (s *stream) plausibleRequest(b []byte, window int) (size int, ok bool) {
	if len(b) < 14 {
		return 0, false
	}
	size = int(int32(binary.BigEndian.Uint32(b)))
	if size < 10 || size > window {
		return 0, false
	}
	key := int16(binary.BigEndian.Uint16(b[4:]))
	v := int16(binary.BigEndian.Uint16(b[6:]))
	if !frames.ValidRequest(key, v) || int32(binary.BigEndian.Uint32(b[8:])) < 0 {
		return 0, false
	}
	if codec.RequestHeaderVersion(key, v) >= 1 {
		cl := int(int16(binary.BigEndian.Uint16(b[12:])))
		if cl < -1 || cl > size-10 {
			return 0, false
		}
	}
	return size, true
}

// findRequest finds the first position of b where a whole request frame decodes. ok
// is false when none is found yet; the scan stops at a plausible frame that is not
// complete (more bytes may make it decode).
func (s *stream) findRequest(b []byte, probing bool) (at int, ok bool) {
	window := resyncWindow
	if probing {
		window = probeWindow
	}
	if w := s.r.maxFrame(); w < window {
		window = w
	}
	for at = 0; at+14 <= len(b); at++ {
		size, plausible := s.plausibleRequest(b[at:], window)
		if !plausible {
			continue
		}
		if at+4+size > len(b) {
			return at, false
		}
		var err error
		s.r.probeBuf, err = s.r.probe.AppendRequestFrameJSON(s.r.probeBuf[:0], b[at:at+4+size])
		if err == nil {
			return at, true
		}
	}
	return at, false
}

// nextFrame returns h's next whole frame (size prefix included) and moves past it, or
// nil when h does not hold one yet. A stream that lost its framing is first
// resynchronised by find, which returns where the next frame that parses starts; a
// size prefix outside minSize..maxFrame loses the framing again.
func (s *stream) nextFrame(h *half, minSize int, find func([]byte) (int, bool)) []byte {
	for {
		b := h.buf[h.off:]
		if !h.synced {
			at, ok := find(b)
			h.off += at
			s.r.stats.SkippedBytes += int64(at)
			if !ok {
				return nil
			}
			h.synced = true
			s.r.stats.Resyncs++
			continue
		}
		if len(b) < 4 {
			return nil
		}
		size := int(int32(binary.BigEndian.Uint32(b)))
		if size < minSize || size > s.r.maxFrame() {
			h.synced = false
			h.off++
			s.r.stats.SkippedBytes++
			continue
		}
		if 4+size > len(b) {
			return nil
		}
		h.off += 4 + size
		return b[:4+size]
	}
}

func (s *stream) findRequestAt(b []byte) (int, bool) { return s.findRequest(b, false) }

func (s *stream) requests(h *half) {
	for {
		frame := s.nextFrame(h, 8, s.findRequestAt)
		if frame == nil {
			return
		}
		f := Frame{Time: h.timeAt(h.off - 1), Conn: s.conn, Request: true, Data: frame}
		if hd, ok := frames.PeekRequest(frame); ok {
			if len(s.pending) >= maxPending {
				clear(s.pending)
			}
			s.pending[hd.CorrelationID] = pending{key: hd.APIKey, version: hd.APIVersion, at: f.Time}
		}
		s.r.stats.Requests++
		s.r.sink(&f)
	}
}

// findResponse finds the first position of b where a frame answers a request seen
// and decodes as that request's response.
func (s *stream) findResponse(b []byte) (at int, ok bool) {
	window := resyncWindow
	if w := s.r.maxFrame(); w < window {
		window = w
	}
	for at = 0; at+8 <= len(b); at++ {
		size := int(int32(binary.BigEndian.Uint32(b[at:])))
		if size < 4 || size > window {
			continue
		}
		p, seen := s.pending[int32(binary.BigEndian.Uint32(b[at+4:]))]
		if !seen {
			continue
		}
		if at+4+size > len(b) {
			return at, false
		}
		var err error
		s.r.probeBuf, err = s.r.probe.AppendResponseFrameJSON(s.r.probeBuf[:0], b[at:at+4+size], p.key, p.version)
		if err == nil {
			return at, true
		}
	}
	return at, false
}

func (s *stream) responses(h *half) {
	for {
		frame := s.nextFrame(h, 4, s.findResponse)
		if frame == nil {
			return
		}
		f := Frame{Time: h.timeAt(h.off - 1), Conn: s.conn, Data: frame}
		id := int32(binary.BigEndian.Uint32(frame[4:]))
		if p, ok := s.pending[id]; ok {
			delete(s.pending, id)
			f.Matched, f.APIKey, f.APIVersion = true, p.key, p.version
			f.Latency = f.Time.Sub(p.at)
		} else {
			s.r.stats.Unmatched++
		}
		s.r.stats.Responses++
		s.r.sink(&f)
	}
}
