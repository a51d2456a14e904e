package broker

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/kwire/kwire/codec"
)

// probe asks the broker at addr for ApiVersions (v0, which every release answers) and
// then Metadata (v12, which both tested releases serve), and succeeds when Metadata lists
// at least one broker: the node has caught up with its metadata and registered.
func probe(ctx context.Context, addr string) error {
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = c.SetDeadline(deadline)

	if _, err := RoundTrip(c, 1, codec.NewAPIVersionsRequest(), 0); err != nil {
		return fmt.Errorf("ApiVersions: %w", err)
	}
	md := codec.NewMetadataRequest()
	md.Topics = []codec.MetadataRequestTopic{} // no topics: brokers and cluster only
	md.AllowAutoTopicCreation = false
	resp, err := RoundTrip(c, 2, md, 12)
	if err != nil {
		return fmt.Errorf("Metadata: %w", err)
	}
	if n := len(resp.(*codec.MetadataResponse).Brokers); n == 0 {
		return errors.New("Metadata lists no broker yet")
	}
	return nil
}

// RoundTrip writes req at version on c with correlation id corr and reads its
// response (at most 1 MiB), checking the correlation id: enough to talk to a broker
// the launcher started without a client library.
func RoundTrip(c net.Conn, corr int32, req codec.Request, version int16) (codec.Response, error) {
	frame, err := codec.EncodeRequestFrame(nil, codec.NewRequestHeaderFor(req, version, corr, "kwire-broker-probe"), req)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write(frame); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 1<<20 {
		return nil, fmt.Errorf("response of %d bytes", n)
	}
	resp := make([]byte, 4+n)
	copy(resp, size[:])
	if _, err := io.ReadFull(c, resp[4:]); err != nil {
		return nil, err
	}
	f, err := codec.DecodeResponseFrame(resp, req.APIKey(), version)
	if err != nil {
		return nil, err
	}
	if f.Header.CorrelationID != corr {
		return nil, fmt.Errorf("correlation id %d, want %d", f.Header.CorrelationID, corr)
	}
	return f.Body, nil
}
