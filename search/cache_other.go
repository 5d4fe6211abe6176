//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package search

import "os"

// stampOf returns the stat data of the file at path: size and mtime.
func stampOf(path string) (fileStamp, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return fileStamp{}, false
	}
	return fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}, true
}
