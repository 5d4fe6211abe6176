package lsp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/workspace"
)

// approver asks the person through the best channel the client has
// (docs/protocol.md, "Approval"): the approval/request of agentls clients,
// else window/showMessageRequest.
type approver struct{ s *server }

var _ approval.Approver = (*approver)(nil)

// Ask implements approval.Approver.
func (a *approver) Ask(ctx context.Context, req approval.Request) (approval.Response, error) {
	if a.s.clientCaps().ApprovalRequest {
		req.Stamp(time.Now()) // timeoutMs: what is left as the request leaves
		var resp approval.Response
		if err := a.s.callPerson(ctx, "approval/request", req, &resp); err != nil {
			return approval.Response{}, fmt.Errorf("approval/request: %w", err)
		}
		switch resp.Decision {
		case approval.Approve, approval.Reject, approval.Always:
			return resp, nil
		}
		return approval.Response{Decision: approval.Reject, Message: fmt.Sprintf("the client answered %q", resp.Decision)}, nil
	}
	return a.showMessageRequest(ctx, req)
}

func (a *approver) showMessageRequest(ctx context.Context, req approval.Request) (approval.Response, error) {
	always := ""
	actions := []protocol.MessageActionItem{{Title: "Approve"}, {Title: "Reject"}}
	if req.Offers(approval.Always) {
		always = "Always allow " + req.Tool
		if req.AlwaysLabel != "" {
			always = strings.ToUpper(req.AlwaysLabel[:1]) + req.AlwaysLabel[1:]
		}
		actions = append(actions, protocol.MessageActionItem{Title: always})
	}
	who := "the agent"
	if req.Agent != "" {
		who = req.Agent
	}
	var b strings.Builder
	fmt.Fprintf(&b, "agentls: %s wants to run %s (risk: %s)", who, req.Tool, req.Risk)
	if req.Cwd != "" {
		fmt.Fprintf(&b, "\nIn: %s", req.Cwd)
	}
	if req.ExpiresAt != "" {
		if t, err := time.Parse(time.RFC3339Nano, req.ExpiresAt); err == nil {
			fmt.Fprintf(&b, "\nRejected by itself at %s", t.Local().Format("15:04:05"))
		}
	}
	if req.Warning != "" {
		fmt.Fprintf(&b, "\nWARNING: %s", req.Warning)
	}
	if req.Reason != "" {
		fmt.Fprintf(&b, "\nReason: %s", req.Reason)
	}
	fmt.Fprintf(&b, "\nArguments: %s", truncate(req.Arguments, 400))
	if req.Preview != nil {
		for _, f := range req.Preview.Files {
			fmt.Fprintf(&b, "\n%s %s", f.Operation, f.Path)
		}
		if d := diffStat(req.Preview.UnifiedDiff); d != "" {
			fmt.Fprintf(&b, "\n%s", d)
		}
	}
	var item *protocol.MessageActionItem
	params := protocol.ShowMessageRequestParams{
		Type: protocol.MessageTypeWarning, Message: b.String(),
		Actions: actions,
	}
	if err := a.s.callPerson(ctx, "window/showMessageRequest", params, &item); err != nil {
		return approval.Response{}, fmt.Errorf("window/showMessageRequest: %w", err)
	}
	switch {
	case item == nil:
		return approval.Response{Decision: approval.Reject, Message: "dismissed"}, nil
	case item.Title == "Approve":
		return approval.Response{Decision: approval.Approve}, nil
	case always != "" && item.Title == always:
		return approval.Response{Decision: approval.Always}, nil
	}
	return approval.Response{Decision: approval.Reject}, nil
}

// approvalRules answers approval/rules: the remembered "always" answers of
// the session (persisted ones too), after removing the one named by remove.
type approvalRulesParams struct {
	Remove *string `json:"remove"`
}

func (s *server) approvalRules(ctx context.Context, p approvalRulesParams) (any, error) {
	mem := s.sess.Memory()
	res := struct {
		Rules   []approval.Rule `json:"rules"`
		Removed *bool           `json:"removed,omitempty"`
	}{}
	if p.Remove != nil {
		removed, err := mem.Forget(*p.Remove)
		if err != nil {
			// Forgotten for the session; the file keeps it until it can be
			// written again. The person must know.
			return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "approval/rules: the rule is forgotten for this session, but %v", err)
		}
		res.Removed = &removed
	}
	res.Rules = mem.Rules()
	return res, nil
}

// callPerson sends the client a request that may wait for the person (a
// question, an edit shown for confirmation); when ctx ends first (the call
// was cancelled, or nobody answered in time) the client is told with
// $/cancelRequest, so it can close the question it shows.
func (s *server) callPerson(ctx context.Context, method string, params, result any) error {
	id, err := s.conn.Call(ctx, method, params, result)
	if err != nil && ctx.Err() != nil {
		if nerr := s.conn.Notify(context.Background(), "$/cancelRequest", map[string]any{"id": &id}); nerr != nil {
			s.log.Debug("$/cancelRequest", "err", nerr)
		}
	}
	return err
}

// diffStat summarises a unified diff as "+A -D lines".
func diffStat(diff string) string {
	if diff == "" {
		return ""
	}
	add, del := workspace.DiffLineCounts(diff)
	return fmt.Sprintf("+%d -%d lines", add, del)
}
