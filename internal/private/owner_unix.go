//go:build unix

package private

import (
	"io/fs"
	"syscall"
)

// noFollow makes an open fail on a symlink.
const noFollow = syscall.O_NOFOLLOW

// Owner returns the uid that owns fi, when the system says.
func Owner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, false
	}
	return int(st.Uid), true
}
