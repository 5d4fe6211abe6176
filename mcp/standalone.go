package mcp

import (
	"context"
	"log/slog"

	"github.com/agentls/agentls/approval"
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

// Standalone opens a session of its own on o.Root whose approvals go to the
// MCP client (Approver). It returns the backend, the configuration files
// that were not valid (the defaults stay in force for them), and the
// function that ends the session and every process its calls started.
//
// TEMPORARY ADAPTER (issue 11): this is the one place that builds a
// session by hand from what main has today (tools.NewRunner, tools.Env).
// When package session lands, its body becomes session.New(session.Options{
// Folders: root, UserConfig, Agent, Approver: Approver{}, Runner, Log}) and
// the backend is the *session.Session (Tools(agent), Run).
func Standalone(o StandaloneOptions) (Backend, []error, func(), error) {
	ws, err := workspace.New(o.Root)
	if err != nil {
		return nil, nil, nil, err
	}
	stack := workspace.ConfigStack{UserFile: o.UserConfig}
	cfg, errs := stack.LoadFiles(ws.Roots())
	ws.SetConfig(cfg)
	histFile := cfg.History.File
	if histFile == "" {
		histFile = tools.HistoryFile(ws.Roots())
	}
	env := &tools.Env{
		Workspace: ws, Session: tools.NewSession(), Agent: o.Agent, Approver: Approver{},
		Memory: approval.NewMemory(""), History: tools.NewHistory(histFile),
	}
	b := &envBackend{runner: tools.NewRunner(tools.NewBuiltinRegistry(), o.Log), env: env, agent: o.Agent}
	return b, errs, func() { tools.CloseSession(env.Session) }, nil
}

// envBackend is a Backend over a runner and one session's Env.
type envBackend struct {
	runner *tools.Runner
	env    *tools.Env
	agent  string
}

func (b *envBackend) Tools() []*tools.Tool {
	return b.runner.Available(b.env.Workspace.Config(), b.agent)
}

func (b *envBackend) Run(ctx context.Context, req tools.Request, p tools.Progress) *tools.Result {
	return b.runner.Run(ctx, b.env, req, p)
}
