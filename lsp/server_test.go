package lsp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/lsp/lsptest"
	"github.com/agentls/agentls/tools"
)

func TestMain(m *testing.M) { lsptest.Main(m) }

// testRunner has the built-in tools plus a slow tool and one that asks.
func testRunner(t testing.TB) *tools.Runner {
	reg := tools.NewBuiltinRegistry()
	reg.MustRegister(tools.Define(tools.Def[struct{ Ms int }]{
		Spec: tools.Spec{
			Name: "slow", Description: "sleeps for ms or until cancelled",
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"ms":{"type":"integer","minimum":0}}}`),
			Annotations: tools.Annotations{ReadOnly: true, Approval: "auto"},
		},
		Execute: func(c *tools.Call, a struct{ Ms int }) (*tools.Result, error) {
			c.Progress.Report("sleeping", 10)
			select {
			case <-time.After(time.Duration(a.Ms) * time.Millisecond):
				return tools.Success("slept", nil), nil
			case <-c.Ctx.Done():
				return nil, c.Ctx.Err()
			}
		},
	}), tools.Define(tools.Def[json.RawMessage]{
		Spec: tools.Spec{
			Name: "touch", Description: "needs approval",
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"x":{"type":"integer"}}}`),
			Annotations: tools.Annotations{Approval: "ask"}, Risk: approval.RiskWrite,
		},
		Execute: func(c *tools.Call, args json.RawMessage) (*tools.Result, error) {
			return tools.Success("touched "+string(args), nil), nil
		},
	}))
	return tools.NewRunner(reg, nil)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// started initializes a session over a pipe, its root a new folder, and
// returns the client, the root and a context for the test's calls.
func started(t *testing.T, caps, initOptions any) (*lsptest.Client, string, context.Context) {
	root := t.TempDir()
	c := lsptest.Pipe(t, testRunner(t))
	if _, err := c.Initialize(ctxT(t), root, caps, initOptions); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c, root, ctxT(t)
}

func TestInitializeResult(t *testing.T) {
	t.Parallel()
	runner := testRunner(t)
	c := lsptest.Pipe(t, runner)
	res, err := c.Initialize(ctxT(t), t.TempDir(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Capabilities struct {
			TextDocumentSync struct {
				OpenClose bool `json:"openClose"`
				Change    int  `json:"change"`
				Save      any  `json:"save"`
			} `json:"textDocumentSync"`
			Experimental struct {
				Agentls struct {
					ProtocolVersion int `json:"protocolVersion"`
					Tools           int `json:"tools"`
				} `json:"agentls"`
			} `json:"experimental"`
		} `json:"capabilities"`
		ServerInfo struct{ Name string } `json:"serverInfo"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	sync := r.Capabilities.TextDocumentSync
	if !sync.OpenClose || sync.Change != 2 || sync.Save == nil {
		t.Errorf("textDocumentSync = %+v, want incremental with open/close and save", sync)
	}
	n := len(runner.Registry.List(nil))
	if a := r.Capabilities.Experimental.Agentls; a.ProtocolVersion != 1 || a.Tools != n {
		t.Errorf("experimental.agentls = %+v, want protocolVersion 1 and %d tools", a, n)
	}
	if r.ServerInfo.Name != "agentls" {
		t.Errorf("serverInfo.name = %q", r.ServerInfo.Name)
	}
}

func TestToolCallErrors(t *testing.T) {
	t.Parallel()
	c, root, _ := started(t, nil, nil)
	testenv.WriteFiles(t, root, map[string]string{"a.txt": "one\ntwo\n"})
	tests := []struct {
		name, tool string
		args       any
		status     tools.Status
		code       tools.Code
		pointer    string
		content    string
	}{
		{"unknown tool", "no_such_tool", map[string]any{}, tools.StatusError, tools.UnknownTool, "", ""},
		{"type mismatch", "read_file", map[string]any{"path": 5}, tools.StatusError, tools.InvalidParams, "/path", ""},
		{"missing field", "read_file", map[string]any{}, tools.StatusError, tools.InvalidParams, "/path", ""},
		{"unknown field", "read_file", map[string]any{"path": "a.txt", "bogus": 1}, tools.StatusError, tools.InvalidParams, "/bogus", ""},
		{"out of range", "read_file", map[string]any{"path": "a.txt", "offset": 0}, tools.StatusError, tools.InvalidParams, "/offset", ""},
		{"alias readFile", "readFile", map[string]any{"path": "a.txt"}, tools.StatusSuccess, "", "", "     1\tone\n     2\ttwo\n"},
		{"alias view", "view", map[string]any{"path": "a.txt", "offset": 2}, tools.StatusSuccess, "", "", "     2\ttwo\n"},
		{"escape", "read_file", map[string]any{"path": "../x"}, tools.StatusError, tools.InvalidPath, "", ""},
		{"missing file", "read_file", map[string]any{"path": "nope.txt"}, tools.StatusError, tools.FileNotFound, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.ToolCall(ctxT(t), tt.tool, tt.args)
			if err != nil {
				t.Fatalf("tool/call: %v (tool failures must be results, not JSON-RPC errors)", err)
			}
			if res.Status != tt.status {
				t.Fatalf("status = %s, want %s (%+v)", res.Status, tt.status, res.Error)
			}
			if res.CallID == "" || !strings.HasPrefix(res.CallID, "tc_") {
				t.Errorf("callId = %q, want tc_…", res.CallID)
			}
			if tt.code != "" && (res.Error == nil || res.Error.Code != tt.code) {
				t.Fatalf("error = %+v, want %s", res.Error, tt.code)
			}
			if tt.pointer != "" {
				b, _ := json.Marshal(res.Error.Details)
				var d struct {
					Violations []struct{ Pointer, Reason string }
				}
				json.Unmarshal(b, &d)
				found := false
				for _, v := range d.Violations {
					found = found || v.Pointer == tt.pointer && v.Reason != ""
				}
				if !found {
					t.Errorf("details = %s, want a violation at %s", b, tt.pointer)
				}
			}
			if tt.content != "" && !strings.HasPrefix(res.Content, tt.content) {
				t.Errorf("content = %q, want prefix %q", res.Content, tt.content)
			}
		})
	}
}

func TestGarbageDoesNotStopServer(t *testing.T) {
	t.Parallel()
	c := newRaw(t, testRunner(t))
	c.initialize(t)
	c.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	bad := []struct {
		name, frame string
		code        int
	}{
		{"not json", "Content-Length: 9\r\n\r\n{garbage}", -32700},
		{"truncated json", "Content-Length: 13\r\n\r\n{\"jsonrpc\":\"2", -32700},
		{"array", "Content-Length: 2\r\n\r\n[]", -32600},
		{"bad header", "Content-Type: nothing-else\r\n\r\n", -32700},
		{"bad length", "Content-Length: x\r\n\r\n", -32700},
		{"no version", "Content-Length: 26\r\n\r\n{\"id\":99,\"method\":\"x/y\"}  ", -32600},
	}
	for _, b := range bad {
		c.writeRaw(b.frame)
		select {
		case m := <-c.msgs:
			if got := errCode(m); got != b.code {
				t.Errorf("%s: error code %d, want %d (%v)", b.name, got, b.code, m)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no error response", b.name)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tool/call","params":{"name":"get_current_datetime","arguments":{}}}`)
	m := c.response("2")
	if r, _ := m["result"].(map[string]any); r == nil || r["status"] != "success" {
		t.Fatalf("server stopped serving after garbage: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"no/such","params":{}}`)
	if got := errCode(c.response("3")); got != -32601 {
		t.Errorf("unknown method: code %d, want -32601", got)
	}
}

// TestLifecycleErrors: before initialize a request is -32002, a second
// initialize and a request after shutdown are -32600.
func TestLifecycleErrors(t *testing.T) {
	t.Parallel()
	c := newRaw(t, testRunner(t))
	for _, step := range []struct {
		what, id, method string
		code             int // 0: a result
	}{
		{"request before initialize", "1", "tool/list", -32002},
		{"initialize", "2", "initialize", 0},
		{"second initialize", "3", "initialize", -32600},
		{"shutdown", "4", "shutdown", 0},
		{"request after shutdown", "5", "tool/list", -32600},
	} {
		c.send(`{"jsonrpc":"2.0","id":` + step.id + `,"method":"` + step.method + `","params":{"capabilities":{}}}`)
		m := c.response(step.id)
		if step.code == 0 {
			if m["error"] != nil {
				t.Fatalf("%s: %v", step.what, m)
			}
			continue
		}
		if got := errCode(m); got != step.code {
			t.Errorf("%s: code %d, want %d", step.what, got, step.code)
		}
	}
}

func TestCancelNumericID(t *testing.T) {
	t.Parallel()
	c := newRaw(t, testRunner(t))
	c.initialize(t)
	c.send(`{"jsonrpc":"2.0","id":42,"method":"tool/call","params":{"name":"slow","arguments":{"ms":60000}}}`)
	time.Sleep(100 * time.Millisecond)
	// Uncancelled, the call would answer with a result after a minute.
	c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":42}}`)
	m := c.response("42")
	if got := errCode(m); got != -32800 {
		t.Fatalf("cancelled call: %v, want error -32800", m)
	}
	// string ids too
	c.send(`{"jsonrpc":"2.0","id":"abc","method":"tool/call","params":{"name":"slow","arguments":{"ms":60000}}}`)
	time.Sleep(50 * time.Millisecond)
	c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"abc"}}`)
	if got := errCode(c.response(`"abc"`)); got != -32800 {
		t.Fatalf("cancelled string-id call: code %d, want -32800", got)
	}
}

// TestSlowCallDoesNotDelayFastOne answers a quick call while a call that
// runs until it is cancelled is running: the quick answer comes with the
// other still running (requests are not serialised), and nothing depends on
// how long either takes.
func TestSlowCallDoesNotDelayFastOne(t *testing.T) {
	t.Parallel()
	c, _, ctx := started(t, nil, nil)
	slowCtx, cancelSlow := context.WithCancel(ctx)
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		c.ToolCall(slowCtx, "slow", map[string]any{"ms": 600000})
	}()
	// The slow call is running once its call event came.
	if _, err := c.WaitFor(ctx, "tool/event", func(p json.RawMessage) bool {
		var e struct{ Tool, Kind string }
		return json.Unmarshal(p, &e) == nil && e.Tool == "slow" && e.Kind == "call"
	}); err != nil {
		t.Fatal(err)
	}
	res, err := c.ToolCall(ctx, "get_current_datetime", map[string]any{})
	if err != nil || res.Status != tools.StatusSuccess {
		t.Fatalf("fast call: %v %+v", err, res)
	}
	select {
	case <-slowDone:
		t.Fatal("the slow call ended before the fast one was answered")
	default:
	}
	cancelSlow() // the call returns; the server ends it when the pipe closes
	<-slowDone
}

func TestApprovalWaitDoesNotBlock(t *testing.T) {
	t.Parallel()
	c, _, ctx := started(t, lsptest.AgentlsCaps(), nil)
	release := make(chan struct{})
	var got approval.Request
	c.SetHooks(lsptest.Hooks{Approval: func(r approval.Request) approval.Response {
		got = r
		<-release
		return approval.Response{Decision: approval.Approve}
	}})
	done := make(chan *tools.Result, 1)
	go func() {
		res, _ := c.ToolCall(ctx, "touch", map[string]any{"x": 1})
		done <- res
	}()
	if _, err := c.WaitFor(ctx, "approval/request", nil); err != nil {
		t.Fatal(err)
	}
	// While the approval waits, other requests are served.
	if res, err := c.ToolCall(ctx, "get_current_directory", map[string]any{}); err != nil || res.Status != tools.StatusSuccess {
		t.Fatalf("call during approval: %v %+v", err, res)
	}
	close(release)
	res := <-done
	if res.Status != tools.StatusSuccess || res.ApprovedBy != "user" {
		t.Fatalf("approved call: %+v", res)
	}
	if got.Tool != "touch" || got.Risk != approval.RiskWrite || len(got.Options) != 3 || !strings.HasPrefix(got.CallID, "tc_") {
		t.Errorf("approval/request = %+v", got)
	}
}

func TestApprovalDecisions(t *testing.T) {
	t.Parallel()
	c, _, ctx := started(t, lsptest.AgentlsCaps(), nil)
	var mu sync.Mutex
	asked := 0
	answer := approval.Response{Decision: approval.Reject, Message: "not now"}
	c.SetHooks(lsptest.Hooks{Approval: func(approval.Request) approval.Response {
		mu.Lock()
		defer mu.Unlock()
		asked++
		return answer
	}})
	set := func(r approval.Response) { mu.Lock(); answer = r; mu.Unlock() }

	res, _ := c.ToolCall(ctx, "touch", map[string]any{"x": 1})
	if res.Status != tools.StatusRejected || res.Message != "not now" || res.ApprovedBy != "none" {
		t.Errorf("reject: %+v", res)
	}
	set(approval.Response{Decision: approval.Approve, ModifiedArguments: json.RawMessage(`{"x":"bad"}`)})
	res, _ = c.ToolCall(ctx, "touch", map[string]any{"x": 1})
	if res.Status != tools.StatusError || res.Error.Code != tools.InvalidParams {
		t.Errorf("invalid modified arguments: %+v", res)
	}
	set(approval.Response{Decision: approval.Approve, ModifiedArguments: json.RawMessage(`{"x":7}`)})
	res, _ = c.ToolCall(ctx, "touch", map[string]any{"x": 1})
	if res.Status != tools.StatusSuccess || res.Content != `touched {"x":7}` {
		t.Errorf("modified arguments: %+v", res)
	}
	set(approval.Response{Decision: approval.Always})
	c.ToolCall(ctx, "touch", map[string]any{"x": 1})
	mu.Lock()
	before := asked
	mu.Unlock()
	res, _ = c.ToolCall(ctx, "touch", map[string]any{"x": 2})
	mu.Lock()
	after := asked
	mu.Unlock()
	if res.Status != tools.StatusSuccess || after != before || res.ApprovedBy != "always" {
		t.Errorf("after always: asked %d→%d, result %+v", before, after, res)
	}
}

func TestShowMessageRequestFallback(t *testing.T) {
	t.Parallel()
	c, _, ctx := started(t, map[string]any{}, nil)
	var msg struct {
		Message string
		Actions []struct{ Title string }
	}
	c.SetHooks(lsptest.Hooks{ShowMessageRequest: func(p json.RawMessage) any {
		json.Unmarshal(p, &msg)
		return map[string]string{"title": "Approve"}
	}})
	res, _ := c.ToolCall(ctx, "touch", map[string]any{"x": 1})
	if res.Status != tools.StatusSuccess {
		t.Fatalf("approved through showMessageRequest: %+v", res)
	}
	var titles []string
	for _, a := range msg.Actions {
		titles = append(titles, a.Title)
	}
	if strings.Join(titles, "|") != "Approve|Reject|Always allow touch" || !strings.Contains(msg.Message, "touch") {
		t.Errorf("showMessageRequest = %+v", msg)
	}
	c.SetHooks(lsptest.Hooks{ShowMessageRequest: func(json.RawMessage) any { return nil }})
	if res, _ := c.ToolCall(ctx, "touch", map[string]any{}); res.Status != tools.StatusRejected {
		t.Errorf("dismissed: %+v", res)
	}
}

func TestIncrementalSyncUTF16(t *testing.T) {
	t.Parallel()
	c, root, ctx := started(t, nil, nil)
	path := writeFile(t, root, "u.txt", "on disk\n")
	c.Open(ctx, path, "é中😀x\nsecond\n")
	uri := "file://" + path
	// Replace "x" (after é=1, 中=1, 😀=2 UTF-16 units: character 4) with "Y",
	// then insert at 0:0 (a range, not a full replacement).
	c.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument": map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{
			map[string]any{"range": map[string]any{"start": map[string]int{"line": 0, "character": 4}, "end": map[string]int{"line": 0, "character": 5}}, "text": "Y"},
			map[string]any{"range": map[string]any{"start": map[string]int{"line": 0, "character": 0}, "end": map[string]int{"line": 0, "character": 0}}, "text": ">"},
		},
	})
	res, err := c.ToolCall(ctx, "read_file", map[string]any{"path": "u.txt"})
	if err != nil {
		t.Fatal(err)
	}
	want := "     1\t>é中😀Y\n     2\tsecond\n"
	if res.Content != want {
		t.Errorf("read_file of the open buffer = %q, want %q", res.Content, want)
	}
	c.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
	res, _ = c.ToolCall(ctx, "read_file", map[string]any{"path": "u.txt"})
	if res.Content != "     1\ton disk\n" {
		t.Errorf("after close, read_file = %q, want the disk", res.Content)
	}
}

func TestConfigLayers(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	testenv.WriteFiles(t, root, map[string]string{".agentls.json": `{"tools":{"enabled":["read_file","get_current_directory","touch"]}}`})
	c := lsptest.Pipe(t, testRunner(t))
	ctx := ctxT(t)
	_, err := c.Initialize(ctx, root, nil, map[string]any{
		"config": map[string]any{"agents": map[string]any{"reader": map[string]any{"tools": []string{"read_file"}}}},
		"agent":  "",
	})
	if err != nil {
		t.Fatal(err)
	}
	names := func(agent string) string {
		var out struct{ Tools []struct{ Name string } }
		if err := c.Call(ctx, "tool/list", map[string]any{"agent": agent}, &out); err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, d := range out.Tools {
			n = append(n, d.Name)
		}
		return strings.Join(n, ",")
	}
	if got := names(""); got != "get_current_directory,read_file,touch" {
		t.Errorf("tools enabled by .agentls.json: %s", got)
	}
	if got := names("reader"); got != "read_file" {
		t.Errorf("agent reader: %s", got)
	}
	var res tools.Result
	c.Call(ctx, "tool/call", map[string]any{"name": "get_current_directory", "agent": "reader"}, &res)
	if res.Status != tools.StatusRejected || res.Error == nil || res.Error.Code != tools.NotAllowed || !strings.Contains(res.Content, "not available to agent reader") {
		t.Errorf("agent filter: %+v", res)
	}
	// settings.agentls wins; an invalid one is reported and the last good one stays.
	c.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"agentls": map[string]any{"approval": map[string]any{"tools": map[string]string{"touch": "auto"}}}}})
	if r, _ := c.ToolCall(ctx, "touch", map[string]any{}); r.Status != tools.StatusSuccess || r.ApprovedBy != "config" {
		t.Errorf("rule auto from settings: %+v", r)
	}
	c.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"agentls": map[string]any{"approval": map[string]any{"mode": "reckless"}}}})
	m, err := c.WaitFor(ctx, "window/showMessage", nil)
	if err != nil || !strings.Contains(string(m.Params), "/approval/mode") {
		t.Errorf("invalid settings not reported: %v %s", err, m.Params)
	}
	if r, _ := c.ToolCall(ctx, "touch", map[string]any{}); r.Status != tools.StatusSuccess {
		t.Errorf("last good config lost: %+v", r)
	}
}

func TestProgressEventsHistoryMetrics(t *testing.T) {
	t.Parallel()
	c, _, ctx := started(t, lsptest.AgentlsCaps(), nil)
	var res tools.Result
	err := c.Call(ctx, "tool/call", map[string]any{"name": "slow", "arguments": map[string]any{"ms": 1}, "callId": "tc_mine", "workDoneToken": "w1"}, &res)
	if err != nil || res.CallID != "tc_mine" {
		t.Fatalf("call: %v %+v", err, res)
	}
	var kinds []string
	for _, m := range c.Received("$/progress") {
		var p struct {
			Token string
			Value struct{ Kind, Message string }
		}
		json.Unmarshal(m.Params, &p)
		if p.Token == "w1" {
			kinds = append(kinds, p.Value.Kind)
		}
	}
	if strings.Join(kinds, ",") != "begin,report,end" {
		t.Errorf("$/progress kinds = %v", kinds)
	}
	var ev []string
	for _, m := range c.Received("tool/event") {
		var e tools.Event
		json.Unmarshal(m.Params, &e)
		if e.CallID == "tc_mine" {
			ev = append(ev, e.Kind)
		}
	}
	if strings.Join(ev, ",") != "call,progress,result" {
		t.Errorf("tool/event kinds = %v", ev)
	}
	c.ToolCall(ctx, "read_file", map[string]any{"path": 5, "api_key": "x"})
	var h struct{ Entries []tools.LogEntry }
	if err := c.Call(ctx, "tool/history", map[string]any{"limit": 1}, &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Entries) != 1 || h.Entries[0].Tool != "read_file" || h.Entries[0].Status != tools.StatusError {
		t.Fatalf("history = %+v", h.Entries)
	}
	if strings.Contains(string(h.Entries[0].Arguments), `"x"`) {
		t.Errorf("secret not redacted: %s", h.Entries[0].Arguments)
	}
	var mt struct{ Tools []tools.ToolMetrics }
	c.Call(ctx, "tool/metrics", nil, &mt)
	found := false
	for _, m := range mt.Tools {
		if m.Name == "slow" {
			found = m.TotalCalls == 1 && m.Success == 1 && m.P50Ms > 0
		}
	}
	if !found {
		t.Errorf("metrics = %+v", mt.Tools)
	}
}

func TestDisconnectCancelsCalls(t *testing.T) {
	t.Parallel()
	runner := testRunner(t)
	c := lsptest.Pipe(t, runner)
	ctx := ctxT(t)
	if _, err := c.Initialize(ctx, t.TempDir(), nil, nil); err != nil {
		t.Fatal(err)
	}
	go c.ToolCall(ctx, "slow", map[string]any{"ms": 60000})
	time.Sleep(100 * time.Millisecond)
	c.RawConn().Close()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range runner.Metrics.Snapshot() {
			if m.Name == "slow" && m.Cancelled == 1 {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("call not cancelled after the client disconnected: %+v", runner.Metrics.Snapshot())
}

func TestBackgroundShellsEndWithSession(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	c := lsptest.Pipe(t, nil)
	ctx := ctxT(t)
	if _, err := c.Initialize(ctx, root, nil, map[string]any{"config": map[string]any{"approval": map[string]any{"mode": "yolo"}}}); err != nil {
		t.Fatal(err)
	}
	// The shell runs in its own pid namespace where bwrap works, so $$ is
	// not a host pid: find the sleep by its unique duration instead.
	dur := fmt.Sprintf("300.%d", time.Now().UnixNano()%1000000)
	res, err := c.ToolCall(ctx, "shell_background", map[string]any{"command": "exec sleep " + dur})
	if err != nil || res.Status != tools.StatusSuccess {
		t.Fatalf("shell_background: %v %+v", err, res)
	}
	var pid int
	for i := 0; i < 100 && pid == 0; i++ {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && string(b) == "sleep\x00"+dur+"\x00" {
				fmt.Sscan(e.Name(), &pid)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pid == 0 || syscall.Kill(pid, 0) != nil {
		t.Fatalf("background shell not running (pid %d)", pid)
	}
	c.RawConn().Close() // the editor goes away
	for i := 0; i < 250; i++ {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("background shell %d outlived its session", pid)
}

func TestWatchedFilesRegistration(t *testing.T) {
	t.Parallel()
	// A root that does not exist yet: the server cannot watch it, so it
	// asks the client to.
	root := filepath.Join(t.TempDir(), "not-yet")
	c := lsptest.Pipe(t, nil)
	ctx := ctxT(t)
	c.SetHooks(lsptest.Hooks{Other: func(method string, params json.RawMessage) (any, error) { return nil, nil }})
	caps := map[string]any{"workspace": map[string]any{"didChangeWatchedFiles": map[string]any{"dynamicRegistration": true}}}
	if _, err := c.Initialize(ctx, root, caps, nil); err != nil {
		t.Fatal(err)
	}
	m, err := c.WaitFor(ctx, "client/registerCapability", nil)
	if err != nil || !strings.Contains(string(m.Params), `"workspace/didChangeWatchedFiles"`) {
		t.Fatalf("registration: %v %s", err, m.Params)
	}
	// A changed .agentls.json, reported by the watcher, is read again.
	testenv.WriteFiles(t, root, map[string]string{".agentls.json": `{"tools":{"enabled":["get_current_datetime"]}}`})
	c.Notify(ctx, "workspace/didChangeWatchedFiles", map[string]any{"changes": []any{map[string]any{"uri": "file://" + filepath.Join(root, ".agentls.json"), "type": 2}}})
	var out struct{ Tools []struct{ Name string } }
	if err := c.Call(ctx, "tool/list", nil, &out); err != nil || len(out.Tools) != 1 {
		t.Errorf("config not reloaded: %v %+v", err, out)
	}
}

func TestApprovalTimeoutCancelsTheQuestion(t *testing.T) {
	t.Parallel()
	c, _, ctx := started(t, lsptest.AgentlsCaps(), map[string]any{"config": map[string]any{"approval": map[string]any{"timeoutSeconds": 1}}})
	c.SetHooks(lsptest.Hooks{Approval: func(approval.Request) approval.Response {
		time.Sleep(3 * time.Second) // nobody answers in time
		return approval.Response{Decision: approval.Approve}
	}})
	res, _ := c.ToolCall(ctx, "touch", map[string]any{})
	if res.Status != tools.StatusRejected {
		t.Fatalf("result = %+v", res)
	}
	if _, err := c.WaitFor(ctx, "$/cancelRequest", nil); err != nil {
		t.Errorf("the server did not cancel its approval/request: %v", err)
	}
}

func TestCancelKillsShell(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	c := newRaw(t, tools.NewRunner(tools.NewBuiltinRegistry(), nil))
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":%q,"capabilities":{},"initializationOptions":{"config":{"approval":{"mode":"yolo"}}}}}`, "file://"+root))
	c.response("1")
	// The command runs in its own pid namespace where bwrap works, so $$
	// is not a host pid: its sleeps are found by their unique duration.
	dur := fmt.Sprintf("60.%d", time.Now().UnixNano()%1000000)
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tool/call","params":{"name":"shell_exec","arguments":{"command":"sleep ` + dur + ` & sleep ` + dur + `"}}}`)
	sleeps := func() []string {
		var out []string
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && string(b) == "sleep\x00"+dur+"\x00" {
				if st, _ := os.ReadFile("/proc/" + e.Name() + "/stat"); !strings.Contains(string(st), ") Z ") {
					out = append(out, e.Name())
				}
			}
		}
		return out
	}
	for i := 0; i < 250 && len(sleeps()) < 2; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if len(sleeps()) < 2 {
		t.Fatal("the command did not start")
	}
	c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}`)
	if got := errCode(c.response("7")); got != -32800 {
		t.Fatalf("cancelled shell_exec: code %d, want -32800", got)
	}
	// Every process of the command is gone (zombies wait for their reaper).
	for i := 0; i < 100 && len(sleeps()) > 0; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if left := sleeps(); len(left) > 0 {
		t.Errorf("processes %v of the cancelled command are still running", left)
	}
}
