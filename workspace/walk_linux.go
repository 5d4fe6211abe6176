//go:build linux

package workspace

import (
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openDir opens a directory by its path (the walk's root) and lists it.
func openDir(path string) (*dirHandle, []dirEntry, error) {
	fd, err := openRetry(func() (int, error) {
		return syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	return listDir(fd, path)
}

// openDirAt opens the directory name in the open directory parent without
// following a symlink (a directory swapped for a link since it was listed
// is refused, so a walk never leaves its tree), and lists it.
func openDirAt(parent *dirHandle, name, path string) (*dirHandle, []dirEntry, error) {
	parent.mu.RLock()
	if parent.closed || parent.fd < 0 {
		parent.mu.RUnlock()
		return nil, nil, fmt.Errorf("open %s: parent directory closed", path)
	}
	fd, err := openRetry(func() (int, error) {
		return syscall.Openat(parent.fd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	})
	parent.mu.RUnlock()
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	return listDir(fd, path)
}

// listDir lists the open directory fd with getdents64, which gives each
// entry's type without a stat (os.ReadDir adds fcntl and poller calls per
// directory), and returns its handle, which owns fd.
func listDir(fd int, path string) (*dirHandle, []dirEntry, error) {
	var entries []dirEntry
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			syscall.Close(fd)
			return nil, nil, fmt.Errorf("read directory %s: %w", path, err)
		}
		if n <= 0 {
			break
		}
		entries = parseDirents(buf[:n], fd, path, entries)
	}
	return newDirHandle(fd), entries, nil
}

// direntBufs are listDir's buffers: a walk lists thousands of directories,
// and a buffer for each would be most of what it allocates.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// parseDirents appends the entries of a getdents64 buffer (struct
// linux_dirent64: ino u64, off i64, reclen u16, type u8, name).
func parseDirents(buf []byte, dirfd int, dir string, out []dirEntry) []dirEntry {
	for len(buf) >= 19 {
		reclen := int(*(*uint16)(unsafe.Pointer(&buf[16])))
		if reclen < 19 || reclen > len(buf) {
			break
		}
		rec := buf[:reclen]
		buf = buf[reclen:]
		if *(*uint64)(unsafe.Pointer(&rec[0])) == 0 {
			continue // a deleted entry
		}
		name := rec[19:]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		if len(name) == 0 || string(name) == "." || string(name) == ".." {
			continue
		}
		var typ fs.FileMode
		switch rec[18] {
		case syscall.DT_REG:
		case syscall.DT_DIR:
			typ = fs.ModeDir
		case syscall.DT_LNK:
			typ = fs.ModeSymlink
		case syscall.DT_FIFO:
			typ = fs.ModeNamedPipe
		case syscall.DT_SOCK:
			typ = fs.ModeSocket
		case syscall.DT_CHR:
			typ = fs.ModeDevice | fs.ModeCharDevice
		case syscall.DT_BLK:
			typ = fs.ModeDevice
		default: // DT_UNKNOWN: some file systems do not say
			var st unix.Stat_t
			if err := unix.Fstatat(dirfd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				continue
			}
			typ = newStatInfo(string(name), &st).Mode().Type()
		}
		out = append(out, dirEntry{name: string(name), typ: typ})
	}
	return out
}

// readFileAt reads name in the open directory dirfd (path is for errors),
// refusing a symlink (O_NOFOLLOW) and anything but a regular file.
func readFileAt(dirfd int, name, path string, buf []byte, max int64, check idCheck) ([]byte, error) {
	fd, err := openRetry(func() (int, error) {
		return syscall.Openat(dirfd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		return buf[:0], fmt.Errorf("open %s: %w", path, err)
	}
	defer syscall.Close(fd)
	return readFd(fd, path, buf, max, check)
}

func closeFd(fd int) { syscall.Close(fd) }

// lstatAt returns the file info of name in the open directory dirfd,
// without following a symlink.
func lstatAt(dirfd int, name, path string) (fs.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	return newStatInfo(path, &st), nil
}

func readlinkIn(dirfd int, name string) (string, error) { return readlinkAt(dirfd, name) }

// openDirFile lists the open directory f (which it closes) by a duplicate of
// its descriptor.
func openDirFile(f *os.File, path string) (*dirHandle, []dirEntry, error) {
	defer f.Close()
	sc, err := f.SyscallConn()
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	fd, derr := -1, error(nil)
	if err := sc.Control(func(raw uintptr) {
		fd, derr = unix.FcntlInt(raw, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	if derr != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, derr)
	}
	return listDir(fd, path)
}
