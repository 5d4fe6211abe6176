package tools

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agentls/agentls/git"
	"github.com/agentls/agentls/workspace"
)

func TestGitDiff(t *testing.T) {
	g := newGitRig(t, true)
	g.commit("first", map[string]string{"a.txt": "one\n", "b.txt": "bee\n", "src/c.go": "package c\n", ".env": "TOKEN=old\n"})
	g.commit("second", map[string]string{"b.txt": "bee two\n"})
	g.write("a.txt", "one\nadded\n") // unstaged
	g.write("src/c.go", "package c\n\nvar X = 1\n")
	g.git("add", "src/c.go") // staged
	g.write(".env", "TOKEN=secret-value\n")

	type file struct {
		Path      string
		Status    string
		Additions int
		Deletions int
		Sensitive bool
	}
	tests := []struct {
		name     string
		args     map[string]any
		files    []file
		contains []string
		lacks    []string
	}{
		{"unstaged", map[string]any{},
			[]file{{".env", "modified", 1, 1, true}, {"a.txt", "modified", 1, 0, false}},
			[]string{"+added", "diff --git a/a.txt b/a.txt", "content not shown"}, []string{"secret-value", "var X"}},
		{"staged", map[string]any{"staged": true},
			[]file{{"src/c.go", "modified", 2, 0, false}},
			[]string{"+var X = 1"}, []string{"+added"}},
		{"path", map[string]any{"path": "a.txt"},
			[]file{{"a.txt", "modified", 1, 0, false}},
			[]string{"+added"}, []string{"TOKEN"}},
		{"folder", map[string]any{"path": "src", "staged": true},
			[]file{{"src/c.go", "modified", 2, 0, false}},
			[]string{"+var X = 1"}, nil},
		{"ref", map[string]any{"ref": "HEAD~1", "path": "b.txt"},
			[]file{{"b.txt", "modified", 1, 1, false}},
			[]string{"-bee", "+bee two"}, nil},
		{"range", map[string]any{"ref": "HEAD~1..HEAD"},
			[]file{{"b.txt", "modified", 1, 1, false}},
			[]string{"+bee two"}, []string{"+added"}},
		{"no changes", map[string]any{"ref": "HEAD", "path": "b.txt"},
			[]file{}, []string{"No differences against HEAD"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := g.call("git_diff", tt.args)
			wantSuccess(t, res)
			var s struct {
				Diff      string
				Files     []file
				Truncated bool
			}
			decode(t, res, &s)
			if !reflect.DeepEqual(s.Files, tt.files) {
				t.Errorf("files %+v, want %+v", s.Files, tt.files)
			}
			for _, want := range tt.contains {
				if !strings.Contains(res.Content, want) {
					t.Errorf("content lacks %q:\n%s", want, res.Content)
				}
			}
			for _, bad := range tt.lacks {
				if strings.Contains(res.Content, bad) || strings.Contains(s.Diff, bad) {
					t.Errorf("content has %q:\n%s", bad, res.Content)
				}
			}
		})
	}

	// Errors.
	for _, ref := range []string{"no-such-branch", "HEAD:.env", "HEAD:.env..HEAD:a.txt", "HEAD~1..nope", "HEAD^{tree}"} {
		res := g.call("git_diff", map[string]any{"ref": ref})
		wantError(t, res, InvalidParams)
		if strings.Contains(res.Content, "TOKEN") {
			t.Errorf("ref %s showed the sensitive file: %s", ref, res.Content)
		}
	}
	// A blob id is not a commit either.
	blob := strings.TrimSpace(g.git("rev-parse", "HEAD:.env"))
	wantError(t, g.call("git_diff", map[string]any{"ref": blob + ".." + blob}), InvalidParams)
	wantSuccess(t, g.call("git_diff", map[string]any{"ref": "..HEAD", "path": "b.txt"}))
	g.refuses(t, "git_diff", []refusal{
		{"outside", map[string]any{"path": "../outside"}, InvalidPath, ""},
		{"sensitive", map[string]any{"path": ".env"}, SensitivePath, ""},
	})
}

func TestGitDiffRename(t *testing.T) {
	g := newGitRig(t, true)
	g.commit("first", map[string]string{"old.txt": strings.Repeat("same line\n", 20)})
	g.git("mv", "old.txt", "new.txt")
	res := g.call("git_diff", map[string]any{"staged": true})
	wantSuccess(t, res)
	var s struct{ Files []git.DiffFile }
	decode(t, res, &s)
	if len(s.Files) != 1 || s.Files[0].Status != "renamed" || s.Files[0].OldPath != "old.txt" || s.Files[0].Path != "new.txt" {
		t.Errorf("files %+v", s.Files)
	}
	if !strings.Contains(res.Content, "renamed old.txt -> new.txt") {
		t.Errorf("content:\n%s", res.Content)
	}
}

func TestGitDiffTruncated(t *testing.T) {
	g := newGitRig(t, true)
	g.commit("first", map[string]string{"big.txt": ""})
	var b strings.Builder
	for i := 0; i < 2000; i++ {
		b.WriteString("a fairly long line of text that makes the diff grow quickly\n")
	}
	g.write("big.txt", b.String())
	g.config(func(c *workspace.Config) { c.Limits.MaxOutputBytes = 4096 })
	res := g.call("git_diff", map[string]any{})
	wantSuccess(t, res)
	var s struct {
		Diff      string
		Truncated bool
	}
	decode(t, res, &s)
	if !s.Truncated || len(s.Diff) > 4096 || !strings.HasSuffix(s.Diff, "\n") || !strings.Contains(res.Content, "diff cut") {
		t.Errorf("truncated %v, %d bytes", s.Truncated, len(s.Diff))
	}
}
