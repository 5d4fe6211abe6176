package approval

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRuleFor(t *testing.T) {
	t.Parallel()
	tests := []struct{ key, tool, label string }{
		{"edit_file", "edit_file", "always allow edit_file"},
		{"shell:echo x", "shell_exec", "always allow `echo x …`"},
		{"shell:git status ; ls", "shell_exec", "always allow `git status …`, `ls …`"},
		{"shell:cat ; outside:/etc/hosts", "shell_exec", "always allow `cat …`, paths outside the workspace: /etc/hosts"},
		{"shell:echo x ; >out.txt ; env:PATH", "shell_exec", "always allow `echo x …`, writing to out.txt, setting PATH"},
		{"shell_background:npm run", "shell_background", "always allow in the background `npm run …`"},
		{"run_code:python+network", "run_code", "always allow run_code in python with network access"},
		{"web_fetch:example.com", "web_fetch", "always allow web_fetch from example.com"},
		{"web_fetch:POST:example.com", "web_fetch", "always allow web_fetch POST requests to example.com"},
		{"git_push:origin main", "git_push", "always allow git_push to origin main"},
	}
	for _, tt := range tests {
		r := RuleFor(tt.key)
		if r.Tool != tt.tool || r.Label != tt.label || r.Key != tt.key || r.ID == "" {
			t.Errorf("RuleFor(%q) = %+v, want tool %q label %q", tt.key, r, tt.tool, tt.label)
		}
	}
	if RuleFor("shell:echo x").ID == RuleFor("shell:echo y").ID {
		t.Error("two keys share an id")
	}
}

func TestOptionsFor(t *testing.T) {
	t.Parallel()
	if o := OptionsFor(RiskDangerous); slices.Contains(o, Always) || !slices.Contains(o, Approve) || !slices.Contains(o, Reject) {
		t.Errorf("dangerous options = %v", o)
	}
	for _, r := range []Risk{RiskWrite, RiskExecute, RiskNetwork} {
		if o := OptionsFor(r); !slices.Contains(o, Always) {
			t.Errorf("%s options = %v", r, o)
		}
	}
}

// TestMemoryRulesAndForget: the rules of a session and the persisted ones
// are listed; forgetting one removes it from the file as well, so the next
// session asks again; an unknown id removes nothing.
func TestMemoryRulesAndForget(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "state", "always.json")
	m := NewMemory(file)
	for _, k := range []string{"edit_file", "shell:echo x"} {
		if err := m.Remember(k); err != nil {
			t.Fatal(err)
		}
	}
	session := NewMemory("") // a session without persistAlways
	session.Remember("write_file")
	if rs := session.Rules(); len(rs) != 1 || rs[0].Persisted {
		t.Errorf("session rules = %+v", rs)
	}

	next := NewMemory(file) // the next session of the workspace
	rules := next.Rules()
	if len(rules) != 2 || rules[0].Tool != "edit_file" || rules[1].Tool != "shell_exec" || !rules[0].Persisted || !rules[1].Persisted {
		t.Fatalf("persisted rules = %+v", rules)
	}
	if ok, err := next.Forget("r_nosuchrule"); ok || err != nil {
		t.Errorf("forget unknown: %v %v", ok, err)
	}
	if ok, err := next.Forget(rules[1].ID); !ok || err != nil {
		t.Fatalf("forget: %v %v", ok, err)
	}
	if next.Allowed("shell:echo x") || !next.Allowed("edit_file") {
		t.Errorf("after forget: %+v", next.Rules())
	}
	var keys []string
	b, _ := os.ReadFile(file)
	if err := json.Unmarshal(b, &keys); err != nil || !slices.Equal(keys, []string{"edit_file"}) {
		t.Errorf("file after forget = %s (%v)", b, err)
	}
	if third := NewMemory(file); third.Allowed("shell:echo x") {
		t.Error("a forgotten rule came back in the next session")
	}
}

// TestMemoryForgetUnwritableFile: when the file cannot be rewritten the
// rule is forgotten for the session and the error says so.
func TestMemoryForgetUnwritableFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "always.json")
	m := NewMemory(file)
	if err := m.Remember("edit_file"); err != nil {
		t.Fatal(err)
	}
	// Root ignores permission bits, so a read-only directory would not stop
	// the rewrite. A non-empty directory where the file was cannot be
	// replaced by any rename, for root or anyone else.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(file, "keep"), 0o700); err != nil {
		t.Fatal(err)
	}
	ok, err := m.Forget(RuleFor("edit_file").ID)
	if !ok {
		t.Error("Forget did not find the rule")
	}
	if err == nil || !strings.Contains(err.Error(), "persist approvals") {
		t.Errorf("Forget error = %v, want one saying the approvals were not persisted", err)
	}
	if m.Allowed("edit_file") {
		t.Error("the rule is still allowed in the session")
	}
	if rules := m.Rules(); len(rules) != 0 {
		t.Errorf("rules after forget = %v, want none", rules)
	}
}

// TestMemoryTwoSessions: two sessions of one workspace share the file; a
// rule one of them revokes is not written back by the other, and a rule
// one of them adds is not dropped by the other.
func TestMemoryTwoSessions(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "always.json")
	a := NewMemory(file)
	a.Remember("edit_file")
	b := NewMemory(file)
	if ok, err := b.Forget(RuleFor("edit_file").ID); !ok || err != nil {
		t.Fatalf("forget: %v %v", ok, err)
	}
	a.Remember("shell:echo x") // a still allows edit_file for its own session
	b.Remember("write_file")
	var keys []string
	raw, _ := os.ReadFile(file)
	if err := json.Unmarshal(raw, &keys); err != nil || !slices.Equal(keys, []string{"shell:echo x", "write_file"}) {
		t.Errorf("file = %s (%v), want the revoked rule gone and both new ones kept", raw, err)
	}
}
