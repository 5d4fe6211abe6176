//go:build unix

package search

import (
	"os"
	"syscall"
)

// mapFile maps the size bytes of the open file f read-only (the page
// cache's pages, neither copied nor zeroed first); unmap ends the mapping,
// after which the bytes must not be touched. A file truncated while mapped
// faults on access: the caller reads it with debug.SetPanicOnFault.
func mapFile(f *os.File, size int) (data []byte, unmap func(), err error) {
	sc, err := f.SyscallConn()
	if err != nil {
		return nil, nil, err
	}
	var merr error
	if err := sc.Control(func(fd uintptr) {
		data, merr = syscall.Mmap(int(fd), 0, size, syscall.PROT_READ, syscall.MAP_SHARED|mapPopulate)
	}); err != nil {
		return nil, nil, err
	}
	if merr != nil {
		return nil, nil, merr
	}
	return data, func() { syscall.Munmap(data) }, nil
}
