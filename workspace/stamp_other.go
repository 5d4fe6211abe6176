//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package workspace

// sysStamp knows no system data here: stamps hold size and mtime only.
func sysStamp(any) (Stamp, bool) { return Stamp{}, false }
