package lsp

import (
	"context"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/agentls/agentls/tools"
)

// TestTokenGateTimeout: a connection that must present a token and sends
// nothing (or half a frame) is closed when firstMessageTimeout passes, and
// after the right first message the deadline no longer applies.
func TestTokenGateTimeout(t *testing.T) {
	old := firstMessageTimeout
	firstMessageTimeout = 300 * time.Millisecond
	defer func() { firstMessageTimeout = old }()
	runner := tools.NewRunner(tools.NewBuiltinRegistry(), nil)
	serve := func() net.Conn {
		srv, cli := net.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			Serve(ctx, srv, Options{Runner: runner, Token: "the-token-0123456789", DefaultRoot: t.TempDir()})
			close(done)
		}()
		t.Cleanup(func() { cli.Close(); cancel(); <-done })
		return cli
	}
	for name, partial := range map[string]string{"silent": "", "half a frame": "Content-Length: 100\r\n\r\n{\"jsonrpc\""} {
		c := serve()
		if partial != "" {
			io.WriteString(c, partial)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := c.Read(make([]byte, 10))
		if n != 0 || err != io.EOF {
			t.Errorf("%s: read %d %v, want the connection closed (EOF)", name, n, err)
		}
	}
	c := serve()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"initializationOptions":{"token":"the-token-0123456789"}}}`
	go io.WriteString(c, "Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64<<10)
	if n, err := c.Read(buf); err != nil || n == 0 {
		t.Fatalf("initialize with the token: %d %v", n, err)
	}
	for c.SetReadDeadline(time.Now().Add(100 * time.Millisecond)); ; {
		if _, err := c.Read(buf); err != nil {
			break // drain the rest of the answer
		}
	}
	time.Sleep(2 * firstMessageTimeout) // idle past the first-message deadline
	body = `{"jsonrpc":"2.0","id":2,"method":"tool/list","params":{}}`
	go io.WriteString(c, "Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(buf); err != nil || n == 0 {
		t.Fatalf("the session ended after the first-message deadline: %d %v", n, err)
	}
}
