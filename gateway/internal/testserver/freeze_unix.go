//go:build unix

package testserver

import (
	"os"
	"syscall"
)

// freeze stops this process as a whole, like a server that hangs.
func freeze() { _ = syscall.Kill(os.Getpid(), syscall.SIGSTOP) }
