package lsp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"testing"
	"time"

	"github.com/agentls/agentls/lsp"
	"github.com/agentls/agentls/tools"
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
