package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMessage is the longest message (one line) the server reads: the
// largest arguments agentls accepts (64 MiB) and room for the envelope.
// A longer line is skipped and answered with a parse error.
const MaxMessage = 65 << 20

// lineTransport is MCP's stdio transport (one JSON-RPC message per line)
// that survives bad input. The SDK's own stdio connection ends the session
// at the first line that is not a JSON-RPC message; this one answers it
// with a JSON-RPC error (-32700 for text that is not JSON or a line over
// MaxMessage, -32600 for JSON that is not a JSON-RPC message, a batch
// included) and reads on.
type lineTransport struct {
	r   io.ReadCloser
	w   io.WriteCloser
	max int // MaxMessage when 0
}

var _ sdk.Transport = (*lineTransport)(nil)

// Connect implements sdk.Transport.
func (t *lineTransport) Connect(context.Context) (sdk.Connection, error) {
	max := t.max
	if max <= 0 {
		max = MaxMessage
	}
	c := &lineConn{r: t.r, w: t.w, max: max, in: make(chan readResult), closed: make(chan struct{})}
	go c.readLoop()
	return c, nil
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

// lineConn is one connection of lineTransport.
type lineConn struct {
	r   io.ReadCloser
	w   io.WriteCloser
	max int
	in  chan readResult

	wmu sync.Mutex // one message on the wire at a time

	closeOnce sync.Once
	closed    chan struct{}
}

// readLoop reads lines and hands on the messages; it answers the lines
// that are not messages itself.
func (c *lineConn) readLoop() {
	br := bufio.NewReaderSize(c.r, 64<<10)
	for {
		line, tooLong, err := readLine(br, c.max)
		if tooLong {
			c.reject(nil, jsonrpc.CodeParseError, fmt.Sprintf("message over %d bytes, skipped", c.max))
		} else if len(bytes.TrimSpace(line)) > 0 {
			if msg, ok := c.decode(line); ok {
				select {
				case c.in <- readResult{msg: msg}:
				case <-c.closed:
					return
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = io.EOF
			}
			select {
			case c.in <- readResult{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

// readLine reads one line (without its end) of at most max bytes; a longer
// one is read to its end and dropped (tooLong).
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, err
	}
}

// decode decodes one line, or answers it with a JSON-RPC error.
func (c *lineConn) decode(line []byte) (jsonrpc.Message, bool) {
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		c.reject(nil, jsonrpc.CodeParseError, "parse error: the message is not valid JSON")
		return nil, false
	}
	if line[0] == '[' {
		c.reject(nil, jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not supported")
		return nil, false
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err == nil {
		return msg, true
	}
	// Answer with the message's own id when it has a usable one.
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	var id any
	if json.Unmarshal(line, &probe) == nil && len(probe.ID) > 0 {
		var v any
		if json.Unmarshal(probe.ID, &v) == nil {
			switch v := v.(type) {
			case string:
				id = v
			case float64:
				if v == float64(int64(v)) {
					id = int64(v)
				}
			}
		}
	}
	c.reject(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: %v", err))
	return nil, false
}

// reject writes an error response for a message that never reached the
// server (id nil: null).
func (c *lineConn) reject(id any, code int64, message string) {
	resp := struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id}
	resp.Error.Code, resp.Error.Message = code, message
	data, _ := json.Marshal(resp)
	_ = c.writeLine(data)
}

// Read implements sdk.Connection.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case r := <-c.in:
		return r.msg, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write implements sdk.Connection.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error != nil {
		// The SDK answers some refusals (a request before initialize, a
		// second initialize) with plain errors, which go out as code 0,
		// not a JSON-RPC code: they become -32603.
		var we *jsonrpc.Error
		if !errors.As(resp.Error, &we) || we.Code == 0 {
			r := *resp
			r.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: resp.Error.Error()}
			msg = &r
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("mcp: encode: %w", err)
	}
	return c.writeLine(data)
}

func (c *lineConn) writeLine(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.closed:
		return io.ErrClosedPipe
	default:
	}
	_, err := c.w.Write(append(data, '\n'))
	return err
}

// Close implements sdk.Connection.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.r.Close()
		c.w.Close()
	})
	return nil
}

// SessionID implements sdk.Connection: stdio has no session id.
func (c *lineConn) SessionID() string { return "" }
