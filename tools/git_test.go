package tools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/schema"
	"github.com/agentls/agentls/workspace"
)

// gitRig is a real repository in a temporary folder with the git tools
// behind the real runner. Every approval question is recorded; answer
// decides it (approve by default).
type gitRig struct {
	t    *testing.T
	root string
	ws   *workspace.Workspace
	r    *Runner
	env  *Env

	mu     sync.Mutex
	asked  []approval.Request
	answer func(approval.Request) approval.Response
}

// isolateGit keeps the machine's global and system git configuration out of
// the tests.
func isolateGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
}

// newGitRig makes a repository on branch main with a local identity.
// init=false leaves the folder without a repository.
func newGitRig(t *testing.T, init bool) *gitRig {
	t.Helper()
	isolateGit(t)
	root := t.TempDir()
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry(nil)
	reg.MustRegister(GitStatus, GitDiff, GitLog, GitCommit, GitBranch, GitPush)
	g := &gitRig{t: t, root: root, ws: ws, r: NewRunner(reg, nil)}
	g.env = &Env{Workspace: ws, Session: NewSession(ws, SessionOptions{}), Memory: approval.NewMemory(""),
		Approver: approval.ApproverFunc(func(_ context.Context, req approval.Request) (approval.Response, error) {
			g.mu.Lock()
			g.asked = append(g.asked, req)
			answer := g.answer
			g.mu.Unlock()
			if answer != nil {
				return answer(req), nil
			}
			return approval.Response{Decision: approval.Approve}, nil
		})}
	if init {
		g.git("init", "-q", "-b", "main")
		g.git("config", "user.name", "Ada Lovelace")
		g.git("config", "user.email", "ada@example.com")
		g.git("config", "commit.gpgsign", "false")
	}
	return g
}

// git runs git in the rig's repository and returns its output.
func (g *gitRig) git(args ...string) string {
	g.t.Helper()
	return g.gitIn(g.root, nil, args...)
}

func (g *gitRig) gitIn(dir string, env []string, args ...string) string {
	g.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// write writes a file of the repository, making its folders.
func (g *gitRig) write(rel, content string) {
	g.t.Helper()
	p := filepath.Join(g.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		g.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		g.t.Fatal(err)
	}
}

// commit writes files and commits them.
func (g *gitRig) commit(msg string, files map[string]string) {
	g.t.Helper()
	for rel, content := range files {
		g.write(rel, content)
	}
	g.git("add", "-A")
	g.git("commit", "-q", "-m", msg)
}

// config edits the workspace configuration.
func (g *gitRig) config(edit func(*workspace.Config)) {
	cfg := workspace.DefaultConfig()
	edit(cfg)
	g.ws.SetConfig(cfg)
}

// call runs a tool through the runner.
func (g *gitRig) call(name string, args any) *Result {
	g.t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		g.t.Fatal(err)
	}
	return g.r.Run(context.Background(), g.env, Request{Name: name, Arguments: b}, nil)
}

// questions returns the approval requests so far and forgets them.
func (g *gitRig) questions() []approval.Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	q := g.asked
	g.asked = nil
	return q
}

// decode decodes a result's structured value into v.
func decode(t *testing.T, res *Result, v any) {
	t.Helper()
	b, err := json.Marshal(res.Structured)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured of %s: %v (%s)", res.Tool, err, b)
	}
}

// wantSuccess fails unless res succeeded.
func wantSuccess(t *testing.T, res *Result) {
	t.Helper()
	if res.Status != StatusSuccess {
		t.Fatalf("%s: %s %s", res.Tool, res.Status, res.Content)
	}
}

// wantError fails unless res is an error with code.
func wantError(t *testing.T, res *Result, code Code) {
	t.Helper()
	if res.Status != StatusError || res.Error == nil || res.Error.Code != code {
		t.Fatalf("%s: want error %s, got %s %s", res.Tool, code, res.Status, res.Content)
	}
}

// TestGitOptionLikeValues proves that no value the model gives becomes a git
// option: --output=FILE would make git diff or git log write FILE, and
// --exec or --upload-pack would run a program.
func TestGitOptionLikeValues(t *testing.T) {
	g := newGitRig(t, true)
	g.commit("first", map[string]string{"a.txt": "a\n"})
	g.git("branch", "feature")
	bare := filepath.Join(t.TempDir(), "remote.git")
	g.gitIn(g.root, nil, "init", "-q", "--bare", bare)
	g.git("remote", "add", "origin", bare)
	g.write("a.txt", "changed\n")
	target := filepath.Join(t.TempDir(), "x")
	opt := "--output=" + target
	tests := []struct {
		tool string
		args map[string]any
	}{
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
		var keys []string
		for k := range tt.args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Run(tt.tool+" "+strings.Join(keys, ","), func(t *testing.T) {
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
	for _, tool := range []string{"git_status", "git_diff", "git_log", "git_branch", "git_push"} {
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
	bare := filepath.Join(t.TempDir(), "remote.git")
	g.gitIn(g.root, nil, "init", "-q", "--bare", bare)
	g.git("remote", "add", "origin", bare)
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
