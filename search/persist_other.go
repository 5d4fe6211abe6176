//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package search

import "os"

// ownedPrivate reports false: without Unix owners the on-disk copies are
// not used.
func ownedPrivate(fi os.FileInfo) bool { return false }

const openNoFollow = 0
