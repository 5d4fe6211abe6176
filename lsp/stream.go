package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// maxMessage bounds one message's body.
const maxMessage = 256 << 20

// stream is the LSP base protocol (Content-Length framing) as a
// jsonrpc2.Stream that survives bad input: a frame with broken headers, a
// body that is not JSON, or JSON that is not a JSON-RPC message is answered
// with the JSON-RPC error (-32700 or -32600) and skipped, and the stream
// reads on. Only an I/O error ends it. (jsonrpc2's own stream fails the
// whole connection on the first bad message.)
type stream struct {
	in  *bufio.Reader
	out io.Writer
	c   io.Closer
	log *slog.Logger

	wmu sync.Mutex
}

func newStream(rwc io.ReadWriteCloser, log *slog.Logger) *stream {
	return &stream{in: bufio.NewReaderSize(rwc, 64<<10), out: rwc, c: rwc, log: log}
}

var _ jsonrpc2.Stream = (*stream)(nil)

// Read implements jsonrpc2.Stream.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		body, n, ferr, err := s.readFrame()
		if err != nil {
			return nil, n, err
		}
		if ferr != "" {
			s.log.Warn("bad frame", "err", ferr)
			s.writeError(nil, jsonrpc2.ParseError, ferr)
			continue
		}
		msg, code, why := decode(body)
		if msg != nil {
			return msg, n, nil
		}
		s.log.Warn("bad message", "err", why, "body", truncate(body, 200))
		if code == jsonrpc2.InvalidRequest && isResponse(body) {
			continue // a response to nothing we sent: nobody to tell
		}
		s.writeError(rawID(body), code, why)
	}
}

// readFrame reads one frame. A frame whose headers are unusable yields
// ferr, with the input positioned after it; err is an I/O error.
func (s *stream) readFrame() (body []byte, n int64, ferr string, err error) {
	length := int64(-1)
	sawHeader := false
	for {
		line, err := s.in.ReadString('\n')
		n += int64(len(line))
		if err != nil {
			if err == io.EOF && sawHeader {
				err = io.ErrUnexpectedEOF
			}
			return nil, n, "", err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if !sawHeader {
				continue // stray blank line between frames
			}
			break
		}
		sawHeader = true
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			ferr = fmt.Sprintf("invalid header line %q", truncate([]byte(line), 80))
			continue
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			l, perr := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if perr != nil || l < 0 {
				ferr = fmt.Sprintf("invalid Content-Length %q", strings.TrimSpace(value))
				continue
			}
			length = l
		}
	}
	if length < 0 {
		if ferr == "" {
			ferr = "missing Content-Length header"
		}
		return nil, n, ferr, nil
	}
	if length > maxMessage {
		m, err := io.CopyN(io.Discard, s.in, length)
		return nil, n + m, fmt.Sprintf("message of %d bytes exceeds the limit of %d", length, maxMessage), err
	}
	body = make([]byte, length)
	m, err := io.ReadFull(s.in, body)
	n += int64(m)
	if err != nil {
		return nil, n, "", err
	}
	if ferr != "" {
		return nil, n, ferr, nil
	}
	return body, n, "", nil
}

// decode turns a body into a message, or says which JSON-RPC error it is.
func decode(body []byte) (jsonrpc2.Message, jsonrpc2.Code, string) {
	trimmed := bytes.TrimSpace(body)
	if !json.Valid(trimmed) {
		return nil, jsonrpc2.ParseError, "parse error: the message is not valid JSON"
	}
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, jsonrpc2.InvalidRequest, "invalid request: a message must be a JSON object (batches are not supported)"
	}
	var probe struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  *string         `json:"method"`
		ID      json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(trimmed, &probe); err != nil {
		return nil, jsonrpc2.InvalidRequest, "invalid request: " + err.Error()
	}
	if probe.JSONRPC != "2.0" {
		return nil, jsonrpc2.InvalidRequest, `invalid request: "jsonrpc" must be "2.0"`
	}
	if probe.Method != nil && *probe.Method == "" {
		return nil, jsonrpc2.InvalidRequest, "invalid request: empty method"
	}
	if len(probe.ID) > 0 && !validID(probe.ID) {
		return nil, jsonrpc2.InvalidRequest, "invalid request: id must be a string or a 32-bit integer"
	}
	msg, err := jsonrpc2.DecodeMessage(trimmed)
	if err != nil {
		return nil, jsonrpc2.InvalidRequest, "invalid request: " + err.Error()
	}
	return msg, 0, ""
}

func validID(raw json.RawMessage) bool {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return true
	}
	var n int32
	return json.Unmarshal(raw, &n) == nil
}

func isResponse(body []byte) bool {
	var probe struct {
		Method *string         `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	return json.Unmarshal(body, &probe) == nil && probe.Method == nil && (probe.Result != nil || probe.Error != nil)
}

// rawID returns the message's id as sent when it is a string or number, so
// that the error can name it; else nil (JSON null).
func rawID(body []byte) json.RawMessage {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &probe) != nil || len(probe.ID) == 0 {
		return nil
	}
	switch probe.ID[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return probe.ID
	}
	return nil
}

// Write implements jsonrpc2.Stream.
func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	data, err := json.Marshal(msg)
	if err != nil {
		return 0, fmt.Errorf("marshal message: %w", err)
	}
	return s.writeFrame(data)
}

func (s *stream) writeFrame(data []byte) (int64, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "Content-Length: %d\r\n\r\n", len(data))
	buf.Write(data)
	n, err := s.out.Write(buf.Bytes())
	if err != nil {
		return int64(n), fmt.Errorf("write message: %w", err)
	}
	return int64(n), nil
}

// writeError answers a message that could not be decoded.
func (s *stream) writeError(id json.RawMessage, code jsonrpc2.Code, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc2.Error `json:"error"`
	}{"2.0", id, &jsonrpc2.Error{Code: code, Message: message}})
	if _, err := s.writeFrame(data); err != nil {
		s.log.Warn("answer bad message", "err", err)
	}
}

// Close implements jsonrpc2.Stream.
func (s *stream) Close() error { return s.c.Close() }

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
