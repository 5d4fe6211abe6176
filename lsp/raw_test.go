package lsp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/lsp"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// rawClient writes frames byte by byte, to test what an editor's library
// would never send.
type rawClient struct {
	t    *testing.T
	conn net.Conn
	in   *bufio.Reader
	msgs chan map[string]any
}

func newRaw(t *testing.T, runner *tools.Runner) *rawClient {
	srv, cli := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { lsp.Serve(ctx, srv, lsp.Options{Runner: runner}); close(done) }()
	c := &rawClient{t: t, conn: cli, in: bufio.NewReader(cli), msgs: make(chan map[string]any, 100)}
	go c.read()
	t.Cleanup(func() { cli.Close(); cancel(); <-done })
	return c
}

func (c *rawClient) read() {
	tp := textproto.NewReader(c.in)
	for {
		h, err := tp.ReadMIMEHeader()
		if err != nil {
			close(c.msgs)
			return
		}
		n, _ := strconv.Atoi(h.Get("Content-Length"))
		body := make([]byte, n)
		if _, err := io.ReadFull(c.in, body); err != nil {
			close(c.msgs)
			return
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			c.t.Errorf("server sent invalid JSON: %s", body)
		}
		c.msgs <- m
	}
}

func (c *rawClient) writeRaw(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *rawClient) send(body string) {
	c.writeRaw(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
}

// response waits for the response with the given id (as JSON, e.g. `7`).
func (c *rawClient) response(id string) map[string]any {
	c.t.Helper()
	return c.await(id, false)
}

// only waits for the response to id and fails if any other response (or a
// second one to an earlier id) arrives before it: what was sent before got
// no answer, or exactly the one already read.
func (c *rawClient) only(id string) map[string]any {
	c.t.Helper()
	return c.await(id, true)
}

// await waits for the response to id, skipping the server's requests and
// notifications; strict fails on any other response first.
func (c *rawClient) await(id string, strict bool) map[string]any {
	c.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				c.t.Fatalf("connection closed while waiting for response %s", id)
			}
			if _, isReq := m["method"]; isReq {
				continue
			}
			got, _ := json.Marshal(m["id"])
			if string(got) == id {
				return m
			}
			if strict {
				c.t.Fatalf("unexpected response %s before %s: %v", got, id, m)
			}
		case <-timeout:
			c.t.Fatalf("no response %s", id)
		}
	}
}

func errCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	if e == nil {
		return 0
	}
	return int(e["code"].(float64))
}

// initialize sends initialize (request 1, no capabilities) and fails the
// test unless it succeeds.
func (c *rawClient) initialize(t *testing.T) {
	t.Helper()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`)
	if m := c.response("1"); m["error"] != nil {
		t.Fatalf("initialize: %v", m)
	}
}

// frame wraps body in a well-formed frame.
func frame(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

// TestFramingResync attacks the frame reader with broken byte streams, each
// followed by a good request: every one is answered -32700 (or -32600 for a
// well-framed non-request found on the way; never silently
// dropped, never a hang), the reader finds the good request after it, and
// the session goes on serving.
func TestFramingResync(t *testing.T) {
	t.Parallel()
	good := `{"jsonrpc":"2.0","id":2,"method":"tool/list","params":{}}`
	cases := []struct {
		name   string
		bad    string
		errors int    // -32700 (or -32600) answers before the good request's
		reason string // in the first error's message
	}{
		{"garbage without newline", "garbage \x00\xff\xfe{{{ no newline", 1, "invalid header line"},
		{"garbage lines", "hello world\r\n\r\nmore junk\r\n", 1, "invalid header line"},
		{"binary then blank lines", "\x00\x01\x02\r\n\r\n\r\n", 1, "invalid header line"},
		{"header without body", "Content-Length: 40\r\n\r\n", 1, "not JSON"},
		{"header without body, length beyond the next frame", "Content-Length: 100000\r\n\r\n", 1, "not JSON"},
		{"10 GB length", "Content-Length: 10737418240\r\n\r\n", 1, "exceeds the limit of 67108864 bytes"},
		{"10 GB length with some body", "Content-Length: 10737418240\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":9,\"params\":\"xxxxxxxx", 1, "exceeds the limit"},
		{"one byte over the cap", fmt.Sprintf("Content-Length: %d\r\n\r\n", lsp.MaxMessage+1), 1, "exceeds the limit"},
		{"length beyond int64", "Content-Length: 99999999999999999999999999\r\n\r\n", 1, "exceeds the limit"},
		{"negative length", "Content-Length: -5\r\n\r\n{}", 1, "invalid Content-Length"},
		{"non-numeric length", "Content-Length: abc\r\n\r\n{}", 1, "invalid Content-Length"},
		{"plus sign", "Content-Length: +2\r\n\r\n{}", 1, "invalid Content-Length"},
		{"empty length", "Content-Length:\r\n\r\n", 1, "invalid Content-Length"},
		{"duplicate lengths", "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", 2, "duplicate Content-Length"},
		{"no Content-Length", "Content-Type: application/vscode-jsonrpc\r\n\r\n{}", 1, "missing Content-Length"},
		{"missing blank line", "Content-Length: 20\r\n{\"jsonrpc\":\"2.0\"}", 1, "invalid header line"},
		{"header line of 20000 bytes", "X-Junk: " + strings.Repeat("a", 20000), 1, "longer than 8192 bytes"},
		{"headers of 40 KiB", strings.Repeat("X-Junk: "+strings.Repeat("a", 1000)+"\r\n", 40), 1, "headers are longer"},
		{"short length cuts the body", "Content-Length: 5\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tool/list\"}", 1, "not valid JSON"},
		{"long length swallows the next frame", "Content-Length: 30\r\n\r\n{", 1, "not valid JSON"},
		{"body that is not JSON", "Content-Length: 4\r\n\r\nabcd", 1, "not JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newRaw(t, testRunner(t))
			c.initialize(t)
			c.writeRaw(tc.bad + frame(good))
			var errs []map[string]any
			for {
				var m map[string]any
				select {
				case m = <-c.msgs:
				case <-time.After(10 * time.Second):
					t.Fatalf("no answer to the good request after %d errors", len(errs))
				}
				if m == nil {
					t.Fatalf("connection closed after %d errors", len(errs))
				}
				if _, isReq := m["method"]; isReq {
					continue
				}
				if id, _ := json.Marshal(m["id"]); string(id) == "2" {
					if m["error"] != nil {
						t.Fatalf("good request failed: %v", m)
					}
					break
				}
				if code := errCode(m); code != -32700 && code != -32600 || m["id"] != nil {
					t.Fatalf("unexpected answer %v", m)
				}
				errs = append(errs, m)
			}
			if len(errs) != tc.errors {
				t.Errorf("%d error answers, want %d: %v", len(errs), tc.errors, errs)
			}
			if len(errs) > 0 {
				msg := errs[0]["error"].(map[string]any)["message"].(string)
				if !strings.Contains(msg, tc.reason) {
					t.Errorf("first error %q, want it to say %q", msg, tc.reason)
				}
			}
			// Still serving.
			c.send(`{"jsonrpc":"2.0","id":3,"method":"tool/call","params":{"name":"get_current_datetime","arguments":{}}}`)
			if r, _ := c.response("3")["result"].(map[string]any); r == nil || r["status"] != "success" {
				t.Fatalf("no longer serving after %s", tc.name)
			}
		})
	}
}

// TestFramingTolerated: frames that bend the base protocol but are
// unambiguous are served without an error.
func TestFramingTolerated(t *testing.T) {
	t.Parallel()
	body := `{"jsonrpc":"2.0","id":2,"method":"tool/list","params":{}}`
	for name, raw := range map[string]string{
		"bare LF":                fmt.Sprintf("Content-Length: %d\n\n%s", len(body), body),
		"content type":           fmt.Sprintf("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s", len(body), body),
		"lower-case name":        fmt.Sprintf("content-length:%d\r\n\r\n%s", len(body), body),
		"blank lines before":     "\r\n\r\n" + frame(body),
		"leading blanks in body": fmt.Sprintf("Content-Length: %d\r\n\r\n  \n%s", len(body)+3, body),
	} {
		t.Run(name, func(t *testing.T) {
			c := newRaw(t, testRunner(t))
			c.initialize(t)
			c.writeRaw(raw)
			if m := c.only("2"); m["error"] != nil {
				t.Fatalf("answered %v", m)
			}
		})
	}
}

// BenchmarkOversizeToolCall sends a tool/call whose path is 50 MB through
// the whole server (framing, JSON-RPC decoding, the runner) over a pipe and
// waits for its INVALID_PARAMS result.
func BenchmarkOversizeToolCall(b *testing.B) {
	srv, cli := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go lsp.Serve(ctx, srv, lsp.Options{Runner: tools.NewRunner(tools.NewBuiltinRegistry(), nil), DefaultRoot: b.TempDir()})
	in := bufio.NewReader(cli)
	tp := textproto.NewReader(in)
	read := func() map[string]any {
		for {
			h, err := tp.ReadMIMEHeader()
			if err != nil {
				b.Fatal(err)
			}
			n, _ := strconv.Atoi(h.Get("Content-Length"))
			body := make([]byte, n)
			io.ReadFull(in, body)
			var m map[string]any
			json.Unmarshal(body, &m)
			if m["method"] == nil {
				return m
			}
		}
	}
	go io.WriteString(cli, frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`))
	read()
	call := []byte(frame(`{"jsonrpc":"2.0","id":2,"method":"tool/call","params":{"name":"read_file","arguments":{"path":"` + strings.Repeat("x", 50<<20) + `"}}}`))
	b.ResetTimer()
	for b.Loop() {
		go cli.Write(call)
		m := read()
		r, _ := m["result"].(map[string]any)
		if e, _ := r["error"].(map[string]any); e == nil || e["code"] != "INVALID_PARAMS" {
			b.Fatalf("answer %v", m)
		}
	}
}

// TestHugeToolCalls: a tool/call of megabytes whose arguments break a cap is
// refused (INVALID_PARAMS with the pointer) without decoding the message;
// every other big message still goes the usual way and gets its usual answer.
func TestHugeToolCalls(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 3<<20)
	for _, tc := range []struct {
		name, body string
		initialize bool
		code       int    // a JSON-RPC error code, or 0
		toolCode   string // the ToolResult's error code, "" for success
		pointer    string
	}{
		{name: "oversize path", initialize: true, toolCode: "INVALID_PARAMS", pointer: "/path",
			body: `{"jsonrpc":"2.0","id":2,"method":"tool/call","params":{"name":"read_file","arguments":{"path":"` + big + `"}}}`},
		{name: "by alias, string id", initialize: true, toolCode: "INVALID_PARAMS", pointer: "/path",
			body: `{"id":"two","params":{"arguments":{"path":"` + big + `"},"name":"view"},"method":"tool/call","jsonrpc":"2.0"}`},
		{name: "escaped member name, the usual way", initialize: true, toolCode: "INVALID_PARAMS", pointer: "/path",
			body: `{"jsonrpc":"2.0","id":2,"method":"tool/call","params":{"na\u006de":"read_file","arguments":{"path":"` + big + `"}}}`},
		{name: "big message, small arguments", initialize: true,
			body: `{"jsonrpc":"2.0","id":2,"method":"tool/call","params":{"name":"read_file","arguments":{"path":"a.txt"},"padding":"` + big + `"}}`},
		{name: "before initialize", code: -32002,
			body: `{"jsonrpc":"2.0","id":2,"method":"tool/call","params":{"name":"read_file","arguments":{"path":"` + big + `"}}}`},
		{name: "not JSON", initialize: true, code: -32700,
			body: `{"jsonrpc":"2.0","id":2,"method":"tool/call","params":{"name":"read_file","arguments":{"path":"` + big + `"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newRaw(t, testRunner(t))
			if tc.initialize {
				root := t.TempDir()
				if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				uri, _ := json.Marshal("file://" + root)
				c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"rootUri":` + string(uri) + `}}`)
				c.response("1")
			}
			c.send(tc.body)
			id := "2"
			if strings.Contains(tc.body, `"two"`) {
				id = `"two"`
			}
			if tc.code == -32700 {
				id = "null"
			}
			m := c.response(id)
			if got := errCode(m); got != tc.code {
				t.Fatalf("error code %d, want %d: %v", got, tc.code, m)
			}
			if tc.code != 0 {
				return
			}
			res, _ := m["result"].(map[string]any)
			e, _ := res["error"].(map[string]any)
			switch {
			case tc.toolCode == "" && (e != nil || res["status"] != "success"):
				t.Fatalf("want success, got %v", res)
			case tc.toolCode != "" && (e == nil || e["code"] != tc.toolCode):
				t.Fatalf("want %s, got %v", tc.toolCode, res)
			}
			if tc.pointer != "" {
				vs, _ := e["details"].(map[string]any)["violations"].([]any)
				if len(vs) != 1 || vs[0].(map[string]any)["pointer"] != tc.pointer {
					t.Fatalf("violations %v, want one at %s", vs, tc.pointer)
				}
			}
			// The session goes on serving.
			c.send(`{"jsonrpc":"2.0","id":3,"method":"tool/list","params":{}}`)
			if m := c.response("3"); m["error"] != nil {
				t.Fatalf("after: %v", m)
			}
		})
	}
}

// TestProgressWaitsForInitialized: the indexes' builds start at
// initialize, but nothing reaches the client before its initialized (no
// window/workDoneProgress/create, no $/progress); then the tokens are asked
// for, and both builds, over long since, report begin and end on them.
func TestProgressWaitsForInitialized(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newRaw(t, testRunner(t))
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":%q,"capabilities":{"window":{"workDoneProgress":true}}}}`,
		workspace.PathToURI(root)))
	next := func(what string) map[string]any {
		t.Helper()
		select {
		case m, ok := <-c.msgs:
			if !ok {
				t.Fatalf("connection closed while waiting for %s", what)
			}
			return m
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s", what)
		}
		return nil
	}
	if m := next("initialize's answer"); m["method"] != nil || m["error"] != nil {
		t.Fatalf("before initialize's answer: %v", m)
	}
	// The builds of a one-file tree end within milliseconds: what they
	// would send without waiting for initialized would come meanwhile.
	select {
	case m := <-c.msgs:
		t.Fatalf("sent before initialized: %v", m)
	case <-time.After(300 * time.Millisecond):
	}
	c.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	ends := map[string]bool{}
	for len(ends) < 2 {
		m := next("the builds' progress")
		switch m["method"] {
		case "window/workDoneProgress/create":
			id, _ := json.Marshal(m["id"])
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":null}`, id))
		case "$/progress":
			p, _ := m["params"].(map[string]any)
			v, _ := p["value"].(map[string]any)
			if tok, _ := p["token"].(string); v["kind"] == "end" {
				ends[tok[:strings.LastIndexByte(tok, '/')]] = true
			}
		}
	}
	if !ends["agentls/index"] || !ends["agentls/search-index"] {
		t.Fatalf("ends: %v", ends)
	}
}
