package approval

import (
	"fmt"

	"github.com/agentls/agentls/workspace"
)

// Action is the policy's answer.
type Action int

// The answers of Decide.
const (
	Auto Action = iota // run without asking
	Ask                // ask the person first
	Deny               // never run
)

func (a Action) String() string { return [...]string{"auto", "ask", "deny"}[a] }

// Risk tells the person what kind of harm a call could do.
type Risk string

// The risks of an approval request (docs/protocol.md, "Approval").
const (
	RiskNone      Risk = ""
	RiskRead      Risk = "read" // a read-only tool that asks (a rule or mode ask): it shows the agent what it reads
	RiskWrite     Risk = "write"
	RiskExecute   Risk = "execute"
	RiskNetwork   Risk = "network"
	RiskDangerous Risk = "dangerous"
)

// Tool is what the policy needs to know of a tool.
type Tool struct {
	Name      string
	ReadOnly  bool
	Dangerous bool
	Approval  string // "auto", "ask" or "conditional"
	Risk      Risk   // the tool's usual risk; an Assessment may raise it
}

// Assessment is what a tool says about one call before it runs. It is
// computed without changing anything.
type Assessment struct {
	// NeedsApproval answers a conditional tool's question: does this call
	// need approval (an overwrite, a branch creation)? Ignored for tools that
	// are not conditional.
	NeedsApproval bool
	// Risk, when set, replaces the tool's usual risk.
	Risk Risk
	// Warning is shown to the person with the question.
	Warning string
	// Dangerous makes the call ask even in yolo mode and over rules.
	Dangerous bool
	// Blocked, when set, refuses the call outright with this reason.
	Blocked string
	// AlwaysKey is what an "always" answer remembers; the tool name when empty.
	// A shell command remembers its program and first argument, never the tool.
	AlwaysKey string
	// AutoByConfig reports that configuration (an allow list) makes the call
	// automatic.
	AutoByConfig bool
}

// Decision is the policy's answer for one call.
type Decision struct {
	Action  Action
	By      string // for Auto: "auto" (mode or tool default), "config" (a rule) or "always" (an earlier "always" answer)
	Risk    Risk
	Warning string
	Blocked bool   // Deny because the command is blocked, not because of a rule
	Reason  string // why, for the log
}

// Decide applies the configuration, the remembered answers and the tool's
// own assessment of the call.
func Decide(cfg *workspace.Config, mem *Memory, t Tool, a Assessment) Decision {
	d := Decision{Risk: t.Risk, Warning: a.Warning}
	if a.Risk != RiskNone {
		d.Risk = a.Risk
	}
	key := a.AlwaysKey
	if key == "" {
		key = t.Name
	}
	rule := cfg.Approval.Tools[t.Name]
	switch {
	case a.Blocked != "":
		d.Action, d.Blocked, d.Reason = Deny, true, "blocked: "+a.Blocked
	case rule == "deny":
		d.Action, d.Reason = Deny, fmt.Sprintf("approval.tools.%s is deny", t.Name)
	case a.Dangerous:
		d.Action, d.Risk = Ask, RiskDangerous
		d.Reason = "dangerous call: always asks"
	case rule == "auto":
		d.Action, d.By, d.Reason = Auto, "config", fmt.Sprintf("approval.tools.%s is auto", t.Name)
	case rule == "ask":
		d.Action, d.Reason = Ask, fmt.Sprintf("approval.tools.%s is ask", t.Name)
	case mem != nil && mem.Allowed(key):
		d.Action, d.By, d.Reason = Auto, "always", fmt.Sprintf("the user said always for %q", key)
	case a.AutoByConfig:
		d.Action, d.By, d.Reason = Auto, "config", "allowed by configuration"
	case t.Dangerous:
		d.Action, d.Reason = Ask, "dangerous tool"
		if d.Risk == RiskNone {
			d.Risk = RiskDangerous
		}
	default:
		d.Action, d.By, d.Reason = byMode(cfg.Approval.Mode, t, a)
	}
	if d.Action == Ask && d.Risk == RiskNone {
		d.Risk = AskRisk(t)
	}
	if d.Action != Auto {
		d.By = ""
	}
	return d
}

// AskRisk is the risk a call of t is labelled with when it asks and neither
// the tool nor the call's assessment names one: read for a read-only tool
// (only a rule or mode ask makes it ask), write otherwise.
func AskRisk(t Tool) Risk {
	if t.ReadOnly {
		return RiskRead
	}
	return RiskWrite
}

func byMode(mode string, t Tool, a Assessment) (Action, string, string) {
	switch mode {
	case "yolo":
		return Auto, "auto", "mode yolo"
	case "ask":
		return Ask, "", "mode ask: only rules are automatic"
	}
	switch {
	case t.ReadOnly:
		return Auto, "auto", "mode safe: read-only tool"
	case t.Approval == "auto":
		return Auto, "auto", "mode safe: the tool needs no approval"
	case t.Approval == "conditional" && !a.NeedsApproval:
		return Auto, "auto", "mode safe: this call of a conditional tool changes nothing that exists"
	case t.Approval == "conditional":
		return Ask, "", "mode safe: this call of a conditional tool changes something that exists"
	}
	return Ask, "", "mode safe: the tool asks"
}
