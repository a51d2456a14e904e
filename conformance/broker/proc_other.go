//go:build !linux

package broker

import "syscall"

// sysProcAttr has no parent-death signal outside Linux: a broker whose Go process is
// killed before Stop keeps running there.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// processGone cannot tell outside Linux: it keeps every directory.
func processGone(pid int) bool { return false }

// waitStopped cannot look at thread states outside Linux: it trusts the signal.
func waitStopped(pid int) error { return nil }
