package mcp

import (
	"context"
	"log/slog"

	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// StandaloneOptions are what a standalone `agentls mcp` knows.
type StandaloneOptions struct {
	Root       string // the workspace root
	UserConfig string // --config; "" for the default location
	Agent      string // --agent; "" for none
	Log        *slog.Logger
}

// Standalone opens a session of its own on o.Root (session.New) whose
// approvals go to the MCP client (Approver) and whose edits the server
// writes itself. It returns the backend, the configuration files that were
// not valid (the last valid configuration stays in force for them), and the
// function that ends the session and every process its calls started.
//
// The session has no search cache: nothing tells a standalone server of
// files changed outside it, so every search reads the disk.
func Standalone(o StandaloneOptions) (Backend, []error, func(), error) {
	s, errs, err := session.New(session.Options{
		Folders: []workspace.Folder{{Path: o.Root}}, UserConfig: o.UserConfig, Agent: o.Agent,
		Approver: Approver{}, Runner: tools.NewRunner(tools.NewBuiltinRegistry(), o.Log), Log: o.Log,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return SessionBackend{Session: s, Agent: o.Agent}, errs, s.Close, nil
}

// SessionBackend serves a session's tools for one agent.
type SessionBackend struct {
	Session *session.Session
	Agent   string // "" for the session's own
}

// Tools implements Backend.
func (b SessionBackend) Tools() []*tools.Tool { return b.Session.Tools(b.Agent) }

// Run implements Backend.
func (b SessionBackend) Run(ctx context.Context, req tools.Request, p tools.Progress) *tools.Result {
	return b.Session.Run(ctx, req, p)
}
