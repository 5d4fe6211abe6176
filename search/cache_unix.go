//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package search

import "syscall"

// stampOf returns the stat data of the regular file at path (a symlink is
// not followed, as the index's reads do not): size, mtime, ctime, inode
// and device.
func stampOf(path string) (fileStamp, bool) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return fileStamp{}, false
	}
	return fileStamp{
		size: st.Size, mtime: statMtime(&st), ctime: statCtime(&st),
		ino: uint64(st.Ino), dev: uint64(st.Dev),
	}, true
}
