//go:build linux

package workspace

import "golang.org/x/sys/unix"

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
	if f.w != nil && f.w.ws != nil {
		if err := f.w.ws.checkStat(f.Path, statFromUnix(&sys), true); err != nil {
			return Stamp{}, false, err
		}
	}
	st, _ = sysStamp(&sys)
	return st, true, nil
}
