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

// inputStamp is the stat data of path of any kind: size (its type for
// what is not a regular file) and mtime; the zero stamp when it cannot be
// stat-ed.
func inputStamp(path string) fileStamp {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileStamp{}
	}
	size := fi.Size()
	if !fi.Mode().IsRegular() {
		size = -int64(fi.Mode().Type()>>20) - 1
	}
	return fileStamp{size: size, mtime: fi.ModTime().UnixNano()}
}
