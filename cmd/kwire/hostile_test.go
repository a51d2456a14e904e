package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPcapHostileUnderMemoryLimit runs kwire pcap, limited to 1 GB of address space
// (ulimit -v 1000000), on each crafted capture of testdata/hostile (made by
// internal/capture's TestHostileCaptures): 4 GB snapshot lengths, packet records and
// blocks whose lengths lie, thousands of interfaces and sections. Each gives its
// frames, or its frames and a clear error (exit 3), and never dies of memory: a reader
// that sized a buffer by what a header claims gets a fatal "out of memory" here.
//
// The command is built as make kwire builds it, with GOEXPERIMENT=norandomizedheapbase64
// (kwire.mk says why: with Go 1.26's randomized heap base about 1 start in 20 of any Go
// program fails under this limit, before kwire reads a byte). Each file is read three
// times.
func TestPcapHostileUnderMemoryLimit(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to set the limit with")
	}
	files, err := filepath.Glob("testdata/hostile/*")
	if err != nil || len(files) < 10 {
		t.Fatalf("crafted captures: %v, %d files", err, len(files))
	}
	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	self := filepath.Join(t.TempDir(), "kwire")
	build := exec.Command(goCmd, "build", "-o", self, ".")
	build.Env = append(os.Environ(), "GOEXPERIMENT="+kwireGoExperiment)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// What each file holds: its request frames, and whether reading it ends in an error.
	frames := map[string]int{"snaplen-4g-100-bytes.pcap": 0, "packet-length-in-first.pcap": 0}
	failing := map[string]bool{"packet-length-4g.pcap": true, "packet-length-in-first.pcap": true,
		"block-length-4g.pcapng": true, "block-length-odd.pcapng": true, "captured-length-lies.pcapng": true}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			for range 3 {
				readUnderLimit(t, self, file, frames, failing)
			}
		})
	}
}

// kwireGoExperiment is what kwire.mk builds the command with.
const kwireGoExperiment = "norandomizedheapbase64"

// readUnderLimit runs the command self on file under the limit and checks its exit,
// its error and its lines.
func readUnderLimit(t *testing.T, self, file string, frames map[string]int, failing map[string]bool) {
	t.Helper()
	name := filepath.Base(file)
	cmd := exec.Command("sh", "-c", `ulimit -v 1000000 && exec "$0" "$@"`, self, "pcap", file)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if strings.Contains(stderr.String(), "out of memory") || strings.Contains(stderr.String(), "fatal error") || strings.Contains(stderr.String(), "panic") {
		t.Fatalf("kwire pcap died: %v\n%s", err, stderr.String())
	}
	want := 0
	if failing[name] {
		want = exitInput
		if !strings.Contains(stderr.String(), "kwire: "+file+": reading packet ") {
			t.Errorf("stderr %q: want the error naming the file and the packet", stderr.String())
		}
	}
	if code != want {
		t.Errorf("exit %d, want %d; stderr %s", code, want, stderr.String())
	}
	n, ok := frames[name]
	if !ok {
		n = 1
	}
	if got := strings.Count(stdout.String(), "\n"); got != n {
		t.Errorf("%d lines, want %d:\n%s", got, n, stdout.String())
	}
}
