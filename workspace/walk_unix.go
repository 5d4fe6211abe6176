//go:build unix

package workspace

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// readFileRaw reads path into buf with open/fstat/read system calls (os.Open
// adds fcntl and poller calls per file, which a search of thousands of
// files feels). max > 0 refuses larger files with ErrTooLarge.
func readFileRaw(path string, buf []byte, max int64, check idCheck) ([]byte, error) {
	fd, err := openRetry(func() (int, error) {
		return syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		return buf[:0], fmt.Errorf("open %s: %w", path, err)
	}
	defer syscall.Close(fd)
	return readFd(fd, path, buf, max, check)
}

func openRetry(open func() (int, error)) (int, error) {
	for {
		fd, err := open()
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// readFd reads an open file to its end into buf (grown as needed:
// bufferSize), once check (when set) accepts the file.
func readFd(fd int, path string, buf []byte, max int64, check idCheck) ([]byte, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return buf[:0], fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return buf[:0], fmt.Errorf("read %s: not a regular file", path)
	}
	if check != nil {
		if err := check(path, statFromUnix(&st)); err != nil {
			return buf[:0], err
		}
	}
	size := st.Size
	if max > 0 && size > max {
		return buf[:0], ErrTooLarge
	}
	if int64(cap(buf)) < size+1 {
		buf = make([]byte, 0, bufferSize(size, int64(cap(buf)), max))
	}
	buf = buf[:cap(buf)]
	n := 0
	for {
		if n == len(buf) {
			if max > 0 && int64(n) > max {
				return buf[:0], ErrTooLarge
			}
			nb := make([]byte, 2*len(buf)+4096)
			copy(nb, buf[:n])
			buf = nb
		}
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return buf[:0], fmt.Errorf("read %s: %w", path, err)
		}
		if m == 0 {
			break
		}
		n += m
		if int64(n) == size && size > 0 {
			// The size fstat gave: skip the read that would only say EOF.
			break
		}
	}
	return buf[:n], nil
}
