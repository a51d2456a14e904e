package capture

import (
	"bytes"
	"encoding/binary"
	"flag"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

var update = flag.Bool("update", false, "rewrite cmd/kwire/testdata/hostile from hostileCaptures")

// hostileDir holds the crafted captures, committed so that the command's tests (under
// an address-space limit) and the browser inspector's test read the same files.
const hostileDir = "../../testdata/hostile"

// kafkaPackets returns the Ethernet packets of one connection to port 9092 from its SYN:
// the handshake and the sample Produce request in two segments, so that a reader that
// gets all of them hands over exactly one request frame.
func kafkaPackets(t testing.TB) [][]byte {
	t.Helper()
	req, err := os.ReadFile("../../../../examples/data/produce-request.bin")
	if err != nil {
		t.Fatal(err)
	}
	return clientPackets(t, req[:len(req)/2], req[len(req)/2:])
}

// clientPackets returns the handshake of a connection from 10.0.0.1:50000 to
// 10.0.0.2:9092, then one client segment per payload.
func clientPackets(t testing.TB, payloads ...[]byte) [][]byte {
	t.Helper()
	seq := [2]uint32{1000, 5000}
	var pkts [][]byte
	add := func(fromServer, syn bool, payload []byte) {
		src, dst := net.IP{10, 0, 0, 1}, net.IP{10, 0, 0, 2}
		sp, dp := layers.TCPPort(50000), layers.TCPPort(9092)
		i := 0
		if fromServer {
			src, dst, sp, dp, i = dst, src, dp, sp, 1
		}
		eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{0, 1, 2, 3, 4, 5}, DstMAC: net.HardwareAddr{0, 1, 2, 3, 4, 6}, EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: src, DstIP: dst}
		tcp := &layers.TCP{SrcPort: sp, DstPort: dp, Seq: seq[i], Ack: seq[1-i], Window: 65535, SYN: syn, ACK: !syn || fromServer, PSH: len(payload) > 0}
		tcp.SetNetworkLayerForChecksum(ip)
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, tcp, gopacket.Payload(payload)); err != nil {
			t.Fatal(err)
		}
		seq[i] += uint32(len(payload))
		if syn {
			seq[i]++
		}
		pkts = append(pkts, slices.Clone(buf.Bytes()))
	}
	add(false, true, nil)
	add(true, true, nil)
	add(false, false, nil)
	for _, p := range payloads {
		add(false, false, p)
	}
	return pkts
}

var hostileTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// pcapFile writes a classic pcap file (little-endian, microseconds) with the given
// snapshot length; each record's captured length is its data's unless lens says
// otherwise (lens[i] >= 0).
func pcapFile(snaplen uint32, pkts [][]byte, lens ...int64) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, 0xa1b2c3d4)
	b = le.AppendUint16(b, 2)
	b = le.AppendUint16(b, 4)
	b = le.AppendUint64(b, 0) // thiszone, sigfigs
	b = le.AppendUint32(b, snaplen)
	b = le.AppendUint32(b, uint32(layers.LinkTypeEthernet))
	for i, p := range pkts {
		n := uint32(len(p))
		if i < len(lens) && lens[i] >= 0 {
			n = uint32(lens[i])
		}
		ts := hostileTime.Add(time.Duration(i) * time.Millisecond)
		b = le.AppendUint32(b, uint32(ts.Unix()))
		b = le.AppendUint32(b, uint32(ts.Nanosecond()/1000))
		b = le.AppendUint32(b, n)
		b = le.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	return b
}

// ngBlock is one pcapng block; total, when non-zero, replaces its true length in the
// leading length field.
func ngBlock(typ uint32, body []byte, total uint32) []byte {
	le := binary.LittleEndian
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	n := uint32(12 + len(body))
	lead := n
	if total != 0 {
		lead = total
	}
	b := le.AppendUint32(nil, typ)
	b = le.AppendUint32(b, lead)
	b = append(b, body...)
	return le.AppendUint32(b, n)
}

func ngSection() []byte {
	le := binary.LittleEndian
	body := le.AppendUint32(nil, ngByteOrderMagic)
	body = le.AppendUint16(body, 1)
	body = le.AppendUint16(body, 0)
	body = le.AppendUint64(body, ^uint64(0)) // section length not given
	return ngBlock(ngSectionHeader, body, 0)
}

func ngInterfaceBlock(snaplen uint32) []byte {
	le := binary.LittleEndian
	body := le.AppendUint16(nil, uint16(layers.LinkTypeEthernet))
	body = le.AppendUint16(body, 0)
	body = le.AppendUint32(body, snaplen)
	return ngBlock(ngInterfaceDesc, body, 0)
}

// ngPacket is an enhanced packet block of interface 0; capLen, when >= 0, replaces
// the captured length.
func ngPacket(i int, p []byte, capLen int64, total uint32) []byte {
	le := binary.LittleEndian
	ts := uint64(hostileTime.Add(time.Duration(i)*time.Millisecond).UnixNano() / 1000)
	n := uint32(len(p))
	if capLen >= 0 {
		n = uint32(capLen)
	}
	body := le.AppendUint32(nil, 0)
	body = le.AppendUint32(body, uint32(ts>>32))
	body = le.AppendUint32(body, uint32(ts))
	body = le.AppendUint32(body, n)
	body = le.AppendUint32(body, uint32(len(p)))
	body = append(body, p...)
	return ngBlock(ngEnhancedPacket, body, total)
}

func ngFile(snaplen uint32, pkts [][]byte, last []byte) []byte {
	b := append(ngSection(), ngInterfaceBlock(snaplen)...)
	for i, p := range pkts {
		b = append(b, ngPacket(i, p, -1, 0)...)
	}
	return append(b, last...)
}

// hostile is one crafted capture: whether reading it is an error (and what the error
// says), and how many request frames it still gives.
type hostile struct {
	name   string
	data   []byte
	errHas string // "" when the capture reads without error
	frames int
}

// hostileCaptures are files whose headers claim sizes they do not hold: snapshot
// lengths of 4 GB, packet records and blocks whose lengths lie, and interface
// descriptions by the thousand. Each gives a clear error or the frames it holds.
func hostileCaptures(t testing.TB) []hostile {
	pk := kafkaPackets(t)
	tiny := pcapFile(0xff7f0000, nil)
	tiny = append(tiny, pcapFile(0, pk[:1])[24:]...) // one SYN: a 100-byte file
	manyIfaces := append(ngSection(), bytes.Repeat(ngInterfaceBlock(0xffffffff), 5000)...)
	for i, p := range pk {
		manyIfaces = append(manyIfaces, ngPacket(i, p, -1, 0)...)
	}
	manySections := []byte{}
	for range 2000 {
		manySections = append(manySections, ngSection()...)
		manySections = append(manySections, ngInterfaceBlock(0xffffffff)...)
	}
	manySections = append(manySections, ngFile(0xffffffff, pk, nil)...)
	return []hostile{
		{name: "snaplen-4g-100-bytes.pcap", data: tiny},
		{name: "snaplen-4g.pcap", data: pcapFile(0xff7f0000, pk), frames: 1},
		{name: "snaplen-ffffffff.pcap", data: pcapFile(0xffffffff, pk), frames: 1},
		{name: "packet-length-4g.pcap", data: pcapFile(65535, append(pk, pk[0]), -1, -1, -1, -1, -1, 0xfffffff0),
			errHas: "packet 6 (record at byte", frames: 1},
		{name: "packet-length-past-end.pcap", data: pcapFile(65535, append(pk, pk[0]), -1, -1, -1, -1, -1, 10<<20), frames: 1},
		{name: "packet-length-in-first.pcap", data: pcapFile(65535, pk, 0xffffffff), errHas: "claims 4294967295 captured bytes"},
		{name: "snaplen-ffffffff.pcapng", data: ngFile(0xffffffff, pk, nil), frames: 1},
		{name: "block-length-4g.pcapng", data: ngFile(65535, pk, ngPacket(9, pk[0], -1, 0xfffffff0)),
			errHas: "claims 4294967280 bytes", frames: 1},
		{name: "block-length-past-end.pcapng", data: ngFile(65535, pk, ngPacket(9, pk[0], -1, 8<<20)), frames: 1},
		{name: "block-length-odd.pcapng", data: ngFile(65535, pk, ngPacket(9, pk[0], -1, 101)),
			errHas: "not a multiple of 4", frames: 1},
		{name: "captured-length-lies.pcapng", data: ngFile(65535, pk, ngPacket(9, pk[0], 0xffffff00, 0)),
			errHas: "claims 4294967040 captured bytes; its block holds", frames: 1},
		{name: "interfaces-5000.pcapng", data: manyIfaces, frames: 1},
		{name: "sections-2000.pcapng", data: manySections, frames: 1},
	}
}

// TestHostileCaptures reads each crafted capture: the error or the frames it holds,
// with allocation bounded by the file's size plus a fixed allowance, and checks that
// the committed copies (which the command's address-space test and the inspector's
// browser test read) are these files.
func TestHostileCaptures(t *testing.T) {
	for _, h := range hostileCaptures(t) {
		t.Run(h.name, func(t *testing.T) {
			file := filepath.Join(hostileDir, h.name)
			if *update {
				if err := os.MkdirAll(hostileDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, h.data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got, err := os.ReadFile(file); err != nil || !bytes.Equal(got, h.data) {
				t.Errorf("%s differs from what the test makes (%v): go test ./internal/capture -run TestHostileCaptures -update", file, err)
			}
			frames := 0
			r := NewReader(Options{}, func(f *Frame) {
				if f.Request {
					frames++
				}
			})
			alloc := allocated(func() {
				err := r.ReadCapture(bytes.NewReader(h.data))
				r.Close()
				switch {
				case h.errHas == "" && err != nil:
					t.Errorf("error %v", err)
				case h.errHas != "" && (err == nil || !strings.Contains(err.Error(), h.errHas)):
					t.Errorf("error %v, want one saying %q", err, h.errHas)
				}
			})
			if frames != h.frames {
				t.Errorf("%d request frames, want %d", frames, h.frames)
			}
			if limit := allocLimit(len(h.data)); alloc > limit {
				t.Errorf("%d bytes allocated for a %d-byte file, more than %d", alloc, len(h.data), limit)
			}
			t.Logf("%d bytes, %d allocated", len(h.data), alloc)
		})
	}
}

// allocLimit is what reading a capture of n bytes may allocate: a fixed allowance for
// the reader (its file buffer, the reassembly's page and connection pools) and a
// multiple of the file's size (a packet's pages, a connection per packet at most).
func allocLimit(n int) uint64 { return 8<<20 + 64*uint64(n) }

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
