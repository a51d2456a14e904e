package broker

import "syscall"

// sysProcAttr makes the kernel kill a child when the thread that started it exits, so a
// broker dies with a Go process that is killed before it can call Stop.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
