package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/textproto"
	"strconv"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// pipeRWC reads from r and records what is written.
type pipeRWC struct {
	io.Reader
	out bytes.Buffer
}

func (p *pipeRWC) Write(b []byte) (int, error) { return p.out.Write(b) }
func (p *pipeRWC) Close() error                { return nil }

const sentinel = `{"jsonrpc":"2.0","id":"sentinel","method":"tool/list","params":{}}`

// readAll reads messages until the input ends.
func readAll(t *testing.T, s *stream) []jsonrpc2.Message {
	var msgs []jsonrpc2.Message
	for {
		m, _, err := s.Read(context.Background())
		if err != nil {
			return msgs
		}
		msgs = append(msgs, m)
		if len(msgs) > 100000 {
			t.Fatal("more messages than the input could hold")
		}
	}
}

// FuzzFrameReader feeds any bytes, then a good frame, to the frame reader.
// Invariants: it never panics and always reaches the end of the input;
// everything it writes is a well-formed frame holding a JSON-RPC error
// (-32700 or -32600); when the input has no "content-length" (any case) to
// mislead it, it resynchronises and returns the good frame that follows;
// and with a token required, nothing is ever answered and no message gets
// through unless the input holds an initialize carrying the token.
func FuzzFrameReader(f *testing.F) {
	for _, s := range []string{
		"", "garbage", "Content-Length: 5\r\n\r\n{}", "Content-Length: 10737418240\r\n\r\n",
		"Content-Length: -1\r\n\r\n", "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
		"Content-Length: 20\r\n{\"jsonrpc\":\"2.0\"}", "Content-Length: 30\r\n\r\n{",
		"\x00\xff\r\n\r\n", "content-length:2\n\n[]", "Content-Type: x\r\n\r\n",
		"Content-Length: 60\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}",
	} {
		f.Add([]byte(s))
	}
	const token = "fuzz-token-0123456789abcdef"
	log := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, in []byte) {
		good := "Content-Length: " + strconv.Itoa(len(sentinel)) + "\r\n\r\n" + sentinel
		rwc := &pipeRWC{Reader: io.MultiReader(bytes.NewReader(in), strings.NewReader(good))}
		msgs := readAll(t, newStream(rwc, log))

		// Every answer is a frame with a JSON-RPC error.
		out := bufio.NewReader(&rwc.out)
		tp := textproto.NewReader(out)
		for {
			h, err := tp.ReadMIMEHeader()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("bad frame written: %v", err)
			}
			n, err := strconv.Atoi(h.Get("Content-Length"))
			if err != nil {
				t.Fatalf("bad Content-Length written: %q", h.Get("Content-Length"))
			}
			body := make([]byte, n)
			if _, err := io.ReadFull(out, body); err != nil {
				t.Fatalf("short body written: %v", err)
			}
			var m struct {
				Error *struct{ Code int }
			}
			if err := json.Unmarshal(body, &m); err != nil || m.Error == nil || m.Error.Code != -32700 && m.Error.Code != -32600 {
				t.Fatalf("written %s, want an error -32700 or -32600", body)
			}
		}

		if !bytes.Contains(bytes.ToLower(in), []byte("content-length")) {
			found := false
			for _, m := range msgs {
				if c, ok := m.(*jsonrpc2.Call); ok && c.ID() == jsonrpc2.NewStringID("sentinel") {
					found = true
				}
			}
			if !found {
				t.Fatalf("the good frame after %q was lost", in)
			}
		}

		gated := &pipeRWC{Reader: io.MultiReader(bytes.NewReader(in), strings.NewReader(good))}
		gs := newStream(gated, log)
		gs.requireToken(token)
		gmsgs := readAll(t, gs)
		if gated.out.Len() > 0 {
			t.Fatalf("a gated stream answered: %q", gated.out.Bytes())
		}
		if len(gmsgs) > 0 {
			c, ok := gmsgs[0].(*jsonrpc2.Call)
			if !ok || c.Method() != "initialize" || !bytes.Contains(c.Params(), []byte(token)) {
				t.Fatalf("a gated stream let %v through", gmsgs[0])
			}
		}
	})
}
