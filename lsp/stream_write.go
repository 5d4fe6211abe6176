package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
)

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
