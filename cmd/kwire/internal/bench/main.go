// Command bench measures kwire pcap against tshark's Kafka dissector on the same
// capture, side by side in one run. It makes the capture first (once, kept in -dir):
// a real 4.4.0 broker started by the project's launcher, tcpdump on the loopback
// interface, and a franz-go producer and consumer moving -mb megabytes of uncompressed
// 512-byte JSON values (so the capture holds the records' bytes, not a compressed image
// of them).
// Then it runs, one after the other and each on one core (GOMAXPROCS=1, taskset when
// available):
//
//	kwire pcap FILE > /dev/null                         (JSON lines, records decoded)
//	kwire pcap --summary FILE > /dev/null
//	tshark -r FILE -d tcp.port==PORT,kafka -Y kafka -T json > /dev/null
//
// and prints MB/s of capture read and peak RSS for each, and kwire's peak RSS on the
// first quarter of the capture beside the whole, to show memory flat in capture size.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/gopacket/pcapgo"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kwire/kwire/cmd/kwire/internal/brokercapture"
)

func main() {
	kwire := flag.String("kwire", "kwire", "the kwire binary")
	dir := flag.String("dir", "build/kwire-bench", "where the captures are kept")
	runs := flag.Int("runs", 3, "runs of each command (the best is shown)")
	mb := flag.Int("mb", 48, "megabytes of record values to produce, uncompressed (the capture holds them twice: produced and fetched)")
	flag.Parse()
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	file := filepath.Join(*dir, fmt.Sprintf("bench-%dmb.pcap", *mb))
	portFile := file + ".port"
	if _, err := os.Stat(portFile); err != nil {
		log.Printf("making %s (broker, tcpdump, franz-go)", file)
		port, err := makeCapture(file, *mb)
		if err != nil {
			log.Fatal(err)
		}
		os.WriteFile(portFile, []byte(port), 0o644)
	}
	pb, _ := os.ReadFile(portFile)
	port := strings.TrimSpace(string(pb))
	quarter := filepath.Join(*dir, "quarter.pcap")
	if err := cutQuarter(file, quarter); err != nil {
		log.Fatal(err)
	}
	st, _ := os.Stat(file)
	qs, _ := os.Stat(quarter)
	size, qsize := float64(st.Size())/1e6, float64(qs.Size())/1e6
	fmt.Printf("capture: %s, %.1f MB (%s), Kafka port %s\n", filepath.Base(file), size, tools(), port)
	fmt.Printf("best of %d runs each; CPU is user+system time of the process\n", *runs)
	fmt.Printf("%-44s %7s %8s %9s %8s %9s %12s\n", "command (one core)", "MB", "wall s", "MB/s", "CPU s", "MB/CPU s", "peak RSS MB")
	row := func(name string, mbytes float64, args ...string) float64 {
		best := result{wall: 1e9, cpu: 1e9}
		for i := 0; i < *runs; i++ {
			r, err := measure(args...)
			if err != nil {
				log.Fatalf("%s: %v", name, err)
			}
			best.wall = min(best.wall, r.wall)
			best.cpu = min(best.cpu, r.cpu)
			best.rss = max(best.rss, r.rss)
		}
		fmt.Printf("%-44s %7.1f %8.2f %9.1f %8.2f %9.1f %12.1f\n", name, mbytes, best.wall, mbytes/best.wall, best.cpu, mbytes/best.cpu, float64(best.rss)/1024)
		return mbytes / best.wall
	}
	k := row("kwire pcap (JSON lines)", size, *kwire, "pcap", "--port", port, file)
	row("kwire pcap --summary", size, *kwire, "pcap", "--summary", "--port", port, file)
	row("kwire pcap, first quarter of the capture", qsize, *kwire, "pcap", "--port", port, quarter)
	ts := row("tshark -Y kafka -T json", size, "tshark", "-r", file, "-d", "tcp.port=="+port+",kafka", "-Y", "kafka", "-T", "json")
	fmt.Printf("kwire pcap / tshark (wall): %.1fx\n", k/ts)
}

func tools() string {
	out, _ := exec.Command("tshark", "--version").Output()
	first, _, _ := strings.Cut(string(out), "\n")
	return first
}

type result struct {
	wall, cpu float64 // seconds
	rss       int64   // KiB
}

// measure runs a command on one core with its output to /dev/null and returns its wall
// time, CPU time and peak RSS.
func measure(args ...string) (result, error) {
	if tp, err := exec.LookPath("taskset"); err == nil {
		args = append([]string{tp, "-c", "0"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return result{}, err
	}
	defer devnull.Close()
	cmd.Stdout = devnull
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	sec := time.Since(start).Seconds()
	if err != nil && cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 1 && strings.HasSuffix(args[len(args)-1], ".pcap") {
		err = nil // kwire: some frames did not decode (cut frames at the capture's ends)
	}
	if err != nil {
		return result{}, fmt.Errorf("%v: %s", err, stderr.String())
	}
	r := result{wall: sec, cpu: (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.rss = ru.Maxrss
	}
	return r, nil
}

// cutQuarter writes the first quarter of the capture's packets.
func cutQuarter(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := pcapgo.NewReader(bufio.NewReader(f))
	if err != nil {
		return err
	}
	st, _ := f.Stat()
	o, err := os.Create(out)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(o)
	w := pcapgo.NewWriter(bw)
	w.WriteFileHeader(262144, r.LinkType())
	var n int64
	for n < st.Size()/4 {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		w.WritePacket(ci, data)
		n += int64(len(data)) + 16
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return o.Close()
}

func makeCapture(file string, mb int) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	port, tail, err := brokercapture.Record(ctx, file, func(ctx context.Context, addr string) error {
		return traffic(ctx, addr, mb)
	})
	log.Printf("tcpdump: %s", tail)
	return port, err
}

func traffic(ctx context.Context, addr string, mb int) error {
	const topic = "bench"
	p, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID("bench-producer"), kgo.AllowAutoTopicCreation(),
		kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return err
	}
	value := []byte(strings.Repeat(`{"order":12345,"item":"a book about the wire","price":"12.50"} `, 8)) // 512 bytes of text
	n := mb << 20 / len(value)
	for i := 0; i < n; i++ {
		p.Produce(ctx, &kgo.Record{Key: []byte("k" + strconv.Itoa(i)), Value: value,
			Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("abc")}}}, func(_ *kgo.Record, err error) {
			if err != nil {
				log.Fatalf("produce: %v", err)
			}
		})
	}
	if err := p.Flush(ctx); err != nil {
		return err
	}
	p.Close()
	c, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID("bench-consumer"), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer c.Close()
	for got := 0; got < n; {
		fs := c.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return err
		}
		got += fs.NumRecords()
	}
	return nil
}
