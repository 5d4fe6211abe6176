//go:build unix && !linux

package workspace

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// The system calls of walk_raw_linux.go, through the scheduler.

func sysRead(fd int, b []byte) (int, error)  { return syscall.Read(fd, b) }
func sysFstat(fd int, st *unix.Stat_t) error { return unix.Fstat(fd, st) }
