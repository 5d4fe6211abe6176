package search

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentls/agentls/workspace/workspacetest"
)

// TestGeneration checks that the change count moves on every change of a
// watched directory made behind the cache's back, and that the cache
// vouches only for the directories it watches, only while it has a
// watcher.
func TestGeneration(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for _, rel := range []string{"a/x.go", "a/b/y.go", ".hidden/z.go", "ign/w.go"} {
		put(t, root, rel, "package p\n", old)
	}
	put(t, root, ".ignore", "ign/\n", old)
	ws := workspacetest.New(t, root)
	cache := NewCache()
	if _, ok := cache.Generation(ws, root); ok {
		t.Fatal("a cache that indexes nothing vouches for the root")
	}
	cache.Warm(context.Background(), ws)
	cacheReady(t, cache)
	abs := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	for _, tc := range []struct {
		dir string
		ok  bool
	}{
		{"", true}, {"a", true}, {"a/b", true},
		{".hidden", false}, {"ign", false}, {"missing", false},
	} {
		if _, ok := cache.Generation(ws, root, abs(tc.dir)); ok != tc.ok {
			t.Errorf("Generation(%q): ok %v, want %v", tc.dir, ok, tc.ok)
		}
	}
	if _, ok := cache.Generation(workspacetest.New(t, root), root); ok {
		t.Error("the cache vouches for another workspace")
	}
	gen, _ := cache.Generation(ws, root)
	if again, _ := cache.Generation(ws, root); again != gen {
		t.Fatalf("no change moved the count: %d then %d", gen, again)
	}
	changes := []struct {
		what string
		do   func() error
	}{
		{"write", func() error { return os.WriteFile(abs("a/b/y.go"), []byte("package q\n"), 0o644) }},
		{"create", func() error { return os.WriteFile(abs("a/new.go"), []byte("package p\n"), 0o644) }},
		{"chtimes", func() error { return os.Chtimes(abs("a/x.go"), old, old) }},
		{"rename", func() error { return os.Rename(abs("a/new.go"), abs("a/b/new.go")) }},
		{"remove", func() error { return os.Remove(abs("a/b/new.go")) }},
		{"symlink", func() error { return os.Symlink("x.go", abs("a/link")) }},
		{"mkdir", func() error { return os.Mkdir(abs("a/c"), 0o755) }},
	}
	for _, ch := range changes {
		if err := ch.do(); err != nil {
			t.Fatal(err)
		}
		g, ok := cache.Generation(ws, root)
		if !ok || g == gen {
			t.Fatalf("%s: count %d (ok %v), before %d", ch.what, g, ok, gen)
		}
		gen = g
	}
	// A new directory is watched once its event is applied.
	if _, ok := cache.Generation(ws, abs("a/c")); !ok {
		t.Error("a new directory is not vouched for")
	}
	// An ignore file changed: the root is built again; meanwhile nothing
	// is vouched for, and the count has moved once it is.
	if err := os.WriteFile(abs(".ignore"), []byte("other/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if g, ok := cache.Generation(ws, root); ok && g == gen {
		t.Fatal("a changed ignore file left the count")
	}
	cacheReady(t, cache)
	if g, ok := cache.Generation(ws, root, abs("ign")); !ok || g == gen {
		t.Fatalf("after the rebuild: count %d (ok %v), before %d", g, ok, gen)
	}
	cache.Close()
	if _, ok := cache.Generation(ws, root); ok {
		t.Error("a closed cache vouches for the root")
	}
}

// TestGenerationNoWatcher checks that a cache without a watcher (the
// fallback when inotify is missing or its watches ran out) vouches for
// nothing.
func TestGenerationNoWatcher(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	put(t, root, "a/x.go", "package p\n", time.Time{})
	ws := workspacetest.New(t, root)
	cache := newCache(t)
	cache.noWatch = true
	cache.Warm(context.Background(), ws)
	cacheReady(t, cache)
	if _, ok := cache.Generation(ws, root); ok {
		t.Error("a cache without a watcher vouches for the root")
	}
}
