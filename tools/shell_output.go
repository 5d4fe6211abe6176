package tools

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/agentls/agentls/workspace"
	"strings"
	"time"

	"github.com/agentls/agentls/process"
)

// ShellOutput is shell_output: the output of a shell from a byte offset.
var ShellOutput = builtin(Def[shellOutputArgs]{
	Spec: Spec{
		Name:     "shell_output",
		Category: "shell",
		Title:    "Read shell output",
		Description: "Returns the output of a shell started by shell_background (or the full output of a finished shell_exec, " +
			"whose result names its id) from the byte offset since, waiting up to wait_ms for new output when there is none yet. " +
			"stream is combined (default: stdout and stderr as they arrived), stdout or stderr. Continue with since = next_offset. " +
			"Also says whether the shell is still running and its exit code.",
		Annotations: Annotations{ReadOnly: true, Approval: "auto"},
		Timeout:     6 * time.Minute, // above the longest wait_ms
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["id"],"properties":{
			"id":{"type":"string","description":"the shell's id (sh_…)"},
			"since":{"type":"integer","minimum":0,"default":0,"description":"byte offset to read from"},
			"wait_ms":{"type":"integer","minimum":0,"maximum":300000,"default":0,"description":"how long to wait for new output"},
			"stream":{"enum":["combined","stdout","stderr"],"default":"combined"},
			"max_bytes":{"type":"integer","minimum":1,"maximum":10485760,"description":"most bytes to return (default shell.maxOutputBytes)"},
			"encoding":{"enum":["utf-8","base64"],"default":"utf-8","description":"base64 for binary output"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["id","output","next_offset","running"],"properties":{
			"id":{"type":"string"},"output":{"type":"string"},"since":{"type":"integer"},"next_offset":{"type":"integer"},
			"total_bytes":{"type":"integer"},"more":{"type":"boolean"},"running":{"type":"boolean"},"exit_code":{"type":"integer"},
			"signal":{"type":"string"},"dropped_bytes":{"type":"integer"},"command":{"type":"string"},"encoding":{"type":"string"}}}`),
	},
	Execute: shellOutput,
})

type shellOutputArgs struct {
	ID       string `json:"id"`
	Since    int64  `json:"since"`
	WaitMs   int    `json:"wait_ms"`
	Stream   string `json:"stream"`
	MaxBytes int    `json:"max_bytes"`
	Encoding string `json:"encoding"`
}

func shellOutput(c *Call, a shellOutputArgs) (*Result, error) {
	p, err := shellOf(c, a.ID)
	if err != nil {
		return nil, err
	}
	stream := process.ParseStream(a.Stream)
	if a.MaxBytes == 0 {
		a.MaxBytes = c.Workspace.Config().Shell.MaxOutputBytes
		if a.MaxBytes <= 0 {
			a.MaxBytes = workspace.DefaultOutputBytes
		}
	}
	if err := p.WaitOutput(c.Ctx, stream, a.Since, time.Duration(a.WaitMs)*time.Millisecond); err != nil {
		return nil, err
	}
	data, size := p.Read(stream, a.Since, a.MaxBytes)
	if a.Since > size {
		return nil, Errorf(InvalidParams, "since %d is past the end of %s's %s output (%d bytes)", a.Since, p.ID(), stream, size)
	}
	next := a.Since + int64(len(data))
	ended, code, sig := p.Exit()
	_, dropped := p.Size(stream)
	out := string(data)
	if a.Encoding == "base64" {
		out = base64.StdEncoding.EncodeToString(data)
	}
	s := map[string]any{
		"id": p.ID(), "output": out, "since": a.Since, "next_offset": next, "total_bytes": size,
		"more": next < size, "running": !ended, "command": p.Command(),
	}
	if a.Encoding == "base64" {
		s["encoding"] = "base64"
	}
	var b strings.Builder
	b.WriteString(out)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		b.WriteByte('\n')
	}
	switch {
	case next < size:
		fmt.Fprintf(&b, "[%d more bytes; continue with since=%d]", size-next, next)
	case !ended:
		fmt.Fprintf(&b, "[%s is running; continue with since=%d]", p.ID(), next)
	default:
		s["exit_code"] = code
		if sig != "" {
			s["signal"] = sig
		}
		fmt.Fprintf(&b, "[%s exited with code %d]", p.ID(), code)
	}
	if dropped > 0 {
		s["dropped_bytes"] = dropped
		fmt.Fprintf(&b, "\n[%d bytes beyond the %d kept were not stored]", dropped, process.MaxStoredBytes)
	}
	return Success(b.String(), s), nil
}
