package lsp

import (
	"context"
	"sync"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/attach"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// An editor's session is published (package attach) when Options.Publish
// is set and the configuration's lsp.publishSession is not false: other
// programs of the user's — `agentls mcp` started in the workspace — then
// connect to its socket and run their calls in this session. Each such
// connection is an attached server: a server of its own (its own
// connection, requests and cancellations) whose host is the editor's
// server. It shares the host's session, so its calls read the editor's
// buffers, ask the editor's approver, apply edits through the editor and
// send their events to the editor; it answers only attachedMethods.

// attachedMethods are the methods an attached client may send: no text
// synchronisation or workspace changes, which are the editor's alone.
// editorMethods is methods. Both are set by init: the table's handlers lead
// to table, which would otherwise make an initialization cycle.
var attachedMethods, editorMethods map[string]method

func init() {
	editorMethods = methods
	attachedMethods = map[string]method{
		"initialize":      request((*server).initializeAttached).beforeInitialize(),
		"initialized":     notification(func(*server, context.Context, ignored) error { return nil }),
		"shutdown":        methods["shutdown"],
		"exit":            methods["exit"],
		"$/cancelRequest": methods["$/cancelRequest"],
		"tool/list":       request((*server).attachedToolList).async(),
		"tool/call":       methods["tool/call"],
	}
}

// table is the method table of the server's connection.
func (s *server) table() map[string]method {
	if s.opts.methods != nil {
		return s.opts.methods
	}
	if s.opts.host != nil {
		return attachedMethods
	}
	return editorMethods
}

// publication is the host's published session and its attached servers.
type publication struct {
	pub      *attach.Publication
	attached sync.WaitGroup
}

// publish publishes the session when the options and the configuration
// allow it; editor is the editor's clientInfo.name. A failure is logged:
// the editor's session works without it.
func (s *server) publish(editor string) {
	if !s.opts.Publish || s.opts.host != nil {
		return
	}
	if p := s.ws.Config().LSP.PublishSession; p != nil && !*p {
		return
	}
	roots := s.ws.Roots()
	if len(roots) == 0 {
		return
	}
	pub, err := attach.Publish(roots, editor)
	if err != nil {
		s.log.Warn("publish the session for agentls mcp", "err", err)
		return
	}
	p := &publication{pub: pub}
	s.mu.Lock()
	s.pub = p
	s.mu.Unlock()
	s.log.Info("session published", "id", pub.Descriptor.ID, "socket", pub.Descriptor.Socket)
	go s.serveAttached(p)
}

// serveAttached accepts attached clients until the publication closes.
func (s *server) serveAttached(p *publication) {
	for {
		c, err := p.pub.Accept()
		if err != nil {
			return
		}
		p.attached.Add(1)
		go func() {
			defer p.attached.Done()
			o := s.opts
			o.Token, o.host, o.Log = p.pub.Token, s, s.log.With("attached", p.pub.Descriptor.ID)
			o.Log.Info("attached client connected")
			Serve(s.ctx, c, o)
			o.Log.Info("attached client gone")
		}()
	}
}

// unpublish removes the session's descriptor and socket and waits for the
// attached servers, whose connections end with the host's context.
func (s *server) unpublish() {
	s.mu.Lock()
	p := s.pub
	s.pub = nil
	s.mu.Unlock()
	if p == nil {
		return
	}
	p.pub.Close()
	p.attached.Wait()
}

// republish writes the session's new roots into its descriptor.
func (s *server) republish() {
	s.mu.Lock()
	p := s.pub
	s.mu.Unlock()
	if p != nil {
		if err := p.pub.SetRoots(s.ws.Roots()); err != nil {
			s.log.Warn("publish the session's roots", "err", err)
		}
	}
}

// initializeAttached lets an attached client in (its token was checked by
// the stream) and gives it the host's session.
func (s *server) initializeAttached(context.Context, ignored) (any, error) {
	h := s.opts.host
	h.mu.Lock()
	sess, ws := h.sess, h.ws
	h.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateNew {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize was already sent")
	}
	s.sess, s.ws = sess, ws
	s.state = stateRunning
	go s.followConfig(ws)
	return map[string]any{
		"capabilities": map[string]any{"experimental": map[string]any{"agentls": map[string]any{
			"protocolVersion": ProtocolVersion, "attached": true, "roots": ws.Roots(),
		}}},
		"serverInfo": map[string]any{"name": "agentls", "version": s.opts.Version},
	}, nil
}

// followConfig sends the attached client tool/listChanged each time the
// host's configuration changes (its settings, or a configuration file it
// reloaded), which may change the tools the client may call: the client
// reads tool/list again. It ends with the attached connection.
func (s *server) followConfig(ws *workspace.Workspace) {
	changed := make(chan struct{}, 1)
	stop := ws.Watch(func(e workspace.Event) {
		if e.Reset {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	})
	defer stop()
	for {
		select {
		case <-changed:
			if err := s.conn.Notify(s.ctx, "tool/listChanged", struct{}{}); err != nil {
				s.log.Info("tool/listChanged", "err", err)
			}
		case <-s.ctx.Done():
			return
		}
	}
}

// attachedToolList is tool/list for attached clients: the agentls
// definitions with each tool's risk, which MCP's hints need.
func (s *server) attachedToolList(_ context.Context, p toolListParams) (any, error) {
	ts := s.sess.Tools(p.Agent)
	defs, err := tools.Export(ts, "agentls")
	if err != nil {
		return nil, err
	}
	out := make([]attach.Tool, len(ts))
	for i, d := range defs {
		out[i] = attach.Tool{Definition: d.(tools.Definition), Risk: ts[i].Risk}
	}
	return map[string]any{"tools": out}, nil
}
