//go:build unix

package testenv

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time (user and system) the test process used so far:
// on a shared machine benchmarks report it per op beside the wall clock.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
