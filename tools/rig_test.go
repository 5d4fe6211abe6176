package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace"
	"github.com/agentls/agentls/workspace/workspacetest"
)

// TestMain gives the package's tests a home of their own: no user
// configuration read, no history or index copy written in the user's.
func TestMain(m *testing.M) { testenv.Main(m) }

// rig is a workspace over a temporary root behind the real runner, without
// an editor: the server writes the files. Every approval question is
// recorded; answer decides it (approve when nil).
type rig struct {
	t    testing.TB
	root string
	ws   *workspace.Workspace
	r    *Runner
	env  *Env

	mu     sync.Mutex
	asked  []approval.Request
	answer func(approval.Request) approval.Response
}

// newRig makes a rig over root (a fresh temporary folder when root is "")
// with the default configuration and the tools given (every built-in tool
// when none is). The session closes when the test ends.
func newRig(t testing.TB, root string, tools ...*Tool) *rig {
	t.Helper()
	if root == "" {
		root = t.TempDir()
	}
	ws := workspacetest.New(t, root)
	reg := NewBuiltinRegistry()
	if len(tools) > 0 {
		reg = NewRegistry(nil)
		reg.MustRegister(tools...)
	}
	g := &rig{t: t, root: root, ws: ws, r: NewRunner(reg, nil)}
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
	t.Cleanup(func() { g.env.Session.Close() })
	return g
}

// always answers every question with decision.
func always(decision string) func(approval.Request) approval.Response {
	return func(approval.Request) approval.Response { return approval.Response{Decision: decision} }
}

// config sets the default configuration, changed by edit (when not nil).
func (g *rig) config(edit func(*workspace.Config)) {
	cfg := workspace.DefaultConfig()
	if edit != nil {
		edit(cfg)
	}
	g.ws.SetConfig(cfg)
}

// call runs a tool through the runner; args is JSON text or a value to
// marshal.
func (g *rig) call(name string, args any) *Result {
	g.t.Helper()
	return runTool(g.t, context.Background(), g.r, g.env, name, args, nil)
}

// questions returns the approval requests so far and forgets them.
func (g *rig) questions() []approval.Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	q := g.asked
	g.asked = nil
	return q
}

// write writes a file below the root, making its folders.
func (g *rig) write(rel, content string) {
	g.t.Helper()
	testenv.WriteFiles(g.t, g.root, map[string]string{rel: content})
}

// writeKeepingMtime writes a file below the root that exists, and gives it
// back the modification time it had: a change that a check of size and
// mtime alone misses when the size stays too.
func (g *rig) writeKeepingMtime(rel, content string) {
	g.t.Helper()
	p := filepath.Join(g.root, filepath.FromSlash(rel))
	fi, err := os.Stat(p)
	if err != nil {
		g.t.Fatal(err)
	}
	g.write(rel, content)
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		g.t.Fatal(err)
	}
}

// git runs git in the root and returns its output.
func (g *rig) git(args ...string) string {
	g.t.Helper()
	return testenv.Git(g.t, g.root, nil, args...)
}

// commit writes files and commits every change of the root.
func (g *rig) commit(msg string, files map[string]string) {
	g.t.Helper()
	testenv.WriteFiles(g.t, g.root, files)
	g.git("add", "-A")
	g.git("commit", "-q", "-m", msg)
}

// toolCall is one call of a table test: a tool's name and its arguments.
type toolCall struct {
	tool string
	args map[string]any
}

// runTool runs one call of the tool name through r; args is JSON text or
// a value to marshal.
func runTool(t testing.TB, ctx context.Context, r *Runner, env *Env, name string, args any, p Progress) *Result {
	t.Helper()
	raw, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	return r.Run(ctx, env, Request{Name: name, Arguments: json.RawMessage(raw)}, p)
}

// ftRunner runs the built-in tools in the file tool tests.
var ftRunner = sync.OnceValue(func() *Runner { return NewRunner(NewBuiltinRegistry(), nil) })

// ftEnv returns the environment of a rig over a fresh root whose approver
// approves every call.
func ftEnv(t testing.TB) (*Env, string) {
	t.Helper()
	g := newRig(t, "")
	return g.env, g.root
}

// ftCall runs one call of a built-in tool; args is JSON text or a value to
// marshal.
func ftCall(t testing.TB, env *Env, name string, args any) *Result {
	t.Helper()
	return runTool(t, context.Background(), ftRunner(), env, name, args, nil)
}

// ftRead returns the content of root/p, or "<absent>".
func ftRead(t testing.TB, root, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
	if os.IsNotExist(err) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantSuccess fails the test unless res succeeded.
func wantSuccess(t testing.TB, res *Result) {
	t.Helper()
	if res.Status != StatusSuccess {
		t.Fatalf("%s: %s %s %+v", res.Tool, res.Status, res.Content, res.Error)
	}
}

// wantError fails the test unless res is an error with code and a message
// holding every part.
func wantError(t testing.TB, res *Result, code Code, parts ...string) {
	t.Helper()
	if res.Status != StatusError || res.Error == nil || res.Error.Code != code {
		t.Fatalf("%s: want error %s, got %s %s %+v", res.Tool, code, res.Status, res.Content, res.Error)
	}
	for _, p := range parts {
		if !strings.Contains(res.Error.Message, p) {
			t.Errorf("error message %q lacks %q", res.Error.Message, p)
		}
	}
}

// decode decodes a result's structured value into v.
func decode(t testing.TB, res *Result, v any) {
	t.Helper()
	b, err := json.Marshal(res.Structured)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured of %s: %v (%s)", res.Tool, err, b)
	}
}

// decodeDetails decodes the error details of res into v.
func decodeDetails(t testing.TB, res *Result, v any) {
	t.Helper()
	b, _ := json.Marshal(res.Error.Details)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("details %s: %v", b, err)
	}
}
