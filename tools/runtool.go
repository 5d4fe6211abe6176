package tools

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/workspace"
)

var builtinRegistry = sync.OnceValue(NewBuiltinRegistry)

// RunTool runs one call of a built-in tool through the whole pipeline
// (lookup, validation, policy, execution) in this process, with a fresh
// session: what a warm server does for tool/call, without the process start
// of `agentls call`. The warm-server benchmark uses it.
func RunTool(ctx context.Context, ws *workspace.Workspace, name string, args json.RawMessage) *Result {
	r := NewRunner(builtinRegistry(), nil)
	env := &Env{Workspace: ws, Session: NewSession(ws, SessionOptions{}), Memory: approval.NewMemory("")}
	defer env.Session.Close()
	return r.Run(ctx, env, Request{Name: name, Arguments: args}, nil)
}
