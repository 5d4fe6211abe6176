package main

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/lsp/lsptest"
	"github.com/agentls/agentls/tools"
)

// TestServerRedaction runs the real server binary with its debug log on
// stderr and sends each secret shape of redact/testdata/secrets.txtar in a
// shell command that prints it (so the secret is in the arguments and in
// the streamed output) and in written file content. No secret may reach
// stderr, a tool/event or $/progress notification, the tool/history answer
// or the history file. (approval/request is not checked: it is the
// question to the person, who must see what they approve.)
func TestServerRedaction(t *testing.T) {
	t.Parallel()
	corpus := testenv.Secrets(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	root := t.TempDir()
	p := lsptest.Binary(t, lsptest.BuildBinary(t), root, "serve", "--stdio", "--log-level", "debug")
	p.SetHooks(lsptest.Hooks{Approval: func(approval.Request) approval.Response {
		return approval.Response{Decision: approval.Approve}
	}})
	caps := map[string]any{
		"window":       map[string]any{"workDoneProgress": true},
		"experimental": map[string]any{"agentls": map[string]any{"approvalRequest": true}},
	}
	if _, err := p.Initialize(ctx, root, caps, nil); err != nil {
		t.Fatalf("initialize: %v; stderr %s", err, p.Stderr)
	}
	var secrets []string
	for i, c := range corpus {
		secrets = append(secrets, c.Secret)
		var res tools.Result
		err := p.Call(ctx, "tool/call", map[string]any{"name": "shell_exec", "workDoneToken": "w" + c.Shape,
			"arguments": map[string]any{"command": "cat <<'EOF'\n" + c.Text + "\nEOF"}}, &res)
		if err != nil || res.Status != tools.StatusSuccess || !strings.Contains(res.Content, c.Secret) {
			t.Fatalf("%s: shell_exec: %v %+v (the result, for the agent, keeps the output)", c.Shape, err, res)
		}
		if r, err := p.ToolCall(ctx, "write_file", map[string]any{"path": "f" + string(rune('a'+i%26)) + c.Shape, "content": c.Text}); err != nil || r.Status != tools.StatusSuccess {
			t.Fatalf("%s: write_file: %v %+v", c.Shape, err, r)
		}
	}
	var hist struct{ Entries []json.RawMessage }
	if err := p.Call(ctx, "tool/history", map[string]any{"limit": 1000}, &hist); err != nil {
		t.Fatal(err)
	}
	if len(hist.Entries) != 2*len(corpus) {
		t.Errorf("tool/history has %d entries, want %d", len(hist.Entries), 2*len(corpus))
	}
	time.Sleep(200 * time.Millisecond) // stderr is copied by a goroutine
	var sent strings.Builder
	progress := 0
	for _, m := range p.Received("") {
		if m.Method == "approval/request" {
			continue // the question to the person shows what they approve
		}
		sent.WriteString(m.Method + " " + string(m.Params) + "\n")
		if m.Method == "tool/event" && strings.Contains(string(m.Params), `"kind":"progress"`) {
			progress++
		}
	}
	file, _ := os.ReadFile(tools.HistoryFile([]string{root}))
	sinks := map[string]string{"stderr": p.Stderr.String(), "notifications": sent.String(),
		"tool/history": string(testenv.MarshalJSON(t, hist)), "history file": string(file)}
	if progress == 0 || len(file) == 0 || !strings.Contains(sinks["stderr"], "tool call") {
		t.Fatalf("nothing to check: %d progress events, %d bytes of history, stderr %q", progress, len(file), sinks["stderr"])
	}
	through := 0
	for _, s := range secrets {
		forms := []string{s, url.QueryEscape(s), strings.Trim(string(testenv.MarshalJSON(t, s)), `"`)}
		forms = append(forms, strings.Split(s, "\n")...)
		leaked := false
		for name, sink := range sinks {
			for _, f := range forms {
				if len(f) >= 8 && strings.Contains(sink, f) {
					i := strings.Index(sink, f)
					t.Errorf("%q reached %s: …%s…", f, name, sink[max(0, i-200):min(len(sink), i+50)])
					leaked = true
				}
			}
		}
		if leaked {
			through++
		}
	}
	t.Logf("server redaction: %d secrets, each in a command, its output and a file: %d got through (%d progress events, %d bytes of debug log)",
		len(secrets), through, progress, len(sinks["stderr"]))
}
