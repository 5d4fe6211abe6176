package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// readRecord is what the model last saw of a file: the hash of the whole
// content, and the text itself when small enough to say later what changed.
type readRecord struct {
	Hash string
	Text *string
}

// maxRememberedText bounds the text kept per read file.
const maxRememberedText = 1 << 20

// RecordRead remembers that the model has seen content of path (the whole
// file): its hash, and the text when small.
func RecordRead(s *Session, path, content string) {
	rec := readRecord{Hash: hashText(content)}
	if len(content) <= maxRememberedText {
		rec.Text = &content
	}
	recordRead(s, path, rec)
}

func recordRead(s *Session, path string, rec readRecord) {
	s.readsMu.Lock()
	defer s.readsMu.Unlock()
	s.reads[path] = rec
}

// LastRead returns the hash of what the model last read of path.
func LastRead(s *Session, path string) (string, bool) {
	r, ok := lastRead(s, path)
	return r.Hash, ok
}

func lastRead(s *Session, path string) (readRecord, bool) {
	s.readsMu.Lock()
	defer s.readsMu.Unlock()
	r, ok := s.reads[path]
	return r, ok
}

func hashText(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// fileError maps an os error about path to the code the model sees.
func fileError(rel string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Errorf(FileNotFound, "%s does not exist", rel)
	case errors.Is(err, fs.ErrPermission):
		return Errorf(PermissionDenied, "%s: permission denied", rel)
	case errors.Is(err, syscall.ELOOP):
		// The confined open met a symlink where the path was resolved
		// without one: it changed during the call, or is a loop.
		return Errorf(InvalidPath, "%s: a component of the path is (or just became) a symlink that cannot be followed", rel)
	}
	return err
}

// statFile checks that path is a regular file.
func statFile(c *Call, rel, path string) (os.FileInfo, error) {
	fi, err := c.Workspace.Stat(path)
	if err != nil {
		return nil, fileError(rel, err)
	}
	return checkRegular(rel, fi)
}

// checkRegular refuses a directory or a special file.
func checkRegular(rel string, fi os.FileInfo) (os.FileInfo, error) {
	if fi.IsDir() {
		return nil, Errorf(NotAFile, "%s is a directory; use list_directory", rel)
	}
	if !fi.Mode().IsRegular() {
		return nil, Errorf(NotAFile, "%s is not a regular file", rel)
	}
	return fi, nil
}
