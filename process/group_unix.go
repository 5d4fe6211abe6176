//go:build unix

package process

import (
	"os"
	"syscall"
)

// ownGroup returns attr (or new attributes) that start the process as the
// leader of its own process group.
func ownGroup(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	attr.Setpgid, attr.Pgid = true, 0
	return attr
}

// killGroup signals the process group pgid.
func killGroup(pgid int, sig syscall.Signal) { _ = syscall.Kill(-pgid, sig) }

// groupExists reports whether a process (zombies included) is left in the
// process group pgid.
func groupExists(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }

// killPid signals one process.
func killPid(pid int, sig syscall.Signal) { _ = syscall.Kill(pid, sig) }

// exitStatus returns the exit code (128+n for a signal, like a shell) and
// the signal's name.
func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), sigName(ws.Signal())
	}
	return ps.ExitCode(), ""
}

func sigName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGXCPU:
		return "SIGXCPU"
	case syscall.SIGXFSZ:
		return "SIGXFSZ"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	}
	return s.String()
}
