package cli

import (
	"runtime"
	"runtime/debug"

	"github.com/agentls/agentls/internal/hugepage"
)

// hugeHeapBytes is the span of heap that oneShotHeap advises huge pages
// for: more than a one-shot grep of a large tree touches (addresses are
// reserved, not memory: only the pages touched are).
const hugeHeapBytes = 64 << 20

// oneShotHeap lets the heap of a short-lived process (the one-shot `agentls
// call`) grow in transparent huge pages (package hugepage): the few
// thousand first-touch faults of 4 KiB pages that a one-shot grep's heap
// took were a third of its CPU time on a virtual machine. The runtime maps
// the heap as it grows, each mapping without the advice; so the heap is
// grown here at once by one object as large as the span, the span is
// advised, and a collection frees the object: the heap's next objects are
// placed in the advised span (free pages, lowest address first), where the
// first touch of each 2 MiB maps it whole. Nothing else changes: the memory
// the process touches is rounded up to 2 MiB steps. Not where advised
// memory gets no huge pages (hugepage.Enabled), nor under a memory limit
// (GOMEMLIMIT) below twice the span.
func oneShotHeap() {
	if !hugepage.Enabled() || debug.SetMemoryLimit(-1) < 2*hugeHeapBytes {
		return
	}
	b := make([]byte, hugeHeapBytes)
	hugepage.Advise(b) // its pages: never touched
	b = nil
	runtime.GC()
}
