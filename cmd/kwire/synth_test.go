package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/codec/transcode"
	"github.com/kwire/kwire/internal/recordsjson"
)

// synthConn builds the packets of one TCP connection between 10.0.0.1:50000 and
// 10.0.0.2:port.
type synthConn struct {
	t    *testing.T
	v6   bool // fd00::1 and fd00::2 instead
	port uint16
	seq  [2]uint32 // next sequence number: client, server
	now  time.Time
	pkts []synthPacket
}

type synthPacket struct {
	ci   gopacket.CaptureInfo
	data []byte
}

func newSynthConn(t *testing.T, port uint16) *synthConn {
	return &synthConn{t: t, port: port, seq: [2]uint32{1000, 5000}, now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *synthConn) packet(fromServer bool, flags string, payload []byte) {
	c.t.Helper()
	src, dst := net.IP{10, 0, 0, 1}, net.IP{10, 0, 0, 2}
	if c.v6 {
		src, dst = net.ParseIP("fd00::1"), net.ParseIP("fd00::2")
	}
	sp, dp := layers.TCPPort(50000), layers.TCPPort(c.port)
	i := 0
	if fromServer {
		src, dst, sp, dp, i = dst, src, dp, sp, 1
	}
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{0, 1, 2, 3, 4, 5}, DstMAC: net.HardwareAddr{0, 1, 2, 3, 4, 6}, EthernetType: layers.EthernetTypeIPv4}
	var ip gopacket.SerializableLayer
	var ip4 *layers.IPv4
	var ip6 *layers.IPv6
	if c.v6 {
		eth.EthernetType = layers.EthernetTypeIPv6
		ip6 = &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP, SrcIP: src, DstIP: dst}
		ip = ip6
	} else {
		ip4 = &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: src, DstIP: dst}
		ip = ip4
	}
	tcp := &layers.TCP{SrcPort: sp, DstPort: dp, Seq: c.seq[i], Ack: c.seq[1-i], Window: 65535, ACK: true, PSH: len(payload) > 0,
		SYN: strings.Contains(flags, "S"), FIN: strings.Contains(flags, "F")}
	if tcp.SYN && !fromServer {
		tcp.ACK = false
	}
	if c.v6 {
		tcp.SetNetworkLayerForChecksum(ip6)
	} else {
		tcp.SetNetworkLayerForChecksum(ip4)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, tcp, gopacket.Payload(payload)); err != nil {
		c.t.Fatal(err)
	}
	c.seq[i] += uint32(len(payload))
	if tcp.SYN || tcp.FIN {
		c.seq[i]++
	}
	c.now = c.now.Add(time.Millisecond)
	data := append([]byte(nil), buf.Bytes()...)
	c.pkts = append(c.pkts, synthPacket{gopacket.CaptureInfo{Timestamp: c.now, CaptureLength: len(data), Length: len(data)}, data})
}

// send writes b in segments of at most mss bytes.
func (c *synthConn) send(fromServer bool, b []byte, mss int) {
	for len(b) > 0 {
		n := min(mss, len(b))
		c.packet(fromServer, "", b[:n])
		b = b[n:]
	}
}

func (c *synthConn) handshake() {
	c.packet(false, "S", nil)
	c.packet(true, "S", nil)
	c.packet(false, "", nil)
}

func writePcap(t *testing.T, file string, ng bool, pkts []synthPacket) {
	t.Helper()
	var buf bytes.Buffer
	if ng {
		w, err := pcapgo.NewNgWriter(&buf, layers.LinkTypeEthernet)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pkts {
			if err := w.WritePacket(p.ci, p.data); err != nil {
				t.Fatal(err)
			}
		}
		w.Flush()
	} else {
		w := pcapgo.NewWriter(&buf)
		w.WriteFileHeader(65536, layers.LinkTypeEthernet)
		for _, p := range pkts {
			w.WritePacket(p.ci, p.data)
		}
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sampleFrames(t *testing.T) (req, resp []byte) {
	t.Helper()
	req, err := os.ReadFile("../../examples/data/produce-request.bin")
	if err != nil {
		t.Fatal(err)
	}
	f := transcode.Framer{}
	resp, err = f.AppendResponseFrame(nil, []byte(`{"header":{"correlationId":7},"body":{"responses":[{"name":"orders","partitionResponses":[{"index":0,"errorCode":0,"baseOffset":"41","logAppendTimeMs":"-1","logStartOffset":"0","recordErrors":[],"errorMessage":null}]}],"throttleTimeMs":0}}`), 0, 9)
	if err != nil {
		t.Fatal(err)
	}
	return req, resp
}

// TestPcapSynthetic runs kwire pcap on made-up captures of one Produce exchange: from
// the SYN on an unusual port (found by probing), in pcap and pcapng; in tiny segments
// reordered and duplicated; and starting in the middle of a frame.
func TestPcapSynthetic(t *testing.T) {
	req, resp := sampleFrames(t)
	dir := t.TempDir()
	reqSize := len(req)
	check := func(name string, pkts []synthPacket, ng bool, wantReqs int, args ...string) []pcapLine {
		t.Helper()
		file := filepath.Join(dir, name+".pcap")
		writePcap(t, file, ng, pkts)
		lines, code, stderr := runPcap(t, append([]string{file}, args...)...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", name, code, stderr)
		}
		reqs, resps := 0, 0
		for _, l := range lines {
			if l.Error != nil {
				t.Errorf("%s: error line %s", name, l.Error)
			}
			if l.Conn != "10.0.0.1:50000 > 10.0.0.2:19999" || l.APIKey != 0 || l.APIVersion != 9 || l.CorrelationID != 7 {
				t.Errorf("%s: line %+v", name, l)
			}
			switch l.Dir {
			case "request":
				reqs++
				if l.Size != reqSize {
					t.Errorf("%s: request size %d, want %d", name, l.Size, reqSize)
				}
			case "response":
				resps++
				if l.LatencyUs == nil || *l.LatencyUs <= 0 {
					t.Errorf("%s: response latency %v", name, l.LatencyUs)
				}
			}
		}
		if reqs != wantReqs || resps != wantReqs {
			t.Errorf("%s: %d requests and %d responses, want %d each", name, reqs, resps, wantReqs)
		}
		return lines
	}

	c := newSynthConn(t, 19999)
	c.handshake()
	c.send(false, req, 1460)
	c.send(true, resp, 1460)
	c.packet(false, "F", nil)
	for _, ng := range []bool{false, true} {
		lines := check("syn", c.pkts, ng, 1)
		if len(lines) == 2 {
			var body struct {
				TopicData []struct {
					PartitionData []struct {
						Records struct {
							Batches []struct {
								Records []struct {
									Key   map[string]string `json:"key"`
									Value map[string]string `json:"value"`
								} `json:"records"`
							} `json:"batches"`
						} `json:"records"`
					} `json:"partitionData"`
				} `json:"topicData"`
			}
			if err := json.Unmarshal(lines[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			if v := body.TopicData[0].PartitionData[0].Records.Batches[0].Records[1].Value["text"]; v != "orders/0 message 1" {
				t.Errorf("record value %q", v)
			}
			if lines[0].Time.Format(time.RFC3339Nano) != "2026-01-02T03:04:05.004Z" {
				t.Errorf("request time %v, want the capture time of its last segment", lines[0].Time)
			}
		}
	}
	// Without the SYN and without a known port the roles are found by probing.
	check("nosyn", c.pkts[3:], false, 1)
	// --port names the server; another port is ignored.
	check("port", c.pkts, false, 1, "--port", "19999")
	if lines, _, _ := runPcap(t, filepath.Join(dir, "port.pcap"), "--port", "9092"); len(lines) != 0 {
		t.Errorf("--port 9092 read %d lines of a connection to 19999", len(lines))
	}

	// Tiny segments, every pair swapped, every third duplicated; two exchanges.
	c = newSynthConn(t, 19999)
	c.handshake()
	c.send(false, req, 7)
	c.send(true, resp, 5)
	req2 := append([]byte(nil), req...)
	c.send(false, req2, 11)
	c.send(true, resp, 3)
	var mixed []synthPacket
	for i := 0; i < 3; i++ {
		mixed = append(mixed, c.pkts[i])
	}
	rest := c.pkts[3:]
	for i := 0; i < len(rest); i += 2 {
		if i+1 < len(rest) {
			mixed = append(mixed, rest[i+1])
		}
		mixed = append(mixed, rest[i])
		if i%3 == 0 {
			mixed = append(mixed, rest[i])
		}
	}
	check("mixed", mixed, false, 2)

	// A 12 KB request in 4 KB segments, the first two swapped: the reassembly queues a
	// packet larger than its 1900-byte pages.
	big := bigProduce(t)
	reqSize = len(big)
	c = newSynthConn(t, 19999)
	c.handshake()
	c.send(false, big, 4000)
	c.send(true, resp, 1460)
	mixed = append([]synthPacket{}, c.pkts[:3]...)
	mixed = append(mixed, c.pkts[4], c.pkts[3])
	mixed = append(mixed, c.pkts[5:]...)
	check("big", mixed, false, 1)
	reqSize = len(req)

	// Mid-stream: the capture starts inside a request frame, then a whole exchange.
	c = newSynthConn(t, 19999)
	c.send(false, req[50:], 1460)
	c.send(false, req, 1460)
	c.send(true, resp, 1460)
	check("midstream", c.pkts, false, 1)
}

// bigProduce is a Produce v9 request (correlation id 7) with one 12 KB record.
func bigProduce(t *testing.T) []byte {
	t.Helper()
	spec := recordsjson.NewBatchSpec()
	spec.Records = []records.Record{{Value: bytes.Repeat([]byte("kafka "), 2000)}}
	recs, err := spec.Append(nil, records.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	js := `{"header":{"requestApiKey":0,"requestApiVersion":9,"correlationId":7,"clientId":"big"},"body":{"transactionalId":null,"acks":-1,"timeoutMs":30000,"topicData":[{"name":"orders","partitionData":[{"index":0,"records":"` +
		base64.StdEncoding.EncodeToString(recs) + `"}]}]}}`
	f := transcode.Framer{}
	frame, err := f.AppendRequestFrame(nil, []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return frame
}

// TestPcapErrors: exit codes and error lines.
func TestPcapErrors(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run([]string{"pcap"}, nil, &out, &errOut); code != exitUsage {
		t.Errorf("no file: exit %d, want %d", code, exitUsage)
	}
	if code := run([]string{"pcap", filepath.Join(dir, "missing.pcap")}, nil, &out, &errOut); code != exitInput {
		t.Errorf("missing file: exit %d, want %d", code, exitInput)
	}
	junk := filepath.Join(dir, "junk.pcap")
	os.WriteFile(junk, []byte("this is not a capture at all"), 0o644)
	errOut.Reset()
	if code := run([]string{"pcap", junk}, nil, &out, &errOut); code != exitInput || !strings.Contains(errOut.String(), "not a pcap or pcapng") {
		t.Errorf("junk: exit %d (%s), want %d", code, errOut.String(), exitInput)
	}
	// A request whose body is cut short gives an error line, and exit 1.
	req, resp := sampleFrames(t)
	bad := append([]byte(nil), req...)
	bad[3] -= 20 // the size field says 20 bytes less: the body is truncated
	bad = bad[:len(bad)-20]
	c := newSynthConn(t, 9092)
	c.handshake()
	c.send(false, bad, 1460)
	c.send(true, resp, 1460)
	file := filepath.Join(dir, "bad.pcap")
	writePcap(t, file, false, c.pkts)
	lines, code, _ := runPcap(t, file)
	if code != exitFrames {
		t.Errorf("bad frame: exit %d, want %d", code, exitFrames)
	}
	if len(lines) != 2 || lines[0].Error == nil || lines[0].Body != nil {
		t.Fatalf("bad frame: lines %+v", lines)
	}
	var e struct {
		Message string `json:"message"`
		Path    string `json:"path"`
		Offset  *int   `json:"offset"`
	}
	if err := json.Unmarshal(lines[0].Error, &e); err != nil || e.Message == "" || e.Offset == nil {
		t.Errorf("error %s: want message, path and offset", lines[0].Error)
	}
}

// TestPcapNotKafka: a connection that is not Kafka (HTTP on port 8080, from its SYN and
// without it) gives no line.
func TestPcapNotKafka(t *testing.T) {
	c := newSynthConn(t, 8080)
	c.handshake()
	body := bytes.Repeat([]byte("GET /index.html HTTP/1.1\r\nHost: example\r\n\r\n"), 3000)
	c.send(false, body, 1460)
	c.send(true, bytes.Repeat([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), 3000), 1460)
	file := filepath.Join(t.TempDir(), "http.pcap")
	for _, pkts := range [][]synthPacket{c.pkts, c.pkts[3:]} {
		writePcap(t, file, false, pkts)
		lines, code, stderr := runPcap(t, file)
		if code != 0 || len(lines) != 0 {
			t.Errorf("HTTP capture: exit %d, %d lines (%s)", code, len(lines), stderr)
		}
	}
}

// TestPcapLinuxSLL2: a capture of tcpdump -i any (link type LINUX_SLL2, 276) reads as
// the Ethernet one does.
func TestPcapLinuxSLL2(t *testing.T) {
	req, resp := sampleFrames(t)
	c := newSynthConn(t, 9092)
	c.handshake()
	c.send(false, req, 1460)
	c.send(true, resp, 1460)
	var buf bytes.Buffer
	hdr := make([]byte, 24)
	binary.LittleEndian.PutUint32(hdr[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(hdr[4:], 2)
	binary.LittleEndian.PutUint16(hdr[6:], 4)
	binary.LittleEndian.PutUint32(hdr[16:], 262144)
	binary.LittleEndian.PutUint32(hdr[20:], 276)
	buf.Write(hdr)
	for _, p := range c.pkts {
		ip := p.data[14:] // drop the Ethernet header
		sll2 := make([]byte, 20)
		binary.BigEndian.PutUint16(sll2[0:], 0x0800)
		binary.BigEndian.PutUint32(sll2[4:], 1) // interface index
		binary.BigEndian.PutUint16(sll2[8:], 772)
		sll2[11] = 6
		rec := make([]byte, 16)
		binary.LittleEndian.PutUint32(rec[0:], uint32(p.ci.Timestamp.Unix()))
		binary.LittleEndian.PutUint32(rec[4:], uint32(p.ci.Timestamp.Nanosecond()/1000))
		binary.LittleEndian.PutUint32(rec[8:], uint32(len(sll2)+len(ip)))
		binary.LittleEndian.PutUint32(rec[12:], uint32(len(sll2)+len(ip)))
		buf.Write(rec)
		buf.Write(sll2)
		buf.Write(ip)
	}
	file := filepath.Join(t.TempDir(), "any.pcap")
	os.WriteFile(file, buf.Bytes(), 0o644)
	lines, code, stderr := runPcap(t, file)
	if code != 0 || len(lines) != 2 || lines[0].Dir != "request" || lines[1].Dir != "response" || lines[1].APIKey != 0 {
		t.Errorf("SLL2 capture: exit %d, lines %+v (%s)", code, lines, stderr)
	}
}

// TestPcapIPv6: a connection over IPv6 names its ends [addr]:port.
func TestPcapIPv6(t *testing.T) {
	req, resp := sampleFrames(t)
	c := newSynthConn(t, 9092)
	c.v6 = true
	c.handshake()
	c.send(false, req, 1460)
	c.send(true, resp, 1460)
	file := filepath.Join(t.TempDir(), "v6.pcap")
	writePcap(t, file, true, c.pkts)
	lines, code, stderr := runPcap(t, file)
	if code != 0 || len(lines) != 2 || lines[0].Conn != "[fd00::1]:50000 > [fd00::2]:9092" || lines[1].LatencyUs == nil {
		t.Errorf("IPv6 capture: exit %d, lines %+v (%s)", code, lines, stderr)
	}
}
