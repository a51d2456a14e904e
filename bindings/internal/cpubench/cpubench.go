//go:build unix

// Package cpubench holds what the bindings' native-Go benchmark commands (goabi,
// goscale, gorecords) share: the process's CPU time, how many calls fill a CPU budget,
// and the median and best of the samples. CPU time is the process's user + system time
// from getrusage, so the collector's work is counted; the commands run with GOMAXPROCS
// 1, as the WebAssembly module does. It is for Unix hosts only: the WebAssembly ports
// (and Windows) have no getrusage.
package cpubench

import (
	"fmt"
	"os"
	"sort"
	"syscall"
)

// Micros is the process's user + system CPU time so far, in µs.
func Micros() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		Fail(fmt.Errorf("getrusage: %w", err))
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e3
}

// Calls is how many calls of f take about budgetUs µs of CPU, judged by calling f for
// probeUs µs, and at least minProbe times.
func Calls(budgetUs, probeUs float64, minProbe int, f func()) int {
	c := Micros()
	n := 0
	for Micros()-c < probeUs || n < minProbe {
		f()
		n++
	}
	return max(1, int(float64(n)*budgetUs/(Micros()-c)))
}

// PerCall calls f n times and returns the CPU µs per call.
func PerCall(n int, f func()) float64 {
	c := Micros()
	for i := 0; i < n; i++ {
		f()
	}
	return (Micros() - c) / float64(n)
}

// MedianBest sorts s and returns its median and its least value.
func MedianBest(s []float64) (median, best float64) {
	sort.Float64s(s)
	return s[len(s)/2], s[0]
}

// Fail prints err on standard error and exits with status 1.
func Fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
