package tools

import (
	"strings"
	"testing"

	"github.com/agentls/agentls/approval"
)

func TestGitBranch(t *testing.T) {
	g, _ := newGitRigWithOrigin(t)
	g.git("push", "-q", "-u", "origin", "main")
	g.commit("second", map[string]string{"a.txt": "a2\n"})
	g.git("branch", "topic", "HEAD~1")

	// Listing never asks: a person who rejects everything does not stop it.
	g.answer = always(approval.Reject)
	type branch struct {
		Name     string
		Current  bool
		Remote   bool
		Upstream string
		Ahead    int
		Behind   int
		Subject  string
	}
	var s struct {
		Current  string
		Branches []branch
	}
	res := g.call("git_branch", map[string]any{})
	wantSuccess(t, res)
	decode(t, res, &s)
	want := []branch{
		{Name: "main", Current: true, Upstream: "origin/main", Ahead: 1, Subject: "second"},
		{Name: "topic", Subject: "first"},
	}
	if s.Current != "main" || len(s.Branches) != 2 || s.Branches[0] != want[0] || s.Branches[1] != want[1] {
		t.Errorf("list %+v", s)
	}
	if !strings.Contains(res.Content, "* main ") || !strings.Contains(res.Content, "[origin/main: ahead 1, behind 0] second") {
		t.Errorf("content:\n%s", res.Content)
	}
	res = g.call("git_branch", map[string]any{"all": true})
	decode(t, res, &s)
	if len(s.Branches) != 3 || s.Branches[2].Name != "origin/main" || !s.Branches[2].Remote {
		t.Errorf("all %+v", s.Branches)
	}
	if q := g.questions(); len(q) != 0 {
		t.Errorf("listing asked %d times", len(q))
	}

	// Creating asks: rejected, nothing is created.
	res = g.call("git_branch", map[string]any{"name": "feature/x", "create": true})
	if res.Status != StatusRejected {
		t.Fatalf("%s %s", res.Status, res.Content)
	}
	if q := g.questions(); len(q) != 1 || q[0].Risk != approval.RiskWrite {
		t.Errorf("questions %+v", q)
	}
	if out := g.git("branch", "--list", "feature/x"); out != "" {
		t.Errorf("branch created after a rejection: %q", out)
	}

	// Approved.
	g.answer = nil
	tests := []struct {
		name    string
		args    map[string]any
		current string
		at      string
	}{
		{"create", map[string]any{"name": "feature/x", "create": true}, "main", "HEAD"},
		{"start point", map[string]any{"name": "from-topic", "create": true, "start_point": "topic"}, "main", "topic"},
		{"checkout", map[string]any{"name": "work", "create": true, "checkout": true}, "work", "main"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := g.call("git_branch", tt.args)
			wantSuccess(t, res)
			var s struct {
				Current, Created, Commit string
			}
			decode(t, res, &s)
			name := tt.args["name"].(string)
			if s.Created != name || s.Current != tt.current {
				t.Errorf("result %+v", s)
			}
			if at := strings.TrimSpace(g.git("rev-parse", tt.at)); s.Commit != at {
				t.Errorf("commit %s, want %s", s.Commit, at)
			}
			if cur := strings.TrimSpace(g.git("branch", "--show-current")); cur != tt.current {
				t.Errorf("checked out %s", cur)
			}
		})
	}

	g.refuses(t, "git_branch", []refusal{
		{"exists", map[string]any{"name": "topic", "create": true}, AlreadyExists, ""},
		{"bad name", map[string]any{"name": "a..b", "create": true}, InvalidParams, ""},
		{"refspec", map[string]any{"name": "a:b", "create": true}, InvalidParams, ""},
		{"name without create", map[string]any{"name": "x"}, InvalidParams, ""},
		{"create without name", map[string]any{"create": true}, InvalidParams, ""},
		{"unknown start", map[string]any{"name": "y", "create": true, "start_point": "nowhere"}, InvalidParams, ""},
		{"tree start", map[string]any{"name": "y", "create": true, "start_point": "HEAD:a.txt"}, InvalidParams, ""},
	})
}
