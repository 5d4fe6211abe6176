//go:build !unix

package process

import (
	"os"
	"syscall"
)

// ownGroup returns attr unchanged: process groups are a Unix notion, and
// there only the started process itself is ended.
func ownGroup(attr *syscall.SysProcAttr) *syscall.SysProcAttr { return attr }

// killGroup kills the process pgid (there are no process groups to signal).
func killGroup(pgid int, _ syscall.Signal) { killPid(pgid, syscall.SIGKILL) }

// groupExists reports false: the process is waited for directly.
func groupExists(int) bool { return false }

// killPid kills one process.
func killPid(pid int, _ syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// exitStatus returns the exit code.
func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	return ps.ExitCode(), ""
}

func sigName(s syscall.Signal) string { return s.String() }
