package attach

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// maxFrame bounds one message from a session: the largest tool result and
// room for the envelope.
const maxFrame = 128 << 20

// rpc is the client end of a JSON-RPC 2.0 connection in the LSP base
// protocol (Content-Length framing): requests with numeric ids, their
// answers, and the server's notifications, which go to notify on the
// reading goroutine, in order. A request from the server is answered
// MethodNotFound. It is small on purpose: one write per message and one
// decode per answer, on the path of every attached call.
type rpc struct {
	c      io.ReadWriteCloser
	notify func(method string, params json.RawMessage)

	wmu sync.Mutex // one frame on the wire at a time

	next    atomic.Int64
	pending table[int64, chan rpcAnswer]

	mu   sync.Mutex    // guards closing done
	done chan struct{} // closed when the connection ends
}

type rpcAnswer struct {
	result json.RawMessage
	err    *rpcError
}

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

func newRPC(c io.ReadWriteCloser, notify func(string, json.RawMessage)) *rpc {
	r := &rpc{c: c, notify: notify, done: make(chan struct{})}
	go r.readLoop()
	return r
}

// call sends a request and waits for its answer, the end of ctx (then the
// server gets $/cancelRequest) or the end of the connection (ErrEnded).
func (r *rpc) call(ctx context.Context, method string, params, result any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return r.callRaw(ctx, method, body, result)
}

// callRaw is call with params encoded already (valid JSON).
func (r *rpc) callRaw(ctx context.Context, method string, params []byte, result any) error {
	id := r.next.Add(1)
	ch := make(chan rpcAnswer, 1)
	defer r.pending.put(id, ch)()
	if err := r.write(requestFrame(id, method, params)); err != nil {
		return err
	}
	select {
	case a := <-ch:
		if a.err != nil {
			return a.err
		}
		if result != nil && len(a.result) > 0 {
			if err := json.Unmarshal(a.result, result); err != nil {
				return fmt.Errorf("%s: decode the result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		_ = r.send(map[string]any{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": map[string]any{"id": id}})
		return ctx.Err()
	case <-r.done:
		return ErrEnded
	}
}

// requestFrame is the frame of the request id: params, valid JSON, go in
// as they are (a tool's arguments are not encoded again), and method is
// one of this package's, which needs no escaping.
func requestFrame(id int64, method string, params []byte) []byte {
	var head [64]byte
	h := append(head[:0], `{"jsonrpc":"2.0","id":`...)
	h = strconv.AppendInt(h, id, 10)
	h = append(append(append(h, `,"method":"`...), method...), `","params":`...)
	n := len(h) + len(params) + 1
	frame := make([]byte, 0, n+32)
	frame = append(frame, "Content-Length: "...)
	frame = strconv.AppendInt(frame, int64(n), 10)
	frame = append(frame, "\r\n\r\n"...)
	frame = append(append(append(frame, h...), params...), '}')
	return frame
}

// send writes one message in one frame.
func (r *rpc) send(msg any) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	frame := make([]byte, 0, len(body)+32)
	frame = append(frame, "Content-Length: "...)
	frame = strconv.AppendInt(frame, int64(len(body)), 10)
	frame = append(frame, "\r\n\r\n"...)
	return r.write(append(frame, body...))
}

// write writes one frame.
func (r *rpc) write(frame []byte) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	select {
	case <-r.done:
		return ErrEnded
	default:
	}
	if _, err := r.c.Write(frame); err != nil {
		r.close()
		return ErrEnded
	}
	return nil
}

// readLoop reads frames until the connection ends.
func (r *rpc) readLoop() {
	defer r.close()
	br := bufio.NewReaderSize(r.c, 64<<10)
	for {
		body, err := readFrame(br)
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *rpcError       `json:"error"`
		}
		if json.Unmarshal(body, &m) != nil {
			continue
		}
		switch {
		case m.Method != "" && len(m.ID) == 0:
			if r.notify != nil {
				r.notify(m.Method, m.Params)
			}
		case m.Method != "":
			_ = r.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": rpcError{Code: -32601, Message: "method not found: " + m.Method}})
		default:
			id, err := strconv.ParseInt(string(m.ID), 10, 64)
			if err != nil {
				continue
			}
			if ch := r.pending.get(id); ch != nil {
				ch <- rpcAnswer{result: m.Result, err: m.Error}
			}
		}
	}
}

// readFrame reads one Content-Length frame's body.
func readFrame(br *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 || n > maxFrame {
				return nil, fmt.Errorf("bad Content-Length %q", value)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, errors.New("a frame without Content-Length")
	}
	body := make([]byte, length)
	_, err := io.ReadFull(br, body)
	return body, err
}

// close ends the connection; pending calls get ErrEnded.
func (r *rpc) close() {
	r.mu.Lock()
	select {
	case <-r.done:
	default:
		close(r.done)
	}
	r.mu.Unlock()
	r.c.Close()
}
