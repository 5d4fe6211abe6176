package tools

import (
	"os"
	"syscall"
)

// fileStamp is the stat data a file's content is vouched for by.
type fileStamp struct {
	size, mtime, ctime int64
	ino, dev           uint64
}

// stampOf returns the stamp of the stat fi, and false when fi is not a
// regular file's stat with inode and ctime.
func stampOf(fi os.FileInfo) (fileStamp, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() {
		return fileStamp{}, false
	}
	return fileStamp{
		size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(),
		ino: uint64(st.Ino), dev: uint64(st.Dev),
	}, true
}
