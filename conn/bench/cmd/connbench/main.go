// Command connbench compares kwire's connection (conn) with franz-go's client (kgo) on
// pipelined round trips over one connection to the same launched Kafka broker: an
// ApiVersions request, and a Produce of one 1 KiB record with acks=1. Each client runs
// the same requests from the same number of concurrent callers; the rounds alternate
// between the two clients so that both see the same broker state and machine load. It
// prints requests per second per round, the median, and kwire's ratio to kgo.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/conformance/broker"
	"github.com/kwire/kwire/conn"
)

func main() {
	var (
		version     = flag.String("kafka", broker.DefaultVersion, "Kafka release of the broker")
		rounds      = flag.Int("rounds", 8, "rounds per client and workload (alternating)")
		roundTime   = flag.Duration("round", 1500*time.Millisecond, "duration of one round")
		warmup      = flag.Duration("warmup", 3*time.Second, "warm-up per client and workload, not measured")
		concurrency = flag.Int("callers", 5, "concurrent callers sharing the one connection")
		cpuProfile  = flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	)
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "connbench:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if err := run(*version, *rounds, *roundTime, *warmup, *concurrency); err != nil {
		fmt.Fprintln(os.Stderr, "connbench:", err)
		os.Exit(1)
	}
}

// client is one side of the comparison: do sends one request of the workload.
type client struct {
	name string
	do   func(ctx context.Context) error
}

func run(version string, rounds int, roundTime, warmup time.Duration, callers int) error {
	ctx := context.Background()
	b, err := broker.Start(ctx, broker.Options{Version: version})
	if err != nil {
		return err
	}
	defer b.Stop()
	fmt.Printf("broker: Kafka %s on %s, started in %v\n", b.Version(), b.Addr("PLAINTEXT"), b.StartDuration().Round(time.Millisecond))

	kc, err := conn.Dial(ctx, b.Addr("PLAINTEXT"))
	if err != nil {
		return err
	}
	defer kc.Close()
	tp, id, err := createTopic(ctx, kc)
	if err != nil {
		return err
	}

	fc, err := kgo.NewClient(kgo.SeedBrokers(b.Addr("PLAINTEXT")), kgo.ClientID("kwire-bench"))
	if err != nil {
		return err
	}
	defer fc.Close()
	fb := fc.Broker(1)

	// The record batch both clients send: one record with a 1 KiB value.
	pv, err := kc.VersionFor(0)
	if err != nil {
		return err
	}
	batch, err := oneRecordBatch(pv, tp, id)
	if err != nil {
		return err
	}

	workloads := []struct {
		name  string
		kwire client
		kgo   client
	}{
		{
			"ApiVersions",
			client{"kwire", func(ctx context.Context) error {
				req := codec.NewAPIVersionsRequest()
				req.ClientSoftwareName, req.ClientSoftwareVersion = "kwire-bench", "1"
				resp, err := kc.Do(ctx, req)
				if err == nil && resp.(*codec.APIVersionsResponse).ErrorCode != 0 {
					err = kerr.Code(resp.(*codec.APIVersionsResponse).ErrorCode).Err()
				}
				return err
			}},
			client{"kgo", func(ctx context.Context) error {
				req := kmsg.NewPtrApiVersionsRequest()
				req.ClientSoftwareName, req.ClientSoftwareVersion = "kwire-bench", "1"
				resp, err := fb.Request(ctx, req)
				if err == nil && resp.(*kmsg.ApiVersionsResponse).ErrorCode != 0 {
					err = fmt.Errorf("ApiVersions error %d", resp.(*kmsg.ApiVersionsResponse).ErrorCode)
				}
				return err
			}},
		},
		{
			"Produce 1 KiB acks=1",
			client{"kwire", func(ctx context.Context) error {
				req := codec.NewProduceRequest()
				req.Acks, req.TimeoutMs = 1, 30000
				req.TopicData = []codec.ProduceRequestTopicProduceData{{Name: tp, TopicID: id,
					PartitionData: []codec.ProduceRequestPartitionProduceData{{Index: 0, Records: batch}}}}
				resp, err := kc.Do(ctx, req)
				if err == nil {
					if c := resp.(*codec.ProduceResponse).Responses[0].PartitionResponses[0].ErrorCode; c != 0 {
						err = kerr.Code(c).Err()
					}
				}
				return err
			}},
			client{"kgo", func(ctx context.Context) error {
				req := kmsg.NewPtrProduceRequest()
				req.Acks, req.TimeoutMillis = 1, 30000
				req.Topics = []kmsg.ProduceRequestTopic{{Topic: tp, TopicID: id,
					Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: batch}}}}
				resp, err := fb.Request(ctx, req)
				if err == nil {
					if c := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; c != 0 {
						err = fmt.Errorf("Produce error %d", c)
					}
				}
				return err
			}},
		},
	}

	fmt.Printf("%d callers on one connection per client, %v warm-up, then %d alternating rounds of %v each\n", callers, warmup, rounds, roundTime)
	fmt.Printf("ratio: kwire's median over kgo's; pair ratio: the median of the ratios of rounds run back to back\n\n")
	fmt.Printf("%-22s %14s %14s %8s %12s\n", "workload", "kwire req/s", "kgo req/s", "ratio", "pair ratio")
	for _, w := range workloads {
		// Warm both up (connections opened, versions loaded, the broker's code compiled).
		for _, c := range []client{w.kwire, w.kgo} {
			if _, err := measure(ctx, c, callers, warmup); err != nil {
				return fmt.Errorf("%s %s: %w", w.name, c.name, err)
			}
		}
		var kw, fg []float64
		for r := 0; r < rounds; r++ {
			order := []client{w.kwire, w.kgo}
			if r%2 == 1 {
				order = []client{w.kgo, w.kwire}
			}
			for _, c := range order {
				rate, err := measure(ctx, c, callers, roundTime)
				if err != nil {
					return fmt.Errorf("%s %s: %w", w.name, c.name, err)
				}
				if c.name == "kwire" {
					kw = append(kw, rate)
				} else {
					fg = append(fg, rate)
				}
			}
		}
		mk, mf := median(kw), median(fg)
		var pairs []float64
		for i := range kw {
			pairs = append(pairs, kw[i]/fg[i])
		}
		fmt.Printf("%-22s %14.0f %14.0f %7.2fx %11.2fx\n", w.name, mk, mf, mk/mf, median(pairs))
		fmt.Printf("%-22s rounds kwire %v\n%-22s rounds kgo   %v\n", "", rounded(kw), "", rounded(fg))
	}
	st := kc.Stats()
	fmt.Printf("\nkwire connection: %d requests, %d bytes written, %d bytes read\n", st.RequestsSent, st.BytesWritten, st.BytesRead)
	return nil
}

// measure runs c from callers goroutines for d and returns requests per second.
func measure(ctx context.Context, c client, callers int, d time.Duration) (float64, error) {
	var n atomic.Int64
	var firstErr atomic.Pointer[error]
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := c.do(ctx); err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
				n.Add(1)
			}
		}()
	}
	time.Sleep(d)
	close(stop)
	wg.Wait()
	if e := firstErr.Load(); e != nil {
		return 0, *e
	}
	return float64(n.Load()) / time.Since(start).Seconds(), nil
}

func createTopic(ctx context.Context, c *conn.Conn) (string, [16]byte, error) {
	name := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	req := codec.NewCreateTopicsRequest()
	req.TimeoutMs = 30000
	req.Topics = []codec.CreateTopicsRequestCreatableTopic{{Name: name, NumPartitions: 1, ReplicationFactor: 1}}
	resp, err := c.Do(ctx, req)
	if err != nil {
		return "", [16]byte{}, err
	}
	r := resp.(*codec.CreateTopicsResponse).Topics[0]
	if r.ErrorCode != 0 {
		return "", [16]byte{}, kerr.Code(r.ErrorCode).Err()
	}
	return name, r.TopicID, nil
}

// oneRecordBatch is a magic 2 batch holding one record with a 1 KiB value.
func oneRecordBatch(version int16, topic string, id [16]byte) ([]byte, error) {
	value := make([]byte, 1024)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	req := codec.NewProduceRequest()
	var enc records.Encoder
	err := enc.AppendProduceMessages(req, version, []records.Message{{Topic: topic, TopicID: id, Value: value, Timestamp: time.Now().UnixMilli()}},
		records.ProduceOptions{PartitionLeaderEpoch: -1})
	if err != nil {
		return nil, err
	}
	return req.TopicData[0].PartitionData[0].Records, nil
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func rounded(xs []float64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x + 0.5)
	}
	return out
}
