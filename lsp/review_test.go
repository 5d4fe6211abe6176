package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/lsp/lsptest"
	"github.com/agentls/agentls/tools"
)

type rulesResult struct {
	Rules   []approval.Rule `json:"rules"`
	Removed *bool           `json:"removed"`
}

// TestApprovalRules: approval/rules lists the "always" answers of the
// session and the persisted ones of an earlier session, removes one (from
// the file too), and a removed rule asks again.
func TestApprovalRules(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "somedir"), 0o755)
	init := map[string]any{"agent": "claude", "config": map[string]any{"approval": map[string]any{"persistAlways": true}}}
	open := func(answer string) (*lsptest.Client, *int) {
		c := lsptest.Pipe(t, testRunner(t))
		if _, err := c.Initialize(ctxT(t), root, lsptest.AgentlsCaps(), init); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		asked := new(int)
		c.SetHooks(lsptest.Hooks{Approval: func(r approval.Request) approval.Response {
			mu.Lock()
			defer mu.Unlock()
			*asked++
			return approval.Response{Decision: answer}
		}})
		return c, asked
	}
	ctx := ctxT(t)

	first, _ := open(approval.Always)
	if res, _ := first.ToolCall(ctx, "shell_exec", map[string]any{"command": "echo x"}); res.Status != tools.StatusSuccess {
		t.Fatalf("always: %+v", res)
	}
	if res, _ := first.ToolCall(ctx, "touch", map[string]any{"x": 1}); res.Status != tools.StatusSuccess {
		t.Fatalf("always: %+v", res)
	}
	var got rulesResult
	if err := first.Call(ctx, "approval/rules", map[string]any{}, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Rules) != 2 || got.Removed != nil {
		t.Fatalf("rules = %+v", got)
	}
	shell := got.Rules[0]
	if shell.Tool != "shell_exec" || shell.Key != "shell:echo x" || shell.Label != "always allow `echo x …`" || !shell.Persisted {
		t.Errorf("shell rule = %+v", shell)
	}
	if touch := got.Rules[1]; touch.Tool != "touch" || touch.Label != "always allow touch" || !touch.Persisted {
		t.Errorf("tool rule = %+v", touch)
	}

	// The next session of the workspace has the persisted rules.
	second, asked := open(approval.Approve)
	if err := second.Call(ctx, "approval/rules", nil, &got); err != nil || len(got.Rules) != 2 {
		t.Fatalf("second session rules = %+v (%v)", got, err)
	}
	if res, _ := second.ToolCall(ctx, "shell_exec", map[string]any{"command": "echo x"}); res.Status != tools.StatusSuccess || *asked != 0 {
		t.Fatalf("remembered: asked %d, %+v", *asked, res)
	}
	if err := second.Call(ctx, "approval/rules", map[string]any{"remove": shell.ID}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Removed == nil || !*got.Removed || len(got.Rules) != 1 || got.Rules[0].Tool != "touch" {
		t.Errorf("after remove = %+v", got)
	}
	if err := second.Call(ctx, "approval/rules", map[string]any{"remove": shell.ID}, &got); err != nil || got.Removed == nil || *got.Removed {
		t.Errorf("remove again = %+v (%v)", got, err)
	}
	if res, _ := second.ToolCall(ctx, "shell_exec", map[string]any{"command": "echo x"}); res.Status != tools.StatusSuccess || *asked != 1 {
		t.Errorf("a removed rule must ask again: asked %d, %+v", *asked, res)
	}
	// Bad params: a clear error, and the server keeps serving.
	if err := second.Call(ctx, "approval/rules", map[string]any{"remove": 5}, &got); err == nil || !strings.Contains(err.Error(), "approval/rules params") {
		t.Errorf("bad params: %v", err)
	}

	// The file lost the rule: a third session does not have it.
	third, _ := open(approval.Approve)
	if err := third.Call(ctx, "approval/rules", nil, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Rules) != 1 || got.Rules[0].Tool != "touch" {
		t.Errorf("third session rules = %+v, want only touch", got)
	}
}

// TestDangerousRequestOverLSP: the approval/request of a dangerous command
// offers no "always" and carries agent, cwd and the deadline; the
// showMessageRequest fallback offers no "Always" action either, and labels
// it with what it covers otherwise.
func TestDangerousRequestOverLSP(t *testing.T) {
	t.Parallel()
	c, root, ctx := started(t, lsptest.AgentlsCaps(), map[string]any{"agent": "claude"})
	os.MkdirAll(filepath.Join(root, "somedir"), 0o755)
	var req approval.Request
	c.SetHooks(lsptest.Hooks{Approval: func(r approval.Request) approval.Response {
		req = r
		return approval.Response{Decision: approval.Reject}
	}})
	c.ToolCall(ctx, "shell_exec", map[string]any{"command": "rm -r somedir"})
	if slices.Contains(req.Options, approval.Always) || req.AlwaysLabel != "" || req.Risk != approval.RiskDangerous ||
		req.Agent != "claude" || req.Cwd != root || req.Deadline == "" || req.TimeoutSeconds != 300 {
		t.Errorf("approval/request = %+v", req)
	}
	if _, err := os.Stat(filepath.Join(root, "somedir")); err != nil {
		t.Errorf("somedir: %v", err)
	}

	bare, broot, _ := started(t, map[string]any{}, nil)
	os.MkdirAll(filepath.Join(broot, "somedir"), 0o755)
	var titles [][]string
	bare.SetHooks(lsptest.Hooks{ShowMessageRequest: func(p json.RawMessage) any {
		var m struct{ Actions []struct{ Title string } }
		json.Unmarshal(p, &m)
		var ts []string
		for _, a := range m.Actions {
			ts = append(ts, a.Title)
		}
		titles = append(titles, ts)
		return map[string]string{"title": "Reject"}
	}})
	bare.ToolCall(ctx, "shell_exec", map[string]any{"command": "rm -r somedir"})
	bare.ToolCall(ctx, "shell_exec", map[string]any{"command": "echo x"})
	if len(titles) != 2 || strings.Join(titles[0], "|") != "Approve|Reject" || strings.Join(titles[1], "|") != "Approve|Reject|Always allow `echo x …`" {
		t.Errorf("showMessageRequest actions = %q", titles)
	}
}

// TestApprovalRequestDeadline: approval/request carries its deadline on the
// wire as expiresAt (RFC 3339, UTC, milliseconds) the configured
// approval.timeoutSeconds after the call asked, and timeoutMs, what was left
// of it when the request left (docs/protocol.md, "Approval").
func TestApprovalRequestDeadline(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		secs int
	}{
		{"configured", 42},
		{"default", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			init := map[string]any{}
			want := 300 * time.Second
			if tt.secs > 0 {
				init["config"] = map[string]any{"approval": map[string]any{"timeoutSeconds": tt.secs}}
				want = time.Duration(tt.secs) * time.Second
			}
			c, _, ctx := started(t, lsptest.AgentlsCaps(), init)
			before := time.Now()
			c.ToolCall(ctx, "touch", map[string]any{}) // the stand-in rejects
			after := time.Now()
			asked := c.Received("approval/request")
			if len(asked) != 1 {
				t.Fatalf("approval/request sent %d times", len(asked))
			}
			var wire struct {
				ExpiresAt      string `json:"expiresAt"`
				TimeoutMs      *int64 `json:"timeoutMs"`
				Deadline       string `json:"deadline"`
				TimeoutSeconds int    `json:"timeoutSeconds"`
			}
			if err := json.Unmarshal(asked[0].Params, &wire); err != nil {
				t.Fatal(err)
			}
			at, err := time.Parse(time.RFC3339Nano, wire.ExpiresAt)
			if err != nil || !strings.HasSuffix(wire.ExpiresAt, "Z") || len(wire.ExpiresAt) != len("2006-01-02T15:04:05.000Z") {
				t.Fatalf("expiresAt %q (%v), want RFC 3339 UTC with milliseconds", wire.ExpiresAt, err)
			}
			// The deadline is the timeout after the moment the call asked,
			// which lies between before and after.
			if at.Before(before.Add(want).Truncate(time.Millisecond)) || at.After(after.Add(want)) {
				t.Errorf("expiresAt %s, want between %s and %s", at, before.Add(want), after.Add(want))
			}
			if wire.TimeoutMs == nil || *wire.TimeoutMs > want.Milliseconds() || *wire.TimeoutMs < 0 {
				t.Fatalf("timeoutMs %v, want what was left of %s", wire.TimeoutMs, want)
			}
			// Sent at expiresAt - timeoutMs: within the call.
			sent := at.Add(-time.Duration(*wire.TimeoutMs) * time.Millisecond)
			if sent.Before(before.Add(-time.Millisecond)) || sent.After(after.Add(time.Millisecond)) {
				t.Errorf("expiresAt - timeoutMs = %s, not between %s and %s", sent, before, after)
			}
			if wire.TimeoutSeconds != int(want/time.Second) || wire.Deadline != at.Truncate(time.Second).Format(time.RFC3339) {
				t.Errorf("deadline %q timeoutSeconds %d: not the same deadline as expiresAt %q", wire.Deadline, wire.TimeoutSeconds, wire.ExpiresAt)
			}
		})
	}
}

// TestConfirmedEditDeadline: an edit the editor shows for confirmation
// (needsConfirmation) waits for the call's time limit, tools.timeoutSeconds;
// then the call ends with TIMEOUT, the file is untouched and the editor is
// told with $/cancelRequest to close its preview.
func TestConfirmedEditDeadline(t *testing.T) {
	t.Parallel()
	c, root, ctx := started(t, annotatedCaps(), map[string]any{"config": map[string]any{"tools": map[string]any{"timeoutSeconds": 1}}})
	os.WriteFile(filepath.Join(root, "f.txt"), []byte("one\n"), 0o644)
	release := make(chan struct{})
	defer close(release)
	c.SetHooks(lsptest.Hooks{ApplyEdit: func(json.RawMessage) lsptest.ApplyResult {
		<-release // nobody answers before the deadline
		return lsptest.ApplyResult{}
	}})
	res, err := c.ToolCall(ctx, "edit_file", map[string]any{"path": "f.txt", "old_string": "one", "new_string": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error == nil || res.Error.Code != tools.Timeout {
		t.Errorf("result = %+v, want TIMEOUT", res)
	}
	if _, err := c.WaitFor(ctx, "$/cancelRequest", nil); err != nil {
		t.Errorf("the server did not cancel its workspace/applyEdit: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "f.txt")); string(b) != "one\n" {
		t.Errorf("f.txt = %q", b)
	}
}
