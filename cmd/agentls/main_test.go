package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/lsp/lsptest"
	"github.com/agentls/agentls/tools"
)

func TestMain(m *testing.M) { lsptest.Main(m) }

// run runs the real binary and returns stdout, stderr and the exit code.
func run(t *testing.T, dir string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(lsptest.BuildBinary(t), args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestToolsCommand(t *testing.T) {
	t.Parallel()
	out, _, code := run(t, t.TempDir(), "", "tools")
	var defs []tools.Definition
	if code != 0 || json.Unmarshal([]byte(out), &defs) != nil || len(defs) < 3 {
		t.Fatalf("tools: exit %d, %s", code, out)
	}
	for _, d := range defs {
		var s map[string]any
		json.Unmarshal(d.InputSchema, &s)
		if s["type"] != "object" {
			t.Errorf("%s: schema type %v", d.Name, s["type"])
		}
	}
	out, _, code = run(t, t.TempDir(), "", "tools", "--format", "openai")
	var oa []struct {
		Type     string
		Function struct {
			Name       string
			Parameters map[string]any
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &oa) != nil || len(oa) != len(defs) {
		t.Fatalf("openai: exit %d, %s", code, out)
	}
	for _, f := range oa {
		if f.Type != "function" || f.Function.Name == "" || f.Function.Parameters["type"] != "object" {
			t.Errorf("not an OpenAI function: %+v", f)
		}
	}
	if _, _, code := run(t, t.TempDir(), "", "tools", "--format", "yaml"); code != 2 {
		t.Errorf("bad format: exit %d, want 2", code)
	}
}

func TestCallCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644)
	tests := []struct {
		name   string
		args   []string
		code   int
		status tools.Status
	}{
		{"datetime", []string{"call", "get_current_datetime", "{}"}, 0, tools.StatusSuccess},
		{"no args", []string{"call", "get_current_directory"}, 0, tools.StatusSuccess},
		{"root flag", []string{"call", "read_file", `{"path":"a.txt"}`, "--root", dir}, 0, tools.StatusSuccess},
		{"tool error", []string{"call", "read_file", `{"path":"nope"}`}, 1, tools.StatusError},
		{"unknown tool", []string{"call", "nope", "{}"}, 1, tools.StatusError},
		{"needs approval, stdin not a terminal", []string{"call", "edit_file", `{"path":"a.txt","old_string":"hello","new_string":"bye"}`}, 3, tools.StatusRejected},
		{"--approve no", []string{"call", "edit_file", `{"path":"a.txt","old_string":"hello","new_string":"bye"}`, "--approve", "no"}, 3, tools.StatusRejected},
		{"--approve yes", []string{"--approve", "yes", "call", "edit_file", `{"path":"a.txt","old_string":"hello","new_string":"bye"}`}, 0, tools.StatusSuccess},
		{"bad json", []string{"call", "read_file", `{`}, 2, ""},
		{"bad approve", []string{"call", "read_file", `{}`, "--approve", "maybe"}, 2, ""},
		{"bad root", []string{"call", "read_file", `{}`, "--root", filepath.Join(dir, "missing")}, 2, ""},
		{"no tool", []string{"call"}, 2, ""},
		{"unknown command", []string{"frobnicate"}, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, dir, "", tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, tt.code, out, errOut)
			}
			if tt.status == "" {
				if out != "" {
					t.Errorf("usage error printed to stdout: %s", out)
				}
				return
			}
			var res tools.Result
			if err := json.Unmarshal([]byte(out), &res); err != nil || res.Status != tt.status || res.CallID == "" {
				t.Errorf("stdout %s: %v", out, err)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "bye\n" {
		t.Errorf("after --approve yes, a.txt = %q", b)
	}
	out, _, code := run(t, dir, "", "version")
	if code != 0 || !strings.HasPrefix(out, "agentls ") || !strings.Contains(out, "go1.") {
		t.Errorf("version: %d %q", code, out)
	}
}

// TestCallOneShotKeepsNothing: a one-shot `agentls call` ends its processes
// when it returns, so it refuses the tools that hand out something to come
// back to (before anything is asked or run), and the cut of a long output
// tells how to get the rest without a later shell_output.
func TestCallOneShotKeepsNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name, tool, args string
		status           tools.Status
		code             tools.Code
		want, notWant    string
	}{
		{"background", "shell_background", `{"command":"touch started; sleep 30"}`, tools.StatusError, tools.NotAvailable, "agentls serve", ""},
		{"output", "shell_output", `{"id":"sh_1"}`, tools.StatusError, tools.NotAvailable, "shell_exec", ""},
		{"kill", "shell_kill", `{"id":"sh_1"}`, tools.StatusError, tools.NotAvailable, "shell_exec", ""},
		{"cut output", "shell_exec", `{"command":"seq 1 200000"}`, tools.StatusSuccess, "", "one-shot call keeps nothing", "shell_output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, _ := run(t, dir, "", "call", tt.tool, tt.args, "--approve", "yes")
			var res tools.Result
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("stdout %s stderr %s: %v", out, errOut, err)
			}
			if res.Status != tt.status || (tt.code != "" && (res.Error == nil || res.Error.Code != tt.code)) {
				t.Fatalf("status %s error %+v, want %s %s", res.Status, res.Error, tt.status, tt.code)
			}
			if !strings.Contains(res.Content, tt.want) || (tt.notWant != "" && strings.Contains(res.Content, tt.notWant)) {
				t.Errorf("content %q: want %q, not %q", res.Content, tt.want, tt.notWant)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "started")); !os.IsNotExist(err) {
		t.Errorf("the refused background command ran: %v", err)
	}
}

func TestCallAsksOnTerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644)
	out, errOut, code := run(t, dir, "maybe\ny\n", "call", "edit_file", `{"path":"a.txt","old_string":"hello","new_string":"bye"}`, "--approve", "ask")
	if code != 0 || !strings.Contains(errOut, "-hello\n+bye") || !strings.Contains(errOut, "approve?") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
}

func TestServeStdioExitCodes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tt := range []struct {
		name     string
		shutdown bool
		want     int
	}{{"shutdown then exit", true, 0}, {"exit without shutdown", false, 1}} {
		t.Run(tt.name, func(t *testing.T) {
			p := lsptest.Binary(t, lsptest.BuildBinary(t), t.TempDir(), "serve", "--stdio", "--log-level", "debug")
			if _, err := p.Initialize(ctx, t.TempDir(), nil, nil); err != nil {
				t.Fatalf("initialize: %v; stderr %s", err, p.Stderr)
			}
			// Debug logging goes to stderr; stdout carries only LSP, or this call fails.
			if res, err := p.ToolCall(ctx, "get_current_datetime", map[string]any{}); err != nil || res.Status != tools.StatusSuccess {
				t.Fatalf("call: %v %+v", err, res)
			}
			for i := 0; i < 100 && !strings.Contains(p.Stderr.String(), "tool call"); i++ {
				time.Sleep(20 * time.Millisecond) // stderr is copied by a goroutine
			}
			if !strings.Contains(p.Stderr.String(), "tool call") {
				t.Errorf("debug log not on stderr: %q", p.Stderr)
			}
			if tt.shutdown {
				if err := p.Call(ctx, "shutdown", nil, nil); err != nil {
					t.Fatal(err)
				}
			}
			p.Notify(ctx, "exit", nil)
			if code, err := p.Wait(10 * time.Second); err != nil || code != tt.want {
				t.Errorf("exit code %d (%v), want %d", code, err, tt.want)
			}
		})
	}
}

func TestServeTCP(t *testing.T) {
	// Not parallel: it picks a free port, frees it and hands it to the
	// server, and gives a refused connection 3 s to close.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var stderr syncBuf
	cmd := exec.Command(lsptest.BuildBinary(t), "serve", "--listen", addr)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+t.TempDir())
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var conn net.Conn
	for i := 0; i < 100; i++ {
		if conn, err = net.Dial("tcp", addr); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if conn == nil {
		t.Fatalf("dial: %v", err)
	}
	// The token file the server named on stderr.
	var token string
	for i := 0; i < 100 && token == ""; i++ {
		for _, line := range strings.Split(stderr.String(), "\n") {
			if f, ok := strings.CutPrefix(line, "agentls: token file "); ok {
				f, _, _ = strings.Cut(f, " ")
				b, _ := os.ReadFile(f)
				token = strings.TrimSpace(string(b))
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if token == "" {
		t.Fatalf("no token file named on stderr: %s", stderr.String())
	}
	// Without the token the connection is closed unanswered (the server
	// closes it at once; the 30 s are a hang guard).
	c := jsonrpc2.NewConn(jsonrpc2.NewStream(conn))
	c.Go(context.Background(), jsonrpc2.MethodNotFoundHandler)
	refused, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	go c.Call(refused, "initialize", map[string]any{"capabilities": map[string]any{}}, nil)
	select {
	case <-c.Done():
	case <-refused.Done():
		t.Fatal("a connection without the token stayed open")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err = net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c = jsonrpc2.NewConn(jsonrpc2.NewStream(conn))
	c.Go(ctx, jsonrpc2.MethodNotFoundHandler)
	defer c.Close()
	if _, err := c.Call(ctx, "initialize", map[string]any{"capabilities": map[string]any{},
		"initializationOptions": map[string]any{"token": token}}, nil); err != nil {
		t.Fatal(err)
	}
	var res tools.Result
	if _, err := c.Call(ctx, "tool/call", map[string]any{"name": "get_current_datetime"}, &res); err != nil || res.Status != tools.StatusSuccess {
		t.Fatalf("call over TCP: %v %+v", err, res)
	}
}

// syncBuf is a buffer a process writes to while the test reads it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// BenchmarkToolCallRoundTrip measures tool/call of a trivial tool through
// the real binary over stdio pipes, and reports p50 and p99, from two
// clients: "lsptest", the tests' jsonrpc2 client (its own decoding counts
// too), and "raw", which writes frames and reads them back, decoding only
// the answer. With AGENTLS_BENCH_BASELINE set to another agentls binary
// (say, one built from main), each iteration calls that binary too, in
// turn, and its figures are reported as base-p50-ms and base-p99-ms: two
// binaries side by side in one run, on the same loaded machine.
//
//	go test ./cmd/agentls -run '^$' -bench ToolCallRoundTrip -benchtime 2000x
func BenchmarkToolCallRoundTrip(b *testing.B) {
	bins := []string{lsptest.BuildBinary(b)}
	if base := os.Getenv("AGENTLS_BENCH_BASELINE"); base != "" {
		bins = append(bins, base)
	}
	initOptions := map[string]any{"config": map[string]any{"history": map[string]any{"enabled": false}}}
	b.Run("lsptest", func(b *testing.B) {
		ctx := context.Background()
		calls := make([]func() error, len(bins))
		for i, bin := range bins {
			p := lsptest.Binary(b, bin, b.TempDir())
			if _, err := p.Initialize(ctx, b.TempDir(), nil, initOptions); err != nil {
				b.Fatal(err)
			}
			calls[i] = func() error {
				res, err := p.ToolCall(ctx, "get_current_directory", map[string]any{})
				if err == nil && res.Status != tools.StatusSuccess {
					err = fmt.Errorf("status %s: %s", res.Status, res.Content)
				}
				return err
			}
		}
		roundTrips(b, calls)
	})
	b.Run("raw", func(b *testing.B) {
		calls := make([]func() error, len(bins))
		servers := make([]*rawClient, len(bins))
		for i, bin := range bins {
			servers[i] = rawServer(b, bin, b.TempDir(), initOptions)
			calls[i] = servers[i].call
		}
		cpu := make([]time.Duration, len(bins))
		for i, s := range servers {
			cpu[i] = s.cpu()
		}
		roundTrips(b, calls)
		// The servers' CPU time per call: what the load of the machine
		// changes least.
		for i, s := range servers {
			if used := s.cpu() - cpu[i]; used > 0 {
				prefix := ""
				if i > 0 {
					prefix = "base-"
				}
				b.ReportMetric(float64(used.Microseconds())/float64(b.N+50), prefix+"server-cpu-us")
			}
		}
	})
}

// roundTrips times b.N rounds of calls (each binary's in turn, after a
// warm-up) and reports each binary's p50 and p99: the first as p50-ms and
// p99-ms, the second as base-p50-ms and base-p99-ms.
func roundTrips(b *testing.B, calls []func() error) {
	lat := lsptest.Rounds(b, 50, calls)
	for k, l := range lat {
		prefix := ""
		if k > 0 {
			prefix = "base-"
		}
		b.ReportMetric(float64(l[len(l)/2].Microseconds())/1000, prefix+"p50-ms")
		b.ReportMetric(float64(l[len(l)*99/100].Microseconds())/1000, prefix+"p99-ms")
	}
}

// rawClient speaks LSP to a server process with bare frames.
type rawClient struct {
	pid int
	in  io.Writer
	out *bufio.Reader
	id  int
	buf []byte
}

// rawServer starts `bin serve` in dir, its workspace's root, and
// initializes it.
func rawServer(b *testing.B, bin, dir string, initOptions any) *rawClient {
	in, out, pid := lsptest.ServeRaw(b, bin, dir)
	c := &rawClient{pid: pid, in: in, out: bufio.NewReaderSize(out, 64<<10)}
	params, _ := json.Marshal(map[string]any{"rootUri": "file://" + dir, "capabilities": map[string]any{},
		"initializationOptions": initOptions})
	if _, err := c.request("initialize", params); err != nil {
		b.Fatal(err)
	}
	c.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	return c
}

// cpu returns the CPU time the server used so far.
func (c *rawClient) cpu() time.Duration { return lsptest.ProcessCPU(c.pid) }

func (c *rawClient) send(body string) {
	fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(body), body)
}

// request sends a request and returns its answer's result, skipping the
// server's notifications.
func (c *rawClient) request(method string, params []byte) (json.RawMessage, error) {
	body, err := c.answer(method, params)
	if err != nil {
		return nil, err
	}
	var res struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &res); err != nil || res.ID != c.id || res.Error != nil {
		return nil, fmt.Errorf("answer to %s #%d: %s (%v)", method, c.id, body, err)
	}
	return res.Result, nil
}

// frame reads one frame's body.
func (c *rawClient) frame() ([]byte, error) {
	n := -1
	for {
		line, err := c.out.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		if v, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("Content-Length: ")); ok {
			n, _ = strconv.Atoi(string(v))
		}
		if len(bytes.TrimSpace(line)) == 0 && n >= 0 {
			break
		}
	}
	if cap(c.buf) < n {
		c.buf = make([]byte, n)
	}
	c.buf = c.buf[:n]
	_, err := io.ReadFull(c.out, c.buf)
	return c.buf, err
}

var toolCallParams = []byte(`{"name":"get_current_directory","arguments":{}}`)

// call makes one tool/call of a trivial tool and checks that it succeeded.
func (c *rawClient) call() error {
	_, err := c.toolCall(toolCallParams)
	return err
}

// toolCall makes one tool/call and returns its answer's frame once it is
// read whole, checked but not decoded, as a pipe's reader takes ripgrep's
// output: the answer's id (which the server writes last) must be the
// request's, and its status (which comes after callId and tool, before
// any content) success. The server's notifications (tool/event) are
// skipped.
func (c *rawClient) toolCall(params []byte) ([]byte, error) {
	body, err := c.answer("tool/call", params)
	if err != nil {
		return nil, err
	}
	if !bytes.HasSuffix(body, []byte(fmt.Sprintf(`,"id":%d}`, c.id))) || !bytes.Contains(body[:min(len(body), 256)], []byte(`"status":"success"`)) {
		return nil, fmt.Errorf("tool/call #%d: %.2000s", c.id, body)
	}
	return body, nil
}

// answer sends a request and returns the next frame that is not one of
// the server's notifications (tool/event), undecoded.
func (c *rawClient) answer(method string, params []byte) ([]byte, error) {
	c.id++
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, c.id, method, params))
	for {
		body, err := c.frame()
		if err != nil || !bytes.HasPrefix(body, []byte(`{"jsonrpc":"2.0","method":`)) {
			return body, err
		}
	}
}

// TestToolsCommandCustom: `agentls tools` lists what tool/list lists for
// the root: the configuration's custom tools too, and with --agent only
// that agent's tools.
func TestToolsCommandCustom(t *testing.T) {
	t.Parallel()
	dir, home := t.TempDir(), t.TempDir()
	cfg := filepath.Join(home, "config.json")
	if err := os.WriteFile(cfg, []byte(`{"custom":[{"name":"count_lines","description":"Counts lines.","argv":["wc","-l","{{file}}"],
		"inputSchema":{"type":"object","properties":{"file":{"type":"string"}}}}],
		"agents":{"reader":{"tools":["read_file","count_lines"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	names := func(args ...string) []string {
		t.Helper()
		out, errOut, code := run(t, dir, "", append([]string{"--config", cfg, "tools"}, args...)...)
		var defs []tools.Definition
		if code != 0 || json.Unmarshal([]byte(out), &defs) != nil {
			t.Fatalf("tools %v: exit %d, %s%s", args, code, out, errOut)
		}
		var ns []string
		for _, d := range defs {
			ns = append(ns, d.Name)
		}
		return ns
	}
	if all := names(); !slices.Contains(all, "count_lines") || !slices.Contains(all, "shell_exec") {
		t.Errorf("tools: %v, want the custom count_lines among the built-in tools", all)
	}
	if got := names("--agent", "reader", "--root", dir); !slices.Equal(got, []string{"count_lines", "read_file"}) && !slices.Equal(got, []string{"read_file", "count_lines"}) {
		t.Errorf("tools --agent reader: %v, want read_file and count_lines", got)
	}
}
