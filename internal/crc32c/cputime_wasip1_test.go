//go:build wasip1

package crc32c

import (
	"os"
	"strconv"
	"strings"
)

// clockTimeGet is WASI's clock_time_get; clock 2 is the process's CPU time.
//
//go:wasmimport wasi_snapshot_preview1 clock_time_get
//go:noescape
func clockTimeGet(id uint32, precision uint64, time *uint64) uint32

// cpuNanos is the CPU time the host process has used: WASI's process clock
// where the host has it (Node), else the run time of the host's threads from
// Linux's /proc, where the host lets the module see it (wazero run
// -mount=/:/), else 0.
func cpuNanos() int64 {
	var t uint64
	if clockTimeGet(2, 1, &t) == 0 {
		return int64(t)
	}
	return procNanos()
}

// procNanos sums the first field of /proc/self/task/*/schedstat, each
// thread's time on a CPU in nanoseconds; 0 if that cannot be read.
func procNanos() int64 {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0
	}
	var sum int64
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/schedstat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			sum += n
		}
	}
	return sum
}
