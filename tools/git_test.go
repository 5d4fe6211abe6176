package tools

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/schema"
	"github.com/agentls/agentls/internal/testenv"
)

// gitRig is a rig with the git tools over a temporary folder, with git
// isolated from the machine's configuration.
type gitRig struct{ *rig }

// newGitRig makes a repository on branch main with a local identity.
// init=false leaves the folder without a repository.
func newGitRig(t *testing.T, init bool) *gitRig {
	t.Helper()
	testenv.IsolateGit(t)
	g := &gitRig{newRig(t, "", GitStatus, GitDiff, GitLog, GitCommit, GitBranch, GitPush)}
	if init {
		testenv.GitInit(t, g.root)
	}
	return g
}

// addRemote makes a bare repository in a temporary folder, adds it as
// the remote origin and returns its path.
func (g *gitRig) addRemote() string {
	g.t.Helper()
	bare := filepath.Join(g.t.TempDir(), "remote.git")
	g.gitIn(g.root, nil, "init", "-q", "--bare", bare)
	g.git("remote", "add", "origin", bare)
	return bare
}

// newGitRigWithOrigin is a rig over a repository whose first commit holds
// a.txt ("a\n"), with an empty bare repository as its remote origin (its
// path is returned).
func newGitRigWithOrigin(t *testing.T) (*gitRig, string) {
	t.Helper()
	g := newGitRig(t, true)
	g.commit("first", map[string]string{"a.txt": "a\n"})
	return g, g.addRemote()
}

// gitIn runs git in dir with env added and returns its output.
func (g *gitRig) gitIn(dir string, env []string, args ...string) string {
	g.t.Helper()
	return testenv.Git(g.t, dir, env, args...)
}

// refusal is a call that a git tool refuses: its arguments, the error's
// code and a part of its message ("" for any).
type refusal struct {
	name string
	args map[string]any
	code Code
	msg  string
}

// refuses calls tool once for each refusal, in a subtest of its name, and
// checks the error.
func (g *gitRig) refuses(t *testing.T, tool string, rs []refusal) {
	t.Helper()
	for _, r := range rs {
		t.Run(r.name, func(t *testing.T) {
			wantError(t, g.call(tool, r.args), r.code, r.msg)
		})
	}
}

// TestGitOptionLikeValues proves that no value the model gives becomes a git
// option: --output=FILE would make git diff or git log write FILE, and
// --exec or --upload-pack would run a program.
func TestGitOptionLikeValues(t *testing.T) {
	g, _ := newGitRigWithOrigin(t)
	g.git("branch", "feature")
	g.write("a.txt", "changed\n")
	target := filepath.Join(t.TempDir(), "x")
	opt := "--output=" + target
	tests := []toolCall{
		{"git_status", map[string]any{"path": opt}},
		{"git_diff", map[string]any{"path": opt}},
		{"git_diff", map[string]any{"ref": opt}},
		{"git_diff", map[string]any{"ref": "-p"}},
		{"git_log", map[string]any{"path": opt}},
		{"git_log", map[string]any{"ref": opt}},
		{"git_commit", map[string]any{"message": "m", "files": []string{"a.txt", opt}}},
		{"git_branch", map[string]any{"create": true, "name": opt}},
		{"git_branch", map[string]any{"create": true, "name": "ok", "start_point": opt}},
		{"git_push", map[string]any{"remote": "--exec=touch " + target}},
		{"git_push", map[string]any{"remote": "origin", "branch": "--upload-pack=touch " + target}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+strings.Join(slices.Sorted(maps.Keys(tt.args)), ","), func(t *testing.T) {
			res := g.call(tt.tool, tt.args)
			wantError(t, res, InvalidParams)
			if !strings.Contains(res.Error.Message, "would be read as a git option") {
				t.Errorf("message %q", res.Error.Message)
			}
			// The engine's details (the refused argument's pointer) reach
			// the result.
			if d, _ := json.Marshal(res.Error.Details); !strings.Contains(string(d), `"violations":[{"pointer":"/`) {
				t.Errorf("details %s", d)
			}
			if _, err := os.Stat(target); !os.IsNotExist(err) {
				t.Fatalf("%s created %s", tt.tool, target)
			}
		})
	}
	if q := g.questions(); len(q) != 0 {
		t.Errorf("refused calls asked for approval: %d", len(q))
	}

	// Below the tools' checks, the engine puts every path after "--" with
	// literal pathspecs: git's TestPathsAfterDoubleDash.

	// A file whose name starts with a dash is reached as ./-name.
	g.commit("dash", map[string]string{"-dash.txt": "one\n"})
	g.write("-dash.txt", "two\n")
	res := g.call("git_diff", map[string]any{"path": "./-dash.txt"})
	wantSuccess(t, res)
	if !strings.Contains(res.Content, "+two") {
		t.Errorf("diff of ./-dash.txt: %s", res.Content)
	}
}

// TestGitNotARepository checks every git tool outside a repository.
func TestGitNotARepository(t *testing.T) {
	g := newGitRig(t, false)
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(g.root))
	// git_status answers is_repo: false instead (its scenario git_status_no_repo).
	for _, tool := range []string{"git_diff", "git_log", "git_branch", "git_push"} {
		t.Run(tool, func(t *testing.T) {
			res := g.call(tool, map[string]any{})
			wantError(t, res, ExecutionError)
			if !strings.Contains(res.Error.Message, "is not inside a git repository") || !strings.Contains(res.Error.Message, "git init") {
				t.Errorf("message %q", res.Error.Message)
			}
		})
	}
	res := g.call("git_commit", map[string]any{"message": "m"})
	wantError(t, res, ExecutionError)
	if q := g.questions(); len(q) != 0 {
		t.Errorf("asked %d times outside a repository", len(q))
	}
}

// checkOutputSchema fails when a successful result's structured value does
// not match its tool's OutputSchema.
func checkOutputSchema(t *testing.T, tool *Tool, res *Result) {
	t.Helper()
	if res.Status != StatusSuccess {
		t.Fatalf("%s: %s %s", tool.Name, res.Status, res.Content)
	}
	s, err := schema.Compile(tool.OutputSchema)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res.Structured)
	if err != nil {
		t.Fatal(err)
	}
	v, err := schema.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if vs := s.Validate(v); vs != nil {
		t.Errorf("%s structured %s does not match its output schema: %v", tool.Name, b, vs)
	}
}

func TestGitOutputSchemas(t *testing.T) {
	g := newGitRig(t, true)
	g.commit("first", map[string]string{"a.txt": "a\n", "old.txt": strings.Repeat("x\n", 10)})
	g.addRemote()
	g.write("a.txt", "changed\n")
	g.write("new.txt", "n\n")
	g.git("mv", "old.txt", "renamed.txt")
	calls := []struct {
		tool *Tool
		args map[string]any
	}{
		{GitStatus, map[string]any{}},
		{GitDiff, map[string]any{}},
		{GitDiff, map[string]any{"staged": true}},
		{GitLog, map[string]any{}},
		{GitBranch, map[string]any{"all": true}},
		{GitCommit, map[string]any{"message": "second", "files": []string{"a.txt", "new.txt"}}},
		{GitBranch, map[string]any{"name": "topic", "create": true}},
		{GitPush, map[string]any{"set_upstream": true}},
	}
	for _, c := range calls {
		checkOutputSchema(t, c.tool, g.call(c.tool.Name, c.args))
	}
}
