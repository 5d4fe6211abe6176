//go:build linux

package workspace

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The walk's system calls on files and directories that are already
// known (open, fstat, read, getdents, close) are made raw: without telling
// the scheduler, which otherwise watches each one and, when one lasts over
// its 20 µs tick, hands the goroutine's processor to another thread (a
// search of thousands of files then costs more in waking threads than in
// the calls). They do not block for long: files are opened O_NONBLOCK and
// read only when regular, and directories are local listings. A raw call
// holds its processor while it runs, as a computation would.

func rawErr(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// sysOpenat is openat(2) relative to dirfd.
func sysOpenat(dirfd int, name string, flags int) (int, error) {
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return -1, err
	}
	r, _, e := syscall.RawSyscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(flags), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

// sysRead is read(2).
func sysRead(fd int, b []byte) (int, error) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	r, _, e := syscall.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(p), uintptr(len(b)))
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

// sysFstat is fstat(2).
func sysFstat(fd int, st *unix.Stat_t) error {
	_, _, e := syscall.RawSyscall(unix.SYS_FSTAT, uintptr(fd), uintptr(unsafe.Pointer(st)), 0)
	return rawErr(e)
}

// sysGetdents is getdents64(2).
func sysGetdents(fd int, b []byte) (int, error) {
	r, _, e := syscall.RawSyscall(unix.SYS_GETDENTS64, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

// sysClose is close(2).
func sysClose(fd int) {
	syscall.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
}
