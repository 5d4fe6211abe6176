package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
)

// Confined file operations. Resolve decides whether a path argument may be
// used; the methods below use it so that no race can separate that check
// from the use: each resolves the path beneath an allowed root without
// following any symlink below the root (see beneath_unix.go), so a
// component swapped for a symlink after the check makes the call fail
// instead of leading outside the workspace or to a sensitive file.
//
// A symlink that Resolve allows (its target inside an allowed root) is
// followed by resolving it first and then opening the real path the same
// way, with the sensitive globs checked on the real path again. Every
// method takes an absolute path (what Resolve returns) and refuses, with a
// *PathError, one outside the allowed roots or matching a sensitive glob.

// target is where a path lands: a root (opened by its own path) and a
// slash-separated path below it that no symlink is followed through.
type target struct{ root, rel string }

// lexical places p below the allowed root that holds it as written.
func (w *Workspace) lexical(p string) (target, error) {
	p = filepath.Clean(p)
	roots := w.allowedRoots()
	root, rel, ok := containing(roots, p)
	if !ok {
		return target{}, invalid(p, "path is outside the workspace roots")
	}
	if err := w.checkSensitive(p, root, rel); err != nil {
		return target{}, err
	}
	return target{root: root, rel: filepath.ToSlash(rel)}, nil
}

// real places p through its symlinks (the last component's too when follow)
// below the allowed root that holds where it leads.
func (w *Workspace) real(p string, follow bool) (target, error) {
	p = filepath.Clean(p)
	var real string
	var err error
	if follow {
		real, err = realPath(p)
	} else if dir := filepath.Dir(p); dir == p {
		real = p
	} else {
		real, err = realPath(dir)
		real = filepath.Join(real, filepath.Base(p))
	}
	if err != nil {
		return target{}, invalid(p, "%v", err)
	}
	for _, r := range w.allowedRoots() {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil {
			rr = r
		}
		if rel, ok := Within(rr, real); ok {
			if err := w.checkSensitive(p, rr, rel); err != nil {
				return target{}, err
			}
			return target{root: rr, rel: filepath.ToSlash(rel)}, nil
		}
	}
	return target{}, invalid(p, "path resolves through a symlink to %s, outside the workspace", real)
}

// beneath runs op on where p lands: first as written, and when a component
// is a symlink, through the symlinks (follow: also the last component's).
func (w *Workspace) beneath(p string, follow bool, op func(t target) error) error {
	t, err := w.lexical(p)
	if err != nil {
		return err
	}
	err = op(t)
	if err == nil || !isLinkErr(err) {
		return err
	}
	t2, rerr := w.real(p, follow)
	if rerr != nil {
		return rerr
	}
	if t2 == t {
		return err
	}
	return op(t2)
}

// Open opens the file or directory p for reading, beneath the allowed
// roots (see the rules above). The file opened is refused when it is a
// sensitive one under another name (sensitive.go).
func (w *Workspace) Open(p string) (*os.File, error) {
	var f *os.File
	err := w.beneath(p, true, func(t target) error {
		var err error
		f, err = openFileBeneath(t.root, t.rel, p, os.O_RDONLY, 0)
		return err
	})
	if err != nil {
		return nil, err
	}
	st, ok := fstatID(f)
	if err := w.checkStat(p, st, ok); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadDisk reads the file p from the disk (never the editor's buffer),
// beneath the allowed roots.
func (w *Workspace) ReadDisk(p string) ([]byte, error) {
	f, err := w.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpen(f)
}

// readOpen reads f to its end into one buffer sized from its stat, as
// os.ReadFile does (io.ReadAll grows its buffer from 512 bytes, copying it
// each time).
func readOpen(f *os.File) ([]byte, error) {
	size := 0
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = int(fi.Size())
	}
	b := make([]byte, 0, size+512) // room to see the end without growing
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// Stat returns the file info of p, through allowed symlinks.
func (w *Workspace) Stat(p string) (fs.FileInfo, error) {
	var fi fs.FileInfo
	err := w.beneath(p, true, func(t target) error {
		var err error
		fi, err = lstatBeneath(t.root, t.rel, p)
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			// Swapped for a link since it was resolved: resolve again.
			return &fs.PathError{Op: "stat", Path: p, Err: syscall.ELOOP}
		}
		return err
	})
	return fi, err
}

// Lstat returns the file info of p itself (a symlink is not followed).
func (w *Workspace) Lstat(p string) (fs.FileInfo, error) {
	var fi fs.FileInfo
	err := w.beneath(p, false, func(t target) error {
		var err error
		fi, err = lstatBeneath(t.root, t.rel, p)
		return err
	})
	return fi, err
}

// ReadDir lists the directory p like os.ReadDir (sorted by name), beneath
// the allowed roots. An entry's Info stats it by path: use Lstat on the
// entry's path instead.
func (w *Workspace) ReadDir(p string) ([]fs.DirEntry, error) {
	f, err := w.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	return ents, err
}

// Readlink returns the target of the symlink p.
func (w *Workspace) Readlink(p string) (string, error) {
	var s string
	err := w.beneath(p, false, func(t target) error {
		var err error
		s, err = readlinkBeneath(t.root, t.rel)
		return err
	})
	return s, err
}

// WriteFileAtomic replaces p with data like the package's WriteFileAtomic
// (a temporary file renamed over p; an existing file keeps its mode, a new
// one gets perm), both beneath the allowed roots and relative to the same
// open directory. A symlink at p is replaced, not written through.
func (w *Workspace) WriteFileAtomic(p string, data []byte, perm fs.FileMode) error {
	return w.beneath(p, false, func(t target) error {
		return writeAtomicBeneath(t.root, t.rel, data, perm)
	})
}

// Chmod sets the permission bits of the regular file p (a symlink is not
// followed, as the other writes of this file).
func (w *Workspace) Chmod(p string, mode fs.FileMode) error {
	return w.beneath(p, false, func(t target) error {
		f, err := openFileBeneath(t.root, t.rel, p, os.O_RDONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return &fs.PathError{Op: "chmod", Path: p, Err: errors.New("not a regular file")}
		}
		return f.Chmod(mode.Perm())
	})
}

// MkdirAll creates the directory p and its missing parents.
func (w *Workspace) MkdirAll(p string, perm fs.FileMode) error {
	return w.beneath(p, true, func(t target) error {
		return mkdirAllBeneath(t.root, t.rel, uint32(perm.Perm()))
	})
}

// Remove removes the file, symlink or empty directory p.
func (w *Workspace) Remove(p string) error {
	return w.beneath(p, false, func(t target) error { return removeBeneath(t.root, t.rel) })
}

// RemoveAll removes p and, when it is a directory, everything in it; no
// symlink is followed. A missing p is no error.
func (w *Workspace) RemoveAll(p string) error {
	return w.beneath(p, false, func(t target) error { return removeAllBeneath(t.root, t.rel) })
}

// Rename renames from to to (neither is followed when it is a symlink).
func (w *Workspace) Rename(from, to string) error {
	ft, err := w.lexical(from)
	if err != nil {
		return err
	}
	tt, err := w.lexical(to)
	if err != nil {
		return err
	}
	err = renameBeneath(ft.root, ft.rel, tt.root, tt.rel)
	if err == nil || !isLinkErr(err) {
		return err
	}
	if ft, err = w.real(from, false); err != nil {
		return err
	}
	if tt, err = w.real(to, false); err != nil {
		return err
	}
	return renameBeneath(ft.root, ft.rel, tt.root, tt.rel)
}

// Reads of paths that may lie outside every root: the Go standard library
// and module cache the type checker reads, a git directory or hooks folder
// elsewhere. Each method below uses the confined method it is named after
// for a path inside an allowed root (as written, like ReadFile), so a
// symlink swapped in there cannot lead outside, and the os package for any
// other path, which is read as before.

// inside reports whether p lies inside an allowed root as written.
func (w *Workspace) inside(p string) bool {
	_, _, ok := containing(w.allowedRoots(), filepath.Clean(p))
	return ok
}

// OpenAny opens p for reading: Open inside the roots, os.Open elsewhere.
func (w *Workspace) OpenAny(p string) (*os.File, error) {
	if w.inside(p) {
		return w.Open(p)
	}
	return os.Open(p)
}

// ReadDiskAny reads the file p from the disk (never the editor's buffer):
// ReadDisk inside the roots, os.ReadFile elsewhere.
func (w *Workspace) ReadDiskAny(p string) ([]byte, error) {
	if w.inside(p) {
		return w.ReadDisk(p)
	}
	return os.ReadFile(p)
}

// StatAny returns the file info of p: Stat inside the roots, os.Stat
// elsewhere.
func (w *Workspace) StatAny(p string) (fs.FileInfo, error) {
	if w.inside(p) {
		return w.Stat(p)
	}
	return os.Stat(p)
}

// ReadDirAny lists the directory p sorted by name: ReadDir inside the
// roots, os.ReadDir elsewhere.
func (w *Workspace) ReadDirAny(p string) ([]fs.DirEntry, error) {
	if w.inside(p) {
		return w.ReadDir(p)
	}
	return os.ReadDir(p)
}

// ReadLimited reads the file p from the disk (never the editor's buffer)
// into buf, grown as needed, with raw system calls, beneath the allowed
// roots like ReadDisk; max > 0 refuses larger files with ErrTooLarge. It
// lets a caller that reads many files (the walker, the code index) reuse
// one buffer; the result may share buf's memory.
func (w *Workspace) ReadLimited(p string, buf []byte, max int64) ([]byte, error) {
	var data []byte
	err := w.beneath(p, true, func(t target) error {
		var err error
		data, err = readBeneath(t, p, buf, max, w.readCheck())
		return err
	})
	if err != nil {
		return buf[:0], err
	}
	return data, nil
}

func randomSuffix() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
