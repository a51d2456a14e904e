//go:build !linux

package broker

import "syscall"

// sysProcAttr has no parent-death signal outside Linux: a broker whose Go process is
// killed before Stop keeps running there.
func sysProcAttr() *syscall.SysProcAttr { return nil }
