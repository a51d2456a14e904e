//go:build !unix && !wasip1

package broker

import "os"

// sigStop and sigCont are nil where the syscall package has no job-control signals
// (GOOS=js, Windows): os.Process.Signal refuses a nil signal, so Pause and Continue
// fail there and kill and Stop go straight to their own signals. Only the package
// builds for those ports; it starts no broker there.
var sigStop, sigCont os.Signal
