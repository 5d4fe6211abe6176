package workspace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
)

// walkTree makes a small tree: a git repository with a .gitignore, hidden
// files, a large file, a binary file and symlinks in and out of the root.
func walkTree(t *testing.T) (root, outside string) {
	t.Helper()
	isolate(t)
	root = t.TempDir()
	outside = t.TempDir()
	files := map[string]string{
		".gitignore":        "*.log\nvendor/\n",
		"a.go":              "package a\n",
		"a.log":             "log\n",
		"b/c.go":            "package b\n",
		"b/d/e.txt":         "e\n",
		"b/.gitignore":      "!keep.log\n",
		"b/keep.log":        "kept\n",
		"vendor/v.go":       "package v\n",
		".hidden/h.txt":     "h\n",
		".dotfile":          "d\n",
		"big.txt":           strings.Repeat("x", 2000),
		"bin.dat":           "ab\x00cd",
		".git/config":       "",
		".git/info/exclude": "*.excl\n",
		"x.excl":            "",
	}
	for p, c := range files {
		write(t, filepath.Join(root, p), c)
	}
	write(t, filepath.Join(outside, "secret.txt"), "s\n")
	must(t, os.Symlink(filepath.Join(root, "b"), filepath.Join(root, "linkdir")))
	must(t, os.Symlink(filepath.Join(root, "a.go"), filepath.Join(root, "link.go")))
	must(t, os.Symlink(outside, filepath.Join(root, "out")))
	must(t, os.Symlink(root, filepath.Join(root, "b", "loop")))
	return root, outside
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func rels(fs []*File) []string {
	out := []string{}
	for _, f := range fs {
		s := f.Rel
		if f.IsDir() {
			s += "/"
		}
		if f.Type&os.ModeSymlink != 0 {
			s += "@"
		}
		out = append(out, s)
	}
	return out
}

func TestWalk(t *testing.T) {
	root, _ := walkTree(t)
	ctx := context.Background()
	tests := []struct {
		name string
		root string
		opts WalkOptions
		want []string
	}{
		{"default", root, WalkOptions{}, []string{"a.go", "b/c.go", "b/d/e.txt", "b/keep.log", "b/loop@", "big.txt", "bin.dat", "link.go@", "linkdir@", "out@"}},
		{"dirs and depth 1", root, WalkOptions{Dirs: true, MaxDepth: 1}, []string{"a.go", "b/", "big.txt", "bin.dat", "link.go@", "linkdir@", "out@"}},
		{"depth 2", root, WalkOptions{Dirs: true, MaxDepth: 2}, []string{"a.go", "b/", "b/c.go", "b/d/", "b/keep.log", "b/loop@", "big.txt", "bin.dat", "link.go@", "linkdir@", "out@"}},
		{"hidden", root, WalkOptions{IncludeHidden: true, MaxDepth: 1}, []string{".dotfile", ".gitignore", "a.go", "big.txt", "bin.dat", "link.go@", "linkdir@", "out@"}},
		{"ignored", root, WalkOptions{IncludeIgnored: true, MaxDepth: 1}, []string{"a.go", "a.log", "big.txt", "bin.dat", "link.go@", "linkdir@", "out@", "x.excl"}},
		{"size cap", root, WalkOptions{MaxFileBytes: 1000, MaxDepth: 1}, []string{"a.go", "bin.dat", "link.go@", "linkdir@", "out@"}},
		{"follow links inside the root", root, WalkOptions{FollowSymlinks: true}, []string{
			"a.go", "b/c.go", "b/d/e.txt", "b/keep.log", "b/loop@", "big.txt", "bin.dat", "link.go",
			"linkdir/c.go", "linkdir/d/e.txt", "linkdir/keep.log", "linkdir/loop@", "out@"}},
		{"subdirectory of the repository keeps the parent's rules", filepath.Join(root, "b"), WalkOptions{IncludeHidden: true}, []string{".gitignore", "c.go", "d/e.txt", "keep.log", "loop@"}},
		{"a file", filepath.Join(root, "a.log"), WalkOptions{}, []string{"a.log"}},
		{"filter keeps hidden and ignored", root, WalkOptions{MaxDepth: 1, Filter: func(rel string, isDir bool) Verdict {
			switch rel {
			case "a.log", ".dotfile":
				return KeepIgnored | KeepHidden
			case ".gitignore":
				return KeepIgnored // hidden: still skipped
			case "x.excl":
				return KeepHidden // ignored: still skipped
			case "a.go":
				return Skip
			}
			return 0
		}}, []string{".dotfile", "a.log", "big.txt", "bin.dat", "link.go@", "linkdir@", "out@"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, _, err := Collect(ctx, tt.root, tt.opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := rels(files); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestWalkStatsAndRead(t *testing.T) {
	root, _ := walkTree(t)
	var binary, large, text []string
	stats, err := Walk(context.Background(), root, WalkOptions{MaxFileBytes: 1000, ReadContent: true, Workers: 3}, func(f *File) error {
		if !f.IsRegular() {
			return nil
		}
		_, err := f.ReadText(nil)
		switch {
		case errors.Is(err, ErrBinary):
			binary = append(binary, f.Rel)
		case errors.Is(err, ErrTooLarge):
			large = append(large, f.Rel)
		case err == nil:
			text = append(text, f.Rel)
		default:
			t.Errorf("%s: %v", f.Rel, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(binary, []string{"bin.dat"}) || !reflect.DeepEqual(large, []string{"big.txt"}) {
		t.Errorf("binary %q, large %q", binary, large)
	}
	if stats.Binary.Load() != 1 || stats.TooLarge.Load() != 1 || stats.Ignored.Load() != 3 || stats.Hidden.Load() == 0 {
		t.Errorf("stats: binary %d, too large %d, ignored %d, hidden %d", stats.Binary.Load(), stats.TooLarge.Load(), stats.Ignored.Load(), stats.Hidden.Load())
	}
	// Read without a cap reads everything, through a small buffer.
	data, err := readFileRaw(filepath.Join(root, "big.txt"), make([]byte, 0, 10), 0, nil)
	if err != nil || len(data) != 2000 {
		t.Errorf("readFileRaw: %d bytes, %v", len(data), err)
	}
}

func TestWalkSkipDirAndErrors(t *testing.T) {
	root, _ := walkTree(t)
	files, _, err := Collect(context.Background(), root, WalkOptions{Dirs: true, Prune: func(rel string) bool { return rel != "b/d" }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasPrefix(f.Rel, "b/d") {
			t.Errorf("pruned %s reported", f.Rel)
		}
	}
	var seen []string
	_, err = Walk(context.Background(), root, WalkOptions{Dirs: true, Workers: 1}, func(f *File) error {
		seen = append(seen, f.Rel)
		if f.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range seen {
		if strings.Contains(s, "/") {
			t.Errorf("SkipDir: %s reported", s)
		}
	}
	boom := errors.New("boom")
	if _, err := Walk(context.Background(), root, WalkOptions{}, func(*File) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("fn's error: got %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Walk(ctx, root, WalkOptions{}, func(*File) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled walk: got %v", err)
	}
	if _, err := Walk(context.Background(), filepath.Join(root, "missing"), WalkOptions{}, nil); err == nil {
		t.Error("walk of a missing root: no error")
	}
}

func TestWalkComparePaths(t *testing.T) {
	t.Parallel()
	got := []string{"a.go", "a/b", "a", "a-b", "B", "a/b/c", "ab"}
	files := make([]*File, len(got))
	for i, s := range got {
		files[i] = &File{Rel: s}
	}
	sortFiles(files)
	want := []string{"B", "a", "a/b", "a/b/c", "a-b", "a.go", "ab"}
	if r := rels(files); !reflect.DeepEqual(r, want) {
		t.Errorf("got %q, want %q", r, want)
	}
}

// TestWalkGitRepoOnly checks ripgrep's rule: .gitignore counts only in a git
// repository, .ignore everywhere.
func TestWalkGitRepoOnly(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	isolate(t)
	root := t.TempDir()
	write(t, filepath.Join(root, ".gitignore"), "*.a\n")
	write(t, filepath.Join(root, ".ignore"), "*.b\n")
	for _, f := range []string{"x.a", "x.b", "x.c"} {
		write(t, filepath.Join(root, f), "")
	}
	files, _, err := Collect(context.Background(), root, WalkOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := rels(files); FindRepo(root) == "" && !reflect.DeepEqual(got, []string{"x.a", "x.c"}) {
		t.Errorf("outside git: got %q", got)
	}
	must(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	files, _, err = Collect(context.Background(), root, WalkOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := rels(files); !reflect.DeepEqual(got, []string{"x.c"}) {
		t.Errorf("inside git: got %q", got)
	}
}

// BenchmarkWalkGOROOT walks $GOROOT/src, the tree the search measurements
// use.
func BenchmarkWalkGOROOT(b *testing.B) {
	src := testenv.GoSrc(b)
	for b.Loop() {
		n := 0
		var mu sync.Mutex
		if _, err := Walk(context.Background(), src, WalkOptions{}, func(f *File) error {
			mu.Lock()
			n++
			mu.Unlock()
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n), "files")
	}
}

// TestBufferSize checks the growth of a read buffer: sized for the file
// without one, doubling one the caller reuses, within the cap.
func TestBufferSize(t *testing.T) {
	for _, c := range []struct{ size, had, limit, want int64 }{
		{100, 0, 0, 612},
		{100, 0, 1000, 612},
		{100, 10, 0, 32 << 10},
		{40 << 10, 32 << 10, 0, 64 << 10},
		{100 << 10, 32 << 10, 0, 100<<10 + 512},
		{40 << 10, 32 << 10, 50 << 10, 50<<10 + 1},
		{50 << 10, 32 << 10, 50 << 10, 50<<10 + 512},
	} {
		if got := bufferSize(c.size, c.had, c.limit); got != c.want {
			t.Errorf("bufferSize(%d, %d, %d) = %d, want %d", c.size, c.had, c.limit, got, c.want)
		}
	}
}
