package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/lsp/lsptest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain gives the package's tests a home of their own: no user
// configuration read, no history or index copy written in the user's; and
// removes the binary lsptest.BuildBinary built.
func TestMain(m *testing.M) { testenv.Main(m, lsptest.RemoveBinary) }

// These tests run the real server (a standalone session on a t.TempDir()
// workspace, the built-in tools, real files and real bash) against the
// official Go SDK's client over a pipe.

// isolate keeps the user's configuration and state out of a test.
func isolate(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
}

// elicitor is a client's elicitation handler that answers from a script and
// records what it was asked.
type elicitor struct {
	mu     sync.Mutex
	asked  []*sdk.ElicitParams
	answer func(p *sdk.ElicitParams) *sdk.ElicitResult
}

func (e *elicitor) handle(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	e.mu.Lock()
	e.asked = append(e.asked, req.Params)
	e.mu.Unlock()
	return e.answer(req.Params), nil
}

func (e *elicitor) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.asked)
}

func (e *elicitor) last() *sdk.ElicitParams {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.asked[len(e.asked)-1]
}

func answer(decision, message string) func(*sdk.ElicitParams) *sdk.ElicitResult {
	return func(*sdk.ElicitParams) *sdk.ElicitResult {
		c := map[string]any{"decision": decision}
		if message != "" {
			c["message"] = message
		}
		return &sdk.ElicitResult{Action: "accept", Content: c}
	}
}

type setup struct {
	root       string
	agent      string
	userConfig string
	elicit     *elicitor // nil: the client declares no elicitation
	progress   func(*sdk.ProgressNotificationClientRequest)
	// listChanged hears notifications/tools/list_changed; nil: the
	// client does not listen.
	listChanged func()
}

// start serves a standalone session on s.root and connects a client.
func start(t *testing.T, s setup) (*sdk.ClientSession, net.Conn) {
	t.Helper()
	backend, errs, closeSession, err := Standalone(StandaloneOptions{Root: s.root, Agent: s.agent, UserConfig: s.userConfig})
	if err != nil || len(errs) > 0 {
		t.Fatalf("standalone: %v %v", err, errs)
	}
	srv, cli := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, Options{Backend: backend, Agent: s.agent, Version: "test"}, srv, srv) }()
	t.Cleanup(func() {
		cancel()
		cli.Close()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop")
		}
		closeSession()
	})
	opts := &sdk.ClientOptions{}
	if s.elicit != nil {
		opts.ElicitationHandler = s.elicit.handle
	}
	if s.progress != nil {
		opts.ProgressNotificationHandler = func(_ context.Context, r *sdk.ProgressNotificationClientRequest) { s.progress(r) }
	}
	if s.listChanged != nil {
		opts.ToolListChangedHandler = func(context.Context, *sdk.ToolListChangedRequest) { s.listChanged() }
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "test-agent", Title: "Test Agent", Version: "1"}, opts)
	cs, err := client.Connect(context.Background(), &sdk.IOTransport{Reader: cli, Writer: cli}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, cli
}

func call(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestListTools(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "config.json")
	write(t, cfg, `{"agents":{"reviewer":{"tools":["read_file","grep","edit_file"]}}}`)
	type hints struct{ readOnly, destructive, idempotent, openWorld bool }
	for _, tc := range []struct {
		name  string
		agent string
		want  map[string]hints // a tool listed with these hints
		not   []string         // tools not listed
	}{
		{name: "all", want: map[string]hints{
			"read_file":  {readOnly: true, idempotent: true},
			"edit_file":  {destructive: true},
			"shell_exec": {destructive: true, openWorld: true},
			"web_fetch":  {openWorld: true},
			"git_push":   {destructive: true, openWorld: true}, // dangerous
		}},
		{name: "agent filter", agent: "reviewer", want: map[string]hints{
			"read_file": {readOnly: true, idempotent: true},
			"edit_file": {destructive: true},
		}, not: []string{"shell_exec", "web_fetch", "write_file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, _ := start(t, setup{root: root, agent: tc.agent, userConfig: cfg})
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]*sdk.Tool{}
			for _, tool := range res.Tools {
				got[tool.Name] = tool
			}
			if tc.agent != "" && len(got) != 3 {
				t.Errorf("agent %s: %d tools listed, want 3", tc.agent, len(got))
			}
			for name, h := range tc.want {
				tool := got[name]
				if tool == nil {
					t.Errorf("%s not listed", name)
					continue
				}
				a := tool.Annotations
				if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
					t.Errorf("%s: annotations incomplete: %+v", name, a)
					continue
				}
				g := hints{a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint}
				if g != h {
					t.Errorf("%s: hints %+v, want %+v", name, g, h)
				}
				if tool.Title == "" || tool.Description == "" || tool.OutputSchema == nil {
					t.Errorf("%s: title %q, description %q, outputSchema %v", name, tool.Title, tool.Description, tool.OutputSchema)
				}
				// The outputSchema describes the text every success carries.
				o, _ := json.Marshal(tool.OutputSchema)
				if !strings.Contains(string(o), `"text":{"description":"the result as text, as in the content block","type":"string"}`) ||
					!strings.Contains(string(o), `"text"]`) {
					t.Errorf("%s: outputSchema without a required text: %s", name, o)
				}
				// The input schema is agentls's own, caps included.
				s, _ := json.Marshal(tool.InputSchema)
				if name == "read_file" && !strings.Contains(string(s), `"maxLength":4096`) {
					t.Errorf("read_file's schema lost its caps: %s", s)
				}
			}
			for _, name := range tc.not {
				if got[name] != nil {
					t.Errorf("%s listed for agent %s", name, tc.agent)
				}
				// Not listed is not callable either.
				if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: map[string]any{}}); err == nil {
					t.Errorf("agent %s called %s", tc.agent, name)
				}
			}
		})
	}
}

func TestCallReadFile(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	write(t, filepath.Join(root, "a.txt"), "héllo\nwörld 😀\n")
	cs, _ := start(t, setup{root: root})
	res := call(t, cs, "read_file", map[string]any{"path": "a.txt"})
	if res.IsError || !strings.Contains(text(res), "wörld 😀") {
		t.Fatalf("read_file: isError %v, %q", res.IsError, text(res))
	}
	sc, _ := res.StructuredContent.(map[string]any)
	if sc["path"] != "a.txt" || sc["total_lines"] != float64(2) {
		t.Errorf("structuredContent = %v", res.StructuredContent)
	}
	// A client that shows the model only structuredContent still shows it
	// the lines.
	if sc[TextKey] != text(res) {
		t.Errorf("structuredContent.%s = %q, want the content %q", TextKey, sc[TextKey], text(res))
	}
}

func TestErrors(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	write(t, filepath.Join(root, "a.txt"), "x\n")
	cs, _ := start(t, setup{root: root})
	for _, tc := range []struct {
		name string
		tool string
		args any
		want []string // in the text, in order
	}{
		{"missing file", "read_file", map[string]any{"path": "nope.txt"}, []string{"FILE_NOT_FOUND: ", "next: check the path"}},
		// The SDK passes arguments through: agentls's own validation
		// answers, with its violations.
		{"wrong type", "read_file", map[string]any{"path": 5}, []string{"INVALID_PARAMS: ", `"pointer":"/path"`, "next: fix the arguments"}},
		{"unknown argument", "read_file", map[string]any{"path": "a.txt", "bogus": 1}, []string{"INVALID_PARAMS: ", "bogus", "next:"}},
		{"not an object", "read_file", json.RawMessage(`[1,2]`), []string{"INVALID_PARAMS: ", "next:"}},
		{"escape", "read_file", map[string]any{"path": "../../etc/passwd"}, []string{"INVALID_PATH: ", "next: use a path inside the workspace"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, tc.tool, tc.args)
			got := text(res)
			if !res.IsError || res.StructuredContent != nil {
				t.Fatalf("isError %v, structuredContent %v: %s", res.IsError, res.StructuredContent, got)
			}
			at := 0
			for _, w := range tc.want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("%q not in (after %d) %q", w, at, got)
				}
				at += i + len(w)
			}
		})
	}
	// An unknown tool is a protocol error (the SDK's), and the session goes on.
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "no_such_tool"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("unknown tool: %v", err)
	}
	if res := call(t, cs, "read_file", map[string]any{"path": "a.txt"}); res.IsError {
		t.Errorf("after errors: %s", text(res))
	}
}

func TestEditApprovedByElicitation(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	path := filepath.Join(root, "a.txt")
	write(t, path, "one\ntwo\n")
	e := &elicitor{answer: answer("approve", "")}
	cs, _ := start(t, setup{root: root, elicit: e})
	res := call(t, cs, "edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "deux"})
	if res.IsError {
		t.Fatalf("edit: %s", text(res))
	}
	if got := read(t, path); got != "one\ndeux\n" {
		t.Errorf("file holds %q", got)
	}
	if e.count() != 1 {
		t.Fatalf("asked %d times", e.count())
	}
	p := e.last()
	for _, w := range []string{"Test Agent wants to edit a.txt (edit_file)", "risk: write", "-two", "+deux"} {
		if !strings.Contains(p.Message, w) {
			t.Errorf("elicitation message lacks %q:\n%s", w, p.Message)
		}
	}
	s, _ := json.Marshal(p.RequestedSchema)
	if !strings.Contains(string(s), `"enum":["approve","reject","always"]`) {
		t.Errorf("schema: %s", s)
	}
}

func TestRejection(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		name   string
		answer func(*sdk.ElicitParams) *sdk.ElicitResult
		want   string
	}{
		{"reject with a message", answer("reject", "use tabs, not spaces"), "use tabs, not spaces"},
		{"decline", func(*sdk.ElicitParams) *sdk.ElicitResult { return &sdk.ElicitResult{Action: "decline"} }, "REJECTED: rejected by the user: declined in Test Agent\n"},
		{"cancel", func(*sdk.ElicitParams) *sdk.ElicitResult { return &sdk.ElicitResult{Action: "cancel"} }, "REJECTED: approval failed: Test Agent dismissed the approval question without an answer; nobody approved or rejected the call\n"},
		{"answer not offered", answer("sometimes", ""), "REJECTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, "a.txt")
			write(t, path, "one\n")
			cs, _ := start(t, setup{root: root, elicit: &elicitor{answer: tc.answer}})
			call(t, cs, "read_file", map[string]any{"path": "a.txt"})
			res := call(t, cs, "write_file", map[string]any{"path": "a.txt", "content": "two\n"})
			got := text(res)
			if !res.IsError || !strings.HasPrefix(got, "REJECTED: ") || !strings.Contains(got, tc.want) || !strings.Contains(got, "next: the call did not run") {
				t.Errorf("isError %v: %s", res.IsError, got)
			}
			if read(t, path) != "one\n" {
				t.Errorf("the rejected write landed")
			}
		})
	}
}

func TestAlways(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	write(t, filepath.Join(root, "a.txt"), "a\n")
	e := &elicitor{answer: answer("always", "")}
	cs, _ := start(t, setup{root: root, elicit: e})
	call(t, cs, "read_file", map[string]any{"path": "a.txt"})
	for i, content := range []string{"b\n", "c\n"} {
		if res := call(t, cs, "write_file", map[string]any{"path": "a.txt", "content": content}); res.IsError {
			t.Fatalf("write %d: %s", i, text(res))
		}
	}
	if e.count() != 1 {
		t.Errorf("asked %d times; always should have been remembered", e.count())
	}
	// A dangerous call never offers always.
	res := call(t, cs, "delete_file", map[string]any{"path": "a.txt"})
	s, _ := json.Marshal(e.last().RequestedSchema)
	if !strings.Contains(string(s), `"enum":["approve","reject"]`) {
		t.Errorf("delete_file offered: %s", s)
	}
	if !res.IsError || !strings.Contains(text(res), "REJECTED") {
		t.Errorf("always to a request that did not offer it: %s", text(res))
	}
	if _, err := os.Stat(filepath.Join(root, "a.txt")); err != nil {
		t.Errorf("a.txt was deleted: %v", err)
	}
}

func TestWithoutElicitation(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	path := filepath.Join(root, "a.txt")
	write(t, path, "one\n")
	cs, _ := start(t, setup{root: root})
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"edit_file", map[string]any{"path": "a.txt", "old_string": "one", "new_string": "two"}},
		{"shell_exec", map[string]any{"command": "echo hi > b.txt"}},
	} {
		res := call(t, cs, tc.tool, tc.args)
		got := text(res)
		if !res.IsError || !strings.HasPrefix(got, "REJECTED: ") || !strings.Contains(got, "does not support elicitation") ||
			!strings.Contains(got, "open the workspace in an editor with agentls") || !strings.Contains(got, `"approval": {"tools"`) {
			t.Errorf("%s: %s", tc.tool, got)
		}
	}
	if read(t, path) != "one\n" {
		t.Error("the edit landed")
	}
	if _, err := os.Stat(filepath.Join(root, "b.txt")); err == nil {
		t.Error("the command ran")
	}
	// What needs no approval still runs.
	if res := call(t, cs, "read_file", map[string]any{"path": "a.txt"}); res.IsError {
		t.Error(text(res))
	}
}

// findProc waits for a process whose command line is argv (the command
// may run in a pid namespace, so its own $$ is not the host's pid).
func findProc(t *testing.T, argv ...string) int {
	t.Helper()
	want := strings.Join(argv, "\x00") + "\x00"
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && string(b) == want {
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%q never started", argv)
	return 0
}

// startSleep calls shell_exec with a sleep of about base seconds (its
// fraction unique to this call) and returns once the sleep runs: its pid, a
// cancel of the call's context and where the call's error arrives.
func startSleep(t *testing.T, cs *sdk.ClientSession, base int) (int, context.CancelFunc, <-chan error) {
	t.Helper()
	secs := fmt.Sprintf("%d.%03d", base, time.Now().UnixNano()%1000)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "shell_exec", Arguments: map[string]any{
			"command": "sleep " + secs + "; echo done", "timeout_ms": 120000}})
		done <- err
	}()
	return findProc(t, "sleep", secs), cancel, done
}

func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for testenv.Alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s: process %d still runs", what, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCancelEndsCommand(t *testing.T) {
	isolate(t)
	for _, how := range []string{"notifications/cancelled", "disconnect"} {
		t.Run(how, func(t *testing.T) {
			root := t.TempDir()
			cs, conn := start(t, setup{root: root, elicit: &elicitor{answer: answer("approve", "")}})
			pid, cancel, done := startSleep(t, cs, 600+len(how))
			defer cancel()
			if how == "disconnect" {
				conn.Close()
			} else {
				cancel() // the SDK client sends notifications/cancelled
			}
			waitGone(t, pid, how)
			select {
			case err := <-done:
				if err == nil {
					t.Error("the cancelled call returned a result")
				}
			case <-time.After(10 * time.Second):
				t.Error("the call did not return")
			}
		})
	}
}

func TestProgress(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	var mu sync.Mutex
	var got []*sdk.ProgressNotificationParams
	cs, _ := start(t, setup{root: root, elicit: &elicitor{answer: answer("approve", "")},
		progress: func(r *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, r.Params)
			mu.Unlock()
		}})
	params := &sdk.CallToolParams{Name: "shell_exec", Arguments: map[string]any{"command": "for i in 1 2 3; do echo line$i; sleep 0.05; done"}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, text(res))
	}
	mu.Lock()
	defer mu.Unlock()
	var all strings.Builder
	last := 0.0
	for _, p := range got {
		if p.ProgressToken != "tok-1" || p.Progress <= last {
			t.Errorf("notification %+v (after %v)", p, last)
		}
		last = p.Progress
		all.WriteString(p.Message)
	}
	for _, w := range []string{"line1", "line2", "line3"} {
		if !strings.Contains(all.String(), w) {
			t.Errorf("progress lacks %q: %q", w, all.String())
		}
	}
	// Without a token, nothing.
	n := len(got)
	mu.Unlock()
	call(t, cs, "shell_exec", map[string]any{"command": "echo quiet"})
	mu.Lock()
	if len(got) != n {
		t.Errorf("progress without a token: %d notifications", len(got)-n)
	}
}

// TestMalformed speaks raw JSON-RPC lines: every bad line gets its error and
// the server keeps serving.
func TestMalformed(t *testing.T) {
	isolate(t)
	backend, _, closeSession, err := Standalone(StandaloneOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer closeSession()
	srv, cli := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, Options{Backend: backend}, srv, srv) }()
	defer func() { cancel(); cli.Close(); <-served }()
	br := bufio.NewReader(cli)
	exchange := func(line string) map[string]any {
		t.Helper()
		cli.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := cli.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
		resp, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("after %q: %v", line, err)
		}
		var m map[string]any
		if err := json.Unmarshal(resp, &m); err != nil {
			t.Fatalf("answer %q: %v", resp, err)
		}
		return m
	}
	if m := exchange(`{"jsonrpc":"2.0","id":0,"method":"tools/list"}`); m["error"] == nil || m["error"].(map[string]any)["code"] != float64(-32603) {
		t.Errorf("tools/list before initialize: %v", m)
	}
	if m := exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	cli.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	for _, tc := range []struct {
		line string
		id   any
		code float64
	}{
		{`not json`, nil, -32700},
		{`{"jsonrpc":"2.0","id":2,"method":`, nil, -32700},
		{`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, nil, -32600},
		{`{"jsonrpc":"2.0","id":4,"method":7}`, float64(4), -32600},
		{`{"jsonrpc":"2.0","id":5,"method":"no/such"}`, float64(5), -32601},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":"x"}`, float64(6), -32602},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}`, float64(7), -32602},
	} {
		m := exchange(tc.line)
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != tc.code || m["id"] != tc.id {
			t.Errorf("%s: answered %v, want code %v id %v", tc.line, m, tc.code, tc.id)
		}
	}
	if m := exchange(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_current_datetime","arguments":{}}}`); m["result"] == nil {
		t.Errorf("after bad lines: %v", m)
	}
}

// TestLineTooLong: a line over the cap is skipped whole and answered, and
// the next line is read.
func TestLineTooLong(t *testing.T) {
	srv, cli := net.Pipe()
	c, _ := (&lineTransport{r: srv, w: srv, max: 1024}).Connect(context.Background())
	defer c.Close()
	go func() {
		cli.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 5000) + "\"}}\n"))
		cli.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"))
	}()
	br := bufio.NewReader(cli)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, `"code":-32700`) || !strings.Contains(line, "over 1024 bytes") {
		t.Fatalf("%q %v", line, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	msg, err := c.Read(ctx)
	if err != nil {
		// A deadline here means the reader never got past the long line.
		t.Fatalf("the line after the long one was not read: %v", err)
	}
	if req, ok := msg.(interface{ IsCall() bool }); !ok || !req.IsCall() {
		t.Errorf("read %T", msg)
	}
}

func TestOutputSchema(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, err string
	}{
		{"properties and required", `{"type":"object","required":["path"],"properties":{"path":{"type":"string"}}}`,
			`{"properties":{"path":{"type":"string"},"text":{"type":"string","description":"the result as text, as in the content block"}},"required":["path","text"],"type":"object"}`, ""},
		{"no properties", `{"type":"object"}`,
			`{"properties":{"text":{"type":"string","description":"the result as text, as in the content block"}},"required":["text"],"type":"object"}`, ""},
		{"a text of its own", `{"type":"object","properties":{"text":{"type":"string"}}}`, "", `property "text" of its own`},
		{"not an object", `{"type":"array"}`, "", "must be an object schema"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := outputSchema(json.RawMessage(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Errorf("got %s, %v\nwant %s", got, err, tc.want)
			}
		})
	}
}

func TestWithText(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{"object", map[string]any{"path": "a.txt"}, `{"path":"a.txt","text":"1\ta\n"}`},
		{"struct", struct {
			Path string `json:"path"`
		}{"a.txt"}, `{"path":"a.txt","text":"1\ta\n"}`},
		{"its own text", map[string]any{"text": "mine"}, `{"text":"mine"}`},
		{"not an object", []int{1}, `[1]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := json.Marshal(withText(tc.in, "1\ta\n"))
			if string(b) != tc.want {
				t.Errorf("got %s, want %s", b, tc.want)
			}
		})
	}
}
