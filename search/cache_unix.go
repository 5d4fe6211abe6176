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

// inputStamp is the stat data of path of any kind (a symlink itself, not
// followed), with its type in the size's place for what is not a regular
// file; the zero stamp when it cannot be stat-ed (it does not exist).
func inputStamp(path string) fileStamp {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return fileStamp{}
	}
	size := st.Size
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		size = -int64(st.Mode & syscall.S_IFMT)
	}
	return fileStamp{size: size, mtime: statMtime(&st), ctime: statCtime(&st), ino: uint64(st.Ino), dev: uint64(st.Dev)}
}
