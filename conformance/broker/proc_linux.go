package broker

import (
	"errors"
	"syscall"
)

// sysProcAttr makes the kernel kill a child when the thread that started it exits, so a
// broker dies with a Go process that is killed before it can call Stop.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// processGone reports whether no process has the given pid.
func processGone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }
