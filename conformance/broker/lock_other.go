//go:build !unix

package broker

import (
	"errors"
	"os"
	"time"
)

// lockFile takes an exclusive lock by creating path, waiting (up to ten minutes) while
// another process holds it.
func lockFile(path string) (func(), error) {
	for start := time.Now(); time.Since(start) < 10*time.Minute; time.Sleep(200 * time.Millisecond) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
	}
	return nil, errors.New("timed out waiting for the lock " + path)
}
