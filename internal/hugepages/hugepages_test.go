package hugepages

import (
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/agentls/agentls/internal/testenv"
)

// vmFlags returns the VmFlags of the mapping holding p.
func vmFlags(t *testing.T, p uintptr) []string {
	t.Helper()
	for _, m := range testenv.Mappings(t) {
		if m.Lo <= p && p < m.Hi {
			return m.Flags
		}
	}
	t.Fatalf("no mapping holds %#x", p)
	return nil
}

// TestBuild checks that the heap's mapping is marked for huge pages while
// builds run (two at once here: the marking lasts until the last ends) and
// unmarked after; elsewhere, or where transparent huge pages are not in
// madvise mode, Build does nothing.
func TestBuild(t *testing.T) {
	if runtime.GOOS != "linux" || !supported() {
		end := Build()
		end()
		t.Skip("transparent huge pages are not in madvise mode here")
	}
	obj := make([]byte, 1<<20)
	at := uintptr(unsafe.Pointer(&obj[0]))
	if slices.Contains(vmFlags(t, at), "hg") {
		t.Fatalf("heap marked before any build: %v", vmFlags(t, at))
	}
	end1 := Build()
	end2 := Build()
	if f := vmFlags(t, at); !slices.Contains(f, "hg") {
		t.Errorf("heap not marked while building: %v", f)
	}
	end1()
	end1() // a second call does nothing
	if f := vmFlags(t, at); !slices.Contains(f, "hg") {
		t.Errorf("heap unmarked while a build runs: %v", f)
	}
	end2()
	if f := vmFlags(t, at); slices.Contains(f, "hg") || !slices.Contains(f, "nh") {
		t.Errorf("heap still marked after the builds: %v", f)
	}
	runtime.KeepAlive(obj)
	// A build after that marks again.
	end := Build()
	if f := vmFlags(t, at); !slices.Contains(f, "hg") {
		t.Errorf("heap not marked by a later build: %v", f)
	}
	end()
}
