package testenv

import (
	"bytes"
	"os"
	"strconv"
	"testing"
)

// Mapping is one mapping of the test's own process, as /proc/self/smaps
// lists it: its address range and its VmFlags ("hg": advised huge pages,
// "nh": advised none).
type Mapping struct {
	Lo, Hi uintptr
	Flags  []string
}

// Mappings returns the test process's mappings; it skips the test where
// /proc/self/smaps cannot be read (not Linux).
func Mappings(t testing.TB) []Mapping {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	var out []Mapping
	for line := range bytes.Lines(data) {
		f := bytes.Fields(line)
		if len(f) == 0 {
			continue
		}
		if lo, hi, ok := bytes.Cut(f[0], []byte("-")); ok && !bytes.HasSuffix(f[0], []byte(":")) {
			l, err1 := strconv.ParseUint(string(lo), 16, 64)
			h, err2 := strconv.ParseUint(string(hi), 16, 64)
			if err1 == nil && err2 == nil {
				out = append(out, Mapping{Lo: uintptr(l), Hi: uintptr(h)})
			}
			continue
		}
		if string(f[0]) == "VmFlags:" && len(out) > 0 {
			for _, x := range f[1:] {
				out[len(out)-1].Flags = append(out[len(out)-1].Flags, string(x))
			}
		}
	}
	return out
}
