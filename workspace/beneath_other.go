//go:build !unix

package workspace

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Without openat, the confined operations go through os.Root, which keeps
// every operation below the root (also under races) but follows a symlink
// whose target stays inside it.

func withRoot(root string, f func(r *os.Root) error) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	return f(r)
}

func osRel(rel string) string { return filepath.FromSlash(rel) }

func openFileBeneath(root, rel, name string, flags int, perm uint32) (*os.File, error) {
	var f *os.File
	err := withRoot(root, func(r *os.Root) error {
		var err error
		f, err = r.OpenFile(osRel(rel), flags, fs.FileMode(perm))
		return err
	})
	return f, err
}

func lstatBeneath(root, rel, name string) (fs.FileInfo, error) {
	var fi fs.FileInfo
	err := withRoot(root, func(r *os.Root) error {
		var err error
		fi, err = r.Lstat(osRel(rel))
		return err
	})
	return fi, err
}

func readlinkBeneath(root, rel string) (string, error) {
	var s string
	err := withRoot(root, func(r *os.Root) error {
		var err error
		s, err = r.Readlink(osRel(rel))
		return err
	})
	return s, err
}

func mkdirAllBeneath(root, rel string, perm uint32) error {
	return withRoot(root, func(r *os.Root) error { return r.MkdirAll(osRel(rel), fs.FileMode(perm)) })
}

func removeBeneath(root, rel string) error {
	return withRoot(root, func(r *os.Root) error { return r.Remove(osRel(rel)) })
}

func removeAllBeneath(root, rel string) error {
	return withRoot(root, func(r *os.Root) error { return r.RemoveAll(osRel(rel)) })
}

func renameBeneath(fromRoot, fromRel, toRoot, toRel string) error {
	if fromRoot != toRoot {
		return os.Rename(filepath.Join(fromRoot, osRel(fromRel)), filepath.Join(toRoot, osRel(toRel)))
	}
	return withRoot(fromRoot, func(r *os.Root) error { return r.Rename(osRel(fromRel), osRel(toRel)) })
}

func writeAtomicBeneath(root, rel string, data []byte, perm fs.FileMode) error {
	return withRoot(root, func(r *os.Root) error {
		if fi, err := r.Lstat(osRel(rel)); err == nil && fi.Mode().IsRegular() {
			perm = fi.Mode().Perm()
		}
		dir, base := filepath.Split(osRel(rel))
		tmp := filepath.Join(dir, "."+base+".agentls-"+randomSuffix())
		f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = r.Rename(tmp, osRel(rel))
		}
		if err != nil {
			r.Remove(tmp)
		}
		return err
	})
}

func readBeneath(t target, name string, buf []byte, max int64, check idCheck) ([]byte, error) {
	f, err := openFileBeneath(t.root, t.rel, name, os.O_RDONLY, 0)
	if err != nil {
		return buf[:0], err
	}
	defer f.Close()
	if max > 0 {
		if fi, err := f.Stat(); err == nil && fi.Size() > max {
			return buf[:0], ErrTooLarge
		}
	}
	data, err := io.ReadAll(f)
	return data, err
}

// isLinkErr is false: os.Root follows the links that stay inside.
func isLinkErr(err error) bool { return errors.Is(err, syscall.ELOOP) }
