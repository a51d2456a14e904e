package broker

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// sysProcAttr makes the kernel kill a child when the thread that started it exits, so a
// broker dies with a Go process that is killed before it can call Stop. The child gets a
// process group of its own: a Ctrl-C at the terminal reaches the Go process only, which
// then stops the broker in order (Stop) instead of racing the broker's own shutdown.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// processGone reports whether no process has the given pid.
func processGone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// waitStopped waits (up to 5 s) until every thread of process pid is stopped, so that a
// paused broker answers nothing from the moment Pause returns.
func waitStopped(pid int) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		running := len(tasks) == 0
		for _, t := range tasks {
			data, err := os.ReadFile(t)
			if err != nil {
				continue // the thread ended
			}
			// pid (comm) state ...: the state follows the last ')'.
			if i := bytes.LastIndexByte(data, ')'); i < 0 || i+2 >= len(data) || (data[i+2] != 'T' && data[i+2] != 't') {
				running = true
				break
			}
		}
		if !running {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d not stopped 5 s after SIGSTOP", pid)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
