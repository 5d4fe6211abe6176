//go:build linux

package workspace

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"unsafe"
)

// openDir opens a directory and lists it with getdents64, which gives each
// entry's type without a stat (os.ReadDir adds fcntl and poller calls per
// directory). The caller closes the handle.
func openDir(path string) (*dirHandle, []dirEntry, error) {
	fd, err := openRetry(func() (int, error) {
		return syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	var entries []dirEntry
	buf := make([]byte, 32<<10)
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
		entries = parseDirents(buf[:n], path, entries)
	}
	return &dirHandle{fd: fd}, entries, nil
}

// parseDirents appends the entries of a getdents64 buffer (struct
// linux_dirent64: ino u64, off i64, reclen u16, type u8, name).
func parseDirents(buf []byte, dir string, out []dirEntry) []dirEntry {
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
			fi, err := os.Lstat(dir + "/" + string(name))
			if err != nil {
				continue
			}
			typ = fi.Mode().Type()
		}
		out = append(out, dirEntry{name: string(name), typ: typ})
	}
	return out
}

// readFileAt reads name in the open directory dirfd (path is for errors).
func readFileAt(dirfd int, name, path string, buf []byte, max int64) ([]byte, error) {
	fd, err := openRetry(func() (int, error) {
		return syscall.Openat(dirfd, name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		return buf[:0], fmt.Errorf("open %s: %w", path, err)
	}
	defer syscall.Close(fd)
	return readFd(fd, path, buf, max)
}

func closeFd(fd int) { syscall.Close(fd) }
