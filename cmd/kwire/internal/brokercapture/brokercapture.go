// Package brokercapture records a real broker's traffic for the captures the examples
// and the benchmark read: it starts a Kafka 4.4.0 broker with the project's launcher
// and captures its port on the loopback interface with tcpdump while the caller's
// clients talk to it. It needs tcpdump (and the right to capture, root or
// CAP_NET_RAW), Java and the broker's jars.
package brokercapture

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/kwire/kwire/conformance/broker"
)

// Record starts the broker and tcpdump writing file, runs traffic with the broker's
// address, and stops tcpdump half a second later (so that the last packets are
// written). It returns the broker's port and what tcpdump printed after it started
// listening (its packet counts).
func Record(ctx context.Context, file string, traffic func(ctx context.Context, addr string) error) (port, tail string, err error) {
	b, err := broker.Start(ctx, broker.Options{Version: "4.4.0"})
	if err != nil {
		return "", "", err
	}
	defer b.Stop()
	addr := b.Addr("PLAINTEXT")
	_, port, _ = strings.Cut(addr, ":")
	dump := exec.Command("tcpdump", "-i", "lo", "--immediate-mode", "-U", "-s", "0", "-n", "-B", "65536", "-w", file, "tcp port "+port)
	stderr, err := dump.StderrPipe()
	if err != nil {
		return "", "", err
	}
	if err := dump.Start(); err != nil {
		return "", "", fmt.Errorf("tcpdump: %w", err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "listening on") {
	}
	var rest strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		for sc.Scan() {
			rest.WriteString(sc.Text() + "\n")
		}
	}()
	err = traffic(ctx, addr)
	time.Sleep(500 * time.Millisecond)
	dump.Process.Signal(syscall.SIGINT)
	<-done // tcpdump closes its standard error when it exits; Wait must come after the last read
	if werr := dump.Wait(); werr != nil && err == nil {
		err = fmt.Errorf("tcpdump: %w", werr)
	}
	return port, strings.TrimSpace(rest.String()), err
}
