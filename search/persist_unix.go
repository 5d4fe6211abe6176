//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package search

import (
	"os"
	"syscall"
)

// openNoFollow makes an open fail on a symlink.
const openNoFollow = syscall.O_NOFOLLOW

// ownedPrivate reports whether fi is owned by this process's user and
// neither its group nor others have any permission on it.
func ownedPrivate(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid() && fi.Mode().Perm()&0o077 == 0 && fi.Mode()&os.ModeSymlink == 0
}
