package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/lsp/lsptest"
)

// server runs `agentls serve ARGS` in this process and returns the address
// and token file it printed; it stops with the test.
func server(t *testing.T, args ...string) (addr, tokenFile string, stderr func() string) {
	t.Helper()
	for _, v := range []string{"XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "HOME"} {
		t.Setenv(v, t.TempDir())
	}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, append([]string{"serve"}, args...), IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: pw})
		pw.Close()
	}()
	var all strings.Builder
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop")
		}
	})
	for addr == "" || tokenFile == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("server ended: %s", all.String())
			}
			all.WriteString(l + "\n")
			if a, ok := strings.CutPrefix(l, "agentls: listening on "); ok {
				addr = a
			}
			if f, ok := strings.CutPrefix(l, "agentls: token file "); ok {
				tokenFile, _, _ = strings.Cut(f, " ")
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no address printed: %s", all.String())
		}
	}
	var mu sync.Mutex // all, from here on written by the drain below
	go func() {
		for l := range lines {
			mu.Lock()
			all.WriteString(l + "\n") // drained so the server never blocks on stderr
			mu.Unlock()
		}
	}()
	return addr, tokenFile, func() string {
		mu.Lock()
		defer mu.Unlock()
		return all.String()
	}
}

type client struct {
	t    *testing.T
	conn net.Conn
	in   *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	network, a := "tcp", addr
	if p, ok := strings.CutPrefix(addr, "unix:"); ok {
		network, a = "unix", p
	}
	c, err := net.Dial(network, a)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	return &client{t: t, conn: c, in: bufio.NewReader(c)}
}

func (c *client) write(raw string) {
	if _, err := io.WriteString(c.conn, raw); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *client) send(body string) {
	c.write(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
}

// read returns the next message, or nil when the server closed the
// connection.
func (c *client) read() map[string]any {
	h, err := textproto.NewReader(c.in).ReadMIMEHeader()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	n, _ := strconv.Atoi(h.Get("Content-Length"))
	body := make([]byte, n)
	if _, err := io.ReadFull(c.in, body); err != nil {
		c.t.Fatalf("read body: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		c.t.Fatalf("bad JSON %s", body)
	}
	return m
}

// response skips server requests and notifications.
func (c *client) response() map[string]any {
	for {
		m := c.read()
		if m == nil || m["method"] == nil {
			return m
		}
	}
}

func initialize(root string, opts any) string {
	o, _ := json.Marshal(opts)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":%q,"capabilities":{},"initializationOptions":%s}}`, "file://"+root, o)
}

// TestListenerNeedsToken attacks `serve --listen` on real TCP and a real
// Unix socket: a connection whose first message is anything but initialize
// with the right token is closed without a single answer; the right token
// opens a working session.
func TestListenerNeedsToken(t *testing.T) {
	for _, transport := range []string{"tcp", "unix"} {
		t.Run(transport, func(t *testing.T) {
			listenAddr := "127.0.0.1:0"
			if transport == "unix" {
				listenAddr = "unix:" + filepath.Join(t.TempDir(), "sock", "agentls.sock")
			}
			addr, tokenFile, stderr := server(t, "--listen", listenAddr)
			fi, err := os.Stat(tokenFile)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("token file %s: %v %v, want mode 600", tokenFile, fi, err)
			}
			b, _ := os.ReadFile(tokenFile)
			token := strings.TrimSpace(string(b))
			root := t.TempDir()
			wrong := []byte(token)
			wrong[0] ^= 1
			refused := []struct{ name, raw string }{
				{"no token", frame(initialize(root, map[string]any{}))},
				{"no initializationOptions", frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`)},
				{"wrong token", frame(initialize(root, map[string]any{"token": string(wrong)}))},
				{"token prefix", frame(initialize(root, map[string]any{"token": token[:32]}))},
				{"empty token", frame(initialize(root, map[string]any{"token": ""}))},
				{"token of another type", frame(initialize(root, map[string]any{"token": 12345}))},
				{"token outside initializationOptions", frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"token":%q,"capabilities":{}}}`, token))},
				{"request before initialize", frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tool/list","params":{"initializationOptions":{"token":%q}}}`, token))},
				{"tool/call first", frame(`{"jsonrpc":"2.0","id":1,"method":"tool/call","params":{"name":"shell_exec","arguments":{"command":"touch pwned"}}}`)},
				{"notification first", frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)},
				{"initialize as a notification", frame(fmt.Sprintf(`{"jsonrpc":"2.0","method":"initialize","params":{"initializationOptions":{"token":%q}}}`, token))},
				{"malformed frame", "garbage\r\n\r\n" + frame(initialize(root, map[string]any{"token": token}))},
				{"body not JSON", "Content-Length: 5\r\n\r\nhello"},
				{"first message over 1 MiB", fmt.Sprintf("Content-Length: %d\r\n\r\n", 2<<20)},
				{"batch", frame(fmt.Sprintf(`[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"initializationOptions":{"token":%q}}}]`, token))},
			}
			for _, r := range refused {
				c := dial(t, addr)
				c.write(r.raw)
				if m := c.read(); m != nil {
					t.Errorf("%s: answered %v, want the connection closed", r.name, m)
				}
			}
			if _, err := os.Stat(filepath.Join(root, "pwned")); err == nil {
				t.Error("a refused connection ran a command")
			}

			c := dial(t, addr)
			c.send(initialize(root, map[string]any{"token": token}))
			if m := c.response(); m == nil || m["error"] != nil {
				t.Fatalf("initialize with the token: %v", m)
			}
			c.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
			c.send(`{"jsonrpc":"2.0","id":2,"method":"tool/list","params":{}}`)
			m := c.response()
			if r, _ := m["result"].(map[string]any); r == nil || len(r["tools"].([]any)) < 10 {
				t.Fatalf("tool/list: %v", m)
			}
			c.send(`{"jsonrpc":"2.0","id":3,"method":"tool/call","params":{"name":"get_current_datetime","arguments":{}}}`)
			if r, _ := c.response()["result"].(map[string]any); r == nil || r["status"] != "success" {
				t.Fatalf("tool/call: %v", r)
			}
			if strings.Contains(stderr(), token) {
				t.Error("the token was printed")
			}
		})
	}
}

func frame(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

func TestListenRefusals(t *testing.T) {
	testenv.RuntimeDir(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", "--listen", "0.0.0.0:0"}, 1, "--allow-remote"},
		{[]string{"serve", "--listen", ":0"}, 1, "not a loopback address"},
		{[]string{"serve", "--allow-remote"}, 2, "need --listen"},
		{[]string{"serve", "--token-file", "x"}, 2, "need --listen"},
		{[]string{"--allow-remote", "serve", "--listen", "unix:"}, 1, "needs a path"},
	} {
		var stderr strings.Builder
		code := Main(context.Background(), tc.args, IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr})
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d %q, want %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}

// TestListenerCleanupOnSignal: SIGTERM to the real binary removes the Unix
// socket and the generated token file before it exits.
func TestListenerCleanupOnSignal(t *testing.T) {
	t.Parallel()
	bin := lsptest.BuildBinary(t)
	run := t.TempDir()
	sock := filepath.Join(t.TempDir(), "s", "agentls.sock")
	var stderr strings.Builder
	cmd := exec.Command(bin, "serve", "--listen", "unix:"+sock)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+run)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var tokens []string
	for i := 0; i < 200 && len(tokens) == 0; i++ {
		time.Sleep(25 * time.Millisecond)
		tokens, _ = filepath.Glob(filepath.Join(run, "agentls", "token-*"))
	}
	if len(tokens) != 1 {
		cmd.Process.Kill()
		t.Fatalf("token files %v", tokens)
	}
	for i := 0; i < 200; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if _, err := os.Stat(tokens[0]); !os.IsNotExist(err) {
		t.Errorf("token file left after SIGTERM: %v", err)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left after SIGTERM: %v", err)
	}
}
