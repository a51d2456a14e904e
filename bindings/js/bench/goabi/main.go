//go:build unix

// Command goabi is the native-Go side of the JavaScript benchmarks' "module call alone"
// figure: it times abi.DecodeResponseFrameRecords, the function behind the wasm export
// kw_decode_response_frame_records, on Fetch response frames that the benchmark wrote to
// files, called as the export calls it (a nil dst, so each call allocates its output).
// For every file it prints one line of JSON: the CPU time per call in µs (median and
// best of the rounds; user + system of the process with GOMAXPROCS 1, so the collector's
// work is counted) and the records in the table it returned.
//
//	go run ./bindings/js/bench/goabi [-version 11] [-flags 0] [-rounds 9] [-ms 20] FILE...
//
// It is built for Unix hosts only (the constraint above): it reads the process's CPU
// time with getrusage, which the WebAssembly ports (and Windows) do not have.
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"

	"github.com/kwire/kwire/abi"
	"github.com/kwire/kwire/bindings/internal/cpubench"
)

type result struct {
	File     string  `json:"file"`
	Records  int     `json:"records"`
	Calls    int     `json:"calls"`
	MedianUs float64 `json:"cpuMedianUs"`
	BestUs   float64 `json:"cpuBestUs"`
	Go       string  `json:"go"`
}

func main() {
	version := flag.Int("version", 11, "the Fetch version the responses answer")
	flags := flag.Int("flags", 2, "the records flags (1: skip CRC checks, 2: input spans, as the binding asks)")
	rounds := flag.Int("rounds", 9, "timed rounds per file")
	ms := flag.Float64("ms", 20, "CPU milliseconds per round (calls per round are chosen to fill it)")
	flag.Parse()
	runtime.GOMAXPROCS(1)
	enc := json.NewEncoder(os.Stdout)
	for _, file := range flag.Args() {
		frame, err := os.ReadFile(file)
		if err != nil {
			cpubench.Fail(err)
		}
		var buf []byte // reused, as kwire.wasm reuses the buffers a host frees
		call := func() []byte {
			out, err := abi.DecodeResponseFrameRecords(buf[:0], frame, 1, int32(*version), int32(*flags), 0)
			buf = out
			if err != nil {
				cpubench.Fail(fmt.Errorf("goabi: %s: %w", file, err))
			}
			return out
		}
		out := call()
		if len(out) < 12 {
			cpubench.Fail(fmt.Errorf("goabi: %s: a %d-byte table", file, len(out)))
		}
		r := result{File: file, Records: int(int32(binary.LittleEndian.Uint32(out[8:]))), Go: runtime.Version()}
		// Calibrate: as many calls as fill about ms of CPU per round.
		r.Calls = cpubench.Calls(*ms*1000, *ms*1000/4, 3, func() { call() })
		per := make([]float64, *rounds)
		for i := range per {
			per[i] = cpubench.PerCall(r.Calls, func() { call() })
		}
		r.MedianUs, r.BestUs = cpubench.MedianBest(per)
		if err := enc.Encode(r); err != nil {
			cpubench.Fail(err)
		}
	}
}
