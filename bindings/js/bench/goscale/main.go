//go:build unix

// Command goscale is the native-Go side of the bindings' at-scale benchmark: it decodes a
// Fetch response frame (a file written by the JavaScript or Python benchmark) with
// codec.DecodeResponseFrame and reads every record's value with
// records.Decoder.ForEachFetchMessage, and prints one line of JSON: the best and median
// time per decode over the rounds (CPU of this single-threaded loop, with GOMAXPROCS 1),
// the records seen, the sum of their offsets and the bytes of their keys and values (the
// checksum the benchmark compares with its own).
//
//	go run ./bindings/js/bench/goscale -frame FILE -version 12 [-rounds 15]
//
// It is built for Unix hosts only (the constraint above): it reads the process's CPU
// time with getrusage, which the WebAssembly ports (and Windows) do not have.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/kwire/kwire/bindings/internal/cpubench"
	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
)

type result struct {
	BestMs     float64 `json:"bestMs"`
	MedianMs   float64 `json:"medianMs"`
	Records    int     `json:"records"`
	OffsetSum  int64   `json:"offsetSum"`
	KeyBytes   int64   `json:"keyBytes"`
	ValueBytes int64   `json:"valueBytes"`
	Go         string  `json:"go"`
	// CPU time of the process (every thread: the collector's too) per decode.
	CPUBestMs   float64 `json:"cpuBestMs"`
	CPUMedianMs float64 `json:"cpuMedianMs"`
}

func main() {
	file := flag.String("frame", "", "the Fetch response frame (size prefix included)")
	version := flag.Int("version", 12, "the Fetch version the response answers")
	rounds := flag.Int("rounds", 15, "decodes to time")
	flag.Parse()
	runtime.GOMAXPROCS(1)
	frame, err := os.ReadFile(*file)
	if err != nil {
		cpubench.Fail(err)
	}
	var r result
	decode := func() error {
		r.Records, r.OffsetSum, r.KeyBytes, r.ValueBytes = 0, 0, 0, 0
		f, err := codec.DecodeResponseFrame(frame, 1, int16(*version))
		if err != nil {
			return err
		}
		resp, ok := f.Body.(*codec.FetchResponse)
		if !ok {
			return fmt.Errorf("goscale: body is %T, not a FetchResponse", f.Body)
		}
		var d records.Decoder
		return d.ForEachFetchMessage(resp, nil, func(m *records.Message) error {
			r.Records++
			r.OffsetSum += m.Offset
			r.KeyBytes += int64(len(m.Key))
			r.ValueBytes += int64(len(m.Value))
			return nil
		})
	}
	if err := decode(); err != nil { // warm-up
		cpubench.Fail(err)
	}
	times := make([]float64, 0, *rounds)
	cpus := make([]float64, 0, *rounds)
	for i := 0; i < *rounds; i++ {
		c := cpubench.Micros()
		t := time.Now()
		if err := decode(); err != nil {
			cpubench.Fail(err)
		}
		times = append(times, float64(time.Since(t).Microseconds())/1000)
		cpus = append(cpus, (cpubench.Micros()-c)/1000)
	}
	r.MedianMs, r.BestMs = cpubench.MedianBest(times)
	r.CPUMedianMs, r.CPUBestMs = cpubench.MedianBest(cpus)
	r.Go = runtime.Version()
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		cpubench.Fail(err)
	}
}
