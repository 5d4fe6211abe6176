//go:build openbsd || dragonfly

package workspace

import "syscall"

// sysStamp returns the stamp of a stat's system data; false when it is
// of no type it knows.
func sysStamp(sys any) (Stamp, bool) {
	if st, ok := sys.(*syscall.Stat_t); ok {
		return Stamp{Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: uint64(st.Ino), Dev: uint64(st.Dev)}, true
	}
	return Stamp{}, false
}
