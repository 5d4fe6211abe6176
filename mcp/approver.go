package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/approval"
)

// maxShown caps the arguments and the diff an elicitation shows, each; what
// is left out is said in the message.
const maxShown = 256 << 10

// ErrCannotAsk is the refusal of a call that needs approval when the MCP
// client cannot ask the person (it did not declare elicitation). Its text
// says how to approve.
var ErrCannotAsk = errors.New("this MCP client cannot ask the person (it does not support elicitation), so nothing that needs approval runs. " +
	"To approve such calls: use an MCP client that supports elicitation, or open the workspace in an editor with agentls, " +
	"or add a rule to your agentls user configuration ($XDG_CONFIG_HOME/agentls/config.json), " +
	`e.g. "approval": {"tools": {"edit_file": "auto"}} or "shell": {"allow": ["go test"]}`)

// Approver asks the person through the MCP client: an elicitation/create
// request (form mode) with the call's diff or command, its risk and the
// choices approve, reject (with a message for the agent) and, when the
// request offers it, always. The answer maps to approval.Response: accept
// with a decision is that decision; decline is the person's rejection. A
// cancel is no answer at all (the client dismissed the question: Claude
// Code does so in print mode, with no person to ask): Ask returns an error
// that says so, and the call is rejected without claiming anyone rejected
// it.
//
// Ask must be given the context of a call that the server's tool handler
// started: it carries the MCP session to ask through. Without one, or when
// the client did not declare the elicitation capability, Ask returns
// ErrCannotAsk and the call does not run. It never asks on a terminal.
type Approver struct{}

var _ approval.Approver = Approver{}

// Ask implements approval.Approver.
func (Approver) Ask(ctx context.Context, req approval.Request) (approval.Response, error) {
	ss := sessionFrom(ctx)
	if ss == nil || !canElicit(ss) {
		return approval.Response{}, ErrCannotAsk
	}
	res, err := ss.Elicit(ctx, &sdk.ElicitParams{
		Mode:            "form",
		Message:         elicitMessage(clientName(ss), req),
		RequestedSchema: elicitSchema(req),
	})
	if err != nil {
		return approval.Response{}, fmt.Errorf("elicitation: %w", err)
	}
	switch res.Action {
	case "accept":
		decision, _ := res.Content["decision"].(string)
		message, _ := res.Content["message"].(string)
		switch decision {
		case approval.Approve, approval.Always:
			return approval.Response{Decision: decision}, nil
		case approval.Reject:
			return approval.Response{Decision: approval.Reject, Message: message}, nil
		}
		return approval.Response{}, fmt.Errorf("elicitation: the answer %q is not one of %s", decision, strings.Join(req.Options, ", "))
	case "decline":
		return approval.Response{Decision: approval.Reject, Message: "declined in " + clientName(ss)}, nil
	}
	return approval.Response{}, fmt.Errorf("%s dismissed the approval question without an answer; nobody approved or rejected the call", clientName(ss))
}

// canElicit reports whether the client declared form elicitation.
func canElicit(ss *sdk.ServerSession) bool {
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil // neither: form, as the spec's first version had it
}

// clientName is who asks, as the MCP client names itself (clientInfo):
// its title, else its name.
func clientName(ss *sdk.ServerSession) string {
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
		if p.ClientInfo.Title != "" {
			return p.ClientInfo.Title
		}
		if p.ClientInfo.Name != "" {
			return p.ClientInfo.Name
		}
	}
	return "the agent"
}

// elicitSchema is the form: a decision among the request's options, and a
// message for the agent when rejecting.
func elicitSchema(req approval.Request) map[string]any {
	desc := "approve: run it once; reject: do not run it"
	if req.Offers(approval.Always) {
		label := req.AlwaysLabel
		if label == "" {
			label = "always allow " + req.Tool
		}
		desc += "; always: " + label
	}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"decision": map[string]any{
				"type": "string", "title": "Decision", "description": desc,
				"enum": append([]string(nil), req.Options...),
			},
			"message": map[string]any{
				"type": "string", "title": "Message to the agent",
				"description": "with reject: why, or what to do instead (the agent reads it)",
			},
		},
		"required": []string{"decision"},
	}
}

// elicitMessage is what the person reads: who wants what, the risk, the
// folder, a warning, then the command or arguments and the diff.
func elicitMessage(who string, req approval.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s wants to %s (risk: %s).\n", who, what(req), req.Risk)
	if req.Warning != "" {
		fmt.Fprintf(&b, "WARNING: %s\n", req.Warning)
	}
	if req.Cwd != "" {
		fmt.Fprintf(&b, "In: %s\n", req.Cwd)
	}
	if req.Reason != "" {
		fmt.Fprintf(&b, "Reason: %s\n", req.Reason)
	}
	var args map[string]json.RawMessage
	_ = json.Unmarshal(req.Arguments, &args)
	var cmd string
	if raw, ok := args["command"]; ok && json.Unmarshal(raw, &cmd) == nil && cmd != "" {
		fmt.Fprintf(&b, "Command:\n%s\n", shown(cmd))
	} else if req.Preview == nil || req.Preview.UnifiedDiff == "" {
		fmt.Fprintf(&b, "Arguments: %s\n", shown(string(req.Arguments)))
	}
	if req.Preview != nil && req.Preview.UnifiedDiff != "" {
		fmt.Fprintf(&b, "Diff:\n%s\n", shown(strings.TrimRight(req.Preview.UnifiedDiff, "\n")))
	}
	if req.TimeoutSeconds > 0 {
		fmt.Fprintf(&b, "Rejected by itself after %d s without an answer.\n", req.TimeoutSeconds)
	}
	return b.String()
}

// what names the action of a request: "edit a.txt", "run shell_exec".
func what(req approval.Request) string {
	if req.Preview != nil && len(req.Preview.Files) > 0 {
		var names []string
		for _, f := range req.Preview.Files {
			n := f.Path
			if f.NewPath != "" {
				n += " → " + f.NewPath
			}
			names = append(names, n)
		}
		verb := "edit"
		if len(req.Preview.Files) == 1 {
			switch req.Preview.Files[0].Operation {
			case "create":
				verb = "create"
			case "delete":
				verb = "delete"
			case "rename":
				verb = "move"
			}
		}
		return fmt.Sprintf("%s %s (%s)", verb, strings.Join(names, ", "), req.Tool)
	}
	return "run " + req.Tool
}

// shown caps s at maxShown bytes, saying how much was left out.
func shown(s string) string {
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return fmt.Sprintf("%s\n[… %d more bytes not shown]", s[:cut], len(s)-cut)
}
