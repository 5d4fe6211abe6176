package mcp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/attach"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/lsp/lsptest"
)

// The attached tests run the real binary twice: `agentls serve` as the
// editor's session, driven by the lsptest harness (which answers approvals
// and applies edits like an editor), and `agentls mcp` started in the
// workspace, which must attach to it by itself; the official Go SDK's
// client speaks MCP to the latter.

// editorSession is an editor (the lsptest harness) with its agentls serve.
type editorSession struct {
	*lsptest.Process
	mu    sync.Mutex
	asked []approval.Request
}

// startEditor starts `agentls serve` on root like an editor and waits until
// its session is published. Approvals are approved, except those whose
// arguments hold "reject-me", which are rejected with a message.
func startEditor(t *testing.T, bin, root string) *editorSession {
	t.Helper()
	e := &editorSession{Process: lsptest.Binary(t, bin, root, "serve")}
	e.SetHooks(lsptest.Hooks{
		Approval: func(r approval.Request) approval.Response {
			e.mu.Lock()
			e.asked = append(e.asked, r)
			e.mu.Unlock()
			if strings.Contains(string(r.Arguments), "reject-me") {
				return approval.Response{Decision: approval.Reject, Message: "not in this file, use c.txt"}
			}
			return approval.Response{Decision: approval.Approve}
		},
		ApplyEdit: func(params json.RawMessage) lsptest.ApplyResult {
			return e.ApplyEdit(context.Background(), params, true)
		},
	})
	ctx := context.Background()
	params := map[string]any{
		"processId":        os.Getpid(),
		"clientInfo":       map[string]string{"name": "Test Editor"},
		"rootUri":          "file://" + root,
		"capabilities":     lsptest.AgentlsCaps(),
		"workspaceFolders": []map[string]string{{"uri": "file://" + root, "name": "w"}},
	}
	var res json.RawMessage
	if err := e.Call(ctx, "initialize", params, &res); err != nil {
		t.Fatalf("initialize: %v; stderr: %s", err, e.Stderr.String())
	}
	if err := e.Notify(ctx, "initialized", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	waitPublished(t, root, e.Cmd.Process.Pid)
	return e
}

// waitPublished waits until the process pid has published a session on
// root.
func waitPublished(t *testing.T, root string, pid int) attach.Descriptor {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		sessions, err := attach.List()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sessions {
			if s.PID == pid && len(s.Roots) == 1 && s.Roots[0] == root {
				return s
			}
		}
	}
	t.Fatalf("no session published for %s by pid %d", root, pid)
	return attach.Descriptor{}
}

// end shuts the editor's session down as an editor does when it closes.
func (e *editorSession) end(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := e.Call(ctx, "shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	e.Notify(ctx, "exit", nil)
	if code, err := e.Wait(30 * time.Second); err != nil || code != 0 {
		t.Fatalf("editor exit %d %v", code, err)
	}
}

func (e *editorSession) requests() []approval.Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]approval.Request(nil), e.asked...)
}

// attachedEnv isolates a test and gives it its own runtime directory.
func attachedEnv(t *testing.T) (bin, root string) {
	isolate(t)
	testenv.RuntimeDir(t)
	root = t.TempDir()
	return lsptest.BuildBinary(t), root
}

// startMCP starts `agentls mcp` in dir with args and connects the SDK's
// client, named like Claude Code, with opts (nil: the defaults).
func startMCP(t *testing.T, bin, dir string, opts *sdk.ClientOptions, args ...string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
	cmd.Dir = dir
	client := sdk.NewClient(&sdk.Implementation{Name: "claude-code", Title: "Claude Code", Version: "1"}, opts)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestAttachedEndToEnd(t *testing.T) {
	bin, root := attachedEnv(t)
	write(t, filepath.Join(root, "a.txt"), "on disk\n")
	write(t, filepath.Join(root, "b.txt"), "one\ntwo\n")
	ed := startEditor(t, bin, root)
	ctx := context.Background()
	// An unsaved buffer in the editor.
	if err := ed.OpenDoc(ctx, filepath.Join(root, "a.txt"), "unsaved in the editor\n"); err != nil {
		t.Fatal(err)
	}

	sub := filepath.Join(root, "sub")
	os.Mkdir(sub, 0o755)
	cs := startMCP(t, bin, sub, nil) // a directory inside the root

	// The (client-less) tool list came from the editor's session.
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) < 10 {
		t.Fatalf("tools/list: %v %d", err, len(lt.Tools))
	}

	// Reads see the editor's buffer, not the disk.
	res := call(t, cs, "read_file", map[string]any{"path": "a.txt"})
	if res.IsError || !strings.Contains(text(res), "unsaved in the editor") {
		t.Fatalf("read_file: %s", text(res))
	}

	// An edit is reviewed in the editor, in the MCP client's name, and lands
	// through the editor's applyEdit.
	res = call(t, cs, "edit_file", map[string]any{"path": "b.txt", "old_string": "two", "new_string": "2"})
	if res.IsError {
		t.Fatalf("edit_file: %s", text(res))
	}
	if got := read(t, filepath.Join(root, "b.txt")); got != "one\n2\n" {
		t.Fatalf("b.txt = %q", got)
	}
	asked := ed.requests()
	if len(asked) != 1 || asked[0].Agent != "Claude Code" || asked[0].Tool != "edit_file" {
		t.Fatalf("approvals asked in the editor: %+v", asked)
	}
	if len(ed.Received("workspace/applyEdit")) == 0 {
		t.Error("the edit did not go through the editor's workspace/applyEdit")
	}
	// The editor's events show the call.
	found := false
	for _, m := range ed.Received("tool/event") {
		if strings.Contains(string(m.Params), "edit_file") {
			found = true
		}
	}
	if !found {
		t.Error("no tool/event of the call reached the editor")
	}

	// A rejection in the editor reaches the MCP client with its message.
	res = call(t, cs, "edit_file", map[string]any{"path": "b.txt", "old_string": "one", "new_string": "reject-me"})
	if !res.IsError || !strings.Contains(text(res), "REJECTED") || !strings.Contains(text(res), "not in this file, use c.txt") {
		t.Fatalf("rejected edit: %v %s", res.IsError, text(res))
	}
	if got := read(t, filepath.Join(root, "b.txt")); got != "one\n2\n" {
		t.Fatalf("b.txt after the rejection = %q", got)
	}

	// The editor closes: calls fail with SESSION_ENDED, never hang.
	ed.end(t)
	if sessions, _ := attach.List(); len(sessions) != 0 {
		t.Fatalf("sessions after the editor closed: %+v", sessions)
	}
	res = call(t, cs, "read_file", map[string]any{"path": "a.txt"})
	if !res.IsError || !strings.HasPrefix(text(res), "SESSION_ENDED: ") || !strings.Contains(text(res), "next: ") {
		t.Fatalf("call after the session ended: %v %s", res.IsError, text(res))
	}

	// A new editor session on the root: the same MCP server attaches to it.
	ed2 := startEditor(t, bin, root)
	res = call(t, cs, "read_file", map[string]any{"path": "b.txt"})
	if res.IsError || !strings.Contains(text(res), "2") {
		t.Fatalf("read_file in the new session: %s", text(res))
	}
	res = call(t, cs, "edit_file", map[string]any{"path": "b.txt", "old_string": "one", "new_string": "1"})
	if res.IsError || read(t, filepath.Join(root, "b.txt")) != "1\n2\n" {
		t.Fatalf("edit in the new session: %s", text(res))
	}
	if asked := ed2.requests(); len(asked) != 1 || asked[0].Agent != "Claude Code" {
		t.Fatalf("approvals in the new editor: %+v", asked)
	}
}

// TestAttachedSessionFlag: --session chooses among nested sessions, the
// innermost root wins without it, and no session means standalone.
func TestAttachedSessionFlag(t *testing.T) {
	bin, root := attachedEnv(t)
	inner := filepath.Join(root, "inner")
	os.Mkdir(inner, 0o755)
	write(t, filepath.Join(root, "x.txt"), "outer\n")
	write(t, filepath.Join(inner, "x.txt"), "inner\n")
	outerEd := startEditor(t, bin, root)
	startEditor(t, bin, inner)
	outer := waitPublished(t, root, outerEd.Cmd.Process.Pid)

	cs := startMCP(t, bin, inner, nil)
	if res := call(t, cs, "read_file", map[string]any{"path": "x.txt"}); !strings.Contains(text(res), "inner") {
		t.Errorf("innermost root: %s", text(res))
	}
	cs = startMCP(t, bin, inner, nil, "--session", outer.ID)
	if res := call(t, cs, "read_file", map[string]any{"path": "x.txt"}); !strings.Contains(text(res), "outer") {
		t.Errorf("--session %s: %s", outer.ID, text(res))
	}
	// `agentls sessions` lists both.
	out, err := exec.Command(bin, "sessions").Output()
	if err != nil || !strings.Contains(string(out), outer.ID) || !strings.Contains(string(out), inner) || !strings.Contains(string(out), "Test Editor") {
		t.Errorf("agentls sessions: %v\n%s", err, out)
	}
	// An unknown --session is an error, not standalone.
	cmd := exec.Command(bin, "mcp", "--session", "0123456789abcdef")
	cmd.Dir = inner
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "no editor session 0123456789abcdef") {
		t.Errorf("unknown --session: %v %s", err, out)
	}
	// Outside every root: standalone (it serves, and approvals need elicitation).
	elsewhere := t.TempDir()
	write(t, filepath.Join(elsewhere, "x.txt"), "alone\n")
	cs = startMCP(t, bin, elsewhere, nil)
	if res := call(t, cs, "read_file", map[string]any{"path": "x.txt"}); !strings.Contains(text(res), "alone") {
		t.Errorf("standalone: %s", text(res))
	}
}

// Cancelling an attached call (notifications/cancelled) reaches the
// editor's session, which ends the command; a SIGTERM'd editor leaves no
// session behind.
func TestAttachedCancelAndSignal(t *testing.T) {
	bin, root := attachedEnv(t)
	ed := startEditor(t, bin, root)
	cs := startMCP(t, bin, root, nil)
	pid, cancel, done := startSleep(t, cs, 700)
	cancel() // the SDK client sends notifications/cancelled
	waitGone(t, pid, "cancelled attached call")
	if err := <-done; err == nil {
		t.Error("the cancelled call returned a result")
	}
	if asked := ed.requests(); len(asked) != 1 || asked[0].Tool != "shell_exec" {
		t.Errorf("approvals: %+v", asked)
	}

	dir, err := attach.Dir()
	if err != nil {
		t.Fatal(err)
	}
	ed.Cmd.Process.Signal(syscall.SIGTERM)
	if code, err := ed.Wait(30 * time.Second); err != nil || code != 128+int(syscall.SIGTERM) {
		t.Fatalf("editor after SIGTERM: %d %v", code, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left in the runtime directory after SIGTERM: %v", names)
	}
	res := call(t, cs, "read_file", map[string]any{"path": "x"})
	if !strings.HasPrefix(text(res), "SESSION_ENDED: ") {
		t.Errorf("after the editor's SIGTERM: %s", text(res))
	}
}
