package workspace

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// sysStamp returns the stamp of a stat's system data; false when it is
// of no type it knows.
func sysStamp(sys any) (Stamp, bool) {
	switch st := sys.(type) {
	case *syscall.Stat_t:
		return Stamp{Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: uint64(st.Ino), Dev: uint64(st.Dev)}, true
	case *unix.Stat_t:
		return Stamp{Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: uint64(st.Ino), Dev: uint64(st.Dev)}, true
	}
	return Stamp{}, false
}
