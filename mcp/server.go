// Package mcp serves agentls's tools over the Model Context Protocol
// (`agentls mcp`, docs/protocol.md "MCP"), on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// The server is a thin adapter: tools/list is the Backend's tool list,
// tools/call runs one call through the Backend (the same pipeline as every
// other front end: validation, approval, execution, history) and turns its
// ToolResult into a CallToolResult. The SDK never validates or rewrites the
// arguments: each tool is added with its raw JSON schema through
// Server.AddTool, and the raw arguments reach agentls's own checks byte for
// byte.
//
// Standalone (Standalone), approvals go to the MCP client as elicitation
// requests (Approver); a client that cannot elicit gets a refusal that says
// how to approve. Attached (Attach), the Backend is an editor's session
// reached through package attach, and the editor asks.
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/tools"
)

// Backend is what the MCP server serves: a session's tools and its pipeline.
type Backend interface {
	// Tools lists the tools the client may call (the agent filter and
	// tools.enabled applied). Serve reads it when it starts, and again
	// each time a ToolWatcher says it may have changed.
	Tools() []*tools.Tool
	// Run runs one call and always returns a result; progress may be nil.
	// When ctx ends the call ends, and so do the processes it started.
	// ctx carries the MCP session the call came from, for the Approver.
	Run(ctx context.Context, req tools.Request, p tools.Progress) *tools.Result
}

// ToolWatcher is a Backend whose list of tools can change while it serves
// (the configuration changed). Serve then offers the new list and the
// client gets notifications/tools/list_changed.
type ToolWatcher interface {
	// WatchTools calls f each time the list may have changed, until stop
	// is called. f does not block.
	WatchTools(f func()) (stop func())
}

// ProtocolVersions are the MCP revisions the server speaks, newest first.
var ProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Options configure a server.
type Options struct {
	Backend Backend
	// Agent is the agent every call runs as (the tool filter, --agent);
	// "" for none. The name the person sees in approvals is the MCP
	// client's clientInfo.
	Agent   string
	Version string
	Log     *slog.Logger
}

// NewServer returns an MCP server of the backend's tools.
func NewServer(o Options) (*sdk.Server, error) {
	s, _, err := newServer(o)
	return s, err
}

func newServer(o Options) (*sdk.Server, *toolSet, error) {
	log := logger(o.Log)
	s := sdk.NewServer(&sdk.Implementation{Name: "agentls", Title: "agentls", Version: o.Version}, &sdk.ServerOptions{
		Logger: log,
		// Tools only. The SDK sends notifications/tools/list_changed
		// when toolSet.sync adds or removes one.
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}},
		// Not 2026-07-28: it forbids a server's own elicitation/create
		// during a call (multi round-trip results instead), and an
		// approval waits for the person inside the call.
		SupportedProtocolVersions: ProtocolVersions,
	})
	ts := &toolSet{s: s, o: o, have: map[string]string{}}
	if err := ts.sync(); err != nil {
		return nil, nil, err
	}
	s.AddReceivingMiddleware(ts.whole)
	return s, ts, nil
}

// toolSet keeps a server's tools in step with its backend's list.
type toolSet struct {
	s    *sdk.Server
	o    Options
	mu   sync.RWMutex      // held to write by sync, to read by tools/list
	have map[string]string // name -> the definition registered, as JSON
}

// whole makes tools/list wait for a sync in progress: the SDK adds the
// tools one at a time, and a client must never see half a change.
func (ts *toolSet) whole(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "tools/list" {
			ts.mu.RLock()
			defer ts.mu.RUnlock()
		}
		return next(ctx, method, req)
	}
}

// sync offers the backend's list: it removes the tools that left it and
// adds those that are new or whose definition changed, and leaves the
// others alone. A definition that is not valid fails sync, and nothing
// changes.
func (ts *toolSet) sync() error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	want := map[string]*sdk.Tool{}
	wire := map[string]string{}
	for _, t := range ts.o.Backend.Tools() {
		def, err := toolDef(t)
		if err != nil {
			return err
		}
		b, err := json.Marshal(def)
		if err != nil {
			return fmt.Errorf("mcp: tool %s: %w", t.Name, err)
		}
		want[t.Name], wire[t.Name] = def, string(b)
	}
	var gone []string
	for name := range ts.have {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
			delete(ts.have, name)
		}
	}
	if len(gone) > 0 {
		ts.s.RemoveTools(gone...)
	}
	for name, def := range want {
		if ts.have[name] != wire[name] {
			ts.s.AddTool(def, handler(ts.o, name))
			ts.have[name] = wire[name]
		}
	}
	return nil
}

// follow syncs the tools each time the backend says its list may have
// changed, until ctx ends. A list that is not valid is logged and the
// tools offered stay.
func (ts *toolSet) follow(ctx context.Context, log *slog.Logger) {
	w, ok := ts.o.Backend.(ToolWatcher)
	if !ok {
		return
	}
	changed := make(chan struct{}, 1)
	stop := w.WatchTools(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	go func() {
		defer stop()
		for {
			select {
			case <-changed:
				if err := ts.sync(); err != nil {
					log.Warn("the new list of tools is not valid; the tools offered stay", "err", err)
				}
			case <-ctx.Done():
				return
			}
		}
	}()
}

// Serve serves one MCP client on rwc (newline-delimited JSON-RPC, the stdio
// transport) until the client disconnects or ctx ends. Calls still running
// then are cancelled. When the backend is a ToolWatcher, the tools offered
// follow its list. A message that is not JSON-RPC is answered with a
// JSON-RPC error and the server keeps serving.
func Serve(ctx context.Context, o Options, r io.ReadCloser, w io.WriteCloser) error {
	s, ts, err := newServer(o)
	if err != nil {
		return err
	}
	ss, err := s.Connect(ctx, &lineTransport{r: r, w: w}, nil)
	if err != nil {
		return fmt.Errorf("mcp: connect: %w", err)
	}
	fctx, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	ts.follow(fctx, logger(o.Log))
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		ss.Close()
		err = <-done
	}
	if err == io.EOF {
		err = nil
	}
	return err
}

// logger is log, or one that discards when log is nil.
func logger(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}

// toolDef is the MCP definition of t.
func toolDef(t *tools.Tool) (*sdk.Tool, error) {
	var probe struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(t.InputSchema, &probe); err != nil || probe.Type != "object" {
		return nil, fmt.Errorf("mcp: tool %s: the input schema must be an object schema", t.Name)
	}
	def := &sdk.Tool{
		Name:        t.Name,
		Title:       t.Title,
		Description: t.Description,
		// Raw schemas pass through as they are: agentls validates.
		InputSchema: t.InputSchema,
		Annotations: Annotations(t),
	}
	if len(t.OutputSchema) > 0 {
		out, err := outputSchema(t.OutputSchema)
		if err != nil {
			return nil, fmt.Errorf("mcp: tool %s: %w", t.Name, err)
		}
		def.OutputSchema = out
	}
	return def, nil
}

// outputSchema is a tool's output schema with the property TextKey added
// and required: every success's structuredContent carries the result's
// text (callResult). The schema must be an object schema without a TextKey
// of its own.
func outputSchema(raw json.RawMessage) (json.RawMessage, error) {
	var s map[string]json.RawMessage
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("the output schema: %w", err)
	}
	var typ string
	_ = json.Unmarshal(s["type"], &typ)
	if typ != "object" {
		return nil, fmt.Errorf("the output schema must be an object schema")
	}
	props := map[string]json.RawMessage{}
	if p, ok := s["properties"]; ok {
		if err := json.Unmarshal(p, &props); err != nil {
			return nil, fmt.Errorf("the output schema's properties: %w", err)
		}
	}
	if _, ok := props[TextKey]; ok {
		return nil, fmt.Errorf("the output schema has a property %q of its own, which MCP results use for the text", TextKey)
	}
	var required []string
	if r, ok := s["required"]; ok {
		if err := json.Unmarshal(r, &required); err != nil {
			return nil, fmt.Errorf("the output schema's required: %w", err)
		}
	}
	props[TextKey] = json.RawMessage(`{"type":"string","description":"the result as text, as in the content block"}`)
	s["properties"], _ = json.Marshal(props)
	s["required"], _ = json.Marshal(append(required, TextKey))
	return json.Marshal(s)
}

// Annotations maps a tool's metadata to MCP's hints (docs/protocol.md,
// "MCP"): readOnlyHint is Annotations.ReadOnly; destructiveHint is
// Destructive or Dangerous; idempotentHint holds for read-only tools only
// (no writing tool promises it); openWorldHint holds for tools whose risk
// is network or execute (web tools, git_push, commands and code), which can
// reach beyond the workspace.
func Annotations(t *tools.Tool) *sdk.ToolAnnotations {
	destructive := !t.Annotations.ReadOnly && (t.Annotations.Destructive || t.Annotations.Dangerous)
	open := t.Risk == approval.RiskNetwork || t.Risk == approval.RiskExecute
	return &sdk.ToolAnnotations{
		Title:           t.Title,
		ReadOnlyHint:    t.Annotations.ReadOnly,
		DestructiveHint: &destructive,
		IdempotentHint:  t.Annotations.ReadOnly,
		OpenWorldHint:   &open,
	}
}

// sessionKey carries the *sdk.ServerSession of a call in its context.
type sessionKey struct{}

// sessionFrom returns the MCP session a call came from, or nil.
func sessionFrom(ctx context.Context) *sdk.ServerSession {
	ss, _ := ctx.Value(sessionKey{}).(*sdk.ServerSession)
	return ss
}

// handler runs tools/call of the tool name.
func handler(o Options, name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args := req.Params.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		ctx = context.WithValue(ctx, sessionKey{}, req.Session)
		var p *progress
		if tok := req.Params.GetProgressToken(); tok != nil {
			p = newProgress(ctx, req.Session, tok)
		}
		var tp tools.Progress
		if p != nil {
			tp = p
		}
		res := o.Backend.Run(ctx, tools.Request{Name: name, Arguments: args, Agent: o.Agent}, tp)
		if p != nil {
			p.close()
		}
		return callResult(res), nil
	}
}
