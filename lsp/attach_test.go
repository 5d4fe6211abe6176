package lsp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/attach"
	"github.com/agentls/agentls/internal/listen"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/lsp/lsptest"
	"github.com/agentls/agentls/tools"
)

// These tests run the real binary as the editor's server (`agentls serve`
// on stdio, which publishes its session) and connect to its socket as an
// attached client would.

// publishedEditor starts `agentls serve` on root, initializes it like an
// editor with initOptions, and returns it with its session (ok false: none
// was published). Publishing happens before initialize is answered.
func publishedEditor(t *testing.T, root string, initOptions any) (*lsptest.Process, attach.Descriptor, bool) {
	t.Helper()
	p := lsptest.Binary(t, lsptest.BuildBinary(t), root)
	p.SetHooks(lsptest.Hooks{
		Approval: func(approval.Request) approval.Response { return approval.Response{Decision: approval.Approve} },
	})
	if _, err := p.Initialize(context.Background(), root, lsptest.AgentlsCaps(), initOptions); err != nil {
		t.Fatalf("initialize: %v; stderr %s", err, p.Stderr.String())
	}
	d, ok := attach.FindRoot(root)
	return p, d, ok
}

type reports struct {
	mu  sync.Mutex
	got []string
}

func (r *reports) Report(message string, _ int) {
	r.mu.Lock()
	r.got = append(r.got, message)
	r.mu.Unlock()
}
func (r *reports) Partial(any) {}

func (r *reports) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.got, "")
}

func TestAttachedClient(t *testing.T) {
	testenv.RuntimeDir(t)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("disk\n"), 0o644)
	ed, d, ok := publishedEditor(t, root, nil)
	if !ok {
		t.Fatalf("no session published; stderr %s", ed.Stderr.String())
	}
	if d.PID != ed.Cmd.Process.Pid || len(d.Roots) != 1 || d.Roots[0] != root {
		t.Fatalf("descriptor %+v", d)
	}
	ctx := context.Background()
	if err := ed.OpenDoc(ctx, filepath.Join(root, "a.txt"), "buffer\n"); err != nil {
		t.Fatal(err)
	}

	c, err := attach.Dial(ctx, d, "test client")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	list, err := c.Tools(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	risks := map[string]approval.Risk{}
	for _, tl := range list {
		risks[tl.Name] = tl.Risk
	}
	if len(list) < 10 || risks["shell_exec"] != approval.RiskExecute || risks["read_file"] != approval.RiskNone || risks["edit_file"] != approval.RiskWrite {
		t.Errorf("tool/list: %d tools, risks %v", len(list), risks)
	}

	// The call runs in the editor's session: it reads the buffer; its
	// events go to the editor; its progress comes back to the client.
	res, err := c.Call(ctx, tools.Request{Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`), Agent: "Some Agent"}, nil)
	if err != nil || res.Status != tools.StatusSuccess || !strings.Contains(res.Content, "buffer") {
		t.Fatalf("read_file: %v %+v", err, res)
	}
	var pr reports
	res, err = c.Call(ctx, tools.Request{Name: "shell_exec", Arguments: json.RawMessage(`{"command":"echo line1; sleep 0.05; echo line2"}`), Agent: "Some Agent"}, &pr)
	if err != nil || res.Status != tools.StatusSuccess {
		t.Fatalf("shell_exec: %v %+v", err, res)
	}
	if !strings.Contains(pr.all(), "line1") {
		t.Errorf("progress: %q", pr.all())
	}
	asked := ed.Received("approval/request")
	if len(asked) != 1 || !strings.Contains(string(asked[0].Params), `"agent":"Some Agent"`) {
		t.Fatalf("approval/request in the editor: %v", asked)
	}
	// The attached call's question carries its deadline like any other.
	var dl struct {
		ExpiresAt string `json:"expiresAt"`
		TimeoutMs *int64 `json:"timeoutMs"`
	}
	json.Unmarshal(asked[0].Params, &dl)
	if _, err := time.Parse(time.RFC3339Nano, dl.ExpiresAt); err != nil || dl.TimeoutMs == nil || *dl.TimeoutMs <= 0 {
		t.Errorf("approval/request of the attached call: expiresAt %q (%v), timeoutMs %v", dl.ExpiresAt, err, dl.TimeoutMs)
	}
	events := 0
	for _, m := range ed.Received("tool/event") {
		if strings.Contains(string(m.Params), res.CallID) {
			events++
		}
	}
	if events == 0 {
		t.Error("the editor received no tool/event of the attached call")
	}

	// An attached client may not touch the editor's documents or ask for
	// anything but tools.
	raw := rawAttach(t, d, readToken(t, d))
	var out any
	if err := raw.call("textDocument/hover", map[string]any{}, &out); err == nil || !strings.Contains(err.Error(), "method not found") {
		t.Errorf("textDocument/hover from an attached client: %v", err)
	}
	raw.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": "file://" + filepath.Join(root, "a.txt"), "languageId": "plaintext", "version": 9, "text": "planted\n"}})
	res, err = c.Call(ctx, tools.Request{Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)}, nil)
	if err != nil || !strings.Contains(res.Content, "buffer") {
		t.Errorf("read_file after an attached didOpen: %v %+v", err, res)
	}

	// The editor shuts down: the session is unpublished before the answer,
	// and the attached connection ends.
	if err := ed.Call(ctx, "shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := attach.FindRoot(root); ok {
		t.Error("the session is still published after shutdown")
	}
	select {
	case <-c.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the attached connection outlived the editor's shutdown")
	}
	if _, err := c.Call(ctx, tools.Request{Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)}, nil); err != attach.ErrEnded {
		t.Errorf("call after the end: %v", err)
	}
}

// A connection must open with initialize carrying the token: a wrong or
// missing token, or another first message, is closed unanswered.
func TestAttachedTokenRefused(t *testing.T) {
	testenv.RuntimeDir(t)
	root := t.TempDir()
	ed, d, ok := publishedEditor(t, root, nil)
	if !ok {
		t.Fatalf("no session published; stderr %s", ed.Stderr.String())
	}
	for _, first := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"initializationOptions":{"token":"0000000000000000000000000000000000000000000000000000000000000000"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tool/list","params":{"token":"` + readToken(t, d) + `"}}`,
	} {
		c, err := net.Dial("unix", d.Socket)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "Content-Length: %d\r\n\r\n%s", len(first), first)
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		b, err := io.ReadAll(c)
		c.Close()
		if len(b) != 0 || err != nil {
			t.Errorf("first message %s: answered %q %v", first, b, err)
		}
	}
	// The right token gets in.
	c, err := attach.Dial(context.Background(), d, "test")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

func TestPublishSessionOff(t *testing.T) {
	testenv.RuntimeDir(t)
	root := t.TempDir()
	ed, _, ok := publishedEditor(t, root, map[string]any{"config": map[string]any{"lsp": map[string]any{"publishSession": false}}})
	if ok {
		t.Errorf("lsp.publishSession false, yet the session was published")
	}
	if strings.Contains(ed.Stderr.String(), "publish") {
		t.Errorf("stderr: %s", ed.Stderr.String())
	}
}

func readToken(t *testing.T, d attach.Descriptor) string {
	tok, err := listen.ReadToken(d.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// rawConn is a JSON-RPC connection to a session's socket.
type rawConn struct {
	t    *testing.T
	conn jsonrpc2.Conn
}

func rawAttach(t *testing.T, d attach.Descriptor, token string) *rawConn {
	nc, err := net.Dial("unix", d.Socket)
	if err != nil {
		t.Fatal(err)
	}
	r := &rawConn{t: t, conn: jsonrpc2.NewConn(jsonrpc2.NewStream(nc))}
	r.conn.Go(context.Background(), jsonrpc2.MethodNotFoundHandler)
	t.Cleanup(func() { r.conn.Close() })
	var res any
	if err := r.call("initialize", map[string]any{"initializationOptions": map[string]any{"token": token}}, &res); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rawConn) call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := r.conn.Call(ctx, method, params, result)
	return err
}

func (r *rawConn) notify(method string, params any) {
	if err := r.conn.Notify(context.Background(), method, params); err != nil {
		r.t.Fatal(err)
	}
}
