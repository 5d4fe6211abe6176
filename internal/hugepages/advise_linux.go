package hugepages

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Advise advises huge pages for the whole huge pages inside b, memory not
// touched yet (a fresh allocation): each of them is then mapped whole by
// its first touch. It changes nothing else: b's contents stay as they are.
func Advise(b []byte) {
	if len(b) == 0 {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if beg, end := wholePages(p, uintptr(len(b))); beg < end {
		unix.Madvise(b[beg-p:end-p], unix.MADV_HUGEPAGE)
	}
}

// Enabled reports whether the system gives huge pages to advised memory
// (/sys/kernel/mm/transparent_hugepage/enabled is "always" or "madvise").
func Enabled() bool { return enabled(setting()) }
