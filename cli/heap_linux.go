package cli

import (
	"runtime"
	"runtime/debug"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugeHeapBytes is the span of heap that oneShotHeap advises huge pages
// for: more than a one-shot grep of a large tree touches (addresses are
// reserved, not memory: only the pages touched are).
const hugeHeapBytes = 64 << 20

// oneShotHeap lets the heap of a short-lived process (the one-shot `agentls
// call`) grow in transparent huge pages where the system allows them for
// advised memory (/sys/kernel/mm/transparent_hugepage/enabled "madvise",
// as well as "always"). Each page of fresh memory costs a fault when first
// touched, and on a virtual machine a fault can cost tens of microseconds
// (measured: about 20 µs per 4 KiB page, 0.3 µs per 4 KiB of a 2 MiB page):
// the few thousand faults of the heap a one-shot grep builds up were a
// third of its CPU time. The runtime maps the heap as it grows, each
// mapping without the advice; so the heap is grown here at once by one
// object as large as the span, the span is advised, and a collection
// frees the object: the heap's next objects are placed in the advised
// span (the heap's free pages, lowest address first), where the first
// touch of each 2 MiB maps it whole. Nothing else changes: the memory a
// process touches is rounded up to 2 MiB steps. Not with a memory limit
// (GOMEMLIMIT) below the span.
func oneShotHeap() {
	if debug.SetMemoryLimit(-1) < 2*hugeHeapBytes {
		return
	}
	const huge = 2 << 20
	b := make([]byte, hugeHeapBytes)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	beg, end := (p+huge-1)&^(huge-1), (p+hugeHeapBytes)&^(huge-1)
	if beg < end {
		// The span's pages: b's own, never touched.
		unix.Madvise(b[beg-p:end-p], unix.MADV_HUGEPAGE)
	}
	b = nil
	runtime.GC()
}
