package lsp

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/agentls/agentls/tools"
)

// earlyMin is the size from which a message is looked at before it is
// decoded: below it, decoding costs less than a millisecond anyway.
const earlyMin = 1 << 20

// earlyAnswer answers a large request from its raw body, without decoding
// the message, when the method table gives its method a raw answer
// (tool/call: refuseOversizeCall). It finds the members with a scanner that
// skips strings at memory speed.
//
// It answers only what it is sure of: a well-formed request with plain
// (unescaped) member names, from an initialized session. Anything else
// goes the usual way (ok false).
func (s *server) earlyAnswer(body []byte) (id, result json.RawMessage, ok bool) {
	if len(body) < earlyMin {
		return nil, nil, false
	}
	top, ok := members(body)
	if !ok || string(top["jsonrpc"]) != `"2.0"` {
		return nil, nil, false
	}
	var name string
	if raw := top["method"]; len(raw) > 256 || json.Unmarshal(raw, &name) != nil {
		return nil, nil, false
	}
	id = top["id"]
	if len(id) == 0 || len(id) > 64 || !validID(id) {
		return nil, nil, false
	}
	m, found := lookup(s.table(), name, true)
	if !found || m.raw == nil || s.getState() != stateRunning {
		return nil, nil, false
	}
	params, ok := members(top["params"])
	if !ok {
		return nil, nil, false
	}
	if result, ok = m.raw(s, params); !ok {
		return nil, nil, false
	}
	return id, result, true
}

// refuseOversizeCall answers a tool/call whose arguments break a size cap:
// decoding 50 MB of JSON takes seconds, the refusal takes microseconds. The
// Runner refuses the arguments (Runner.Oversize says it will, before any
// other work), so the result, the history and the events are those of any
// refused call. A call within its caps goes the usual way.
func (s *server) refuseOversizeCall(params map[string]json.RawMessage) (json.RawMessage, bool) {
	var req tools.Request
	for _, f := range []struct {
		key string
		to  *string
	}{{"name", &req.Name}, {"callId", &req.CallID}, {"agent", &req.Agent}} {
		raw := params[f.key]
		if len(raw) > 4096 || len(raw) > 0 && json.Unmarshal(raw, f.to) != nil {
			return nil, false
		}
	}
	req.Arguments = params["arguments"]
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil || !sess.Runner().Oversize(sess.Workspace().Config(), req.Name, req.Arguments) {
		return nil, false
	}
	// Refused before any other work. The context is cancelled already, so
	// that even if the caps changed in between, nothing runs here, in the
	// reader (it would block every message behind it).
	ctx, cancel := context.WithCancel(s.ctx)
	cancel()
	res := sess.Run(ctx, req, nil)
	result, err := json.Marshal(res)
	if err != nil {
		return nil, false
	}
	return result, true
}

// members returns the raw values of a JSON object's members by name (as
// written: a name with escapes is kept escaped). It checks the object's
// structure, not the values' contents, and reads each string with
// bytes.IndexByte, so a huge string costs a memory scan. ok is false for
// anything that is not an object or is cut short.
func members(data []byte) (map[string]json.RawMessage, bool) {
	p := &skipper{data: data}
	p.space()
	if !p.eat('{') {
		return nil, false
	}
	m := map[string]json.RawMessage{}
	p.space()
	if p.eat('}') {
		return m, p.rest()
	}
	for {
		p.space()
		start := p.i
		if !p.str() {
			return nil, false
		}
		name := string(data[start+1 : p.i-1])
		p.space()
		if !p.eat(':') {
			return nil, false
		}
		p.space()
		vstart := p.i
		if !p.value(0) {
			return nil, false
		}
		m[name] = data[vstart:p.i]
		p.space()
		if p.eat('}') {
			return m, p.rest()
		}
		if !p.eat(',') {
			return nil, false
		}
	}
}

// skipper steps over JSON values without decoding them.
type skipper struct {
	data []byte
	i    int
}

func (p *skipper) space() {
	for p.i < len(p.data) && (p.data[p.i] == ' ' || p.data[p.i] == '\t' || p.data[p.i] == '\r' || p.data[p.i] == '\n') {
		p.i++
	}
}

func (p *skipper) eat(c byte) bool {
	if p.i < len(p.data) && p.data[p.i] == c {
		p.i++
		return true
	}
	return false
}

// rest reports whether only white space follows.
func (p *skipper) rest() bool {
	p.space()
	return p.i == len(p.data)
}

// str steps over a string, from its opening quote to past its closing one.
func (p *skipper) str() bool {
	if !p.eat('"') {
		return false
	}
	for {
		q := bytes.IndexByte(p.data[p.i:], '"')
		if q < 0 {
			return false
		}
		end := p.i + q
		bs := 0 // backslashes right before the quote: odd escapes it
		for k := end - 1; k >= p.i && p.data[k] == '\\'; k-- {
			bs++
		}
		p.i = end + 1
		if bs%2 == 0 {
			return true
		}
	}
}

// value steps over any value; depth bounds nesting as the decoder would.
func (p *skipper) value(depth int) bool {
	if p.i >= len(p.data) || depth > 64 {
		return false
	}
	switch c := p.data[p.i]; c {
	case '"':
		return p.str()
	case '{', '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		p.i++
		p.space()
		if p.eat(closer) {
			return true
		}
		for {
			p.space()
			if c == '{' {
				if !p.str() {
					return false
				}
				p.space()
				if !p.eat(':') {
					return false
				}
				p.space()
			}
			if !p.value(depth + 1) {
				return false
			}
			p.space()
			if p.eat(closer) {
				return true
			}
			if !p.eat(',') {
				return false
			}
		}
	default: // a number or a literal: up to the next delimiter
		start := p.i
		for p.i < len(p.data) && !bytes.ContainsAny(p.data[p.i:p.i+1], ",}] \t\r\n") {
			p.i++
		}
		return p.i > start
	}
}
