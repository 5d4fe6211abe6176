package tools

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/agentls/agentls/redact"
)

// Event is a tool/event notification (docs/protocol.md, Methods).
type Event struct {
	CallID        string          `json:"callId"`
	Tool          string          `json:"tool"`
	Kind          string          `json:"kind"` // call, awaitingApproval, progress, result, fileChanged
	Arguments     json.RawMessage `json:"arguments,omitempty"`
	NeedsApproval *bool           `json:"needsApproval,omitempty"`
	Message       string          `json:"message,omitempty"`
	Percent       *int            `json:"percent,omitempty"`
	Status        Status          `json:"status,omitempty"`
	Path          string          `json:"path,omitempty"`
	OldPath       string          `json:"oldPath,omitempty"` // fileChanged of a rename: where it was
	Operation     string          `json:"operation,omitempty"`
	Risk          string          `json:"risk,omitempty"`
	Agent         string          `json:"agent,omitempty"`  // kind call: the call's agent, when known
	Cached        bool            `json:"cached,omitempty"` // kind result: answered from the result cache
}

// Events receives the events of calls. Event must not block.
type Events interface{ Event(Event) }

// EventsFunc adapts a function to Events.
type EventsFunc func(Event)

// Event implements Events.
func (f EventsFunc) Event(e Event) { f(e) }

var _ Events = EventsFunc(nil)

type noEvents struct{}

func (noEvents) Event(Event) {}

// Redacted returns the event with every field that holds text from the
// agent or a tool redacted by package redact (arguments, message, call id,
// tool name, agent name): what leaves the server as tool/event never holds a secret it
// can recognise, nor a string longer than redact.Cap. The path of a
// fileChanged event is only cut to redact.Cap: it names a file that exists
// in the workspace (the editor shows it anyway), and the server's own
// listeners (the search cache) must get it as it is.
func (e Event) Redacted() Event {
	if len(e.Arguments) > 0 {
		e.Arguments = redact.JSON(e.Arguments)
	}
	e.CallID = redact.String(e.CallID)
	e.Tool = redact.String(e.Tool)
	e.Agent = redact.String(e.Agent)
	e.Message = redact.String(e.Message)
	e.Path = redact.Cut(e.Path, redact.Cap)
	e.OldPath = redact.Cut(e.OldPath, redact.Cap)
	return e
}

// redactingEvents redacts the events of one call before passing them on.
// It remembers the last arguments it redacted, so that the execution log
// does not redact the same document twice.
type redactingEvents struct {
	next Events

	mu        sync.Mutex
	raw, done json.RawMessage
}

// Event implements Events.
func (r *redactingEvents) Event(e Event) {
	args := e.Arguments
	e.Arguments = nil
	e = e.Redacted()
	if len(args) > 0 {
		e.Arguments = r.args(args)
	}
	r.next.Event(e)
}

// args returns the arguments redacted, from memory when they are the last
// ones seen.
func (r *redactingEvents) args(raw json.RawMessage) json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done != nil && bytes.Equal(raw, r.raw) {
		return r.done
	}
	r.raw, r.done = raw, redact.JSON(raw)
	return r.done
}
