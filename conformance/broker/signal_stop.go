//go:build unix || wasip1

package broker

import (
	"os"
	"syscall"
)

// sigStop and sigCont pause and resume the broker process (Pause, Continue).
var sigStop, sigCont os.Signal = syscall.SIGSTOP, syscall.SIGCONT
