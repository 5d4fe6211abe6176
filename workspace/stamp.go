package workspace

import "io/fs"

// Stamp is the stat data that vouches for a regular file's content: a file
// whose stamp is unchanged is taken to hold the bytes it held when the
// stamp was taken (as git's index trusts a stat), unless its mtime was
// within a clock tick of the read ("racily clean": the caller's rule).
// Where the platform's stat has no inode and ctime (not Linux, macOS or
// the BSDs), Ctime, Ino and Dev are 0.
type Stamp struct {
	Size, Mtime, Ctime int64
	Ino, Dev           uint64
}

// StampOf returns the stamp of the stat fi (an open file's, an Lstat's, a
// walked File's Info); ok is false when fi is nil or not a regular file's
// (the stamp is then that of whatever fi describes, or zero for nil).
func StampOf(fi fs.FileInfo) (st Stamp, ok bool) {
	if fi == nil {
		return Stamp{}, false
	}
	st, full := sysStamp(fi.Sys())
	if !full {
		st = Stamp{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	}
	return st, fi.Mode().IsRegular()
}
