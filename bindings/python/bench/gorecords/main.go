//go:build unix

// Command gorecords is the native-Go side of the Python benchmark's module-call
// comparison: for each frame file (a Fetch response the Python benchmark wrote, size
// prefix included) it times abi.DecodeResponseFrameRecords, the Go function behind
// kw_decode_response_frame_records, with a nil destination as the wasm export calls it,
// and prints one line of JSON per file: the median and best CPU microseconds per call
// (process CPU over a batch of calls, GOMAXPROCS 1, so the collector's work is counted
// on the one core it shares with the decoder, as in the wasm module), the size of the
// output table and its SHA-256 (the benchmark compares it with the module's output).
// The files are timed in alternating rounds.
//
// With -serve, it times on demand, so that a benchmark can alternate its own samples with
// these under the same load: after one line of JSON per file (the timing fields zero), it
// reads lines "INDEX CALLS" from standard input and answers each with the CPU
// microseconds per call of CALLS calls on file INDEX, until its input ends.
//
//	go run ./bindings/python/bench/gorecords [-version 12] [-flags 2] [-rounds 9] [-sample-ms 20] FILE...
//	go run ./bindings/python/bench/gorecords -serve [-version 12] [-flags 2] FILE...
//
// It is built for Unix hosts only (the constraint above): it reads the process's CPU
// time with getrusage, which the WebAssembly ports (and Windows) do not have.
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"

	"github.com/kwire/kwire/abi"
	"github.com/kwire/kwire/bindings/internal/cpubench"
)

type result struct {
	File        string  `json:"file"`
	CPUUsMedian float64 `json:"cpuUsMedian"`
	CPUUsBest   float64 `json:"cpuUsBest"`
	Calls       int     `json:"callsPerSample"`
	OutBytes    int     `json:"outBytes"`
	OutSHA256   string  `json:"outSha256"`
	Go          string  `json:"go"`
}

func main() {
	version := flag.Int("version", 12, "the Fetch version the responses answer")
	flags := flag.Int("flags", 0, "kw_records flags: 0 verifies CRCs, +1 (KW_RECORDS_SKIP_CRC) skips them, +2 (KW_RECORDS_INPUT_SPANS) gives a layout-3 table, +4 (KW_RECORDS_COLUMNS) a layout-4 one (with +2: its uncompressed records left in the input)")
	rounds := flag.Int("rounds", 9, "timed samples per file")
	sampleMs := flag.Float64("sample-ms", 20, "CPU time one sample aims at")
	serveMode := flag.Bool("serve", false, "time on demand: read \"INDEX CALLS\" lines from standard input")
	flag.Parse()
	runtime.GOMAXPROCS(1)
	files := flag.Args()
	if len(files) == 0 {
		cpubench.Fail(fmt.Errorf("gorecords: no frame files given"))
	}
	frames := make([][]byte, len(files))
	res := make([]result, len(files))
	samples := make([][]float64, len(files))
	decode := func(i int) []byte {
		out, err := abi.DecodeResponseFrameRecords(nil, frames[i], 1, int32(*version), int32(*flags), 0)
		if err != nil {
			cpubench.Fail(fmt.Errorf("gorecords: %s: %w", files[i], err))
		}
		return out
	}
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			cpubench.Fail(fmt.Errorf("gorecords: %w", err))
		}
		frames[i] = b
		out := decode(i) // warm-up, and the output to compare
		sum := sha256.Sum256(out)
		res[i] = result{File: f, OutBytes: len(out), OutSHA256: hex.EncodeToString(sum[:]), Go: runtime.Version()}
		if *serveMode {
			continue
		}
		res[i].Calls = cpubench.Calls(*sampleMs*1e3, 5e3, 1, func() { decode(i) })
	}
	if *serveMode {
		serve(res, decode)
		return
	}
	for r := 0; r < *rounds; r++ {
		for i := range files {
			samples[i] = append(samples[i], cpubench.PerCall(res[i].Calls, func() { decode(i) }))
		}
	}
	enc := json.NewEncoder(os.Stdout)
	for i := range files {
		res[i].CPUUsMedian, res[i].CPUUsBest = cpubench.MedianBest(samples[i])
		if err := enc.Encode(res[i]); err != nil {
			cpubench.Fail(fmt.Errorf("gorecords: %w", err))
		}
	}
}

// serve prints res, then answers "INDEX CALLS" lines with the CPU microseconds per call.
func serve(res []result, decode func(int) []byte) {
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for i := range res {
		if err := enc.Encode(res[i]); err != nil {
			cpubench.Fail(fmt.Errorf("gorecords: %w", err))
		}
	}
	if err := out.Flush(); err != nil {
		cpubench.Fail(fmt.Errorf("gorecords: %w", err))
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var i, n int
		if _, err := fmt.Sscan(in.Text(), &i, &n); err != nil || i < 0 || i >= len(res) || n < 1 {
			cpubench.Fail(fmt.Errorf("gorecords: bad request %q", in.Text()))
		}
		fmt.Fprintf(out, "%.3f\n", cpubench.PerCall(n, func() { decode(i) }))
		if err := out.Flush(); err != nil {
			cpubench.Fail(fmt.Errorf("gorecords: %w", err))
		}
	}
	if err := in.Err(); err != nil {
		cpubench.Fail(fmt.Errorf("gorecords: %w", err))
	}
}
