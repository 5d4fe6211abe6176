//go:build unix

package workspace

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The primitives below operate on rel (a cleaned, local, slash-separated
// path) beneath a root directory without following a symlink in any
// component below the root: each directory is opened relative to its
// parent's descriptor with O_NOFOLLOW|O_DIRECTORY, and the last component
// is used relative to its parent's descriptor (openat, fstatat, unlinkat,
// renameat, mkdirat, readlinkat). A component swapped for a symlink while
// this runs makes the call fail (ELOOP or ENOTDIR); it can never lead
// outside. The root's own path is followed: the person chose it.

const dirOpenFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

func retryEINTR(f func() (int, error)) (int, error) {
	for {
		fd, err := f()
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func openRootDir(root string) (int, error) {
	fd, err := retryEINTR(func() (int, error) {
		return unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	return fd, nil
}

// openParent opens the directory that holds rel's last component beneath
// root and returns its descriptor (the caller closes it) and that
// component; base is "" when rel is "." (the descriptor is the root's).
func openParent(root, rel string) (int, string, error) {
	fd, err := openRootDir(root)
	if err != nil {
		return -1, "", err
	}
	if rel == "." || rel == "" {
		return fd, "", nil
	}
	parts := strings.Split(rel, "/")
	for _, p := range parts[:len(parts)-1] {
		if p == "" || p == "." {
			continue
		}
		if p == ".." {
			unix.Close(fd)
			return -1, "", &fs.PathError{Op: "open", Path: rel, Err: errEscape}
		}
		next, err := retryEINTR(func() (int, error) { return unix.Openat(fd, p, dirOpenFlags, 0) })
		unix.Close(fd)
		if err != nil {
			return -1, "", &fs.PathError{Op: "open", Path: rel, Err: err}
		}
		fd = next
	}
	base := parts[len(parts)-1]
	if base == ".." {
		unix.Close(fd)
		return -1, "", &fs.PathError{Op: "open", Path: rel, Err: errEscape}
	}
	return fd, base, nil
}

// openEntryParent is openParent for operation op on rel's last
// component: when rel is the root itself it fails with a *fs.PathError of
// rootErr.
func openEntryParent(root, rel, op string, rootErr error) (int, string, error) {
	dfd, base, err := openParent(root, rel)
	if err != nil {
		return -1, "", err
	}
	if base == "" {
		unix.Close(dfd)
		return -1, "", &fs.PathError{Op: op, Path: root, Err: rootErr}
	}
	return dfd, base, nil
}

var errEscape = errors.New("path escapes its root")

// openBeneath opens rel beneath root with flags (O_NOFOLLOW and O_CLOEXEC
// are added) and returns the descriptor.
func openBeneath(root, rel string, flags int, perm uint32) (int, error) {
	dfd, base, err := openParent(root, rel)
	if err != nil {
		return -1, err
	}
	if base == "" {
		if flags&(unix.O_WRONLY|unix.O_RDWR|unix.O_CREAT) != 0 {
			unix.Close(dfd)
			return -1, &fs.PathError{Op: "open", Path: root, Err: unix.EISDIR}
		}
		return dfd, nil
	}
	defer unix.Close(dfd)
	fd, err := retryEINTR(func() (int, error) {
		return unix.Openat(dfd, base, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	})
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: rel, Err: err}
	}
	return fd, nil
}

// openFileBeneath is openBeneath returning an *os.File named name.
func openFileBeneath(root, rel, name string, flags int, perm uint32) (*os.File, error) {
	fd, err := openBeneath(root, rel, flags|unix.O_NONBLOCK, perm)
	if err != nil {
		return nil, err
	}
	// O_NONBLOCK only keeps a FIFO swapped in from blocking the open; reads
	// of regular files ignore it, and the caller refuses other types.
	if flags&unix.O_NONBLOCK == 0 {
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil {
			unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
		}
	}
	return os.NewFile(uintptr(fd), name), nil
}

func lstatBeneath(root, rel, name string) (fs.FileInfo, error) {
	dfd, base, err := openParent(root, rel)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if base == "" {
		err = unix.Fstat(dfd, &st)
	} else {
		err = unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	return newStatInfo(name, &st), nil
}

func readlinkBeneath(root, rel string) (string, error) {
	dfd, base, err := openParent(root, rel)
	if err != nil {
		return "", err
	}
	defer unix.Close(dfd)
	return readlinkAt(dfd, base)
}

func readlinkAt(dfd int, name string) (string, error) {
	for n := 256; ; n *= 2 {
		buf := make([]byte, n)
		m, err := unix.Readlinkat(dfd, name, buf)
		if err != nil {
			return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
		}
		if m < n {
			return string(buf[:m]), nil
		}
	}
}

func mkdirAllBeneath(root, rel string, perm uint32) error {
	fd, err := openRootDir(root)
	if err != nil {
		return err
	}
	defer func() { unix.Close(fd) }()
	if rel == "." || rel == "" {
		return nil
	}
	for _, p := range strings.Split(rel, "/") {
		if p == "" || p == "." {
			continue
		}
		if p == ".." {
			return &fs.PathError{Op: "mkdir", Path: rel, Err: errEscape}
		}
		if err := unix.Mkdirat(fd, p, perm); err != nil && err != unix.EEXIST {
			return &fs.PathError{Op: "mkdir", Path: rel, Err: err}
		}
		next, err := retryEINTR(func() (int, error) { return unix.Openat(fd, p, dirOpenFlags, 0) })
		if err != nil {
			return &fs.PathError{Op: "mkdir", Path: rel, Err: err}
		}
		unix.Close(fd)
		fd = next
	}
	return nil
}

func removeBeneath(root, rel string) error {
	dfd, base, err := openEntryParent(root, rel, "remove", unix.EBUSY)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	err = unix.Unlinkat(dfd, base, 0)
	if err == unix.EISDIR || err == unix.EPERM {
		if err2 := unix.Unlinkat(dfd, base, unix.AT_REMOVEDIR); err2 == nil || err == unix.EISDIR {
			err = err2
		}
	}
	if err != nil {
		return &fs.PathError{Op: "remove", Path: rel, Err: err}
	}
	return nil
}

func removeAllBeneath(root, rel string) error {
	dfd, base, err := openEntryParent(root, rel, "remove", unix.EBUSY)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	defer unix.Close(dfd)
	if err := removeAllAt(dfd, base, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: rel, Err: err}
	}
	return nil
}

// removeAllAt removes name in dfd and, when it is a directory, everything
// in it, each entry relative to its parent's descriptor.
func removeAllAt(dfd int, name string, depth int) error {
	err := unix.Unlinkat(dfd, name, 0)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	if err != unix.EISDIR && err != unix.EPERM {
		return err
	}
	if depth > 4096 {
		return unix.ELOOP
	}
	fd, err := retryEINTR(func() (int, error) { return unix.Openat(dfd, name, dirOpenFlags, 0) })
	if err != nil {
		if err == unix.ENOENT {
			return nil
		}
		return err
	}
	d := os.NewFile(uintptr(fd), name)
	for {
		names, rerr := d.Readdirnames(256)
		for _, n := range names {
			if err := removeAllAt(fd, n, depth+1); err != nil {
				d.Close()
				return err
			}
		}
		if rerr != nil || len(names) == 0 {
			break
		}
	}
	d.Close()
	if err := unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
		return err
	}
	return nil
}

func renameBeneath(fromRoot, fromRel, toRoot, toRel string) error {
	fd1, b1, err := openParent(fromRoot, fromRel)
	if err != nil {
		return err
	}
	defer unix.Close(fd1)
	fd2, b2, err := openParent(toRoot, toRel)
	if err != nil {
		return err
	}
	defer unix.Close(fd2)
	if b1 == "" || b2 == "" {
		return &fs.PathError{Op: "rename", Path: fromRel, Err: unix.EBUSY}
	}
	if err := unix.Renameat(fd1, b1, fd2, b2); err != nil {
		return &fs.PathError{Op: "rename", Path: fromRel, Err: err}
	}
	return nil
}

// writeAtomicBeneath writes a temporary file beside rel's last component
// and renames it over that component, both relative to the same directory
// descriptor. An existing file keeps its mode (a symlink is replaced, as
// rename does).
func writeAtomicBeneath(root, rel string, data []byte, perm fs.FileMode) error {
	dfd, base, err := openEntryParent(root, rel, "write", unix.EISDIR)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		perm = fs.FileMode(st.Mode & 0o777)
	} else if err != nil && err != unix.ENOENT {
		return &fs.PathError{Op: "stat", Path: rel, Err: err}
	}
	var tmp string
	var fd int
	for i := 0; ; i++ {
		tmp = "." + base + ".agentls-" + randomSuffix()
		if len(tmp) > 255 {
			tmp = ".agentls-" + randomSuffix()
		}
		fd, err = retryEINTR(func() (int, error) {
			return unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		})
		if err == unix.EEXIST && i < 100 {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "write", Path: rel, Err: err}
		}
		break
	}
	f := os.NewFile(uintptr(fd), tmp)
	ok := false
	defer func() {
		if !ok {
			f.Close()
			unix.Unlinkat(dfd, tmp, 0)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return &fs.PathError{Op: "write", Path: rel, Err: err}
	}
	if err := f.Chmod(perm.Perm()); err != nil {
		return &fs.PathError{Op: "chmod", Path: rel, Err: err}
	}
	if err := f.Sync(); err != nil {
		return &fs.PathError{Op: "sync", Path: rel, Err: err}
	}
	if err := f.Close(); err != nil {
		return &fs.PathError{Op: "close", Path: rel, Err: err}
	}
	if err := unix.Renameat(dfd, tmp, dfd, base); err != nil {
		return &fs.PathError{Op: "rename", Path: rel, Err: err}
	}
	ok = true
	unix.Fsync(dfd) // make the rename durable
	return nil
}

// isLinkErr reports whether err says a component was a symlink (the
// no-follow open refused it).
func isLinkErr(err error) bool {
	return errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EMLINK)
}

// statInfo is an fs.FileInfo made from a stat structure.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func newStatInfo(name string, st *unix.Stat_t) *statInfo {
	return &statInfo{name: baseName(name), st: *st}
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 && i < len(p)-1 {
		return p[i+1:]
	}
	return p
}

func (s *statInfo) Name() string { return s.name }
func (s *statInfo) Size() int64  { return int64(s.st.Size) }
func (s *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(s.st.Mode & 0o777)
	switch s.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if s.st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if s.st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if s.st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
func (s *statInfo) ModTime() time.Time {
	sec, nsec := s.st.Mtim.Unix()
	return time.Unix(sec, nsec)
}
func (s *statInfo) IsDir() bool { return s.st.Mode&unix.S_IFMT == unix.S_IFDIR }
func (s *statInfo) Sys() any    { return &s.st } // a *unix.Stat_t

// readBeneath reads t's file into buf with raw system calls (see readFd).
func readBeneath(t target, name string, buf []byte, max int64, check idCheck) ([]byte, error) {
	fd, err := openBeneath(t.root, t.rel, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return buf[:0], err
	}
	defer unix.Close(fd)
	return readFd(fd, name, buf, max, check)
}
