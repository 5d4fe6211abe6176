package attach

import "os"

// processAlive reports whether a process of this pid runs: on Windows,
// FindProcess opens it, and fails when there is none.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
