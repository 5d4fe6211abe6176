package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/redact"
	"github.com/agentls/agentls/tools"
)

type toolListParams struct {
	Format string `json:"format"`
	Agent  string `json:"agent"`
}

func (s *server) toolList(ctx context.Context, p toolListParams) (any, error) {
	defs, err := tools.Export(s.sess.Tools(p.Agent), p.Format)
	if err != nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, err.Error())
	}
	return map[string]any{"tools": defs}, nil
}

type toolCallParams struct {
	tools.Request
	WorkDoneToken      json.RawMessage `json:"workDoneToken,omitempty"`
	PartialResultToken json.RawMessage `json:"partialResultToken,omitempty"`
}

// decodeFast implements fastDecoder for the usual tool/call: an object
// whose members are among toolCallParams' own, spelled so, each once, with
// plain strings (printable ASCII, no escapes) for the string members. The
// raw members are kept as written, not copied (the message's body is
// its own).
func (p *toolCallParams) decodeFast(raw []byte) bool {
	if !json.Valid(raw) {
		return false
	}
	var q toolCallParams
	strs := []*string{&q.Name, &q.CallID, &q.Reason, &q.Agent}
	raws := []*json.RawMessage{&q.Arguments, &q.WorkDoneToken, &q.PartialResultToken}
	var seen [7]bool
	ok := eachMember(raw, func(name, v []byte) bool {
		k := slices.Index(toolCallMembers[:], string(name))
		if k < 0 || seen[k] {
			return false // another member, or one twice (the last would win)
		}
		seen[k] = true
		switch {
		case k >= len(strs):
			*raws[k-len(strs)] = v
		case len(v) >= 2 && v[0] == '"' && plainASCII(v[1:len(v)-1]):
			*strs[k] = string(v[1 : len(v)-1])
		default:
			return false
		}
		return true
	})
	if ok {
		*p = q
	}
	return ok
}

// toolCallMembers are toolCallParams' members: its strings, then its raw
// values, in decodeFast's order.
var toolCallMembers = [...]string{"name", "callId", "reason", "agent", "arguments", "workDoneToken", "partialResultToken"}

func (p *toolCallParams) validate() error {
	if p.Name == "" {
		return errors.New("name is required")
	}
	return nil
}

func (s *server) toolCall(ctx context.Context, p toolCallParams) (*tools.Result, error) {
	if p.CallID == "" {
		p.CallID = tools.NewCallID()
	}
	pr := &progress{s: s, callID: p.CallID, tool: p.Name, work: token(p.WorkDoneToken), partial: token(p.PartialResultToken)}
	pr.begin()
	s.answering.Store(p.CallID, struct{}{})
	defer s.answering.Delete(p.CallID)
	res := s.sess.Run(ctx, p.Request, pr)
	pr.end(string(res.Status))
	return res, nil
}

// token keeps a progress token as the client sent it, or nil for none.
func token(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

func (s *server) toolMetrics(context.Context, ignored) (any, error) {
	return map[string]any{"tools": s.opts.Runner.Metrics.Snapshot()}, nil
}

type toolHistoryParams struct {
	Limit int    `json:"limit"`
	Tool  string `json:"tool"`
}

func (s *server) toolHistory(ctx context.Context, p toolHistoryParams) (any, error) {
	if p.Limit == 0 {
		p.Limit = 100
	}
	entries, err := s.sess.History().Read(p.Limit, p.Tool)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "read history: %v", err)
	}
	return map[string]any{"entries": entries}, nil
}

// sendEvent sends a tool/event notification. An event of a call this
// connection runs waits for the next message written, which is the call's
// answer unless another message comes first (a progress report, a request
// to the client): one write for them all (stream.hold). Only the result
// event is sure to be followed by the answer; any other goes out by itself
// after eventDelay at most, so that the editor learns of a long call while
// it runs. Nothing is reordered.
func (s *server) sendEvent(e tools.Event) {
	if s.opts.host != nil { // an attached client's calls show in the editor
		s.opts.host.sendEvent(e)
		return
	}
	if _, ok := s.answering.Load(e.CallID); ok {
		within := eventDelay
		if e.Kind == "result" {
			within = 0
		}
		if n, err := jsonrpc2.NewNotification("tool/event", e); err == nil && s.st.hold(n, within) {
			return
		}
	}
	if err := s.conn.Notify(context.Background(), "tool/event", e); err != nil {
		s.log.Debug("tool/event", "err", err)
	}
}

// eventDelay bounds how long an event of a running call waits for the next
// message to go out with (sendEvent).
const eventDelay = 2 * time.Millisecond

// progress streams a call's progress on its workDoneToken and its partial
// results on its partialResultToken, and mirrors reports as tool/events.
type progress struct {
	s             *server
	callID, tool  string
	work, partial json.RawMessage
}

func (p *progress) send(tok json.RawMessage, value any) {
	if tok == nil {
		return
	}
	err := p.s.conn.Notify(context.Background(), "$/progress", map[string]any{"token": tok, "value": value})
	if err != nil {
		p.s.log.Debug("$/progress", "err", err)
	}
}

func (p *progress) begin() {
	if p.work != nil { // the value is not built for nothing
		p.send(p.work, map[string]any{"kind": "begin", "title": p.tool, "cancellable": true})
	}
}

func (p *progress) end(status string) {
	if p.work != nil {
		p.send(p.work, map[string]any{"kind": "end", "message": status})
	}
}

// Report implements tools.Progress.
func (p *progress) Report(message string, percent int) {
	message = redact.String(message) // tool output: shown, and sent as an event
	v := map[string]any{"kind": "report", "message": message}
	e := tools.Event{CallID: p.callID, Tool: p.tool, Kind: "progress"}.Redacted()
	e.Message = message
	if percent >= 0 {
		v["percentage"] = min(percent, 100)
		e.Percent = &percent
	}
	p.send(p.work, v)
	p.s.sendEvent(e)
}

// Partial implements tools.Progress.
func (p *progress) Partial(v any) { p.send(p.partial, v) }

// StreamsPartial implements tools.PartialStreamer: partial results reach
// the client only on its partialResultToken, and then the final result
// must not repeat them (LSP 3.17).
func (p *progress) StreamsPartial() bool { return p.partial != nil }

var (
	_ tools.Progress        = (*progress)(nil)
	_ tools.PartialStreamer = (*progress)(nil)
)
