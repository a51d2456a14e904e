// The broker example shows kwire's connection at work: it starts a Kafka broker with the test
// launcher, connects with conn, creates a topic, produces three records (zstd) and
// fetches them back, printing each. It needs Java 17 and Maven (the first run fetches the
// broker's jars) and prints the same lines on every run.
//
//	go run ./examples/broker/go
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/conformance/broker"
	"github.com/kwire/kwire/conn"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	b, err := broker.Start(ctx, broker.Options{})
	if err != nil {
		return err
	}
	defer b.Stop()
	fmt.Fprintf(os.Stderr, "broker: Kafka %s on %s (started in %v)\n", b.Version(), b.Addr("PLAINTEXT"), b.StartDuration().Round(time.Millisecond))

	// One connection: versions are negotiated with ApiVersions before Dial returns.
	c, err := conn.Dial(ctx, b.Addr("PLAINTEXT"), conn.WithClientID("kwire-example"))
	if err != nil {
		return err
	}
	defer c.Close()
	pv, _ := c.VersionFor(0)
	fv, _ := c.VersionFor(1)
	fmt.Printf("connected: Produce v%d, Fetch v%d\n", pv, fv)

	// Create the topic.
	const topic = "kwire-example"
	ct := codec.NewCreateTopicsRequest()
	ct.TimeoutMs = 30000
	ct.Topics = []codec.CreateTopicsRequestCreatableTopic{{Name: topic, NumPartitions: 1, ReplicationFactor: 1}}
	resp, err := c.Do(ctx, ct)
	if err != nil {
		return err
	}
	created := resp.(*codec.CreateTopicsResponse).Topics[0]
	if created.ErrorCode != 0 {
		return fmt.Errorf("create topic: %w", kerr.Code(created.ErrorCode).Err())
	}
	id := created.TopicID
	fmt.Printf("created topic %s\n", topic)

	// Produce three records in one zstd batch; retry while the new partition elects its leader.
	msgs := []records.Message{
		{Topic: topic, TopicID: id, Key: []byte("k1"), Value: []byte("hello"), Timestamp: 1700000000000},
		{Topic: topic, TopicID: id, Key: []byte("k2"), Value: []byte("from"), Timestamp: 1700000000001,
			Headers: []records.Header{{Key: []byte("lang"), Value: []byte("go")}}},
		{Topic: topic, TopicID: id, Key: nil, Value: []byte("kwire"), Timestamp: 1700000000002},
	}
	var base int64
	for attempt := 0; ; attempt++ {
		req := codec.NewProduceRequest()
		req.Acks, req.TimeoutMs = -1, 30000
		var enc records.Encoder
		if err := enc.AppendProduceMessages(req, pv, msgs, records.ProduceOptions{Compression: records.CompressionZstd, PartitionLeaderEpoch: -1}); err != nil {
			return err
		}
		resp, err := c.Do(ctx, req)
		if err != nil {
			return err
		}
		p := resp.(*codec.ProduceResponse).Responses[0].PartitionResponses[0]
		if code := kerr.Code(p.ErrorCode); code != 0 {
			if code.Retriable() && attempt < 50 {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			return fmt.Errorf("produce: %w", code.Err())
		}
		base = p.BaseOffset
		break
	}
	fmt.Printf("produced %d records at offset %d\n", len(msgs), base)

	// Fetch them back and print them.
	fr := codec.NewFetchRequest()
	fr.ReplicaID, fr.MaxWaitMs, fr.MinBytes, fr.MaxBytes, fr.SessionEpoch = -1, 1000, 1, 1<<20, -1
	fr.Topics = []codec.FetchRequestFetchTopic{{Topic: topic, TopicID: id, Partitions: []codec.FetchRequestFetchPartition{{
		Partition: 0, CurrentLeaderEpoch: -1, FetchOffset: base, LastFetchedEpoch: -1, LogStartOffset: -1, PartitionMaxBytes: 1 << 20,
	}}}}
	resp, err = c.Do(ctx, fr)
	if err != nil {
		return err
	}
	dec := records.NewDecoder(records.Options{})
	n := 0
	err = dec.ForEachFetchMessage(resp.(*codec.FetchResponse), map[codec.UUID]string{id: topic}, func(m *records.Message) error {
		n++
		fmt.Printf("  %s/%d offset %d timestamp %d %s key %s value %q", m.Topic, m.Partition, m.Offset, m.Timestamp, m.Compression, keyString(m.Key), m.Value)
		for _, h := range m.Headers {
			fmt.Printf(" header %s=%q", h.Key, h.Value)
		}
		fmt.Println()
		return nil
	})
	if err != nil {
		return err
	}
	if n != len(msgs) {
		return fmt.Errorf("fetched %d records, produced %d", n, len(msgs))
	}
	st := c.Stats()
	fmt.Printf("fetched %d records\n", n)
	fmt.Fprintf(os.Stderr, "connection: %d requests, %d bytes written, %d bytes read\n", st.RequestsSent, st.BytesWritten, st.BytesRead)
	return nil
}

func keyString(k []byte) string {
	if k == nil {
		return "null"
	}
	return fmt.Sprintf("%q", k)
}
