//go:build !linux

package workspace

// Stamp returns the stamp of the walked regular file f (what
// StampOf(f.Info()) gives), and refuses it as Read would (in a walk of a
// workspace, a sensitive file under another name is a *PathError); ok is
// false when it cannot be stat-ed or is not a regular file.
func (f *File) Stamp() (Stamp, bool, error) { return f.stampInfo() }

// mountsBelow cannot tell here: the mount table is not read.
func mountsBelow(string) bool { return true }
