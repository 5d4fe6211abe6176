//go:build linux

package workspace

import (
	"bytes"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Stamp returns the stamp of the walked regular file f (what
// StampOf(f.Info()) gives), stat-ed relative to its open parent directory
// without following a symlink, and refuses it as Read would (in a walk of
// a workspace, a sensitive file under another name is a *PathError); ok
// is false when it cannot be stat-ed or is not a regular file. It does not
// allocate, for a search that stats every file of a tree instead of
// reading it.
func (f *File) Stamp() (st Stamp, ok bool, err error) {
	if f.dir == nil || f.link != nil {
		return f.stampInfo()
	}
	var sys unix.Stat_t
	f.dir.mu.RLock()
	if f.dir.closed || f.dir.fd < 0 {
		f.dir.mu.RUnlock()
		return f.stampInfo()
	}
	serr := unix.Fstatat(f.dir.fd, f.Name, &sys, unix.AT_SYMLINK_NOFOLLOW)
	f.dir.mu.RUnlock()
	if serr != nil || sys.Mode&unix.S_IFMT != unix.S_IFREG {
		return Stamp{}, false, nil
	}
	if f.w != nil && f.w.check != nil {
		if err := f.w.check(f.Path, statFromUnix(&sys)); err != nil {
			return Stamp{}, false, err
		}
	}
	st, _ = sysStamp(&sys)
	return st, true, nil
}

// mountsBelow reports whether a mount point lies below the folder dir (a
// real path), or whether the mount table cannot be read.
func mountsBelow(dir string) bool {
	data := mounts.table()
	if len(data) == 0 {
		return true
	}
	prefix := strings.TrimSuffix(dir, "/") + "/"
	for line := range bytes.Lines(data) {
		// ID, parent ID, major:minor, root, mount point, ...
		fields := bytes.Fields(line)
		if len(fields) < 5 {
			return true
		}
		if strings.HasPrefix(unescapeMount(fields[4]), prefix) {
			return true
		}
	}
	return false
}

// mounts is the process's mount table, read again only when it changed:
// the kernel marks /proc/self/mountinfo, held open, with POLLPRI after
// each mount or unmount in the namespace (the way libmount's monitor
// watches it). Every grep that resolves a folder asks (soleTree); reading
// the table each time was about 70 µs with twenty mounts, and grows with
// them.
var mounts = mountTable{fd: -1}

// mountTable's fd is a raw descriptor, not an *os.File: Go's poller would
// register an *os.File of a pollable file with epoll, whose own polls of
// it take the change mark before ours.
type mountTable struct {
	mu   sync.Mutex
	fd   int // -1 until the first read, or when it cannot be polled
	data []byte
}

// table returns the mount table as the kernel has it now (nil when it
// cannot be read).
func (m *mountTable) table() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fd >= 0 {
		if !changed(m.fd) {
			return m.data
		}
		unix.Close(m.fd)
		m.fd = -1
	}
	fd, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	// A poll right after the open marks the table's present state seen
	// (whether or not the open did); the table is read after it, so any
	// change from then on, during the read too, is reported by the next.
	changed(fd)
	data, err := readFd(fd, "/proc/self/mountinfo", nil, 0, nil)
	if err != nil || len(data) == 0 {
		unix.Close(fd)
		return nil
	}
	m.fd, m.data = fd, data
	return data
}

// changed reports whether the mount table of the open mountinfo fd
// changed since the last poll of it (or the poll failed).
func changed(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLPRI}}
	for {
		n, err := unix.Poll(fds, 0)
		if err == unix.EINTR {
			continue
		}
		return err != nil || n != 0
	}
}

// unescapeMount undoes the octal escapes (\040 for a space) of a path in
// the mount table.
func unescapeMount(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' && i+3 < len(b) && isOctal(b[i+1]) && isOctal(b[i+2]) && isOctal(b[i+3]) {
			out = append(out, (b[i+1]-'0')<<6|(b[i+2]-'0')<<3|(b[i+3]-'0'))
			i += 3
			continue
		}
		out = append(out, b[i])
	}
	return string(out)
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
