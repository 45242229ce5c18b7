//go:build unix

package gateway

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on path (made if missing), so
// two processes (a `sandbox login` and a running serve renewing a token)
// do not interleave their read-modify-write of a state file.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
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
