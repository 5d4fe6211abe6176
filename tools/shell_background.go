package tools

import (
	"encoding/json"
	"fmt"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/process"
)

// ShellBackground is shell_background: a long-running command (a dev
// server, a watcher) whose output is read with shell_output.
var ShellBackground = builtin(Def[shellBackgroundArgs]{
	Spec: Spec{
		Name:     "shell_background",
		Category: "shell",
		Title:    "Start background command",
		Description: "Starts a long-running command (dev server, watcher, build in watch mode) with `bash -c` in its own process " +
			"group and returns its id at once. Read its output with shell_output (id, since, wait_ms) and end it with shell_kill. " +
			"It keeps running after this call and ends with the session (and with the server, however it stops). stdin is empty. " +
			"Judged like shell_exec; an allowed command runs in the same sandbox as shell_exec's.",
		Annotations: Annotations{Destructive: true, Approval: "ask"},
		Risk:        approval.RiskExecute,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["command"],"properties":{
			"command":{"type":"string","minLength":1,"description":"the command, run with bash -c"},
			"cwd":{"type":"string","description":"working folder, relative to the workspace root or absolute inside it (default: the root)"},
			"env":{"type":"object","additionalProperties":{"type":"string"},"description":"extra environment variables"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["id"],"properties":{
			"id":{"type":"string"},"pid":{"type":"integer"},"command":{"type":"string"},"cwd":{"type":"string"},
			"sandbox":{"type":"object","description":"present when the command runs in the sandbox because it runs without approval"}}}`),
	},
	Assess: func(c *Call, a shellBackgroundArgs) (Assessment, error) {
		if err := keepsShells(c); err != nil {
			return Assessment{}, err
		}
		return assessShell(c, shellExecArgs{Command: a.Command, Cwd: a.Cwd, Env: a.Env})
	},
	Execute: shellBackground,
})

type shellBackgroundArgs struct {
	Command string            `json:"command"`
	Cwd     string            `json:"cwd"`
	Env     map[string]string `json:"env"`
}

func (a shellBackgroundArgs) commandCwd() string { return a.Cwd }

func shellBackground(c *Call, a shellBackgroundArgs) (*Result, error) {
	if err := keepsShells(c); err != nil {
		return nil, err
	}
	dir, err := shellDir(c, a.Cwd)
	if err != nil {
		return nil, err
	}
	st, err := shellsOf(c.Session)
	if err != nil {
		return nil, err
	}
	sp := process.Spec{
		Argv: []string{"bash", "-c", a.Command}, Dir: dir, Env: shellEnv(c, dir, a.Env),
		Command: a.Command, Background: true,
	}
	box, err := autoSandbox(c, &sp)
	if err != nil {
		return nil, err
	}
	p, err := startShell(st, sp, nil)
	if err != nil {
		return nil, err
	}
	rel := c.Workspace.Rel(dir)
	content := fmt.Sprintf("started %s (pid %d) in %s: %s\nRead its output with shell_output {\"id\":%q}; end it with shell_kill.",
		p.ID(), p.Pid(), rel, a.Command, p.ID())
	s := map[string]any{"id": p.ID(), "pid": p.Pid(), "command": a.Command, "cwd": rel}
	if box != nil {
		s["sandbox"] = box
		content += "\nIt runs in the sandbox: " + fmt.Sprint(box["network"]) + " network, " + isolatedFilesystem + "."
	}
	return Success(content, s), nil
}
