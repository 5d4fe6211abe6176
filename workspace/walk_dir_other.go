//go:build !linux

package workspace

import "os"

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
	return &dirHandle{fd: -1}, entries, nil
}

// readFileAt is not used without openat: dirHandle.fd is always -1.
func readFileAt(dirfd int, name, path string, buf []byte, max int64) ([]byte, error) {
	return readFileRaw(path, buf, max)
}

func closeFd(fd int) {}
