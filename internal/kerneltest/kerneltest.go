// Package kerneltest holds what the tests of kwire's WebAssembly kernels share: how
// long a kernel's differential fuzz loop runs, and whether the test binary was asked
// to run benchmarks (the hooks that check every kernel call against its plain-Go twin
// stay off then, so that they are not timed).
package kerneltest

import (
	"os"
	"strings"
	"testing"
	"time"
)

// FuzzTime is how long a kernel's fuzz loop runs: KWIRE_KERNEL_FUZZTIME (a Go
// duration), or def when it is not set.
func FuzzTime(t testing.TB, def time.Duration) time.Duration {
	s := os.Getenv("KWIRE_KERNEL_FUZZTIME")
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("KWIRE_KERNEL_FUZZTIME: %v", err)
	}
	return d
}

// Benchmarking reports whether the test binary's arguments ask for benchmarks
// (-test.bench with a pattern, in either form).
func Benchmarking() bool {
	args := os.Args[1:]
	for i, a := range args {
		a = strings.TrimLeft(a, "-")
		if v, ok := strings.CutPrefix(a, "test.bench="); ok && v != "" {
			return true
		}
		if a == "test.bench" && i+1 < len(args) && args[i+1] != "" {
			return true
		}
	}
	return false
}
