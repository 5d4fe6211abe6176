package tools

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/workspace"
)

// TestGitPush pushes to a bare repository in a temporary folder.
func TestGitPush(t *testing.T) {
	g, bare := newGitRigWithOrigin(t)
	remoteHead := func() string { return strings.TrimSpace(g.gitIn(bare, nil, "rev-parse", "refs/heads/main")) }
	localHead := func() string { return strings.TrimSpace(g.git("rev-parse", "main")) }
	type pushed struct{ Remote, Branch, Status, Summary string }

	// A new branch, with its upstream recorded. The push asked, as a
	// network call, without a warning.
	res := g.call("git_push", map[string]any{"set_upstream": true})
	wantSuccess(t, res)
	var s pushed
	decode(t, res, &s)
	if s.Remote != "origin" || s.Branch != "main" || s.Status != "new" || remoteHead() != localHead() {
		t.Errorf("first push %+v", s)
	}
	q := g.questions()
	if len(q) != 1 || q[0].Risk != approval.RiskNetwork || q[0].Warning != "" {
		t.Errorf("questions %+v", q)
	}
	if up := strings.TrimSpace(g.git("rev-parse", "--abbrev-ref", "main@{upstream}")); up != "origin/main" {
		t.Errorf("upstream %q", up)
	}

	// A fast-forward.
	g.commit("second", map[string]string{"a.txt": "a2\n"})
	res = g.call("git_push", map[string]any{"remote": "origin", "branch": "main"})
	wantSuccess(t, res)
	decode(t, res, &s)
	if s.Status != "fast_forward" || remoteHead() != localHead() {
		t.Errorf("second push %+v", s)
	}
	g.questions()

	// Rewritten history is rejected without force.
	g.git("reset", "-q", "--hard", "HEAD~1")
	g.commit("rewritten", map[string]string{"b.txt": "b\n"})
	before := remoteHead()
	res = g.call("git_push", map[string]any{})
	wantError(t, res, ExecutionError)
	decode(t, res, &s)
	if s.Status != "rejected" || remoteHead() != before || !strings.Contains(res.Error.Message, "fetch and merge or rebase") {
		t.Errorf("rejected push %+v: %s", s, res.Error.Message)
	}
	g.questions()

	// force asks as dangerous, with a warning, even where a rule makes
	// git_push automatic.
	g.config(func(c *workspace.Config) { c.Approval.Tools = map[string]string{"git_push": "auto"} })
	res = g.call("git_push", map[string]any{"force": true})
	wantSuccess(t, res)
	decode(t, res, &s)
	if s.Status != "forced" || remoteHead() != localHead() {
		t.Errorf("forced push %+v", s)
	}
	q = g.questions()
	if len(q) != 1 || q[0].Risk != approval.RiskDangerous || !strings.Contains(q[0].Warning, "force push") {
		t.Errorf("force questions %+v", q)
	}
	// The same rule lets a plain push through without asking.
	res = g.call("git_push", map[string]any{})
	wantSuccess(t, res)
	decode(t, res, &s)
	if s.Status != "up_to_date" {
		t.Errorf("status %s", s.Status)
	}
	if q := g.questions(); len(q) != 0 {
		t.Errorf("plain push under an auto rule asked: %+v", q)
	}
}

func TestGitPushRefusals(t *testing.T) {
	g := newGitRig(t, true)
	g.commit("first", map[string]string{"a.txt": "a\n"})
	wantError(t, g.call("git_push", map[string]any{}), ExecutionError, "no remote")
	g.git("remote", "add", "origin", filepath.Join(t.TempDir(), "nowhere.git"))
	g.refuses(t, "git_push", []refusal{
		{"unknown remote", map[string]any{"remote": "upstream"}, InvalidParams, "no remote named upstream; configured remotes: origin"},
		{"url", map[string]any{"remote": "file:///tmp/elsewhere.git"}, InvalidParams, "no remote named"},
		{"unknown branch", map[string]any{"branch": "nope"}, InvalidParams, "no local branch nope"},
		{"force refspec", map[string]any{"branch": "+main"}, InvalidParams, "not a branch name"},
		{"delete refspec", map[string]any{"branch": ":main"}, InvalidParams, "not a branch name"},
		{"unreachable", map[string]any{}, ExecutionError, "push of main to origin failed"},
	})
	g.git("checkout", "-q", "--detach")
	wantError(t, g.call("git_push", map[string]any{}), InvalidParams)
}
