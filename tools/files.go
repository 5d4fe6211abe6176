package tools

import (
	"errors"
	"io/fs"
	"os"
)

// readsKey holds, per absolute path, the hash of what the model last read.
var readsKey = NewKey[map[string]string]("reads")

// RecordRead remembers the hash of what the model read of path.
func RecordRead(s *Session, path, hash string) {
	Update(s, readsKey, func(m map[string]string, ok bool) map[string]string {
		cp := make(map[string]string, len(m)+1)
		for k, v := range m {
			cp[k] = v
		}
		cp[path] = hash
		return cp
	})
}

// LastRead returns the hash of what the model last read of path.
func LastRead(s *Session, path string) (string, bool) {
	m, _ := Get(s, readsKey)
	h, ok := m[path]
	return h, ok
}

// fileError maps an os error about path to the code the model sees.
func fileError(rel string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Errorf(FileNotFound, "%s does not exist", rel)
	case errors.Is(err, fs.ErrPermission):
		return Errorf(PermissionDenied, "%s: permission denied", rel)
	}
	return err
}

// statFile checks that path is a regular file.
func statFile(rel, path string) (os.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fileError(rel, err)
	}
	if fi.IsDir() {
		return nil, Errorf(NotAFile, "%s is a directory; use list_directory", rel)
	}
	if !fi.Mode().IsRegular() {
		return nil, Errorf(NotAFile, "%s is not a regular file", rel)
	}
	return fi, nil
}
