package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/workspace"
)

// cachedEnv is an environment whose session has a search cache, as the LSP
// server's has.
func cachedEnv(ws *workspace.Workspace) *Env {
	env := &Env{Workspace: ws, Session: NewSession(), Memory: approval.NewMemory(""),
		Approver: approval.ApproverFunc(func(context.Context, approval.Request) (approval.Response, error) {
			return approval.Response{Decision: approval.Approve}, nil
		})}
	EnableSearchCache(env.Session)
	return env
}

// sameResult fails unless a and b have the same content and structured
// result.
func sameResult(t *testing.T, what string, got, want *Result) {
	t.Helper()
	if got.Status != want.Status || got.Content != want.Content {
		t.Fatalf("%s: cached search differs from a fresh one:\n--- cached (%s)\n%s\n--- fresh (%s)\n%s", what, got.Status, got.Content, want.Status, want.Content)
	}
	gs, _ := got.Structured.(map[string]any)
	ws, _ := want.Structured.(map[string]any)
	if gs["truncated"] == true && ws["truncated"] == true {
		// How many files a truncated search got to read depends on the
		// workers' timing, cached or not.
		delete(gs, "files_searched")
		delete(ws, "files_searched")
	}
	g, _ := json.Marshal(gs)
	w, _ := json.Marshal(ws)
	if string(g) != string(w) {
		t.Fatalf("%s: structured results differ:\ncached %s\nfresh  %s", what, g, w)
	}
}

// TestGrepCachedMatchesRipgrep runs the ripgrep comparison's queries through
// a session with a search cache, twice (the first run fills the cache, the
// second skips files by it): every result must equal the uncached one
// exactly, and so ripgrep's (TestGrepMatchesRipgrep).
func TestGrepCachedMatchesRipgrep(t *testing.T) {
	src := goSrc(t)
	ws := rgWorkspace(t, src)
	env := cachedEnv(ws)
	cache := searchCacheOf(env.Session)
	queries := append([]SearchQuery{}, SearchQueries...)
	queries = append(queries,
		SearchQuery{Name: "count", Args: `{"pattern":"if err != nil","output_mode":"count"}`},
		SearchQuery{Name: "files", Args: `{"pattern":"sync\\.Once\\b","output_mode":"files_with_matches"}`},
		SearchQuery{Name: "multiline", Args: `{"pattern":"if err != nil \\{\\n\\s+return err\\n\\s+\\}","multiline":true}`},
		SearchQuery{Name: "truncated", Args: `{"pattern":"NewReader","max_results":7}`},
		SearchQuery{Name: "context", Args: `{"pattern":"Deadline\\(","context":2,"path":"net"}`},
	)
	for pass := 1; pass <= 2; pass++ {
		for _, q := range queries {
			var args map[string]any
			if err := json.Unmarshal([]byte(q.Args), &args); err != nil {
				t.Fatal(err)
			}
			if _, ok := args["max_results"]; !ok {
				args["max_results"] = 100000
			}
			raw, _ := json.Marshal(args)
			skips := cache.skips.Load()
			got := ftRunner().Run(context.Background(), env, Request{Name: "grep", Arguments: raw}, nil)
			want := RunTool(context.Background(), ws, "grep", raw)
			sameResult(t, fmt.Sprintf("pass %d, %s", pass, q.Name), got, want)
			if pass == 2 {
				t.Logf("%s: %d files skipped", q.Name, cache.skips.Load()-skips)
			}
		}
	}
	if cache.skips.Load() == 0 {
		t.Fatal("the cache never skipped a file")
	}
	t.Logf("cache: %d files, %.1f MB of filters", len(cache.files), float64(cache.bytes)/(1<<20))
}

// TestGrepCacheInvalidation changes files between cached searches (on disk
// without telling anyone, through the tools, in open buffers) and checks
// that every cached search returns exactly what a fresh search does.
func TestGrepCacheInvalidation(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-time.Hour)
	put := func(rel, content string, mtime time.Time) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if !mtime.IsZero() {
			if err := os.Chtimes(p, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 20 {
		put(fmt.Sprintf("d%d/f%d.go", i%3, i), fmt.Sprintf("package d\n\nfunc F%d() {}\n", i), old)
	}
	put("a/target.go", "package a\n// nothing here\n", old)
	put("b/other.go", "package b\n// xyzzy plugh\n", old)
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	env := cachedEnv(ws)
	cache := searchCacheOf(env.Session)
	queries := []string{
		`{"pattern":"xyzzy"}`,
		`{"pattern":"XYZZY","case_insensitive":true}`,
		`{"pattern":"plugh|frobnicate","output_mode":"count"}`,
		`{"pattern":"[a-z]+Frob\\(","output_mode":"files_with_matches"}`,
		`{"pattern":"func F1\\d"}`,
	}
	check := func(step string) {
		t.Helper()
		for _, q := range queries {
			got := ftRunner().Run(context.Background(), env, Request{Name: "grep", Arguments: json.RawMessage(q)}, nil)
			want := RunTool(context.Background(), ws, "grep", json.RawMessage(q))
			sameResult(t, step+": "+q, got, want)
		}
	}
	check("first")
	skips := cache.skips.Load()
	check("unchanged")
	if cache.skips.Load() == skips {
		t.Fatal("an unchanged tree skipped no file")
	}

	// On disk, without notification: same size, mtime put back (rsync -t).
	put("a/target.go", "package a\n// xyzzy Frob(\n", old)
	check("rewritten in place, old mtime")
	put("a/target.go", "package a\n// nothing xx\n", time.Time{})
	check("rewritten, fresh mtime")
	put("c/new.go", "package c\n// XyZzY frobnicate lowerFrob(\n", old)
	check("created")
	if err := os.Remove(filepath.Join(root, "b/other.go")); err != nil {
		t.Fatal(err)
	}
	check("deleted")
	if err := os.Rename(filepath.Join(root, "c/new.go"), filepath.Join(root, "d0/moved.go")); err != nil {
		t.Fatal(err)
	}
	check("renamed")
	put(".gitignore", "d0/\n", old)
	check("ignored")
	if err := os.Remove(filepath.Join(root, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	check("unignored")

	// Through the tools.
	for _, call := range []struct{ name, args string }{
		{"read_file", `{"path":"d1/f1.go"}`},
		{"write_file", `{"path":"d1/f1.go","content":"package d\n// xyzzy\nfunc F11() {}\n"}`},
		{"edit_file", `{"path":"d1/f1.go","old_string":"xyzzy","new_string":"plugh"}`},
		{"write_file", `{"path":"e/tool.go","content":"package e\n// frobnicate\n"}`},
		{"delete_file", `{"path":"d2/f2.go"}`},
	} {
		res := ftRunner().Run(context.Background(), env, Request{Name: call.name, Arguments: json.RawMessage(call.args)}, nil)
		if res.Status != StatusSuccess {
			t.Fatalf("%s %s: %s", call.name, call.args, res.Content)
		}
		check(call.name + " " + call.args)
	}

	// Open buffers: what the editor has, not what the disk has.
	p := filepath.Join(root, "d0/f3.go")
	ws.Overlays.Open(workspace.Document{URI: "file://" + p, Path: p, LanguageID: "go", Version: 1, Text: "package d\n"})
	check("opened")
	if err := ws.Overlays.Change(p, 2, []workspace.Change{{Text: "package d\n// xyzzy FROB(\n"}}); err != nil {
		t.Fatal(err)
	}
	check("changed buffer")
	ws.Overlays.Close(p)
	check("closed buffer")

	// Notifications and resets drop entries; results stay the same.
	SearchCacheChanged(env.Session, filepath.Join(root, "d1/f1.go"))
	check("notified")
	SearchCacheReset(env.Session)
	check("reset")
}

// TestWarmSearchCache fills the cache in the background as a server does
// after initialized: the files grep would read, never a sensitive one; the
// first search then skips files and returns what a fresh search does.
func TestWarmSearchCache(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-time.Hour)
	files := map[string]string{
		"a.go": "package a\n// xyzzy\n", "b/b.go": "package b\n", "c/c.txt": "plain text\n",
		"keys/server.pem": "xyzzy secret\n", "ignored/x.go": "package x // xyzzy\n", ".ignore": "ignored/\n",
	}
	ftWrite(t, root, files)
	for p := range files {
		if err := os.Chtimes(filepath.Join(root, p), old, old); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	env := cachedEnv(ws)
	cache := searchCacheOf(env.Session)
	WarmSearchCache(context.Background(), env.Session, ws)
	deadline := time.Now().Add(10 * time.Second)
	for {
		cache.mu.RLock()
		n := len(cache.files)
		cache.mu.RUnlock()
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			cache.mu.RLock()
			for p := range cache.files {
				t.Log(p)
			}
			cache.mu.RUnlock()
			t.Fatalf("the warm-up cached %d files, want 3", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cache.mu.RLock()
	for _, p := range []string{"keys/server.pem", "ignored/x.go", ".ignore"} {
		if _, ok := cache.files[filepath.Join(root, p)]; ok {
			t.Errorf("the warm-up read %s", p)
		}
	}
	cache.mu.RUnlock()
	q := json.RawMessage(`{"pattern":"xyzzy"}`)
	got := ftRunner().Run(context.Background(), env, Request{Name: "grep", Arguments: q}, nil)
	sameResult(t, "after the warm-up", got, RunTool(context.Background(), ws, "grep", q))
	if cache.skips.Load() != 2 {
		t.Errorf("skipped %d files, want 2", cache.skips.Load())
	}
}
