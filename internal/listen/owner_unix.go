//go:build unix

package listen

import (
	"io/fs"
	"syscall"
)

const noFollow = syscall.O_NOFOLLOW

// owner returns the uid that owns fi.
func owner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, false
	}
	return int(st.Uid), true
}
