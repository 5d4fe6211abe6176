//go:build unix

package redact

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process used so far (user and system): on a
// shared machine the benchmarks report it per op beside the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
