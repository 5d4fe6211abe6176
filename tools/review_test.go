package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace"
)

// scriptedApprover answers approval requests from a script of answers and keeps
// every request it saw. An answer past the end of the script rejects.
type scriptedApprover struct {
	mu      sync.Mutex
	answers []approval.Response
	seen    []approval.Request
}

func (r *scriptedApprover) Ask(ctx context.Context, req approval.Request) (approval.Response, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, req)
	if len(r.seen) > len(r.answers) {
		return approval.Response{Decision: approval.Reject, Message: "unscripted"}, nil
	}
	return r.answers[len(r.seen)-1], nil
}

// TestRequestSaysEverything: every approval/request names the agent, the
// folder of a command and its deadline; a dangerous call never offers
// "always", and "always" is labelled with what it covers.
func TestRequestSaysEverything(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tool  string
		args        map[string]any
		risk        approval.Risk
		alwaysLabel string // "" when always must not be offered
		cwd         string // relative to the root; "-" for none
	}{
		{"shell prefix", "shell_exec", map[string]any{"command": "echo x"}, approval.RiskExecute, "always allow `echo x …`", "."},
		{"shell in a subfolder", "shell_exec", map[string]any{"command": "ls -la", "cwd": "sub"}, approval.RiskExecute, "always allow `ls -la …`", "sub"},
		{"dangerous shell", "shell_exec", map[string]any{"command": "rm -r somedir"}, approval.RiskDangerous, "", "."},
		{"whole tool", "edit_file", map[string]any{"path": "f.txt", "old_string": "one", "new_string": "1"}, approval.RiskWrite, "always allow edit_file", "-"},
		{"run_code", "run_code", map[string]any{"language": "python", "code": "print(1)"}, approval.RiskExecute, "always allow run_code in python", "."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, root := ftEnv(t)
			testenv.WriteFiles(t, root, map[string]string{"f.txt": "one\n", "somedir/keep": "k", "sub/x": "x"})
			rec := &scriptedApprover{}
			env.Approver = rec
			env.Agent = "claude"
			before := time.Now().UTC().Add(-time.Second)
			res := ftCall(t, env, tt.tool, tt.args)
			if res.Status != StatusRejected || len(rec.seen) != 1 {
				t.Fatalf("want one rejected question, got %d: %+v", len(rec.seen), res)
			}
			req := rec.seen[0]
			if req.Risk != tt.risk || req.Agent != "claude" || req.TimeoutSeconds != 300 {
				t.Errorf("risk %q agent %q timeout %d", req.Risk, req.Agent, req.TimeoutSeconds)
			}
			dl, err := time.Parse(time.RFC3339, req.Deadline)
			if err != nil || dl.Before(before.Add(299*time.Second)) || dl.After(time.Now().Add(301*time.Second)) {
				t.Errorf("deadline %q (%v), want about now+300s", req.Deadline, err)
			}
			wantCwd := ""
			if tt.cwd != "-" {
				wantCwd = filepath.Join(root, tt.cwd)
			}
			if req.Cwd != wantCwd {
				t.Errorf("cwd = %q, want %q", req.Cwd, wantCwd)
			}
			if got := slices.Contains(req.Options, approval.Always); got != (tt.alwaysLabel != "") {
				t.Errorf("options = %v", req.Options)
			}
			if req.AlwaysLabel != tt.alwaysLabel {
				t.Errorf("alwaysLabel = %q, want %q", req.AlwaysLabel, tt.alwaysLabel)
			}
		})
	}
}

// TestAlwaysNotOfferedIsRefused: a client that answers "always" to a
// dangerous call (which did not offer it) has the call rejected, nothing
// deleted and nothing remembered.
func TestAlwaysNotOfferedIsRefused(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	testenv.WriteFiles(t, root, map[string]string{"somedir/keep": "k"})
	env.Approver = &scriptedApprover{answers: []approval.Response{{Decision: approval.Always}}}
	res := ftCall(t, env, "shell_exec", map[string]any{"command": "rm -r somedir"})
	if res.Status != StatusRejected || !strings.Contains(res.Content, "did not offer") {
		t.Errorf("result = %+v", res)
	}
	if ftRead(t, root, "somedir/keep") != "k" {
		t.Error("somedir was deleted")
	}
	if rules := env.Memory.Rules(); len(rules) != 0 {
		t.Errorf("remembered %+v", rules)
	}
}

// TestAlwaysCoversWhatItsLabelSays: "always" for `echo x` makes `echo x y`
// automatic, not `echo y` nor `ls`; the rule listed has the label shown.
func TestAlwaysCoversWhatItsLabelSays(t *testing.T) {
	t.Parallel()
	env, _ := ftEnv(t)
	rec := &scriptedApprover{answers: []approval.Response{{Decision: approval.Always}}}
	env.Approver = rec
	if res := ftCall(t, env, "shell_exec", map[string]any{"command": "echo x"}); res.Status != StatusSuccess {
		t.Fatalf("always: %+v", res)
	}
	if res := ftCall(t, env, "shell_exec", map[string]any{"command": "echo x y"}); res.Status != StatusSuccess || res.ApprovedBy != "always" || len(rec.seen) != 1 {
		t.Errorf("echo x y after always: asked %d, %+v", len(rec.seen), res)
	}
	for _, cmd := range []string{"echo y", "ls"} {
		n := len(rec.seen)
		ftCall(t, env, "shell_exec", map[string]any{"command": cmd})
		if len(rec.seen) != n+1 {
			t.Errorf("%s was not asked", cmd)
		}
	}
	rules := env.Memory.Rules()
	if len(rules) != 1 || rules[0].Label != rec.seen[0].AlwaysLabel || rules[0].Tool != "shell_exec" {
		t.Errorf("rules = %+v, label shown %q", rules, rec.seen[0].AlwaysLabel)
	}
}

// TestEditedCallJudgedAgain: `echo x` edited into `rm -r somedir` is asked
// again as dangerous, without "always", and the folder survives a rejection
// of that second question; approved, it runs the edited command.
func TestEditedCallJudgedAgain(t *testing.T) {
	t.Parallel()
	edit := json.RawMessage(`{"command":"rm -r somedir"}`)
	for _, second := range []string{approval.Reject, approval.Approve} {
		t.Run(second, func(t *testing.T) {
			env, root := ftEnv(t)
			testenv.WriteFiles(t, root, map[string]string{"somedir/keep": "k"})
			rec := &scriptedApprover{answers: []approval.Response{
				{Decision: approval.Approve, ModifiedArguments: edit},
				{Decision: second, Message: "no"},
			}}
			env.Approver = rec
			res := ftCall(t, env, "shell_exec", map[string]any{"command": "echo x"})
			if len(rec.seen) != 2 {
				t.Fatalf("asked %d times, want 2: %+v", len(rec.seen), res)
			}
			first, again := rec.seen[0], rec.seen[1]
			if first.Risk != approval.RiskExecute || again.Risk != approval.RiskDangerous || again.Warning == "" ||
				again.CallID != first.CallID || !strings.Contains(string(again.Arguments), "rm -r somedir") ||
				slices.Contains(again.Options, approval.Always) || again.AlwaysLabel != "" {
				t.Errorf("second request = %+v", again)
			}
			_, err := os.Stat(filepath.Join(root, "somedir"))
			switch second {
			case approval.Reject:
				if res.Status != StatusRejected || err != nil {
					t.Errorf("rejected edited call: %+v, somedir: %v", res, err)
				}
			default:
				if res.Status != StatusSuccess || !os.IsNotExist(err) {
					t.Errorf("approved edited call: %+v, somedir: %v", res, err)
				}
			}
		})
	}
	t.Run("blocked edit", func(t *testing.T) {
		env, _ := ftEnv(t)
		rec := &scriptedApprover{answers: []approval.Response{{Decision: approval.Approve, ModifiedArguments: json.RawMessage(`{"command":"rm -rf /"}`)}}}
		env.Approver = rec
		res := ftCall(t, env, "shell_exec", map[string]any{"command": "echo x"})
		if res.Status != StatusError || res.Error.Code != CommandBlocked || len(rec.seen) != 1 {
			t.Errorf("blocked edit: asked %d, %+v", len(rec.seen), res)
		}
	})
	t.Run("same arguments", func(t *testing.T) {
		env, _ := ftEnv(t)
		// The same call, written with other spacing: nothing new to show.
		rec := &scriptedApprover{answers: []approval.Response{{Decision: approval.Approve, ModifiedArguments: json.RawMessage(`{ "command" : "echo x" }`)}}}
		env.Approver = rec
		if res := ftCall(t, env, "shell_exec", map[string]any{"command": "echo x"}); res.Status != StatusSuccess || len(rec.seen) != 1 {
			t.Errorf("unchanged edit: asked %d, %+v", len(rec.seen), res)
		}
	})
	t.Run("always on the edited call remembers the edited one", func(t *testing.T) {
		env, _ := ftEnv(t)
		rec := &scriptedApprover{answers: []approval.Response{
			{Decision: approval.Always, ModifiedArguments: json.RawMessage(`{"command":"ls"}`)},
			{Decision: approval.Always},
		}}
		env.Approver = rec
		if res := ftCall(t, env, "shell_exec", map[string]any{"command": "echo x"}); res.Status != StatusSuccess {
			t.Fatalf("%+v", res)
		}
		if env.Memory.Allowed("shell:echo x") || !env.Memory.Allowed("shell:ls") {
			t.Errorf("rules = %+v", env.Memory.Rules())
		}
	})
}

// TestNewFileAsksInSafeMode: write_file, copy_file and move_file ask in
// safe mode even when they create something new; a rule makes them
// automatic again, and yolo mode does not ask.
func TestNewFileAsksInSafeMode(t *testing.T) {
	t.Parallel()
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"write_file", map[string]any{"path": "new.txt", "content": "n\n"}},
		{"copy_file", map[string]any{"source": "a.txt", "dest": "copy.txt"}},
		{"move_file", map[string]any{"from": "a.txt", "to": "moved.txt"}},
	}
	for _, c := range calls {
		t.Run(c.tool, func(t *testing.T) {
			for _, setup := range []struct {
				mode, rule string
				asks       bool
			}{{"safe", "", true}, {"safe", "auto", false}, {"yolo", "", false}, {"ask", "", true}} {
				env, root := ftEnv(t)
				testenv.WriteFiles(t, root, map[string]string{"a.txt": "a\n"})
				cfg := workspace.DefaultConfig()
				cfg.Approval.Mode = setup.mode
				if setup.rule != "" {
					cfg.Approval.Tools = map[string]string{c.tool: setup.rule}
				}
				env.Workspace.SetConfig(cfg)
				rec := &scriptedApprover{}
				env.Approver = rec
				res := ftCall(t, env, c.tool, c.args)
				if asked := len(rec.seen) == 1; asked != setup.asks {
					t.Errorf("mode %s rule %q: asked %v, want %v (%+v)", setup.mode, setup.rule, asked, setup.asks, res)
				}
				if setup.asks && (res.Status != StatusRejected || ftRead(t, root, "a.txt") != "a\n") {
					t.Errorf("rejected %s changed files: %+v", c.tool, res)
				}
				if setup.asks && rec.seen[0].Preview == nil {
					t.Errorf("no preview for %s", c.tool)
				}
			}
		})
	}
}

// TestStaleFileSaysWhatChanged: STALE_FILE names where the change came from
// (the person typing in the editor, or the disk), summarises it, shows the
// diff and tells the agent to read the file again.
func TestStaleFileSaysWhatChanged(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"editor", "disk"} {
		t.Run(where, func(t *testing.T) {
			env, root := ftEnv(t)
			testenv.WriteFiles(t, root, map[string]string{"f.txt": "one\ntwo\n"})
			wantSuccess(t, ftCall(t, env, "read_file", map[string]any{"path": "f.txt"}))
			path := filepath.Join(root, "f.txt")
			if where == "editor" {
				env.Workspace.Overlays.Open(workspace.Document{URI: workspace.PathToURI(path), Path: path, Version: 2, Text: "one\nTWO typed\n"})
			} else {
				testenv.WriteFiles(t, root, map[string]string{"f.txt": "one\nTWO typed\n"})
			}
			res := ftCall(t, env, "write_file", map[string]any{"path": "f.txt", "content": "x\n"})
			want := []string{"f.txt changed since you last read it", "1 line(s) added and 1 removed",
				"-two", "+TWO typed", "Read it again with read_file", "Nothing was written"}
			if where == "editor" {
				want = append(want, "the person typed in it")
			} else {
				want = append(want, "on disk")
			}
			wantError(t, res, StaleFile, want...)
			var d struct{ ChangedIn string }
			decodeDetails(t, res, &d)
			if d.ChangedIn != where {
				t.Errorf("details.changedIn = %q", d.ChangedIn)
			}
		})
	}
	t.Run("while waiting for approval", func(t *testing.T) {
		env, root := ftEnv(t)
		testenv.WriteFiles(t, root, map[string]string{"f.txt": "one\ntwo\n"})
		wantSuccess(t, ftCall(t, env, "read_file", map[string]any{"path": "f.txt"}))
		path := filepath.Join(root, "f.txt")
		env.Approver = approval.ApproverFunc(func(context.Context, approval.Request) (approval.Response, error) {
			// The person types in the file while the question is open.
			env.Workspace.Overlays.Open(workspace.Document{URI: workspace.PathToURI(path), Path: path, Version: 3, Text: "one\ntwo\nthree\n"})
			return approval.Response{Decision: approval.Approve}, nil
		})
		res := ftCall(t, env, "edit_file", map[string]any{"path": "f.txt", "old_string": "one", "new_string": "1"})
		wantError(t, res, StaleFile, "changed while the edit waited for approval", "the person typed in it",
			"1 line(s) added and 0 removed", "+three", "Read it again with read_file")
		if ftRead(t, root, "f.txt") != "one\ntwo\n" {
			t.Error("file written")
		}
	})
}

// TestReadOnlyAskSaysReadAndAlways: a read-only tool that a rule makes ask
// is labelled risk "read", not "write"; once the person said "always", the
// next call runs without asking and reports approvedBy "always", while the
// call the person answered reports "user".
func TestReadOnlyAskSaysReadAndAlways(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	testenv.WriteFiles(t, root, map[string]string{"f.txt": "one\n"})
	cfg := *env.Workspace.Config()
	cfg.Approval.Tools = map[string]string{"read_file": "ask"}
	env.Workspace.SetConfig(&cfg)
	rec := &scriptedApprover{answers: []approval.Response{{Decision: approval.Always}}}
	env.Approver = rec
	first := ftCall(t, env, "read_file", map[string]any{"path": "f.txt"})
	if first.Status != StatusSuccess || first.ApprovedBy != "user" || len(rec.seen) != 1 {
		t.Fatalf("first call: asked %d, %+v", len(rec.seen), first)
	}
	if req := rec.seen[0]; req.Risk != approval.RiskRead || req.AlwaysLabel != "always allow read_file" {
		t.Errorf("request risk %q label %q, want read and always allow read_file", req.Risk, req.AlwaysLabel)
	}
	// The rule "ask" beats a remembered "always"; without it the answer
	// counts.
	cfg.Approval.Tools = nil
	cfg.Approval.Mode = "ask"
	env.Workspace.SetConfig(&cfg)
	second := ftCall(t, env, "read_file", map[string]any{"path": "f.txt"})
	if second.Status != StatusSuccess || second.ApprovedBy != "always" || len(rec.seen) != 1 {
		t.Errorf("second call: asked %d, %+v", len(rec.seen), second)
	}
	third := ftCall(t, env, "glob", map[string]any{"pattern": "*.txt"})
	if third.Status != StatusRejected || len(rec.seen) != 2 || rec.seen[1].Risk != approval.RiskRead {
		t.Errorf("glob in mode ask: asked %d (%+v), %+v", len(rec.seen), rec.seen, third)
	}
}
