package cli

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/hugepages"
	"github.com/agentls/agentls/internal/testenv"
)

// TestOneShotHeap: after oneShotHeap, a mapping of the process (the heap's
// advised span) carries the huge-page advice ("hg" in smaps' VmFlags) over
// at least 2 MiB, and garbage is collected only near the span's limit
// (unless the environment set GOGC or GOMEMLIMIT) until the first
// collection, which restores the collector's settings.
func TestOneShotHeap(t *testing.T) {
	if !hugepages.Enabled() {
		t.Skip("no transparent huge pages for advised memory here")
	}
	gc, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	debug.SetGCPercent(gc)
	defer func() { // the test process's own settings again
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	}()
	oneShotHeap()
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		if got := debug.SetGCPercent(-1); got != -1 {
			t.Errorf("GC percent %d after oneShotHeap, want -1 (off)", got)
		}
		if got := debug.SetMemoryLimit(-1); got != hugeHeapBytes {
			t.Errorf("memory limit %d after oneShotHeap, want %d", got, hugeHeapBytes)
		}
		// The first collection restores the collector's settings.
		runtime.GC()
		for deadline := time.Now().Add(time.Minute); debug.SetGCPercent(-1) == -1; {
			if time.Now().After(deadline) {
				t.Fatal("GC still off after a collection")
			}
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
		debug.SetGCPercent(gc)
		if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
			t.Errorf("memory limit %d after a collection, want none", got)
		}
	}
	advised := uintptr(0) // the largest mapping advised huge pages
	for _, m := range testenv.Mappings(t) {
		if slices.Contains(m.Flags, "hg") {
			advised = max(advised, m.Hi-m.Lo)
		}
	}
	if advised < 2<<20 {
		t.Errorf("no mapping of 2 MiB or more advised huge pages (largest: %d KiB)", advised>>10)
	}
}
