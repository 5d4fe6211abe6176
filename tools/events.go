package tools

import "encoding/json"

// Event is a tool/event notification (PROTOCOL.md section 3).
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
	Operation     string          `json:"operation,omitempty"`
	Risk          string          `json:"risk,omitempty"`
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
