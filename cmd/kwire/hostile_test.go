package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPcapHostileUnderMemoryLimit runs kwire pcap, in a child process limited to 1 GB
// of address space (ulimit -v 1000000), on each crafted capture of testdata/hostile
// (made by internal/capture's TestHostileCaptures): 4 GB snapshot lengths, packet
// records and blocks whose lengths lie, thousands of interfaces and sections. Each
// gives its frames, or its frames and a clear error (exit 3), and never dies of
// memory: a reader that sized a buffer by what a header claims gets a fatal "out of
// memory" here.
func TestPcapHostileUnderMemoryLimit(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to set the limit with")
	}
	files, err := filepath.Glob("testdata/hostile/*")
	if err != nil || len(files) < 10 {
		t.Fatalf("crafted captures: %v, %d files", err, len(files))
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// What each file holds: its request frames, and whether reading it ends in an error.
	frames := map[string]int{"snaplen-4g-100-bytes.pcap": 0, "packet-length-in-first.pcap": 0}
	failing := map[string]bool{"packet-length-4g.pcap": true, "packet-length-in-first.pcap": true,
		"block-length-4g.pcapng": true, "block-length-odd.pcapng": true, "captured-length-lies.pcapng": true}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", `ulimit -v 1000000 && exec "$0" "$@"`, self, "pcap", file)
			cmd.Env = append(os.Environ(), "KWIRE_TEST_MAIN=1", "GOMAXPROCS=1")
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
		})
	}
}
