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
	changes := []struct {
		name   string
		change func(t *testing.T, g *rig)
	}{
		{"created", func(t *testing.T, g *rig) { g.write("src/deep/new.go", "package deep // needle\n") }},
		{"modified, same size and mtime", func(t *testing.T, g *rig) {
			g.writeKeepingMtime("src/a.go", "package src // needlE\n")
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
				sameAnswer(t, what, res, freshCall(t, g, c.tool, c.args), false)
			}
		})
	}
}

// TestResultCacheTreeNotKept: the calls whose tree the search cache cannot
// vouch for run every time.
func TestResultCacheTreeNotKept(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, g *rig)
		tool  string
		args  string
	}{
		{"a hidden directory entered", func(t *testing.T, g *rig) { g.write(".hidden/h.go", "package h\n") },
			"list_directory", `{"recursive":true,"include_hidden":true}`},
		{"a hidden directory shown", func(t *testing.T, g *rig) { g.write(".hidden/h.go", "package h\n") },
			"list_directory", `{"include_hidden":true}`},
		{"an ignored directory searched", func(t *testing.T, g *rig) { g.write("logs/y.log", "needle\n") },
			"grep", `{"pattern":"needle","include_ignored":true}`},
		{"a glob that keeps ignored files", nil, "grep", `{"pattern":"needle","glob":"*.log"}`},
		{"a hidden path globbed", func(t *testing.T, g *rig) { g.write(".hidden/h.go", "package h\n") },
			"glob", `{"pattern":".hidden/*.go"}`},
		{"a path through a symlink", func(t *testing.T, g *rig) {
			if err := os.Symlink("src", filepath.Join(g.root, "alias")); err != nil {
				t.Fatal(err)
			}
		}, "list_directory", `{"path":"alias"}`},
		{"a git config that names an excludes file", func(t *testing.T, g *rig) {
			p := filepath.Join(os.Getenv("HOME"), ".gitconfig")
			if err := os.WriteFile(p, []byte("[core]\n\texcludesFile = ~/ignores\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "glob", `{"pattern":"**/*.go"}`},
		{"a symlinked ignore file", func(t *testing.T, g *rig) {
			outside := filepath.Join(t.TempDir(), "rules")
			if err := os.WriteFile(outside, []byte("b.go\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(g.root, "src", "deep", ".ignore")); err != nil {
				t.Fatal(err)
			}
		}, "glob", `{"pattern":"**/*.go"}`},
		{"a file searched", nil, "grep", `{"pattern":"needle","path":"src/a.go"}`},
		{"the search cache closed (no watcher)", func(t *testing.T, g *rig) { g.env.Session.Search.Close() },
			"list_directory", `{}`},
	}
	noneKept := map[string]bool{"a git config that names an excludes file": true, "the search cache closed (no watcher)": true}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newTreeCacheRig(t)
			if tt.setup != nil {
				tt.setup(t, g)
			}
			settle()
			if g.env.Session.Search.Status().Watching {
				searchReady(t, g) // (a changed ignore file: built again)
			}
			for range 2 {
				res := g.call(tt.tool, tt.args)
				wantSuccess(t, res)
				if res.Cached {
					t.Errorf("%s %s was answered from the cache", tt.tool, tt.args)
				}
			}
			// A regular call of the same tool in the same tree is kept,
			// unless nothing is.
			control := map[string]string{"list_directory": `{"path":"src"}`, "glob": `{"pattern":"src/*.go"}`, "grep": `{"pattern":"needle","path":"src"}`}[tt.tool]
			g.call(tt.tool, control)
			if res := g.call(tt.tool, control); res.Cached == noneKept[tt.name] {
				t.Errorf("the control %s %s: cached %v", tt.tool, control, res.Cached)
			}
		})
	}
}

// TestResultCacheTreeStreamed: a grep that streams its results (they are
// not in its final answer) is never answered from the cache.
func TestResultCacheTreeStreamed(t *testing.T) {
	g := newTreeCacheRig(t)
	for range 2 {
		rec := &recorder{}
		res := runTool(t, context.Background(), g.r, g.env, "grep", `{"pattern":"needle"}`, rec)
		wantSuccess(t, res)
		if res.Cached || len(rec.batches) == 0 {
			t.Errorf("a streamed grep: cached %v, %d batches streamed", res.Cached, len(rec.batches))
		}
	}
}

// TestResultCacheTreeRules: a tree answer is given only to a call the
// policy lets run: a rule that asks asks each time; a directory made
// sensitive is refused.
func TestResultCacheTreeRules(t *testing.T) {
	g := newTreeCacheRig(t)
	g.config(func(c *workspace.Config) { c.Approval.Tools = map[string]string{"glob": "ask"} })
	searchReady(t, g)
	first := g.call("glob", `{"pattern":"**/*.go"}`)
	res := g.call("glob", `{"pattern":"**/*.go"}`)
	sameAnswer(t, "glob asked again", res, first, true)
	if res.ApprovedBy != "user" || len(g.questions()) != 2 {
		t.Errorf("approvedBy %q; want a question per call", res.ApprovedBy)
	}
	g.config(func(c *workspace.Config) { c.Paths.Sensitive = append(c.Paths.Sensitive, "src/**", "src") })
	searchReady(t, g)
	for range 2 {
		res := g.call("list_directory", `{"path":"src"}`)
		wantError(t, res, SensitivePath)
		if res.Cached {
			t.Error("a refusal was cached")
		}
	}
}
