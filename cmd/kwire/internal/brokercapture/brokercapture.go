// Package brokercapture records a real broker's traffic for the captures the examples
// and the benchmark read: it starts a Kafka 4.4.0 broker with the project's launcher
// and captures its port on the loopback interface with tcpdump while the caller's
// clients talk to it. It needs tcpdump (and the right to capture, root or
// CAP_NET_RAW), Java and the broker's jars.
package brokercapture

import (
	"context"
	"strings"
	"time"

	"github.com/kwire/kwire/conformance/broker"
)

// Record starts the broker and tcpdump writing file, runs traffic with the broker's
// address, and stops tcpdump once every packet of the traffic is in the file (see
// Dump). It returns the broker's port and what tcpdump printed after it started
// listening (its packet counts).
func Record(ctx context.Context, file string, traffic func(ctx context.Context, addr string) error) (port, tail string, err error) {
	b, err := broker.Start(ctx, broker.Options{Version: "4.4.0"})
	if err != nil {
		return "", "", err
	}
	defer b.Stop()
	addr := b.Addr("PLAINTEXT")
	_, port, _ = strings.Cut(addr, ":")
	d, err := StartDump("tcpdump", file, addr)
	if err != nil {
		return "", "", err
	}
	err = traffic(ctx, addr)
	tail, serr := d.Stop(30 * time.Second)
	if err == nil {
		err = serr
	}
	return port, tail, err
}
