//go:build linux

package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentls/agentls/internal/testenv"
)

// treeEvents is a TreeWatcher under test with the paths it reported.
type treeEvents struct {
	t    *testing.T
	tw   *TreeWatcher
	mu   sync.Mutex
	seen map[string]bool
}

func watchTree(t *testing.T, roots ...string) *treeEvents {
	t.Helper()
	ws, err := New(roots...)
	if err != nil {
		t.Fatal(err)
	}
	te := &treeEvents{t: t, seen: map[string]bool{}}
	te.tw, err = WatchTree(ws, func(e WatchEvent) {
		te.mu.Lock()
		te.seen[e.Path] = true
		te.mu.Unlock()
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(te.tw.Close)
	return te
}

// waitFor waits until the watcher reported path.
func (te *treeEvents) waitFor(path string) {
	te.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		te.mu.Lock()
		ok := te.seen[path]
		te.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			te.t.Fatalf("the watcher never reported %s", path)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// watching reports whether the watcher watches dir.
func (te *treeEvents) watching(dir string) bool {
	te.tw.mu.Lock()
	defer te.tw.mu.Unlock()
	return te.tw.w != nil && te.tw.w.Watching(dir)
}

// TestTreeWatcher: the directories the walk enters are watched, those
// made later too (with the files already in them reported), not hidden
// nor ignored ones; an ignore file that stops ignoring a directory makes
// it watched; a root that cannot be watched makes Sync false until it can.
func TestTreeWatcher(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	testenv.WriteFiles(t, root, map[string]string{
		"a/a.go": "package a\n", ".gitignore": "build/\n", "build/out.txt": "x\n", ".hidden/h.txt": "h\n",
	})
	os.Mkdir(filepath.Join(root, ".git"), 0o755)
	te := watchTree(t, root)
	if !te.tw.Sync() {
		t.Fatal("Sync: the root is not watched")
	}
	cases := []struct {
		dir   string
		watch bool
	}{
		{"", true}, {"a", true}, {"build", false}, {".hidden", false}, {".git", false},
	}
	for _, c := range cases {
		if got := te.watching(filepath.Join(root, c.dir)); got != c.watch {
			t.Errorf("watching %q = %v, want %v", c.dir, got, c.watch)
		}
	}

	// A file rewritten in a watched folder.
	testenv.WriteFiles(t, root, map[string]string{"a/a.go": "package a\n\nfunc A() {}\n"})
	te.waitFor(filepath.Join(root, "a", "a.go"))
	// Folders made at once with a file: the file is reported, the folders
	// watched; a new hidden or ignored one is not watched.
	testenv.WriteFiles(t, root, map[string]string{"n/m/new.go": "package m\n", ".h2/x.go": "package x\n", "build/sub/y.txt": "y\n"})
	te.waitFor(filepath.Join(root, "n", "m", "new.go"))
	testenv.WriteFiles(t, root, map[string]string{"sentinel.txt": "s\n"})
	te.waitFor(filepath.Join(root, "sentinel.txt"))
	for _, c := range []struct {
		dir   string
		watch bool
	}{{"n", true}, {"n/m", true}, {".h2", false}, {"build/sub", false}} {
		if got := te.watching(filepath.Join(root, filepath.FromSlash(c.dir))); got != c.watch {
			t.Errorf("watching %q = %v, want %v", c.dir, got, c.watch)
		}
	}

	// The ignore file no longer ignores build/: it is watched.
	testenv.WriteFiles(t, root, map[string]string{".gitignore": "other/\n"})
	te.waitFor(filepath.Join(root, ".gitignore"))
	if !te.watching(filepath.Join(root, "build")) || !te.watching(filepath.Join(root, "build", "sub")) {
		t.Error("build/ is not watched once no longer ignored")
	}

	// A folder removed is let go.
	if err := os.RemoveAll(filepath.Join(root, "n")); err != nil {
		t.Fatal(err)
	}
	te.waitFor(filepath.Join(root, "n"))
	// The kernel ends a removed folder's watch when the folder's inode goes,
	// which may come after its parent's event: more events are made until
	// the watcher has seen it (or the test's deadline fails it).
	for i := 0; te.watching(filepath.Join(root, "n", "m")); i++ {
		if i == 200 {
			t.Fatal("a removed folder is still watched")
		}
		name := fmt.Sprintf("sentinel%d.txt", i)
		testenv.WriteFiles(t, root, map[string]string{name: "s\n"})
		te.waitFor(filepath.Join(root, name))
	}
}

// TestTreeWatcherRoots: a root that does not exist is not watched (Sync
// false) until it does; roots added and removed follow the workspace.
func TestTreeWatcherRoots(t *testing.T) {
	t.Parallel()
	first := t.TempDir()
	second := filepath.Join(t.TempDir(), "later")
	te := watchTree(t, first, second)
	if te.tw.Sync() {
		t.Fatal("Sync with a missing root: true")
	}
	if !te.watching(first) {
		t.Error("the root that exists is not watched")
	}
	testenv.WriteFiles(t, second, map[string]string{"pkg/p.go": "package p\n"})
	if !te.tw.Sync() {
		t.Fatal("Sync once the root exists: false")
	}
	if !te.watching(filepath.Join(second, "pkg")) {
		t.Error("the new root's folder is not watched")
	}
	if err := te.tw.ws.SetRoots([]string{second}); err != nil {
		t.Fatal(err)
	}
	if !te.tw.Sync() || te.watching(first) {
		t.Errorf("a removed root is still watched")
	}
	if err := te.tw.ws.SetRoots(nil); err != nil {
		t.Fatal(err)
	}
	if !te.tw.Sync() || te.tw.w.Len() != 0 {
		t.Errorf("no roots: %d watches", te.tw.w.Len())
	}
}

// TestDirWatcherCloseEndsWait: Close ends a Wait at once, not at its
// timeout (closing the inotify descriptor alone does not end a poll of it:
// the end of every session waited for the search cache's Wait(200)).
func TestDirWatcherCloseEndsWait(t *testing.T) {
	t.Parallel()
	// This file builds on Linux only, where inotify is always there: a
	// watcher that cannot be made is a failure, not a reason to skip,
	// unless the user's inotify instances ran out (a limit the person's
	// editors and other tests share).
	w, err := NewDirWatcher()
	if errors.Is(err, unix.EMFILE) {
		t.Skipf("the user's inotify instances ran out: %v", err)
	}
	if err != nil {
		t.Fatalf("no watcher on Linux: %v", err)
	}
	if err := w.Add(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() {
		w.Wait(10 * 60 * 1000) // ten minutes: only Close ends it within the test's time
		close(waited)
	}()
	time.Sleep(50 * time.Millisecond) // (the goroutine is in its poll, or about to be)
	w.Close()
	select {
	case <-waited:
	case <-time.After(60 * time.Second):
		t.Fatal("Wait went on after Close")
	}
	w.Wait(10 * 60 * 1000) // on a closed watcher: returns at once
}
