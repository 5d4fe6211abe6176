package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
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

// decode turns a body into a message, or says which JSON-RPC error it is.
// A body that is not JSON is -32700 (ParseError). It reads a large body as
// few times as it can: one pass checks and probes, one decodes.
func decode(body []byte) (jsonrpc2.Message, jsonrpc2.Code, string) {
	trimmed := bytes.TrimSpace(body)
	if msg := decodeRequest(trimmed); msg != nil {
		return msg, 0, ""
	}
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if !json.Valid(trimmed) {
			return nil, jsonrpc2.ParseError, notJSON
		}
		return nil, jsonrpc2.InvalidRequest, "invalid request: a message must be a JSON object (batches are not supported)"
	}
	var probe struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  *string         `json:"method"`
		ID      json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(trimmed, &probe); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, jsonrpc2.ParseError, notJSON
		}
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

const notJSON = "parse error: the message is not valid JSON"

// decodeRequest decodes the usual request or notification without
// jsonrpc2.DecodeMessage, whose decoder costs a 32 KiB buffer per message:
// a valid JSON object whose members are jsonrpc ("2.0"), method (a string
// without escapes), id (a string or a 32-bit integer; absent for a
// notification) and params (absent, or anything but null), each once and
// spelled so. It returns the message DecodeMessage would (raw params, not
// copied), or nil for anything else, which goes the general way.
func decodeRequest(data []byte) jsonrpc2.Message {
	if !json.Valid(data) {
		return nil
	}
	var version, method, id, params []byte
	ok := eachMember(data, func(name, value []byte) bool {
		var slot *[]byte
		switch string(name) {
		case "jsonrpc":
			slot = &version
		case "method":
			slot = &method
		case "id":
			slot = &id
		case "params":
			slot = &params
		default:
			return false
		}
		if *slot != nil {
			return false // twice
		}
		*slot = value
		return true
	})
	if !ok || string(version) != `"2.0"` || len(method) < 3 || method[0] != '"' || !plainASCII(method[1:len(method)-1]) ||
		string(params) == "null" || string(id) == "null" || id != nil && !validID(id) {
		return nil
	}
	if params == nil {
		return nil // DecodeMessage leaves absent params nil; NewCall would say null
	}
	name := string(method[1 : len(method)-1])
	if id == nil {
		n, err := jsonrpc2.NewNotification(name, json.RawMessage(params))
		if err != nil {
			return nil
		}
		return n
	}
	var rid jsonrpc2.ID
	if rid.UnmarshalJSON(id) != nil {
		return nil
	}
	c, err := jsonrpc2.NewCall(rid, name, json.RawMessage(params))
	if err != nil {
		return nil
	}
	return c
}

// eachMember calls f with the name (as written, between its quotes) and
// the raw value of each member of the JSON object data, in order, while f
// returns true. It checks the object's structure, not its values' contents
// (the caller checks that data is valid JSON). ok is false when data is no
// object or f stopped.
func eachMember(data []byte, f func(name, value []byte) bool) (ok bool) {
	p := &skipper{data: data}
	p.space()
	if !p.eat('{') {
		return false
	}
	p.space()
	for !p.eat('}') {
		start := p.i
		if !p.str() {
			return false
		}
		name := data[start+1 : p.i-1]
		p.space()
		if !p.eat(':') {
			return false
		}
		p.space()
		vstart := p.i
		if !p.value(0) || !f(name, data[vstart:p.i]) {
			return false
		}
		p.space()
		if p.eat(',') {
			p.space()
		}
	}
	return p.rest()
}

// plainASCII reports whether b is printable ASCII with no quote or
// backslash: a string's contents that mean what they spell.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// validID reports whether raw is a JSON string or a 32-bit integer, as
// decoding it into either would say; the usual ids (a plain string, a small
// integer) are seen without decoding.
func validID(raw json.RawMessage) bool {
	switch {
	case len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && plainASCII(raw[1:len(raw)-1]):
		return true
	case len(raw) > 0 && len(raw) <= 9 && (raw[0] != '0' || len(raw) == 1) && allDigits(raw):
		return true // at most 999,999,999, no leading zero
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return true
	}
	var n int32
	return json.Unmarshal(raw, &n) == nil
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
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

// Write implements jsonrpc2.Stream. The message goes out in one write,
// headers and body together, from buffers the stream keeps.
func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	body, ok := appendMessage(s.body[:0], msg)
	if !ok {
		data, err := json.Marshal(msg)
		if err != nil {
			return 0, fmt.Errorf("marshal message: %w", err)
		}
		body = data
	} else if cap(body) <= keepBuffer {
		s.body = body
	}
	return s.writeFrameLocked(body)
}

// keepBuffer is the largest write buffer a stream keeps for the next
// message; a larger one is left to the garbage collector.
const keepBuffer = 64 << 10

// appendMessage appends msg to b as json.Marshal(msg) would encode it, for
// the messages jsonrpc2 writes: those NewCall, NewNotification and
// NewResponse make. They hold their params or result encoded already, by
// jsonrpc2's encoder, compact and HTML-escaped, which json.Marshal would
// leave as they are; what appendMessage is not sure of (an error response,
// an empty part, a method name to escape) it leaves to json.Marshal (ok
// false). stream_test.go checks that both write the same bytes.
func appendMessage(b []byte, msg jsonrpc2.Message) (_ []byte, ok bool) {
	b = append(b, `{"jsonrpc":"2.0"`...)
	switch m := msg.(type) {
	case *jsonrpc2.Response:
		if m.Err() != nil || len(m.Result()) == 0 {
			return b, false
		}
		b = append(append(b, `,"result":`...), m.Result()...)
		return appendID(b, m.ID())
	case *jsonrpc2.Notification:
		if b, ok = appendMethod(b, m.Method(), m.Params()); !ok {
			return b, false
		}
		return append(b, '}'), true
	case *jsonrpc2.Call:
		if b, ok = appendMethod(b, m.Method(), m.Params()); !ok {
			return b, false
		}
		return appendID(b, m.ID())
	}
	return b, false
}

// appendMethod appends the method and params members of a request.
func appendMethod(b []byte, method string, params json.RawMessage) ([]byte, bool) {
	if len(params) == 0 {
		return b, false
	}
	for i := 0; i < len(method); i++ {
		if c := method[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return b, false // json.Marshal would escape it
		}
	}
	b = append(append(append(b, `,"method":"`...), method...), `","params":`...)
	return append(b, params...), true
}

// appendID appends the id member and closes the message.
func appendID(b []byte, id jsonrpc2.ID) ([]byte, bool) {
	data, err := id.MarshalJSON()
	if err != nil {
		return b, false
	}
	return append(append(append(b, `,"id":`...), data...), '}'), true
}

func (s *stream) writeFrame(data []byte) (int64, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.writeFrameLocked(data)
}

// hold makes msg go out with the next message written, before it, in the
// same write; or, when within > 0, by itself once within has passed
// without one (within 0: it waits for the next message however long).
// Nothing is reordered. ok is false when msg cannot be encoded that way:
// the caller sends it as usual.
func (s *stream) hold(msg jsonrpc2.Message, within time.Duration) bool {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	body, ok := appendMessage(s.body[:0], msg)
	if !ok {
		return false
	}
	s.held = appendFrame(s.held, body)
	if cap(body) <= keepBuffer {
		s.body = body
	}
	if within > 0 && !s.armed {
		if s.flush == nil {
			s.flush = time.AfterFunc(within, s.flushHeld)
		} else {
			s.flush.Reset(within)
		}
		s.armed = true
	}
	return true
}

// flushHeld writes the held frames, if any, by themselves.
func (s *stream) flushHeld() {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.armed = false
	if len(s.held) == 0 {
		return
	}
	n, err := s.out.Write(s.held)
	if s.held = s.held[:0]; cap(s.held) > keepBuffer {
		s.held = nil
	}
	if err != nil {
		s.log.Debug("write held messages", "err", err, "bytes", n)
	}
}

// appendFrame appends data framed to buf.
func appendFrame(buf, data []byte) []byte {
	buf = append(buf, "Content-Length: "...)
	buf = strconv.AppendInt(buf, int64(len(data)), 10)
	return append(append(buf, "\r\n\r\n"...), data...)
}

// writeFrameLocked writes one frame, after the held ones; s.wmu is held.
func (s *stream) writeFrameLocked(data []byte) (int64, error) {
	buf := append(s.frame[:0], s.held...)
	s.dropHeldLocked()
	buf = appendFrame(buf, data)
	if cap(buf) <= keepBuffer {
		s.frame = buf
	}
	n, err := s.out.Write(buf)
	if err != nil {
		return int64(n), fmt.Errorf("write message: %w", err)
	}
	return int64(n), nil
}

// dropHeldLocked empties the held frames once they are written (or about
// to be); s.wmu is held.
func (s *stream) dropHeldLocked() {
	if s.held = s.held[:0]; cap(s.held) > keepBuffer {
		s.held = nil
	}
	if s.armed { // nothing is held any more
		s.flush.Stop()
		s.armed = false
	}
}

// responseReserve is the room writeResponse keeps before a result, for
// the frame's header and the frames held for the next write.
const responseReserve = 4 << 10

// responseBufs are writeResponse's buffers, kept between large answers
// until the garbage collector takes them.
var responseBufs sync.Pool // of *[]byte

// maxPooledResponse is the largest buffer responseBufs keeps.
const maxPooledResponse = 64 << 20

// writeResponse answers the request id with the result that appendResult
// appends to its argument: JSON as json.Marshal encodes it (compact,
// HTML-escaped), which jsonrpc2 would leave as it is. It sends the bytes
// Write sends for jsonrpc2.NewResponse(id, result, nil), with the held
// frames before it, in one write when they fit before it; but the result
// is encoded once, outside the write lock, into a buffer with room for the
// header before it, and copied no more (an output-heavy answer is
// megabytes). An error of appendResult is returned before anything is
// written (encodeErr); writeErr is the write's.
func (s *stream) writeResponse(id jsonrpc2.ID, appendResult func([]byte) ([]byte, error)) (encodeErr, writeErr error) {
	idData, err := id.MarshalJSON()
	if err != nil {
		return err, nil
	}
	var buf []byte
	if bp, ok := responseBufs.Get().(*[]byte); ok {
		buf = (*bp)[:responseReserve]
	} else {
		buf = make([]byte, responseReserve, 64<<10)
	}
	buf = append(buf, `{"jsonrpc":"2.0","result":`...)
	if buf, err = appendResult(buf); err != nil {
		return err, nil
	}
	buf = append(append(append(buf, `,"id":`...), idData...), '}')
	defer func() {
		if cap(buf) <= maxPooledResponse {
			responseBufs.Put(&buf)
		}
	}()
	header := "Content-Length: " + strconv.Itoa(len(buf)-responseReserve) + "\r\n\r\n"
	start := responseReserve - len(header)
	copy(buf[start:], header)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if n := len(s.held); n > 0 && n <= start {
		start -= n
		copy(buf[start:], s.held)
	} else if n > 0 {
		if _, err := s.out.Write(s.held); err != nil {
			s.dropHeldLocked()
			return nil, fmt.Errorf("write message: %w", err)
		}
	}
	s.dropHeldLocked()
	if _, err := s.out.Write(buf[start:]); err != nil {
		return nil, fmt.Errorf("write message: %w", err)
	}
	return nil, nil
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

// writeResult answers the request id with result, outside jsonrpc2.
func (s *stream) writeResult(id, result json.RawMessage) {
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
	}{"2.0", id, result})
	if _, err := s.writeFrame(data); err != nil {
		s.log.Warn("answer early", "err", err)
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
