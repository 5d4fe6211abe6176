package tools

import (
	"encoding/json"
	"fmt"
)

// ShellKill is shell_kill: ends a background shell's whole process group.
var ShellKill = builtin(Def[shellKillArgs]{
	Spec: Spec{
		Name:     "shell_kill",
		Category: "shell",
		Title:    "End background command",
		Description: "Ends a shell started by shell_background: SIGTERM to its whole process group, then SIGKILL after a short " +
			"grace. Its output stays readable with shell_output.",
		Annotations: Annotations{Approval: "auto"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["id"],"properties":{
			"id":{"type":"string","description":"the shell's id (sh_…)"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["id","killed"],"properties":{
			"id":{"type":"string"},"killed":{"type":"boolean"},"exit_code":{"type":"integer"},"signal":{"type":"string"}}}`),
	},
	Execute: shellKill,
})

type shellKillArgs struct {
	ID string `json:"id"`
}

func shellKill(c *Call, a shellKillArgs) (*Result, error) {
	p, err := shellOf(c, a.ID)
	if err != nil {
		return nil, err
	}
	ended, _, _ := p.Exit()
	wasRunning := !ended
	p.Terminate()
	_, code, sig := p.Exit()
	s := map[string]any{"id": p.ID(), "killed": wasRunning, "exit_code": code}
	if sig != "" {
		s["signal"] = sig
	}
	if !wasRunning {
		return Success(fmt.Sprintf("%s had already ended (exit code %d)", p.ID(), code), s), nil
	}
	return Success(fmt.Sprintf("ended %s (exit code %d)", p.ID(), code), s), nil
}
