package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/agentls/agentls/attach"
	"github.com/agentls/agentls/internal/watch"
	"github.com/agentls/agentls/tools"
)

// SessionEnded is the code of a call made while the editor session it was
// attached to is gone (docs/protocol.md, "Attaching to an editor session").
const SessionEnded tools.Code = "SESSION_ENDED"

// AttachOptions are what an attached `agentls mcp` knows.
type AttachOptions struct {
	Dir     string // where it runs (--root, else the working directory)
	Session string // --session: the id of the session to attach to; ""
	Agent   string // --agent; "" for the MCP client's name
	Log     *slog.Logger
}

// Attached is a Backend whose calls run in an editor's session (package
// attach): reads see the editor's buffers, edits and approvals go through
// the editor, and the editor's events show the calls. Each call runs as the
// agent of --agent, else as the MCP client (its clientInfo title or name),
// which the editor's review names.
//
// When the editor session ends, a call is an error result with the code
// SESSION_ENDED, until a new session on the same root is published: the
// next call attaches to it.
//
// The list of tools follows the session's: it is read again when the
// session says its configuration changed (tool/listChanged) and when a new
// session is attached to, and the watchers (WatchTools) hear of it.
type Attached struct {
	o     AttachOptions
	root  string // the root attached to
	first attach.Descriptor

	mu     sync.Mutex
	client *attach.Client // nil after the session ended
	tools  []*tools.Tool

	watchers watch.Set[struct{}]
}

// Attach attaches to the editor session that holds o.Dir (the innermost
// root), or to the session o.Session. The error is attach.ErrNoSession
// when there is none: the caller serves standalone then.
func Attach(ctx context.Context, o AttachOptions) (*Attached, error) {
	c, root, err := attach.Connect(ctx, o.Dir, o.Session, "agentls mcp")
	if err != nil {
		return nil, err
	}
	defs, err := c.Tools(ctx, o.Agent)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("session %s: tool/list: %w", c.Session.ID, err)
	}
	a := &Attached{o: o, root: root, client: c, first: c.Session, tools: asTools(defs)}
	go a.follow(c, false)
	return a, nil
}

func asTools(defs []attach.Tool) []*tools.Tool {
	ts := make([]*tools.Tool, len(defs))
	for i, d := range defs {
		ts[i] = d.AsTool()
	}
	return ts
}

// follow reads the tool list of c's session again each time the session
// says it changed, until c ends; fresh reads it at once too (a session
// attached to after the first).
func (a *Attached) follow(c *attach.Client, fresh bool) {
	if fresh {
		a.refresh(c)
	}
	for {
		select {
		case <-c.ToolsChanged():
			a.refresh(c)
		case <-c.Done():
			return
		}
	}
}

// refresh reads c's tool list and tells the watchers. A failure is
// logged: the list stays.
func (a *Attached) refresh(c *attach.Client) {
	defs, err := c.Tools(context.Background(), a.o.Agent)
	if err != nil {
		if a.o.Log != nil {
			a.o.Log.Info("tool/list after a change", "err", err)
		}
		return
	}
	a.mu.Lock()
	a.tools = asTools(defs)
	a.mu.Unlock()
	a.watchers.Notify(struct{}{})
}

// WatchTools implements ToolWatcher.
func (a *Attached) WatchTools(f func()) (stop func()) {
	return a.watchers.Add(func(struct{}) { f() })
}

// Session is the session attached to first.
func (a *Attached) Session() attach.Descriptor { return a.first }

// Tools implements Backend: the session's list as last read.
func (a *Attached) Tools() []*tools.Tool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tools
}

// Run implements Backend.
func (a *Attached) Run(ctx context.Context, req tools.Request, p tools.Progress) *tools.Result {
	if req.Agent == "" {
		req.Agent = a.o.Agent
	}
	if req.Agent == "" {
		if ss := sessionFrom(ctx); ss != nil {
			if req.Agent = clientName(ss); req.Agent == "the agent" {
				req.Agent = ""
			}
		}
	}
	c, err := a.connect(ctx)
	if err != nil {
		return ended(a.root, err, false)
	}
	res, err := c.Call(ctx, req, p)
	if err == nil {
		return res
	}
	if ctx.Err() != nil {
		return &tools.Result{Status: tools.StatusCancelled, Content: "cancelled", Tool: req.Name,
			Error: &tools.Error{Code: tools.Cancelled, Message: "the call was cancelled"}}
	}
	a.mu.Lock()
	if a.client == c {
		a.client = nil
	}
	a.mu.Unlock()
	c.Close()
	return ended(a.root, err, true)
}

// connect returns the live connection, or attaches to a new session on
// the same root.
func (a *Attached) connect(ctx context.Context) (*attach.Client, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.client != nil {
		select {
		case <-a.client.Done():
			a.client.Close()
			a.client = nil
		default:
			return a.client, nil
		}
	}
	for {
		d, ok := attach.FindRoot(a.root)
		if !ok {
			return nil, attach.ErrEnded
		}
		c, err := attach.Dial(ctx, d, "agentls mcp")
		if err == nil {
			if a.o.Log != nil {
				a.o.Log.Info("attached to a new editor session", "id", d.ID, "root", a.root)
			}
			a.client = c
			go a.follow(c, true)
			return c, nil
		}
		if !errors.Is(err, attach.ErrStale) {
			return nil, err
		}
	}
}

// ended is the result of a call that found no editor session; running
// says it was sent and its answer never came.
func ended(root string, err error, running bool) *tools.Result {
	msg := fmt.Sprintf("the editor session on %s has ended (%v); the call did not run", root, err)
	if running {
		msg = fmt.Sprintf("the editor session on %s ended during the call (%v); whether the call took effect is unknown", root, err)
	}
	e := &tools.Error{Code: SessionEnded, Message: msg, Recoverable: true}
	return &tools.Result{Status: tools.StatusError, Content: "error: " + msg, Error: e}
}

// Close ends the connection to the session.
func (a *Attached) Close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.client != nil {
		a.client.Close()
		a.client = nil
	}
}
