// Command samplecapture makes the small capture the examples read: it starts a real
// Kafka 4.4.0 broker with the project's launcher, captures the loopback interface with
// tcpdump (package brokercapture) while a franz-go producer writes a few records (text,
// binary, and with a schema reference) and a consumer group reads them back, and writes
// the capture.
//
//	go run ./internal/samplecapture -out ../../examples/data/sample.pcap
//
// It needs tcpdump (and the right to capture, root or CAP_NET_RAW), Java and the
// broker's jars.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kwire/kwire/cmd/kwire/internal/brokercapture"
)

func main() {
	out := flag.String("out", "sample.pcap", "the capture to write")
	flag.Parse()
	if err := capture(*out); err != nil {
		log.Fatal(err)
	}
}

func capture(out string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tmp := out + ".tmp"
	if _, _, err := brokercapture.Record(ctx, tmp, clients); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, out)
}

func clients(ctx context.Context, addr string) error {
	const topic = "orders"
	p, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID("sample-producer"), kgo.AllowAutoTopicCreation(),
		kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return err
	}
	for i := 0; i < 6; i++ {
		r := &kgo.Record{Key: []byte("order-" + strconv.Itoa(i)), Value: []byte(fmt.Sprintf(`{"id":%d,"item":"book","qty":%d}`, i, i+1))}
		switch i % 3 {
		case 1:
			r.Headers = []kgo.RecordHeader{{Key: "schema.id", Value: []byte("42")}, {Key: "schema.version", Value: []byte("3")}}
		case 2:
			r.Value = []byte{0, 0, 0, 0, 7, 0x02, 0xff, byte(i)} // Confluent wire format, schema id 7
		}
		if err := p.ProduceSync(ctx, r).FirstErr(); err != nil {
			return fmt.Errorf("produce: %w", err)
		}
	}
	p.Close()
	c, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID("sample-consumer"), kgo.ConsumeTopics(topic),
		kgo.ConsumerGroup("sample-group"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer c.Close()
	for got := 0; got < 6; {
		fs := c.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return fmt.Errorf("consume: %w", err)
		}
		got += fs.NumRecords()
	}
	return c.CommitUncommittedOffsets(ctx)
}
