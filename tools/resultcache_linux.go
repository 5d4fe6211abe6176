package tools

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// fileStamp is the stat data a file's content is vouched for by.
type fileStamp struct {
	size, mtime, ctime int64
	ino, dev           uint64
}

// stampOf returns the stamp of the stat fi (an open file's, or the
// workspace's confined Stat), and false when fi is not a regular file's
// stat with inode and ctime.
func stampOf(fi os.FileInfo) (fileStamp, bool) {
	if fi == nil || !fi.Mode().IsRegular() {
		return fileStamp{}, false
	}
	switch st := fi.Sys().(type) {
	case *syscall.Stat_t:
		return fileStamp{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: uint64(st.Ino), dev: uint64(st.Dev)}, true
	case *unix.Stat_t:
		return fileStamp{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: uint64(st.Ino), dev: uint64(st.Dev)}, true
	}
	return fileStamp{}, false
}
