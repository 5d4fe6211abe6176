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
	"github.com/agentls/agentls/workspace"
)

// ftRunner runs the built-in tools in the file tool tests.
var ftRunner = sync.OnceValue(func() *Runner { return NewRunner(NewBuiltinRegistry(), nil) })

// ftEnv returns an environment over a fresh root whose approver approves
// every call, without an editor: the server writes the files.
func ftEnv(t testing.TB) (*Env, string) {
	t.Helper()
	root := t.TempDir()
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Workspace: ws, Session: NewSession(ws, SessionOptions{}), Memory: approval.NewMemory(""),
		Approver: approval.ApproverFunc(func(context.Context, approval.Request) (approval.Response, error) {
			return approval.Response{Decision: approval.Approve}, nil
		})}, root
}

// ftCall runs one call; args is JSON text or a value to marshal.
func ftCall(t testing.TB, env *Env, name string, args any) *Result {
	t.Helper()
	raw, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	return ftRunner().Run(context.Background(), env, Request{Name: name, Arguments: json.RawMessage(raw)}, nil)
}

// ftWrite writes files (path → content) below root.
func ftWrite(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
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

// ftWantError checks that res is an error with code and a message holding
// every part.
func ftWantError(t testing.TB, res *Result, code Code, parts ...string) {
	t.Helper()
	if res.Status != StatusError || res.Error == nil || res.Error.Code != code {
		t.Fatalf("result = %s %+v, want error %s", res.Status, res.Error, code)
	}
	for _, p := range parts {
		if !strings.Contains(res.Error.Message, p) {
			t.Errorf("error message %q lacks %q", res.Error.Message, p)
		}
	}
}

// ftWantSuccess fails the test unless res succeeded.
func ftWantSuccess(t testing.TB, res *Result) {
	t.Helper()
	if res.Status != StatusSuccess {
		t.Fatalf("result = %s: %s %+v", res.Status, res.Content, res.Error)
	}
}

// ftStructured decodes res.Structured into v.
func ftStructured(t testing.TB, res *Result, v any) {
	t.Helper()
	b, err := json.Marshal(res.Structured)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured %s: %v", b, err)
	}
}

// ftStructuredDetails decodes the error details of res into v.
func ftStructuredDetails(t testing.TB, res *Result, v any) {
	t.Helper()
	b, _ := json.Marshal(res.Error.Details)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("details %s: %v", b, err)
	}
}

// approverCounting counts the questions, then lets inner answer.
func approverCounting(n *int, inner approval.Approver) approval.Approver {
	return approval.ApproverFunc(func(ctx context.Context, r approval.Request) (approval.Response, error) {
		*n++
		return inner.Ask(ctx, r)
	})
}
