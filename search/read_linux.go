package search

import (
	"errors"
	"os"
	"path/filepath"

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
	var fd int
	var err error
	for {
		fd, err = unix.Openat2(int(root.Fd()), rel, &how)
		if err != unix.EINTR && err != unix.EAGAIN {
			break
		}
	}
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
