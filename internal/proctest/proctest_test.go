package proctest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"testing"
	"time"
)

// TestMain makes the test binary its own child: with PROCTEST_CHILD set it prints a
// line, then exits 0 on SIGINT, or at once with the status PROCTEST_CHILD names.
func TestMain(m *testing.M) {
	switch os.Getenv("PROCTEST_CHILD") {
	case "":
		os.Exit(m.Run())
	case "wait":
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt)
		fmt.Fprintln(os.Stderr, "ready")
		fmt.Println("out")
		<-c
		os.Exit(0)
	default:
		fmt.Fprintln(os.Stderr, "failing")
		os.Exit(3)
	}
}

func child(t *testing.T, mode string) *Proc {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), "PROCTEST_CHILD="+mode)
	return Start(t, cmd)
}

func TestAwaitAndInterrupt(t *testing.T) {
	p := child(t, "wait")
	ready := func() bool { return strings.Contains(p.Stderr.String(), "ready") }
	if err := p.Await(ready, time.Minute); err != nil {
		t.Fatalf("%v: %s", err, p.Stderr)
	}
	if p.Err() != nil {
		t.Fatal(p.Err())
	}
	if err := p.Interrupt(time.Minute); err != nil {
		t.Fatalf("after SIGINT: %v", err)
	}
	if p.Stdout.String() != "out\n" {
		t.Errorf("stdout %q", p.Stdout)
	}
}

func TestAwaitExit(t *testing.T) {
	p := child(t, "fail")
	err := p.Await(func() bool { return false }, time.Minute)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("Await = %v, want the exit status 3", err)
	}
	if !strings.Contains(p.Stderr.String(), "failing") {
		t.Errorf("stderr %q", p.Stderr)
	}
}
