package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/internal/listen"
)

// MaxMessage bounds one message's body (64 MiB). A frame that declares more
// is refused at once, before any of its body is read.
const MaxMessage = 64 << 20

const (
	maxHeaderLine  = 8 << 10  // bytes of one header line
	maxHeaderBlock = 32 << 10 // bytes of one frame's headers
	// maxFirstMessage bounds the first message of a connection that must
	// present a token: nothing bigger is read from a stranger.
	maxFirstMessage = 1 << 20
)

// firstMessageTimeout is how long such a connection may take to send it (a
// variable for tests).
var firstMessageTimeout = 10 * time.Second

// stream is the LSP base protocol (Content-Length framing) as a
// jsonrpc2.Stream that survives bad input. (jsonrpc2's own stream fails the
// whole connection on the first bad message.) Its rules:
//
//   - A frame whose headers are unusable (a line that is not "Name: value",
//     a missing, duplicate, negative or non-numeric Content-Length, a header
//     line over 8 KiB or headers over 32 KiB) is answered -32700; then the
//     reader resynchronises: it scans the bytes that follow the start of the
//     bad frame for the next "Content-Length:" (any case) and reads a frame
//     from there.
//   - A declared length over MaxMessage is answered -32700 at once; its body
//     is not read but scanned past the same way.
//   - A body that cannot be JSON is answered -32700 and scanned for the next
//     frame (so a header without a body, followed by a good frame, costs one
//     error); JSON that is not a JSON-RPC message is answered -32600.
//   - Only an I/O error or the end of the input ends the stream.
//
// With a token (requireToken), the first message must be initialize carrying
// it; anything else — a bad frame included — ends the stream unanswered.
type stream struct {
	in   *bufio.Reader
	back []byte // bytes to read again before in (pushed back for a resync)
	// resync: scan for "Content-Length:" before reading the next headers.
	resync bool
	out    io.Writer
	c      io.Closer
	log    *slog.Logger

	// token, when not empty, gates the connection (see requireToken).
	token  string
	passed bool

	// early, when set, may answer a request from its raw body before it is
	// decoded (session.earlyAnswer: huge tool calls over a size cap); ok
	// false leaves the message to the usual way.
	early func(body []byte) (id, result json.RawMessage, ok bool)

	wmu         sync.Mutex
	body, frame []byte // write buffers, kept between messages (wmu)
	held        []byte // frames that go out before the next message (wmu)
	// flush writes the held frames by themselves when no message came to
	// take them within a hold's bound; armed: it is set to (wmu).
	flush *time.Timer
	armed bool
}

func newStream(rwc io.ReadWriteCloser, log *slog.Logger) *stream {
	return &stream{in: bufio.NewReaderSize(rwc, 64<<10), out: rwc, c: rwc, log: log}
}

// requireToken makes the first message decide the connection: it must be an
// initialize request whose initializationOptions.token equals token
// (listen.TokenMatches compares). Anything else closes the connection without
// an answer. On a connection with read deadlines, the first message must
// arrive within firstMessageTimeout.
func (s *stream) requireToken(token string) {
	s.token = token
}

var errRefused = errors.New("connection refused: the first message was not initialize with the right token")

var _ jsonrpc2.Stream = (*stream)(nil)

// Read implements jsonrpc2.Stream.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	if s.token != "" && !s.passed {
		return s.readFirst()
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		body, n, ferr, err := s.readFrame(MaxMessage)
		if err != nil {
			return nil, n, err
		}
		if ferr != "" {
			s.log.Warn("bad frame", "err", ferr)
			s.writeError(nil, jsonrpc2.ParseError, ferr)
			continue
		}
		if s.early != nil {
			if id, result, ok := s.early(body); ok {
				s.writeResult(id, result)
				continue
			}
		}
		msg, code, why := decode(body)
		if msg != nil {
			return msg, n, nil
		}
		s.log.Warn("bad message", "err", why, "body", truncate(body, 200))
		if code == jsonrpc2.ParseError {
			s.skipBadBody(body)
		}
		if code == jsonrpc2.InvalidRequest && isResponse(body) {
			continue // a response to nothing we sent: nobody to tell
		}
		s.writeError(rawID(body), code, why)
	}
}

// readFirst reads the first message of a gated connection.
func (s *stream) readFirst() (jsonrpc2.Message, int64, error) {
	type deadliner interface{ SetReadDeadline(time.Time) error }
	d, _ := s.c.(deadliner)
	if d != nil {
		_ = d.SetReadDeadline(time.Now().Add(firstMessageTimeout))
	}
	body, n, ferr, err := s.readFrame(maxFirstMessage)
	if err == nil && ferr == "" {
		if msg, _, _ := decode(body); msg != nil && tokenOK(msg, s.token) {
			if d != nil {
				_ = d.SetReadDeadline(time.Time{})
			}
			s.passed = true
			return msg, n, nil
		}
	}
	// Neither the body (it may hold a wrong token) nor the reason is told.
	s.log.Warn("connection refused: no valid token in the first message")
	s.c.Close()
	return nil, n, errRefused
}

// tokenOK reports whether msg is an initialize request that carries token.
func tokenOK(msg jsonrpc2.Message, token string) bool {
	call, ok := msg.(*jsonrpc2.Call)
	if !ok || call.Method() != "initialize" {
		return false
	}
	var p struct {
		InitializationOptions struct {
			Token string `json:"token"`
		} `json:"initializationOptions"`
	}
	return json.Unmarshal(call.Params(), &p) == nil && listen.TokenMatches(p.InitializationOptions.Token, token)
}

// readFrame reads one frame whose body may be at most limit bytes. A frame
// that cannot be used yields ferr (to answer -32700) with the reader set to
// resynchronise where needed; err is an I/O error or the end of the input.
func (s *stream) readFrame(limit int64) (body []byte, n int64, ferr string, err error) {
	// block keeps the header bytes read, to rescan them after a bad header.
	var block []byte
	if s.resync {
		m, err := s.scan()
		n += m
		if err != nil {
			return nil, n, "", err
		}
		s.resync = false
		block = append(block, "Content-Length:"...)
	}
	fail := func(why string) ([]byte, int64, string, error) {
		if len(block) > 1 {
			s.unread(block[1:])
		}
		s.resync = true
		return nil, n, why, nil
	}
	length := int64(-1)
	sawHeader := len(block) > 0
	lineStart := 0
	for {
		var m int
		var tooLong bool
		block, m, tooLong, err = s.readLine(block, lineStart)
		n += int64(m)
		if err != nil {
			if err == io.EOF && len(block) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, n, "", err
		}
		if tooLong {
			return fail(fmt.Sprintf("a header line is longer than %d bytes", maxHeaderLine))
		}
		if len(block) > maxHeaderBlock {
			return fail(fmt.Sprintf("the headers are longer than %d bytes", maxHeaderBlock))
		}
		line := strings.TrimSuffix(strings.TrimSuffix(string(block[lineStart:]), "\n"), "\r")
		lineStart = len(block)
		if line == "" {
			if !sawHeader {
				block, lineStart = block[:0], 0 // a stray blank line between frames
				continue
			}
			break
		}
		sawHeader = true
		name, value, ok := strings.Cut(line, ":")
		if !ok || !isToken(name) {
			return fail(fmt.Sprintf("invalid header line %q", truncate([]byte(line), 80)))
		}
		if !strings.EqualFold(name, "Content-Length") {
			continue // Content-Type, or a header LSP does not define
		}
		if length >= 0 {
			return fail("duplicate Content-Length header")
		}
		v := strings.Trim(value, " \t")
		if length = parseLength(v); length < 0 {
			return fail(fmt.Sprintf("invalid Content-Length %q", truncate([]byte(v), 40)))
		}
	}
	if length < 0 {
		return fail("missing Content-Length header")
	}
	if length > limit {
		s.resync = true // the body is never read: scan past it
		return nil, n, fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", length, limit), nil
	}
	// Leading blanks are JSON whitespace; the first other byte must be able
	// to start JSON, or this is no body (say, a header without one) and
	// the reader resynchronises from that byte without waiting for length.
	for length > 0 {
		b, err := s.peekByte()
		if err != nil {
			return nil, n, "", unexpected(err)
		}
		if b != ' ' && b != '\t' && b != '\r' && b != '\n' {
			if !strings.ContainsRune(`{["-0123456789tfn`, rune(b)) {
				s.resync = true
				return nil, n, "parse error: the message body is not JSON", nil
			}
			break
		}
		s.readByte()
		n++
		length--
	}
	body = make([]byte, length)
	m, err := s.readFull(body)
	n += int64(m)
	if err != nil {
		return nil, n, "", unexpected(err)
	}
	return body, n, "", nil
}

// skipBadBody sets the reader to look for a frame inside a body that is not
// valid JSON, after its first byte: maybe the declared length swallowed the
// start of the next frame.
func (s *stream) skipBadBody(body []byte) {
	if len(body) > 1 {
		s.unread(body[1:])
	}
	s.resync = true
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseLength parses a Content-Length value: decimal digits only. A number
// too large for int64 is returned as math.MaxInt64 (over any limit); a
// malformed one as -1.
func parseLength(v string) int64 {
	if v == "" {
		return -1
	}
	var l int64
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return -1
		}
		if l > (math.MaxInt64-9)/10 {
			l = math.MaxInt64
			continue
		}
		l = l*10 + int64(c-'0')
	}
	return l
}

// isToken reports whether name is an HTTP header name (RFC 9110 token).
func isToken(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// readLine appends one line (through its '\n') to buf, reading at most
// maxHeaderLine bytes of it counted from lineStart; tooLong says it stopped
// there.
func (s *stream) readLine(buf []byte, lineStart int) (_ []byte, n int, tooLong bool, err error) {
	for {
		if len(buf)-lineStart >= maxHeaderLine {
			return buf, n, true, nil
		}
		b, err := s.readByte()
		if err != nil {
			return buf, n, false, err
		}
		n++
		buf = append(buf, b)
		if b == '\n' {
			return buf, n, false, nil
		}
	}
}

// scan consumes input through the next "Content-Length:" (any case).
func (s *stream) scan() (n int64, err error) {
	const want = "content-length:"
	i := 0
	for i < len(want) {
		b, err := s.readByte()
		if err != nil {
			return n, err
		}
		n++
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		switch {
		case b == want[i]:
			i++
		case b == want[0]: // 'c' occurs once in want: a mismatch restarts here
			i = 1
		default:
			i = 0
		}
	}
	return n, nil
}

func (s *stream) readByte() (byte, error) {
	if len(s.back) > 0 {
		b := s.back[0]
		s.back = s.back[1:]
		if len(s.back) == 0 {
			s.back = nil
		}
		return b, nil
	}
	return s.in.ReadByte()
}

func (s *stream) peekByte() (byte, error) {
	if len(s.back) > 0 {
		return s.back[0], nil
	}
	p, err := s.in.Peek(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

func (s *stream) readFull(p []byte) (int, error) {
	k := copy(p, s.back)
	s.back = s.back[k:]
	if len(s.back) == 0 {
		s.back = nil
	}
	m, err := io.ReadFull(s.in, p[k:])
	return k + m, err
}

// unread puts b back before the input not yet read. b must not be changed
// afterwards.
func (s *stream) unread(b []byte) {
	if len(s.back) == 0 {
		s.back = b
		return
	}
	s.back = append(append(make([]byte, 0, len(b)+len(s.back)), b...), s.back...)
}

// Close implements jsonrpc2.Stream.
func (s *stream) Close() error { return s.c.Close() }

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
