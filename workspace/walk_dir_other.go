//go:build !linux

package workspace

import (
	"errors"
	"io/fs"
	"os"
)

// openDir lists a directory with os.ReadDir; files are then opened by path.
func openDir(path string) (*dirHandle, []dirEntry, error) {
	list, err := os.ReadDir(path)
	if err != nil && len(list) == 0 {
		return nil, nil, err
	}
	entries := make([]dirEntry, len(list))
	for i, e := range list {
		entries[i] = dirEntry{name: e.Name(), typ: e.Type()}
	}
	return newDirHandle(-1), entries, nil
}

// openDirAt lists a directory by its path: without getdents and openat
// here, a walk is not protected from a directory swapped for a symlink.
func openDirAt(parent *dirHandle, name, path string) (*dirHandle, []dirEntry, error) {
	return openDir(path)
}

func lstatAt(dirfd int, name, path string) (fs.FileInfo, error) { return os.Lstat(path) }

// readFileAt is not used without openat: dirHandle.fd is always -1.
func readFileAt(dirfd int, name, path string, buf []byte, max int64, check idCheck) ([]byte, error) {
	return readFileRaw(path, buf, max, check)
}

func closeFd(fd int) {}

func readlinkIn(dirfd int, name string) (string, error) {
	return "", errors.New("readlink relative to a directory is not supported here")
}

// openDirFile lists the directory f was opened on, by its path.
func openDirFile(f *os.File, path string) (*dirHandle, []dirEntry, error) {
	f.Close()
	return openDir(path)
}
