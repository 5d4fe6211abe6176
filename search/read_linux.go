package search

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/agentls/agentls/workspace"
	"golang.org/x/sys/unix"
)

// readBeneathRoot reads the file rel below the open root dir into buf
// (grown as needed), refusing files over max with workspace.ErrTooLarge.
// It resolves rel beneath root without following any symlink (openat2's
// RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS) and reads regular files only;
// where openat2 is missing it reads through the workspace.
func readBeneathRoot(ws *workspace.Workspace, root *os.File, rootPath, rel string, buf []byte, max int64) ([]byte, error) {
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	fd, err := openat2(int(root.Fd()), rel, &how)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		return ws.ReadLimited(filepath.Join(rootPath, filepath.FromSlash(rel)), buf, max)
	}
	if err != nil {
		return buf[:0], &os.PathError{Op: "open", Path: rel, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return buf[:0], err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return buf[:0], &os.PathError{Op: "read", Path: rel, Err: unix.EINVAL}
	}
	if max > 0 && st.Size > max {
		return buf[:0], workspace.ErrTooLarge
	}
	size := int(st.Size) + 1
	if cap(buf) < size {
		buf = make([]byte, 0, size+size/4)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		want := cap(buf) - len(buf)
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return buf[:0], err
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
		if max > 0 && int64(len(buf)) > max {
			return buf[:0], workspace.ErrTooLarge
		}
		if n < want && int64(len(buf)) >= st.Size {
			// Short, and all the stat said is read: the end, without
			// one more read to hear it (a system call less a file).
			break
		}
	}
	return buf, nil
}

// openat2 is unix.Openat2, retried on EINTR and EAGAIN, without
// allocating the C string of a path that fits a buffer on the stack (one
// call a file read).
func openat2(dirfd int, path string, how *unix.OpenHow) (int, error) {
	var short [256]byte
	var p []byte
	switch {
	case strings.IndexByte(path, 0) >= 0:
		return -1, unix.EINVAL
	case len(path) < len(short):
		p = short[:len(path)+1]
		copy(p, path)
		p[len(path)] = 0
	default:
		p = append([]byte(path), 0)
	}
	for {
		fd, _, errno := unix.Syscall6(unix.SYS_OPENAT2, uintptr(dirfd), uintptr(unsafe.Pointer(&p[0])), uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how), 0, 0)
		switch errno {
		case 0:
			return int(fd), nil
		case unix.EINTR, unix.EAGAIN:
			continue
		}
		return -1, errno
	}
}
