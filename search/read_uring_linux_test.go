package search

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestRingABI holds the structures to the kernel's sizes.
func TestRingABI(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"io_uring_params", unsafe.Sizeof(uringParams{}), 120},
		{"io_uring_sqe", unsafe.Sizeof(uringSQE{}), 64},
		{"io_uring_cqe", unsafe.Sizeof(uringCQE{}), 16},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d bytes, want %d", c.name, c.got, c.want)
		}
	}
}

// TestBatchReader reads a batch of files of every kind through a ring
// and readBeneathRoot: the batch reads exactly the regular files within
// bounds (the same bytes), and nothing readBeneathRoot refuses.
func TestBatchReader(t *testing.T) {
	br := newBatchReader()
	if br == nil {
		t.Skip("io_uring is not available")
	}
	defer br.release()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	write := func(rel, text string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "hello\nworld\n")
	write("sub/deep/b.go", strings.Repeat("package b\n", 5000))
	write("empty", "")
	write("big", strings.Repeat("x", 100))
	if err := os.WriteFile(filepath.Join(dir, "outside"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct{ target, name string }{
		{"a.txt", "link"},
		{"../outside", "escape"},
		{"sub", "dirlink"},
	} {
		if err := os.Symlink(l.target, filepath.Join(root, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const max = 99
	cases := []struct {
		rel  string
		read bool // the batch reads it
	}{
		{"a.txt", true},
		{"sub/deep/b.go", false}, // over max
		{"empty", true},
		{"big", false}, // over max
		{"link", false},
		{"escape", false},
		{"dirlink/deep/b.go", false},
		{"../outside", false},
		{"/etc/passwd", false},
		{"fifo", false},
		{"sub", false},
		{"missing", false},
		{"", false},
		{"a.txt\x00x", false},
	}
	rels := make([]string, len(cases))
	for i, c := range cases {
		rels[i] = c.rel
	}
	for round := range 2 { // the second with the ring's arena in use
		got := br.read(f, rels, max)
		if len(got) != len(cases) {
			t.Fatalf("%d results for %d files", len(got), len(cases))
		}
		for i, c := range cases {
			want, werr := readBeneathRoot(nil, f, root, c.rel, nil, max)
			if (got[i] != nil) != c.read {
				t.Errorf("round %d: %q: read %v, want %v", round, c.rel, got[i] != nil, c.read)
			}
			if got[i] != nil && (werr != nil || !bytes.Equal(got[i], want)) {
				t.Errorf("round %d: %q: %q, readBeneathRoot %q (%v)", round, c.rel, got[i], want, werr)
			}
			if c.read && werr != nil {
				t.Errorf("round %d: %q: readBeneathRoot: %v", round, c.rel, werr)
			}
		}
	}
	// Without a bound, the larger files too.
	got := br.read(f, []string{"sub/deep/b.go", "big", "a.txt"}, 0)
	for i, rel := range []string{"sub/deep/b.go", "big", "a.txt"} {
		want, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil || !bytes.Equal(got[i], want) {
			t.Errorf("%s: %d bytes, want %d (%v)", rel, len(got[i]), len(want), err)
		}
	}
	// No file is left open.
	before := openFDs(t)
	for range 10 {
		br.read(f, rels, max)
	}
	if after := openFDs(t); after != before {
		t.Errorf("open files: %d, then %d after ten batches", before, after)
	}
}

// openFDs counts the process's open files.
func openFDs(t *testing.T) int {
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err) // Linux always has it
	}
	return len(es)
}
