//go:build linux

package workspace

import (
	"bytes"
	"os"
	"strings"

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
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil || len(data) == 0 {
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
