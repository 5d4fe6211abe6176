package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentls/agentls/workspace"
)

// newTreeCacheRig is a cache rig whose session has a search cache too,
// built, in a git repository, with the user's git files in a home of its
// own (none: no global excludes file).
func newTreeCacheRig(t *testing.T) *rig {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	g, _ := newCacheRig(t)
	g.git("init", "-q")
	g.write(".gitignore", "*.log\n")
	g.write("src/a.go", "package src // needle\n")
	g.write("src/b.go", "package src\n")
	g.write("src/deep/c.go", "package deep // needle\n")
	g.write("docs/readme.md", "needle in docs\n")
	g.write("x.log", "needle in a log\n")
	g.env.Session.Close()
	g.env.Session = NewSession(g.ws, SessionOptions{ResultCache: true, SearchCache: true})
	g.env.Session.results.racy = cacheRacy
	g.env.Session.WarmUp()
	settle()
	searchReady(t, g)
	return g
}

// searchReady waits until the session's search index is built.
func searchReady(t *testing.T, g *rig) {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for !g.env.Session.Search.Status().Ready {
		if time.Now().After(deadline) {
			t.Fatalf("the search index was not built: %+v", g.env.Session.Search.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// treeCalls are the tree tools' calls the tests repeat.
var treeCalls = []struct{ tool, args string }{
	{"list_directory", `{}`},
	{"list_directory", `{"path":"src","recursive":true}`},
	{"glob", `{"pattern":"**/*.go"}`},
	{"glob", `{"pattern":"src/**/*","sort":"mtime"}`},
	{"grep", `{"pattern":"needle"}`},
	{"grep", `{"pattern":"needle","path":"src","output_mode":"count"}`},
}

// freshCall runs a call in a session without caches: the answer a cached
// one must equal.
func freshCall(t *testing.T, g *rig, tool, args string) *Result {
	t.Helper()
	env := *g.env
	env.Session = NewSession(g.ws, SessionOptions{})
	defer env.Session.Close()
	return runTool(t, context.Background(), g.r, &env, tool, args, nil)
}

// sameAnswer fails unless got (cached or not, as cached says) is the
// answer fresh is.
func sameAnswer(t *testing.T, what string, got, fresh *Result, cached bool) {
	t.Helper()
	wantSuccess(t, got)
	if got.Cached != cached {
		t.Errorf("%s: cached = %v, want %v", what, got.Cached, cached)
	}
	gs, _ := json.Marshal(got.Structured)
	fs, _ := json.Marshal(fresh.Structured)
	if got.Content != fresh.Content || string(gs) != string(fs) {
		t.Errorf("%s: the answer differs from a fresh one:\n%s\n%s\nfresh:\n%s\n%s", what, got.Content, gs, fresh.Content, fs)
	}
}

// TestResultCacheTree repeats each tree call: the second is answered from
// the cache; after each change (on disk by another program, with no
// announcement at all; in a buffer; in the configuration; in the ignore
// files inside and outside the watched tree) the next one is fresh, and
// equals the answer of a session without caches.
func TestResultCacheTree(t *testing.T) {
	abs := func(g *rig, rel string) string { return filepath.Join(g.root, filepath.FromSlash(rel)) }
	// unseen are the changes the search index does not see (it watches no file
	// outside the root's directories: search/cache.go), so that grep,
	// answered by the index, keeps the old rules in any session with a
	// search cache; only its freshness is checked then.
	unseen := map[string]bool{".git/info/exclude edited": true, "global excludes file created": true}
	changes := []struct {
		name   string
		change func(t *testing.T, g *rig)
	}{
		{"created", func(t *testing.T, g *rig) { g.write("src/deep/new.go", "package deep // needle\n") }},
		{"modified, same size and mtime", func(t *testing.T, g *rig) {
			p := abs(g, "src/a.go")
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			g.write("src/a.go", "package src // needlE\n")
			if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
		{"deleted", func(t *testing.T, g *rig) {
			if err := os.Remove(abs(g, "src/deep/c.go")); err != nil {
				t.Fatal(err)
			}
		}},
		{"renamed", func(t *testing.T, g *rig) {
			if err := os.Rename(abs(g, "src/deep/c.go"), abs(g, "docs/c.go")); err != nil {
				t.Fatal(err)
			}
		}},
		{"directory renamed", func(t *testing.T, g *rig) {
			if err := os.Rename(abs(g, "src/deep"), abs(g, "src/deeper")); err != nil {
				t.Fatal(err)
			}
		}},
		{"symlink swapped", func(t *testing.T, g *rig) {
			if err := os.Remove(abs(g, "src/link")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("b.go", abs(g, "src/link")); err != nil {
				t.Fatal(err)
			}
		}},
		{".gitignore edited", func(t *testing.T, g *rig) { g.write(".gitignore", "*.log\ndeep/\n") }},
		{".gitignore created below", func(t *testing.T, g *rig) { g.write("src/.gitignore", "b.go\n") }},
		{".git/info/exclude edited", func(t *testing.T, g *rig) { g.write(".git/info/exclude", "docs/\n") }},
		{"global excludes file created", func(t *testing.T, g *rig) {
			p := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "git", "ignore")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("*.md\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"buffer opened", func(t *testing.T, g *rig) {
			g.ws.Overlays.Open(workspace.Document{Path: abs(g, "src/b.go"), Version: 1, Text: "package src // needle unsaved\n"})
		}},
		{"config changed", func(t *testing.T, g *rig) {
			g.config(func(c *workspace.Config) { c.Paths.Sensitive = append(c.Paths.Sensitive, "docs/**") })
			searchReady(t, g)
		}},
	}
	for _, ch := range changes {
		t.Run(ch.name, func(t *testing.T) {
			g := newTreeCacheRig(t)
			if err := os.Symlink("a.go", abs(g, "src/link")); err != nil {
				t.Fatal(err)
			}
			settle()
			for _, c := range treeCalls {
				what := c.tool + " " + c.args
				fresh := freshCall(t, g, c.tool, c.args)
				sameAnswer(t, what+" (first)", g.call(c.tool, c.args), fresh, false)
				sameAnswer(t, what+" (again)", g.call(c.tool, c.args), fresh, true)
			}
			ch.change(t, g)
			for _, c := range treeCalls {
				what := c.tool + " " + c.args + " after the change"
				res := g.call(c.tool, c.args)
				if unseen[ch.name] && c.tool == "grep" {
					wantSuccess(t, res)
					if res.Cached {
						t.Errorf("%s: answered from the cache", what)
					}
					continue
				}
				sameAnswer(t, what, res, freshCall(t, g, c.tool, c.args), false)
			}
		})
	}
}
