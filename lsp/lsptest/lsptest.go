// Package lsptest is the end-to-end harness: it speaks LSP to an agentls
// server like an editor does, over a pipe to an in-process server or over
// stdio to the real binary, and answers the server's requests
// (approval/request, workspace/applyEdit, window/showMessageRequest) through
// hooks a test sets.
package lsptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/lsp"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// Hooks answer the server's requests. A nil hook answers as a plain editor
// would: approval/request → reject, applyEdit → not applied,
// showMessageRequest → dismissed (null). Hooks run on their own goroutine
// and may block.
type Hooks struct {
	Approval           func(approval.Request) approval.Response
	ApplyEdit          func(params json.RawMessage) ApplyResult
	ShowMessageRequest func(params json.RawMessage) any
	// Other answers any other request; nil → MethodNotFound.
	Other func(method string, params json.RawMessage) (any, error)
}

// ApplyResult is the answer to workspace/applyEdit.
type ApplyResult struct {
	Applied       bool   `json:"applied"`
	FailureReason string `json:"failureReason,omitempty"`
}

// Message is a notification or request the server sent.
type Message struct {
	Method string
	Params json.RawMessage
}

// Client is an editor stand-in connected to one server.
type Client struct {
	t    testing.TB
	conn jsonrpc2.Conn

	mu       sync.Mutex
	hooks    Hooks
	received []Message
	changed  chan struct{} // closed and replaced whenever a message arrives
	docs     map[string]*doc

	done func() // waits for the server to end
}

// SetHooks replaces the hooks.
func (c *Client) SetHooks(h Hooks) {
	c.mu.Lock()
	c.hooks = h
	c.mu.Unlock()
}

// Pipe starts an in-process server over net.Pipe with the given runner
// (nil: the built-in tools) and returns the connected client. The server
// stops when the test ends.
func Pipe(t testing.TB, runner *tools.Runner) *Client {
	t.Helper()
	if runner == nil {
		runner = tools.NewRunner(tools.NewBuiltinRegistry(), nil)
	}
	srv, cli := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	exit := make(chan int, 1)
	go func() { exit <- lsp.Serve(ctx, srv, lsp.Options{Runner: runner, Version: "test"}) }()
	c := newClient(t, cli)
	c.done = func() {
		cancel()
		select {
		case <-exit:
		case <-time.After(10 * time.Second):
			t.Errorf("server did not stop")
		}
	}
	t.Cleanup(func() { c.conn.Close(); c.done() })
	return c
}

// Process is a server binary started by Binary.
type Process struct {
	*Client
	Cmd    *exec.Cmd
	Stderr *syncBuffer
	exited chan struct{}
	err    error
}

// Binary starts the agentls binary at bin with args (default: serve) and
// connects to its stdio. The process is killed when the test ends if it is
// still running.
func Binary(t testing.TB, bin string, dir string, args ...string) *Process {
	t.Helper()
	cmd, stdin, stdout := piped(t, bin, dir, args...)
	p := &Process{Cmd: cmd, Stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	p.Client = newClient(t, rwc{stdout, stdin})
	t.Cleanup(func() {
		p.conn.Close()
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// piped is the command bin args in dir, not started yet, with pipes to
// its stdin and from its stdout.
func piped(t testing.TB, bin, dir string, args ...string) (cmd *exec.Cmd, stdin io.WriteCloser, stdout io.ReadCloser) {
	t.Helper()
	cmd = exec.Command(bin, args...)
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err = cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	return cmd, stdin, stdout
}

// Wait waits for the process to exit and returns its exit code.
func (p *Process) Wait(timeout time.Duration) (int, error) {
	select {
	case <-p.exited:
		return p.Cmd.ProcessState.ExitCode(), nil
	case <-time.After(timeout):
		return -1, fmt.Errorf("server still running after %s; stderr: %s", timeout, p.Stderr.String())
	}
}

type rwc struct {
	io.ReadCloser
	io.WriteCloser
}

func (r rwc) Close() error {
	r.WriteCloser.Close()
	return r.ReadCloser.Close()
}

func newClient(t testing.TB, conn io.ReadWriteCloser) *Client {
	c := &Client{t: t, changed: make(chan struct{})}
	c.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(conn))
	c.conn.Go(context.Background(), c.handle)
	return c
}

func (c *Client) record(m Message) {
	c.mu.Lock()
	c.received = append(c.received, m)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

func (c *Client) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	c.record(Message{Method: req.Method(), Params: append(json.RawMessage(nil), req.Params()...)})
	if _, ok := req.(*jsonrpc2.Call); !ok {
		return nil
	}
	c.mu.Lock()
	h := c.hooks
	c.mu.Unlock()
	params := append(json.RawMessage(nil), req.Params()...)
	go func() {
		var result any
		var err error
		switch req.Method() {
		case "approval/request":
			var r approval.Request
			if err = json.Unmarshal(params, &r); err == nil {
				if h.Approval != nil {
					result = h.Approval(r)
				} else {
					result = approval.Response{Decision: approval.Reject, Message: "no hook"}
				}
			}
		case "workspace/applyEdit":
			if h.ApplyEdit != nil {
				result = h.ApplyEdit(params)
			} else {
				result = ApplyResult{Applied: false, FailureReason: "no hook"}
			}
		case "window/showMessageRequest":
			if h.ShowMessageRequest != nil {
				result = h.ShowMessageRequest(params)
			}
		default:
			if h.Other != nil {
				result, err = h.Other(req.Method(), params)
			} else {
				err = jsonrpc2.NewError(jsonrpc2.MethodNotFound, req.Method())
			}
		}
		if err := reply(context.Background(), result, err); err != nil {
			c.t.Logf("lsptest: reply to %s: %v", req.Method(), err)
		}
	}()
	return nil
}

// Call sends a request and decodes the result into result (may be nil).
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	_, err := c.conn.Call(ctx, method, params, result)
	return err
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	return c.conn.Notify(ctx, method, params)
}

// Initialize sends initialize with the given root and capabilities (a JSON
// object for "capabilities"; nil for none), initializationOptions (nil for
// none), then initialized.
func (c *Client) Initialize(ctx context.Context, root string, capabilities, initOptions any) (json.RawMessage, error) {
	params := map[string]any{
		"processId":    os.Getpid(),
		"rootUri":      workspace.PathToURI(root),
		"capabilities": capabilities,
		"workspaceFolders": []map[string]string{
			{"uri": workspace.PathToURI(root), "name": filepath.Base(root)},
		},
	}
	if capabilities == nil {
		params["capabilities"] = map[string]any{}
	}
	if initOptions != nil {
		params["initializationOptions"] = initOptions
	}
	var res json.RawMessage
	if err := c.Call(ctx, "initialize", params, &res); err != nil {
		return nil, err
	}
	return res, c.Notify(ctx, "initialized", map[string]any{})
}

// AgentlsCaps are the capabilities of the clients in editors/.
func AgentlsCaps() map[string]any {
	return map[string]any{
		"workspace":    map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}},
		"window":       map[string]any{"workDoneProgress": true},
		"experimental": map[string]any{"agentls": map[string]any{"approvalRequest": true, "saveAfterApply": true}},
	}
}

// ToolCall calls a tool and returns its result.
func (c *Client) ToolCall(ctx context.Context, name string, args any) (*tools.Result, error) {
	var res tools.Result
	err := c.Call(ctx, "tool/call", map[string]any{"name": name, "arguments": args}, &res)
	return &res, err
}

// Open sends didOpen for path with text.
func (c *Client) Open(ctx context.Context, path, text string) error {
	return c.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": workspace.PathToURI(path), "languageId": languageID(path), "version": 1, "text": text,
	}})
}

func languageID(path string) string {
	switch filepath.Ext(path) {
	case ".go":
		return "go"
	case ".py":
		return "python"
	}
	return "plaintext"
}

// Received returns the messages (notifications and requests) of method the
// server sent so far; all of them when method is "".
func (c *Client) Received(method string) []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Message
	for _, m := range c.received {
		if method == "" || m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// WaitFor waits until the server sent a message of method for which match
// (nil: any) is true, and returns it.
func (c *Client) WaitFor(ctx context.Context, method string, match func(json.RawMessage) bool) (Message, error) {
	for {
		c.mu.Lock()
		ch := c.changed
		for _, m := range c.received {
			if m.Method == method && (match == nil || match(m.Params)) {
				c.mu.Unlock()
				return m, nil
			}
		}
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Message{}, fmt.Errorf("waiting for %s: %w", method, ctx.Err())
		}
	}
}

// RawConn returns the client's connection, for tests that send raw bytes
// or need the jsonrpc2 API directly.
func (c *Client) RawConn() jsonrpc2.Conn { return c.conn }

var (
	buildOnce sync.Once
	buildBin  string
	buildErr  error
)

// BuildBinary builds cmd/agentls once per test process and returns its
// path, in a temporary folder that RemoveBinary removes: a package that
// calls it runs its tests with Main.
func BuildBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		dir, err := os.MkdirTemp("", "agentls-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildBin = filepath.Join(dir, "agentls")
		cmd := exec.Command("go", "build", "-o", buildBin, "./cmd/agentls")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// RemoveBinary removes the folder of the binary BuildBinary built, if it
// built one; Main calls it when the tests end.
func RemoveBinary() {
	if buildBin != "" {
		os.RemoveAll(filepath.Dir(buildBin))
	}
}

// Main runs a package's tests in an environment of their own
// (testenv.Main) and then removes the binary BuildBinary built; call it
// from TestMain.
func Main(m *testing.M) { testenv.Main(m, RemoveBinary) }

// ProcessCPU returns the CPU time (user and system) process pid has used
// so far, from /proc/PID/stat in clock ticks (1/100 s), or 0 where /proc
// cannot tell. Benchmarks report it per call: on a loaded machine it moves
// less than the wall time.
func ProcessCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	_, rest, _ := bytes.Cut(b, []byte(") ")) // after the command's name
	f := strings.Fields(string(rest))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// ServeRaw starts `bin serve` in dir with pipes to its stdin and from its
// stdout, for benchmarks that speak bare frames, and returns them with the
// process's id. When the test ends its stdin is closed, which ends the
// server, and it is killed if it still runs 5 s later.
func ServeRaw(t testing.TB, bin, dir string) (stdin io.Writer, stdout io.Reader, pid int) {
	t.Helper()
	cmd, in, out := piped(t, bin, dir, "serve")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		kill := time.AfterFunc(5*time.Second, func() { cmd.Process.Kill() })
		cmd.Wait()
		kill.Stop()
	})
	return in, out, cmd.Process.Pid
}

// Rounds makes warmUp rounds of calls, then times b.N rounds, each call in
// turn (so that servers compared side by side share the machine's load),
// and returns each call's latencies, sorted. A call's error fails b.
func Rounds(b *testing.B, warmUp int, calls []func() error) [][]time.Duration {
	b.Helper()
	for i := 0; i < warmUp; i++ {
		for _, call := range calls {
			if err := call(); err != nil {
				b.Fatal(err)
			}
		}
	}
	lat := make([][]time.Duration, len(calls))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k, call := range calls {
			start := time.Now()
			err := call()
			lat[k] = append(lat[k], time.Since(start))
			if err != nil {
				b.Fatalf("call: %v", err)
			}
		}
	}
	b.StopTimer()
	for _, l := range lat {
		slices.Sort(l)
	}
	return lat
}
