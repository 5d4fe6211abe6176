//go:build unix

package attach

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process of this pid runs (signal 0: one
// of another user's answers EPERM, and runs).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
