package main

import (
	"io"
	"os"
	"testing"
)

// BenchmarkPcap runs kwire pcap on the capture named by KWIRE_BENCH_PCAP (make
// kwire-bench makes one), output discarded.
func BenchmarkPcap(b *testing.B) {
	file := os.Getenv("KWIRE_BENCH_PCAP")
	if file == "" {
		b.Skip("KWIRE_BENCH_PCAP names no capture")
	}
	st, err := os.Stat(file)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for i := 0; i < b.N; i++ {
		if code := run([]string{"pcap", file}, nil, io.Discard, io.Discard); code > 1 {
			b.Fatalf("exit %d", code)
		}
	}
}
