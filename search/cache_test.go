package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace"
	"github.com/agentls/agentls/workspace/workspacetest"
)

// queryOf is the Pattern and Options of grep's arguments (JSON), as
// Queries spell them: the pattern's fields decode into Pattern, and the
// test reads the few options the queries use.
func queryOf(t testing.TB, args string) (Pattern, Options) {
	t.Helper()
	var p Pattern
	var o struct {
		Path       string `json:"path"`
		Glob       string `json:"glob"`
		Type       string `json:"type"`
		Context    int    `json:"context"`
		OutputMode Mode   `json:"output_mode"`
		MaxResults int    `json:"max_results"`
	}
	if err := errors.Join(json.Unmarshal([]byte(args), &p), json.Unmarshal([]byte(args), &o)); err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	return p, Options{Path: o.Path, Glob: o.Glob, Type: o.Type, Mode: o.OutputMode, Limit: o.MaxResults, Before: o.Context, After: o.Context}
}

// run runs one search and fails on an error.
func run(t testing.TB, ws *workspace.Workspace, p Pattern, o Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), ws, p, o)
	if err != nil {
		t.Fatalf("%+v %+v: %v", p, o, err)
	}
	return res
}

// sameResult fails unless a search through the cache found exactly what a
// fresh one did.
func sameResult(t *testing.T, what string, got, want *Result) {
	t.Helper()
	g, w := *got, *want
	if g.Truncated && w.Truncated {
		// How many files a truncated search got to read depends on the
		// workers' timing, cached or not.
		g.Searched, w.Searched = 0, 0
	}
	gj, _ := json.Marshal(g)
	wj, _ := json.Marshal(w)
	if string(gj) != string(wj) {
		t.Fatalf("%s: a cached search differs from a fresh one:\ncached %.2000s\nfresh  %.2000s", what, gj, wj)
	}
}

// goSrcWorkspace is $(go env GOROOT)/src as a workspace without sensitive
// globs (as the ripgrep comparison has it).
func goSrcWorkspace(t testing.TB) *workspace.Workspace {
	t.Helper()
	ws := workspacetest.New(t, testenv.GoSrc(t))
	cfg := *ws.Config()
	cfg.Paths.Sensitive = nil
	ws.SetConfig(&cfg)
	return ws
}

// goSrcCache is goSrcWorkspace and a new cache, for a test (skipped with
// -short) that searches or indexes GOROOT/src.
func goSrcCache(t *testing.T) (*workspace.Workspace, *Cache) {
	t.Helper()
	if testing.Short() {
		t.Skip("searches GOROOT/src")
	}
	return goSrcWorkspace(t), newCache(t)
}

// TestCachedMatchesUncached runs the ripgrep comparison's queries
// (Queries, and the other modes) on GOROOT/src through a cache, twice (the
// first run fills the cache, the second skips files by it): every result
// must equal the uncached one exactly (tools' TestGrepMatchesRipgrep checks
// those against ripgrep).
func TestCachedMatchesUncached(t *testing.T) {
	t.Parallel()
	ws, cache := goSrcCache(t)
	cache.Warm(context.Background(), ws)
	cacheReady(t, cache)
	queries := append([]Query{}, Queries...)
	queries = append(queries,
		Query{Name: "count", Args: `{"pattern":"if err != nil","output_mode":"count"}`},
		Query{Name: "files", Args: `{"pattern":"sync\\.Once\\b","output_mode":"files_with_matches"}`},
		Query{Name: "multiline", Args: `{"pattern":"if err != nil \\{\\n\\s+return err\\n\\s+\\}","multiline":true}`},
		Query{Name: "truncated", Args: `{"pattern":"NewReader","max_results":7}`},
		Query{Name: "context", Args: `{"pattern":"Deadline\\(","context":2,"path":"net"}`},
	)
	for pass := 1; pass <= 2; pass++ {
		for _, q := range queries {
			p, o := queryOf(t, q.Args)
			if o.Limit == 0 {
				o.Limit = 100000
			}
			want := run(t, ws, p, o)
			skips := cache.skips.Load()
			o.Cache = cache
			got := run(t, ws, p, o)
			sameResult(t, fmt.Sprintf("pass %d, %s", pass, q.Name), got, want)
			if pass == 2 {
				t.Logf("%s: %d files skipped", q.Name, cache.skips.Load()-skips)
			}
		}
	}
	if cache.skips.Load() == 0 || cache.indexed.Load() == 0 {
		t.Fatalf("the index answered %d searches and skipped %d files", cache.indexed.Load(), cache.skips.Load())
	}
	st := cache.Status()
	t.Logf("index: %d files, %d segments, %.1f MB of posting lists, %d directories watched", st.Files, st.Segments, float64(st.Bytes)/(1<<20), st.Watches)
}

// put writes a file below root, with mtime unless it is zero.
func put(t *testing.T, root, rel, content string, mtime time.Time) {
	t.Helper()
	testenv.WriteFiles(t, root, map[string]string{rel: content})
	p := filepath.Join(root, filepath.FromSlash(rel))
	if !mtime.IsZero() {
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// oldTree writes files with mtimes an hour old (so that the cache may
// vouch for them) in a fresh folder, and returns it and its workspace.
func oldTree(t *testing.T, files map[string]string) (string, *workspace.Workspace) {
	t.Helper()
	root := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for p, c := range files {
		put(t, root, p, c, old)
	}
	return root, workspacetest.New(t, root)
}

// newCache is an empty cache that closes when the test ends.
func newCache(t testing.TB) *Cache {
	c := NewCache()
	t.Cleanup(c.Close)
	return c
}

// TestCacheInvalidation changes files between cached searches (on disk
// without telling anyone, in open buffers, with and without notifications)
// and checks that every cached search returns exactly what a fresh search
// does.
func TestCacheInvalidation(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"watch", "stat"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testCacheInvalidation(t, mode == "stat")
		})
	}
}

func testCacheInvalidation(t *testing.T, noWatch bool) {
	root := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for i := range 20 {
		put(t, root, fmt.Sprintf("d%d/f%d.go", i%3, i), fmt.Sprintf("package d\n\nfunc F%d() {}\n", i), old)
	}
	put(t, root, "a/target.go", "package a\n// nothing here\n", old)
	put(t, root, "b/other.go", "package b\n// xyzzy plugh\n", old)
	// Over the size cap: counted, not read, unless open in a buffer.
	put(t, root, "big/huge.go", "package big\n// xyzzy\n"+strings.Repeat("// filler\n", 100), old)
	ws := workspacetest.New(t, root)
	cfg := *ws.Config()
	cfg.Limits.MaxFileBytes = 512
	ws.SetConfig(&cfg)
	cache := newCache(t)
	cache.noWatch = noWatch
	queries := []string{
		`{"pattern":"xyzzy"}`,
		`{"pattern":"xyzzy","path":"d0"}`,
		`{"pattern":"frob","type":"go","case_insensitive":true}`,
		`{"pattern":"F\\d","glob":"!d1/**"}`,
		`{"pattern":"XYZZY","case_insensitive":true}`,
		`{"pattern":"plugh|frobnicate","output_mode":"count"}`,
		`{"pattern":"[a-z]+Frob\\(","output_mode":"files_with_matches"}`,
		`{"pattern":"func F1\\d"}`,
	}
	check := func(step string) {
		t.Helper()
		for _, q := range queries {
			p, o := queryOf(t, q)
			want := run(t, ws, p, o)
			o.Cache = cache
			sameResult(t, step+": "+q, run(t, ws, p, o), want)
		}
	}
	check("first")
	cacheReady(t, cache)
	skips, indexed := cache.skips.Load(), cache.indexed.Load()
	check("unchanged")
	if cache.skips.Load() == skips {
		t.Fatal("an unchanged tree skipped no file")
	}
	if answered := cache.indexed.Load() > indexed; answered == noWatch {
		t.Fatalf("the index answered without a walk: %v", answered)
	}

	abs := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	write := func(rel, content string, mtime time.Time) func() error {
		return func() error { put(t, root, rel, content, mtime); return nil }
	}
	remove := func(rel string) func() error { return func() error { return os.Remove(abs(rel)) } }
	buf, huge := abs("d0/f3.go"), abs("big/huge.go")
	for _, step := range []struct {
		name   string
		change func() error
	}{
		// On disk, without notification: same size, mtime put back (rsync -t).
		{"rewritten in place, old mtime", write("a/target.go", "package a\n// xyzzy Frob(\n", old)},
		{"rewritten, fresh mtime", write("a/target.go", "package a\n// nothing xx\n", time.Time{})},
		{"created", write("c/new.go", "package c\n// XyZzY frobnicate lowerFrob(\n", old)},
		{"deleted", remove("b/other.go")},
		{"renamed", func() error { return os.Rename(abs("c/new.go"), abs("d0/moved.go")) }},
		{"ignored", write(".gitignore", "d0/\n", old)},
		{"unignored", remove(".gitignore")},

		// As the file tools write: fresh mtimes, a same-size edit.
		{"written", write("d1/f1.go", "package d\n// xyzzy\nfunc F11() {}\n", time.Time{})},
		{"edited, same size", write("d1/f1.go", "package d\n// plugh\nfunc F11() {}\n", time.Time{})},
		{"created now", write("e/tool.go", "package e\n// frobnicate\n", time.Time{})},
		{"deleted now", remove("d2/f2.go")},

		// Open buffers: what the editor has, not what the disk has.
		{"opened", func() error {
			ws.Overlays.Open(workspace.Document{URI: "file://" + buf, Path: buf, LanguageID: "go", Version: 1, Text: "package d\n"})
			return nil
		}},
		{"changed buffer", func() error {
			return ws.Overlays.Change(buf, 2, []workspace.Change{{Text: "package d\n// xyzzy FROB(\n"}})
		}},
		{"closed buffer", func() error { ws.Overlays.Close(buf); return nil }},
		{"opened, over the size cap", func() error {
			ws.Overlays.Open(workspace.Document{URI: "file://" + huge, Path: huge, LanguageID: "go", Version: 1, Text: "package big\n// xyzzy Frob(\n"})
			return nil
		}},
		{"closed, over the size cap", func() error { ws.Overlays.Close(huge); return nil }},

		// Notifications and resets; results stay the same.
		{"notified", func() error {
			put(t, root, "d1/f1.go", "package d\n// xyzzy\nfunc F11() {}\n", old)
			cache.Changed(abs("d1/f1.go"))
			return nil
		}},
		// The config says another file is sensitive: the searches
		// leave it out, though the tree did not change.
		{"sensitive", func() error {
			cfg := *ws.Config()
			cfg.Paths.Sensitive = append(slices.Clone(cfg.Paths.Sensitive), "**/f1.go")
			ws.SetConfig(&cfg)
			return nil
		}},
		{"reset", func() error {
			cache.Reset()
			if n := cache.Len(); n != 0 {
				t.Errorf("after Reset: %d files", n)
			}
			return nil
		}},
	} {
		if err := step.change(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		check(step.name)
	}
}

// cacheReady waits until the cache's indexes are built.
func cacheReady(t *testing.T, cache *Cache) {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for !cache.Status().Ready {
		if time.Now().After(deadline) {
			t.Fatalf("the index was not built: %+v", cache.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// indexedRels returns the paths (relative to root) the cache's index of
// root holds.
func indexedRels(cache *Cache, root string) map[string]bool {
	cache.mu.Lock()
	defer cache.mu.Unlock()
	got := map[string]bool{}
	if ri := cache.roots[root]; ri != nil {
		for rel := range ri.files {
			got[rel] = true
		}
	}
	return got
}

// warmTree is a tree whose files have old mtimes (so that the cache may
// vouch for them): three that a search reads, one sensitive, one ignored.
func warmTree(t *testing.T) (string, *workspace.Workspace) {
	return oldTree(t, map[string]string{
		"a.go": "package a\n// xyzzy\n", "b/b.go": "package b\n", "c/c.txt": "plain text\n",
		"keys/server.pem": "xyzzy secret\n", "ignored/x.go": "package x // xyzzy\n", ".ignore": "ignored/\n",
	})
}

// TestWarm fills the cache in the background as a server does after
// initialized: the files a search would read, never a sensitive one; the
// first search then skips files and returns what a fresh search does.
func TestWarm(t *testing.T) {
	t.Parallel()
	root, ws := warmTree(t)
	cache := newCache(t)
	cache.Warm(context.Background(), ws)
	cacheReady(t, cache)
	got := indexedRels(cache, root)
	for _, p := range []string{"a.go", "b/b.go", "c/c.txt", ".ignore"} {
		if !got[p] {
			t.Errorf("the index lacks %s", p)
		}
	}
	for _, p := range []string{"keys/server.pem", "ignored/x.go"} {
		if got[p] {
			t.Errorf("the index read %s", p)
		}
	}
	p := Pattern{Expr: "xyzzy"}
	want := run(t, ws, p, Options{})
	sameResult(t, "after the warm-up", run(t, ws, p, Options{Cache: cache}), want)
	if cache.skips.Load() != 2 {
		t.Errorf("skipped %d files, want 2", cache.skips.Load())
	}
}

// TestCacheClose closes a cache while it fills GOROOT/src: Close returns
// once the fill has stopped, and a closed cache holds nothing, learns
// nothing and starts no fill, while searches through it still answer as
// fresh ones.
func TestCacheClose(t *testing.T) {
	t.Parallel()
	cache := NewCache()
	if runtime.GOROOT() != "" {
		if src := filepath.Join(runtime.GOROOT(), "src"); dirExists(src) {
			cache.Warm(context.Background(), workspacetest.New(t, src))
		}
	}
	cache.Close()
	if cache.building.Load() {
		t.Fatal("a build runs after Close")
	}
	cache.Close() // twice is fine
	_, ws := warmTree(t)
	cache.Warm(context.Background(), ws)
	if cache.building.Load() {
		t.Fatal("Warm after Close started a build")
	}
	p := Pattern{Expr: "xyzzy"}
	want := run(t, ws, p, Options{})
	sameResult(t, "closed cache", run(t, ws, p, Options{Cache: cache}), want)
	if n := cache.Len(); n != 0 {
		t.Errorf("a closed cache holds %d files", n)
	}
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// TestBinaryFiles: a file with a NUL byte in its first 64 KiB shows no
// match and does not count among the binary files, whose search stopped
// after a match (Result.Binary); the index holds no trigram of it, so a
// query with one does not read it. A file whose NUL comes later shows its
// matches before the buffer that holds it, and counts. The same through
// the index as without it, and the lines ripgrep prints, when it is
// installed.
func TestBinaryFiles(t *testing.T) {
	t.Parallel()
	root, ws := oldTree(t, map[string]string{
		"early.bin": "needle\x00rest\n",
		"late.bin":  "needle one\n" + strings.Repeat("filler line of text\n", 4000) + "needle two\x00\n",
		"text.txt":  "a needle\n",
		"after.bin": strings.Repeat("filler line of text\n", 4000) + "needle three\x00\n",
	})
	want := []string{"late.bin:1", "text.txt:1"}
	lines := func(res *Result) []string {
		var out []string
		for _, f := range res.Files {
			for _, m := range f.Matches {
				out = append(out, fmt.Sprintf("%s:%d", f.Path, m.Line))
			}
		}
		slices.Sort(out)
		return out
	}
	p, o := queryOf(t, `{"pattern":"needle"}`)
	fresh := run(t, ws, p, o)
	if got := lines(fresh); !slices.Equal(got, want) || fresh.Binary != 1 {
		t.Fatalf("matches %v, %d binary files; want %v, 1 (late.bin)", got, fresh.Binary, want)
	}

	cache := newCache(t)
	cache.Warm(context.Background(), ws)
	cacheReady(t, cache)
	o.Cache = cache
	sameResult(t, "indexed", run(t, ws, p, o), fresh)
	cache.mu.Lock()
	defer cache.mu.Unlock()
	filters := 0
	for _, s := range cache.roots[root].segs {
		for _, bd := range s.bins {
			if s.docs[bd.local].rel != "early.bin" {
				continue
			}
			filters++
			if slices.ContainsFunc(s.blooms[bd.off:bd.off+bd.n], func(b byte) bool { return b != 0 }) {
				t.Errorf("early.bin has trigrams in the index")
			}
		}
	}
	if filters != 1 {
		t.Errorf("early.bin has %d filters in the index, want 1 (empty)", filters)
	}

	if _, err := exec.LookPath("rg"); err == nil {
		if got := slices.Sorted(maps.Keys(testenv.RgLines(t, root, "needle"))); !slices.Equal(got, want) {
			t.Errorf("ripgrep prints %v, want %v", got, want)
		}
	}
}
