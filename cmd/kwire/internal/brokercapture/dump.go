package brokercapture

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// Dump is tcpdump capturing one TCP port of the loopback interface into a pcap file.
//
// Stopping it is where captures lose packets on a busy machine: tcpdump reads the
// kernel's ring buffer in batches, and on SIGINT it stops without reading what is
// still queued, so a fixed pause before the signal loses the last packets whenever
// tcpdump was starved for longer than the pause. Stop therefore waits for a marker: it
// opens and closes one connection of its own to the port, after all the caller's
// traffic, and signals tcpdump only once that connection's FIN is in the file. Packets
// reach the file in the order the kernel queued them, so everything before the marker
// is there too. Stop also reads tcpdump's own count of packets the kernel dropped
// (a full buffer) and reports any as an error: the capture is then not whole.
type Dump struct {
	cmd    *exec.Cmd
	file   string
	addr   string // host:port the capture filters on
	mu     sync.Mutex
	stderr bytes.Buffer
	closed chan struct{} // closed when tcpdump's standard error ends

	// where hasFIN's last look stopped
	order binary.ByteOrder
	link  layers.LinkType
	off   int64
}

// ErrDropped is wrapped by Stop's error when tcpdump says the kernel dropped packets.
var ErrDropped = errors.New("tcpdump: the kernel dropped packets (capture buffer full)")

// StartDump starts tcpdump writing file with the packets to or from addr's port (addr
// is host:port on the loopback interface) and returns once tcpdump is listening.
func StartDump(tcpdump, file, addr string) (*Dump, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	d := &Dump{file: file, addr: addr, closed: make(chan struct{})}
	// -B 65536: a 64 MiB kernel buffer (the default 2 MiB fills in a burst of
	// segmentation-offloaded loopback segments while tcpdump waits for a core).
	d.cmd = exec.Command(tcpdump, "-i", "lo", "--immediate-mode", "-U", "-s", "0", "-n", "-B", "65536", "-w", file, "tcp port "+port)
	stderr, err := d.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("tcpdump: %w", err)
	}
	ready := make(chan bool, 1)
	go func() {
		defer close(d.closed)
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			d.mu.Lock()
			d.stderr.WriteString(sc.Text() + "\n")
			d.mu.Unlock()
			if !signalled && strings.Contains(sc.Text(), "listening on") {
				ready <- true
				signalled = true
			}
		}
		if !signalled {
			ready <- false
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			d.cmd.Wait()
			return nil, fmt.Errorf("tcpdump did not start: %s", d.output())
		}
	case <-time.After(20 * time.Second):
		d.cmd.Process.Kill()
		d.cmd.Wait()
		return nil, errors.New("tcpdump did not start in 20s")
	}
	return d, nil
}

func (d *Dump) output() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return strings.TrimSpace(d.stderr.String())
}

// Stop writes the marker connection, waits (up to timeout) until its FIN is in the
// file, stops tcpdump and returns what tcpdump printed after it started listening (its
// packet counts). The error wraps ErrDropped when the kernel dropped packets, and says
// so when the marker never reached the file.
func (d *Dump) Stop(timeout time.Duration) (string, error) {
	if d.cmd.ProcessState != nil {
		return d.output(), nil
	}
	var markErr error
	marker, err := d.mark()
	if err == nil {
		deadline := time.Now().Add(timeout)
		for !d.hasFIN(marker) {
			if time.Now().After(deadline) {
				markErr = fmt.Errorf("tcpdump: the marker connection (port %d) was not in the capture after %v: the capture may be cut short", marker, timeout)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	} else {
		markErr = fmt.Errorf("tcpdump: marker connection: %w", err)
	}
	d.cmd.Process.Signal(syscall.SIGINT)
	wait := make(chan error, 1)
	go func() {
		<-d.closed // standard error ends when tcpdump exits; Wait must come after the last read
		wait <- d.cmd.Wait()
	}()
	var werr error
	select {
	case werr = <-wait:
	case <-time.After(10 * time.Second):
		d.cmd.Process.Kill()
		<-wait
		werr = errors.New("tcpdump did not stop on SIGINT")
	}
	out := d.output()
	if _, rest, ok := strings.Cut(out, "listening on"); ok {
		if _, after, ok := strings.Cut(rest, "\n"); ok {
			out = strings.TrimSpace(after)
		}
	}
	if n := dropped(out); n > 0 {
		return out, fmt.Errorf("%w: %d (%s)", ErrDropped, n, strings.ReplaceAll(out, "\n", "; "))
	}
	if markErr != nil {
		return out, markErr
	}
	if werr != nil {
		return out, fmt.Errorf("tcpdump: %w", werr)
	}
	return out, nil
}

// mark opens a connection to the captured port and closes it, returning its local
// port once the close is done.
func (d *Dump) mark() (int, error) {
	c, err := net.DialTimeout("tcp", d.addr, 5*time.Second)
	if err != nil {
		return 0, err
	}
	port := c.LocalAddr().(*net.TCPAddr).Port
	return port, c.Close()
}

var droppedRe = regexp.MustCompile(`(\d+) packets? dropped by kernel`)

// dropped reads tcpdump's closing count of packets the kernel dropped.
func dropped(out string) int {
	m := droppedRe.FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// hasFIN says whether the file holds a FIN from the marker connection's client side.
// It reads on from where the last look stopped; a record cut at the end is the one
// tcpdump is writing and is left for the next look.
func (d *Dump) hasFIN(port int) bool {
	f, err := os.Open(d.file)
	if err != nil {
		return false
	}
	defer f.Close()
	if d.order == nil {
		var h [24]byte
		if _, err := io.ReadFull(f, h[:]); err != nil {
			return false
		}
		switch binary.LittleEndian.Uint32(h[:]) {
		case 0xa1b2c3d4, 0xa1b23c4d:
			d.order = binary.LittleEndian
		case 0xd4c3b2a1, 0x4d3cb2a1:
			d.order = binary.BigEndian
		default:
			return false
		}
		d.link = layers.LinkType(d.order.Uint32(h[20:]))
		d.off = 24
	}
	if _, err := f.Seek(d.off, io.SeekStart); err != nil {
		return false
	}
	r := bufio.NewReaderSize(f, 1<<20)
	var h [16]byte
	for {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return false
		}
		n := int(d.order.Uint32(h[8:]))
		data := make([]byte, n)
		if _, err := io.ReadFull(r, data); err != nil {
			return false
		}
		d.off += 16 + int64(n)
		p := gopacket.NewPacket(data, d.link, gopacket.DecodeOptions{Lazy: true, NoCopy: true})
		if tcp, ok := p.Layer(layers.LayerTypeTCP).(*layers.TCP); ok && tcp.FIN && int(tcp.SrcPort) == port {
			return true
		}
	}
}
