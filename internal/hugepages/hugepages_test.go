package hugepages

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"testing"
	"unsafe"
)

// vmFlags returns the VmFlags of the mapping holding p (/proc/self/smaps).
func vmFlags(t *testing.T, p uintptr) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	in := false
	for line := range bytes.Lines(data) {
		f := bytes.Fields(line)
		if len(f) == 0 {
			continue
		}
		if lo, hi, ok := bytes.Cut(f[0], []byte("-")); ok && !bytes.HasSuffix(f[0], []byte(":")) {
			l, err1 := strconv.ParseUint(string(lo), 16, 64)
			h, err2 := strconv.ParseUint(string(hi), 16, 64)
			in = err1 == nil && err2 == nil && uintptr(l) <= p && p < uintptr(h)
			continue
		}
		if in && string(f[0]) == "VmFlags:" {
			var out []string
			for _, x := range f[1:] {
				out = append(out, string(x))
			}
			return out
		}
	}
	t.Fatalf("no mapping holds %#x", p)
	return nil
}

func has(flags []string, f string) bool {
	for _, x := range flags {
		if x == f {
			return true
		}
	}
	return false
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
	if has(vmFlags(t, at), "hg") {
		t.Fatalf("heap marked before any build: %v", vmFlags(t, at))
	}
	end1 := Build()
	end2 := Build()
	if f := vmFlags(t, at); !has(f, "hg") {
		t.Errorf("heap not marked while building: %v", f)
	}
	end1()
	end1() // a second call does nothing
	if f := vmFlags(t, at); !has(f, "hg") {
		t.Errorf("heap unmarked while a build runs: %v", f)
	}
	end2()
	if f := vmFlags(t, at); has(f, "hg") || !has(f, "nh") {
		t.Errorf("heap still marked after the builds: %v", f)
	}
	runtime.KeepAlive(obj)
	// A build after that marks again.
	end := Build()
	if f := vmFlags(t, at); !has(f, "hg") {
		t.Errorf("heap not marked by a later build: %v", f)
	}
	end()
}
