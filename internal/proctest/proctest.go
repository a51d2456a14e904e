// Package proctest runs a command under test as a child process: it keeps the child's
// output where the test can read it while the child writes, waits until the child is
// ready or has exited, stops it with SIGINT, and kills it when the test ends.
package proctest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Buffer is output that one goroutine writes while another reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Bytes is a copy of everything written so far.
func (b *Buffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.b.Bytes())
}

// Proc is a started child process.
type Proc struct {
	Cmd            *exec.Cmd
	Stdout, Stderr *Buffer
	exited         chan struct{}
	err            error
}

// Start starts cmd with its stdout and stderr going to Buffers. If the child still
// runs when the test ends, it is killed.
func Start(t testing.TB, cmd *exec.Cmd) *Proc {
	t.Helper()
	p := &Proc{Cmd: cmd, Stdout: &Buffer{}, Stderr: &Buffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.Stdout, p.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// Exited is closed once the child has exited; Err is then its exit.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Err is what waiting for the child returned (an *exec.ExitError for a non-zero
// status); nil while it runs.
func (p *Proc) Err() error {
	select {
	case <-p.exited:
		return p.err
	default:
		return nil
	}
}

// Await checks ready every 50 ms until it holds (nil), the child exits (an error
// wrapping the child's exit), or timeout passes.
func (p *Proc) Await(ready func() bool, timeout time.Duration) error {
	deadline := time.After(timeout)
	for !ready() {
		select {
		case <-p.exited:
			if ready() {
				return nil
			}
			if p.err == nil {
				return errors.New("the child exited with status 0")
			}
			return fmt.Errorf("the child exited: %w", p.err)
		case <-deadline:
			return fmt.Errorf("the child is not ready after %v", timeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// Interrupt sends the child SIGINT and waits up to timeout for it to exit: the
// child's exit (nil for status 0), or an error when it is still running.
func (p *Proc) Interrupt(timeout time.Duration) error {
	if err := p.Cmd.Process.Signal(os.Interrupt); err != nil {
		return err
	}
	select {
	case <-p.exited:
		return p.err
	case <-time.After(timeout):
		return fmt.Errorf("the child is still running %v after SIGINT", timeout)
	}
}
