package conn

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"

	"github.com/kwire/kwire/codec"
)

// BenchmarkDoApiVersions measures the client side of a pipelined round trip: 5 callers
// share one connection to an in-process server that answers every ApiVersions request
// at once with a canned response. It shows the connection's own cost per request.
func BenchmarkDoApiVersions(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var hdr [12]byte
				var canned []byte
				cannedV := int16(-1)
				for {
					if _, err := io.ReadFull(c, hdr[:]); err != nil {
						return
					}
					rest := make([]byte, int(binary.BigEndian.Uint32(hdr[:]))-8)
					if _, err := io.ReadFull(c, rest); err != nil {
						return
					}
					// One answer per version, with the correlation id patched in (ApiVersions
					// responses use header v0: the id sits right after the size).
					v := int16(binary.BigEndian.Uint16(hdr[6:]))
					if v != cannedV {
						canned, cannedV = apiVersionsAnswer(codec.PeekedHeader{APIVersion: v}), v
					}
					copy(canned[4:8], hdr[8:12])
					if _, err := c.Write(canned); err != nil {
						return
					}
				}
			}()
		}
	}()
	c, err := Dial(context.Background(), ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	b.SetParallelism(5)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Do(ctx, codec.NewAPIVersionsRequest()); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
