// Package private checks that a file or a folder is the user's own and
// nobody else's before agentls trusts what it holds or puts something
// there: the runtime directory of sessions and tokens, token files, session
// descriptors, the search index's copies. Neither a symlink, another
// user's file nor one others may use passes. Where the system says
// nothing of owners (not Unix), every check refuses.
package private

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Dir reports whether dir is a directory (not a symlink) of the user's
// whose mode has none of the bits in forbidden.
func Dir(dir string, forbidden fs.FileMode) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (a symlink is refused)", dir)
	}
	if err := owned(dir, fi); err != nil {
		return err
	}
	if fi.Mode().Perm()&forbidden != 0 {
		return fmt.Errorf("%s has mode %o: others may write (or read) in it; use a directory only you can write", dir, fi.Mode().Perm())
	}
	return nil
}

// MakeDir is Dir after creating dir 0700 when it is missing (its parent
// must exist).
func MakeDir(dir string, forbidden fs.FileMode) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return Dir(dir, forbidden)
}

// Open opens path for reading, without following a symlink, when it is a
// regular file of the user's that nobody else may use (no group or other
// bits); the caller closes it.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, err
	}
	if err := check(path, f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// check is Open's check of the open file f.
func check(path string, f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if err := owned(path, fi); err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s has mode %o: others may read it (chmod 600)", path, fi.Mode().Perm())
	}
	return nil
}

// owned reports whether fi, the stat of path, belongs to the user.
func owned(path string, fi fs.FileInfo) error {
	if uid, ok := Owner(fi); !ok || uid != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not to this user (uid %d)", path, uid, os.Getuid())
	}
	return nil
}
