//go:build unix

package gateway

import (
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Staging folders left by a process that died (a crash, SIGKILL, an OOM
// kill) are never removed by their owner's Close. Each folder holds
// spillOwnerFile, locked (flock) by its owner for as long as it lives; the
// kernel drops the lock when the owner dies, however it dies. A gateway
// making its own folder removes every sibling whose lock it can take: its
// owner is gone. Several serves (and tests) sharing one temporary folder
// never remove each other's: a live owner's lock is held.

// youngSpillDir is how old a folder without a lock file must be before it
// is swept: one just made by another process may not have its lock yet.
const youngSpillDir = time.Minute

// holdSpillDir locks dir's owner file for the life of the gateway; the
// returned file is closed (releasing the lock) by Close.
func holdSpillDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, spillOwnerFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// sweepSpillDirs removes the staging folders under base, other than own,
// whose owner has died, and says how many it removed.
func sweepSpillDirs(base, own string) int {
	if base == "" {
		base = os.TempDir()
	}
	matches, _ := filepath.Glob(filepath.Join(base, "sandbox-spill-*"))
	removed := 0
	for _, dir := range matches {
		if dir == own {
			continue
		}
		if info, err := os.Lstat(dir); err != nil || !info.IsDir() {
			continue // a symlink or a file by that name is not ours to follow
		}
		f, err := os.OpenFile(filepath.Join(dir, spillOwnerFile), os.O_RDWR, 0)
		if err != nil {
			// No lock file: a folder from before there was one, or one
			// whose owner is between making it and locking it.
			if info, err := os.Stat(dir); err == nil && time.Since(info.ModTime()) > youngSpillDir {
				if os.RemoveAll(dir) == nil {
					removed++
				}
			}
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			if os.RemoveAll(dir) == nil {
				removed++
			}
		}
		f.Close()
	}
	return removed
}
