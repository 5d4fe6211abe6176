//go:build unix

package workspace

import (
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// statOf returns the identity part of fi, a stat of this package.
func statOf(fi fs.FileInfo) (fileStat, bool) {
	if s, ok := fi.(*statInfo); ok {
		return statFromUnix(&s.st), true
	}
	return fileStat{}, false
}

// lstatID returns the identity part of p's lstat.
func lstatID(p string) (fileStat, bool) {
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil {
		return fileStat{}, false
	}
	return statFromUnix(&st), true
}

// statID returns the identity part of p's stat (a symlink followed).
func statID(p string) (fileStat, bool) {
	var st unix.Stat_t
	if unix.Stat(p, &st) != nil {
		return fileStat{}, false
	}
	return statFromUnix(&st), true
}

// fstatID returns the identity part of the open file's stat.
func fstatID(f *os.File) (fileStat, bool) {
	sc, err := f.SyscallConn()
	if err != nil {
		return fileStat{}, false
	}
	var st unix.Stat_t
	var serr error
	if err := sc.Control(func(fd uintptr) { serr = unix.Fstat(int(fd), &st) }); err != nil || serr != nil {
		return fileStat{}, false
	}
	return statFromUnix(&st), true
}

// statFromUnix returns the identity part of a system stat.
func statFromUnix(st *unix.Stat_t) fileStat {
	sec, nsec := st.Ctim.Unix()
	return fileStat{
		id:      fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)},
		nlink:   uint64(st.Nlink),
		ctime:   time.Unix(sec, nsec),
		regular: st.Mode&unix.S_IFMT == unix.S_IFREG,
		dir:     st.Mode&unix.S_IFMT == unix.S_IFDIR,
		stamp:   Stamp{Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: uint64(st.Ino), Dev: uint64(st.Dev)},
	}
}
