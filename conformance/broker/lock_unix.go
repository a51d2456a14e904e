//go:build unix

package broker

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on path (created when missing), blocking until it is
// free, and returns the function that releases it. Processes that fetch the jars at the
// same time (go test runs packages in parallel) wait for each other.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
