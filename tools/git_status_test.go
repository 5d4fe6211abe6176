package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentls/agentls/workspace"
)

func TestGitStatus(t *testing.T) {
	g := newGitRig(t, true)
	g.commit("first", map[string]string{
		"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n", "gone.txt": "g\n",
		"old name.txt": "rename me\n", "src/keep.go": "package src\n",
	})
	g.addRemote()
	g.git("push", "-q", "-u", "origin", "main")
	g.commit("second", map[string]string{"a.txt": "a2\n"}) // ahead 1

	g.write("a.txt", "a3\n")                                          // modified, not staged
	g.write("b.txt", "b2\n")                                          // staged modification
	g.git("add", "b.txt")                                             //
	g.git("rm", "-q", "gone.txt")                                     // staged deletion
	if err := os.Remove(filepath.Join(g.root, "c.txt")); err != nil { // deleted, not staged
		t.Fatal(err)
	}
	g.git("mv", "old name.txt", "new name é.txt") // staged rename, non-ASCII
	g.write("new.txt", "n\n")                     // staged addition
	g.git("add", "new.txt")
	g.write("untracked.txt", "u\n")
	g.write("dir/inner.txt", "i\n")

	res := g.call("getGitInfo", map[string]any{})
	wantSuccess(t, res)
	var s gitStatusResult
	decode(t, res, &s)
	if s.Branch != "main" || s.Detached || s.Upstream != "origin/main" || s.Ahead != 1 || s.Behind != 0 || len(s.Commit) != 40 {
		t.Errorf("branch %+v", s)
	}
	wantStaged := []gitStaged{
		{Path: "b.txt", Status: "modified"},
		{Path: "gone.txt", Status: "deleted"},
		{Path: "new name é.txt", Status: "renamed", OldPath: "old name.txt"},
		{Path: "new.txt", Status: "added"},
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"staged", s.Staged, wantStaged},
		{"modified", s.Modified, []string{"a.txt"}},
		{"deleted", s.Deleted, []string{"c.txt", "gone.txt"}},
		{"renamed", s.Renamed, []gitRename{{From: "old name.txt", To: "new name é.txt"}}},
		{"untracked", s.Untracked, []string{"dir/", "untracked.txt"}},
		{"conflicted", s.Conflicted, []string{}},
		{"clean", s.Clean, false},
		{"repository", s.Repository, g.root},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
	for _, want := range []string{"On branch main", "Upstream origin/main: ahead 1, behind 0", "renamed: old name.txt -> new name é.txt",
		"Not staged:\n  modified: a.txt\n  deleted: c.txt", "Untracked:\n  dir/\n  untracked.txt"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("content lacks %q:\n%s", want, res.Content)
		}
	}

	// path narrows the files.
	res = g.call("git_status", map[string]any{"path": "a.txt"})
	wantSuccess(t, res)
	decode(t, res, &s)
	if !reflect.DeepEqual(s.Modified, []string{"a.txt"}) || len(s.Staged)+len(s.Untracked)+len(s.Deleted) != 0 {
		t.Errorf("path a.txt: %+v", s)
	}
}

func TestGitStatusStates(t *testing.T) {
	tests := []struct {
		name  string
		setup func(g *gitRig)
		check func(t *testing.T, s gitStatusResult, content string)
	}{
		{"no commits", func(g *gitRig) { g.write("a.txt", "a\n") }, func(t *testing.T, s gitStatusResult, content string) {
			if s.Commit != "" || s.Branch != "main" || !reflect.DeepEqual(s.Untracked, []string{"a.txt"}) || !strings.Contains(content, "no commits yet") {
				t.Errorf("%+v\n%s", s, content)
			}
		}},
		{"clean", func(g *gitRig) { g.commit("c", map[string]string{"a.txt": "a\n"}) }, func(t *testing.T, s gitStatusResult, content string) {
			if !s.Clean || s.Upstream != "" || !strings.Contains(content, "working tree clean") {
				t.Errorf("%+v\n%s", s, content)
			}
		}},
		{"unsaved", func(g *gitRig) {
			g.commit("c", map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
			g.ws.Overlays.Open(workspace.Document{Path: filepath.Join(g.root, "a.txt"), Version: 1, Text: "edited\n"})
			g.ws.Overlays.Open(workspace.Document{Path: filepath.Join(g.root, "b.txt"), Version: 1, Text: "b\n"})
		}, func(t *testing.T, s gitStatusResult, content string) {
			if !s.Clean || !reflect.DeepEqual(s.Unsaved, []string{"a.txt"}) || !strings.Contains(content, "Unsaved in the editor (git sees the disk):\n  a.txt") {
				t.Errorf("%+v\n%s", s, content)
			}
		}},
		{"detached", func(g *gitRig) {
			g.commit("c", map[string]string{"a.txt": "a\n"})
			g.git("checkout", "-q", "--detach")
		}, func(t *testing.T, s gitStatusResult, content string) {
			if !s.Detached || s.Branch != "" || !strings.Contains(content, "HEAD detached at") {
				t.Errorf("%+v\n%s", s, content)
			}
		}},
		{"conflict", func(g *gitRig) {
			g.commit("base", map[string]string{"a.txt": "base\n"})
			g.git("checkout", "-q", "-b", "other")
			g.commit("theirs", map[string]string{"a.txt": "theirs\n"})
			g.git("checkout", "-q", "main")
			g.commit("ours", map[string]string{"a.txt": "ours\n"})
			cmd := exec.Command("git", "merge", "-q", "other")
			cmd.Dir = g.root
			_ = cmd.Run() // fails with the conflict
		}, func(t *testing.T, s gitStatusResult, content string) {
			if !reflect.DeepEqual(s.Conflicted, []string{"a.txt"}) || s.Clean || !strings.Contains(content, "Conflicted") {
				t.Errorf("%+v\n%s", s, content)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGitRig(t, true)
			tt.setup(g)
			res := g.call("git_status", map[string]any{})
			wantSuccess(t, res)
			var s gitStatusResult
			decode(t, res, &s)
			tt.check(t, s, res.Content)
		})
	}
}

// TestGitRootRepositories: each workspace root uses its own repository,
// found from the root; a path picks the root that holds it, and paths are
// named the multi-root way (the root's folder first). A repository in a subfolder of a root is never
// used: git_status there reports the root's repository (here: none).
func TestGitRootRepositories(t *testing.T) {
	g := newGitRig(t, false)
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(g.root))
	var roots []string
	for _, name := range []string{"one", "two"} {
		dir := filepath.Join(g.root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		g.gitIn(dir, nil, "init", "-q", "-b", name)
		g.gitIn(dir, nil, "config", "user.name", "N")
		g.gitIn(dir, nil, "config", "user.email", "n@example.com")
		g.write(name+"/f.txt", name+"\n")
		g.gitIn(dir, nil, "add", "f.txt")
		g.gitIn(dir, nil, "commit", "-q", "-m", "in "+name)
		g.write(name+"/f.txt", "changed\n")
		roots = append(roots, dir)
	}
	// One root holding both repositories in subfolders: neither is used.
	res := g.call("git_status", map[string]any{"path": "two"})
	wantSuccess(t, res)
	if st, _ := res.Structured.(gitStatusResult); st.IsRepo || !strings.Contains(res.Content, "subfolder is not used") {
		t.Errorf("nested repository: is_repo %v, %s", st.IsRepo, res.Content)
	}
	wantError(t, g.call("git_log", map[string]any{"path": "one/f.txt"}), ExecutionError)

	// Two roots, each its own repository.
	if err := g.ws.SetRoots(roots); err != nil {
		t.Fatal(err)
	}
	res = g.call("git_status", map[string]any{"path": filepath.Join(roots[1], "f.txt")})
	wantSuccess(t, res)
	var s gitStatusResult
	decode(t, res, &s)
	if s.Branch != "two" || !reflect.DeepEqual(s.Modified, []string{"two/f.txt"}) {
		t.Errorf("status of two: %+v", s)
	}
	// A path named the multi-root way (root folder first) picks the root.
	res = g.call("git_log", map[string]any{"path": "two/f.txt"})
	wantSuccess(t, res)
	if !strings.Contains(res.Content, "in two") {
		t.Errorf("log of two/f.txt: %s", res.Content)
	}
	res = g.call("git_log", map[string]any{"path": filepath.Join(roots[0], "f.txt")})
	wantSuccess(t, res)
	if !strings.Contains(res.Content, "in one") {
		t.Errorf("log of one: %s", res.Content)
	}
	res = g.call("git_status", map[string]any{})
	wantSuccess(t, res)
	decode(t, res, &s)
	if s.Branch != "one" {
		t.Errorf("status without a path is the first root's: %+v", s)
	}
}
