package cli

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"

	"github.com/agentls/agentls/internal/hugepages"
)

// hugeHeapBytes is the span of heap that oneShotHeap advises huge pages
// for, and the memory limit under which it collects no garbage: more than
// a one-shot grep of a large tree touches (addresses are reserved, not
// memory: only the pages touched are).
const hugeHeapBytes = 128 << 20

// oneShotHeap lets the heap of a short-lived process (the one-shot `agentls
// call`) grow in transparent huge pages (package hugepages): the few
// thousand first-touch faults of 4 KiB pages that a one-shot grep's heap
// took were a third of its CPU time on a virtual machine. The runtime maps
// the heap as it grows, each mapping without the advice; so the heap is
// grown here at once by one object as large as the span, the span is
// advised, and a collection frees the object: the heap's next objects are
// placed in the advised span (free pages, lowest address first), where the
// first touch of each 2 MiB maps it whole.
//
// Then, unless GOGC or GOMEMLIMIT say otherwise, no garbage is collected
// until the process's memory nears the span (GOGC off under a memory
// limit of the span): a one-shot grep of GOROOT/src collects none after
// the one above (its heap stays well below), the runtime does not hand
// the span's free pages back to the system meanwhile (which would break
// its huge pages up), and the memory stays bounded by the span (a
// one-shot grep reading every file of a 92,000 file tree peaks at about
// 90 MB where collecting kept it near 45 MB). The first collection
// restores both settings, so that a call that keeps more than the span
// live is collected as usual rather than over and over at the limit.
// Nothing else changes: the memory the process touches is rounded up to
// 2 MiB steps. None of this where advised memory gets no huge pages
// (hugepages.Enabled), nor under a memory limit below twice the span.
func oneShotHeap() {
	if !hugepages.Enabled() || debug.SetMemoryLimit(-1) < 2*hugeHeapBytes {
		return
	}
	// No collection while the object is live: it would keep it.
	gc := debug.SetGCPercent(-1)
	b := make([]byte, hugeHeapBytes)
	hugepages.Advise(b) // its pages: never touched
	b = nil
	runtime.GC()
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		debug.SetGCPercent(gc)
		return
	}
	debug.SetMemoryLimit(hugeHeapBytes)
	// The first collection puts the collector back as it was.
	runtime.AddCleanup(new([64]byte), func(gc int) {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(math.MaxInt64)
	}, gc)
}

// serverGarbage is the garbage a server's heap may gather before the next
// collection starts, while its live heap is larger than that; below, the
// default pacing (the heap doubles) decides. minServerGCPercent bounds the
// collections' frequency: a quarter of the live heap at least.
const (
	serverGarbage      = 64 << 20
	minServerGCPercent = 25
)

// serverHeap paces the collector of a process that holds sessions (`agentls
// serve`, a standalone `agentls mcp`) by its live heap, which is mostly
// the workspace's indexes: after each collection, the GC percent is set so
// that the next collection starts once serverGarbage has been allocated
// (serverGCPercent). With the default (100), the heap grows to twice its
// live size before a collection: on the benchmark's tree of 92,000 files,
// whose indexes hold 220 MB, twelve output-heavy searches in a row then
// took the server to 424 to 438 MB of resident memory; paced, to 354 to
// 373 MB, for 5% more CPU time a search (two runs of each; such a search
// allocates about as much as serverGarbage, so it starts about one
// collection). A small workspace's server keeps the default pacing. GOGC
// or GOMEMLIMIT, when set, decide.
func serverHeap() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	var arm func(percent int)
	arm = func(percent int) {
		// An object of its own, which the next cycle collects: its cleanup
		// runs after that cycle, sets the pace and arms the next.
		runtime.AddCleanup(new([64]byte), func(last int) {
			sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
			metrics.Read(sample)
			p := serverGCPercent(sample[0].Value.Uint64())
			if p != last {
				debug.SetGCPercent(p)
			}
			arm(p)
		}, percent)
	}
	arm(100)
}

// serverGCPercent is the GC percent that lets a heap of live bytes gather
// serverGarbage before the next collection: at most the default 100, at
// least minServerGCPercent.
func serverGCPercent(live uint64) int {
	if live == 0 {
		return 100
	}
	return int(max(minServerGCPercent, min(100, serverGarbage*100/live)))
}
