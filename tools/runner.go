package tools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/schema"
	"github.com/agentls/agentls/redact"
	"github.com/agentls/agentls/workspace"
)

// Runner is the execution pipeline, the same for every entry point:
// resolve the name → the agent's tool filter → validate → approval →
// execute with timeout and cancellation → result → log, metrics, events.
// A Runner is shared by all sessions of a process.
type Runner struct {
	Registry *Registry
	Metrics  *Metrics
	Log      *slog.Logger

	customs atomic.Pointer[customSet] // the custom tools of the last configuration seen
}

// NewRunner returns a runner over reg with fresh metrics.
func NewRunner(reg *Registry, log *slog.Logger) *Runner {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runner{Registry: reg, Metrics: NewMetrics(), Log: redact.Logger(log)}
}

// logger is Log with its output redacted (package redact), even when Log
// was set after NewRunner.
func (r *Runner) logger() *slog.Logger { return redact.Logger(r.Log) }

// Env is what one session gives the calls it makes.
type Env struct {
	Workspace *workspace.Workspace
	Session   *Session
	Model     Model
	Agent     string // the default agent (initializationOptions.agent)
	Approver  approval.Approver
	Memory    *approval.Memory
	Events    Events
	History   *History // nil: calls are not logged to a file
	Editor    Editor   // nil: the server writes files itself
}

// Request is one tool call.
type Request struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	CallID    string          `json:"callId,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	Agent     string          `json:"agent,omitempty"`
}

// NewCallID returns a fresh tc_ call id.
func NewCallID() string {
	var b [9]byte
	_, _ = rand.Read(b[:])
	return "tc_" + hex.EncodeToString(b[:])
}

// Available lists the tools an agent may see under the configuration.
func (r *Runner) Available(cfg *workspace.Config, agent string) []*Tool {
	ok := func(name string) bool { return allowed(cfg, agent, name) == "" }
	ts := append(r.Registry.List(ok), r.custom(cfg).List(ok)...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	return ts
}

// allowed returns why an agent may not call a tool, or "".
func allowed(cfg *workspace.Config, agent, name string) string {
	if !cfg.Tools.Enabled.Allows(name) {
		return fmt.Sprintf("tool %s is not enabled (tools.enabled)", name)
	}
	if agent == "" {
		return ""
	}
	a, ok := cfg.Agents[agent]
	if !ok {
		return "" // an agent the config does not name is not filtered
	}
	if !a.Tools.Allows(name) {
		return fmt.Sprintf("tool %s is not available to agent %s", name, agent)
	}
	return ""
}

// Run executes one call and always returns a result. progress may be nil.
func (r *Runner) Run(ctx context.Context, env *Env, req Request, progress Progress) *Result {
	start := time.Now()
	if req.CallID == "" {
		req.CallID = NewCallID()
	}
	if progress == nil {
		progress = noProgress{}
	}
	next := env.Events
	if next == nil {
		next = noEvents{}
	}
	events := &redactingEvents{next: next} // what leaves as an event is redacted
	agent := req.Agent
	if agent == "" {
		agent = env.Agent
	}
	res, args, tool := r.run(ctx, env, req, agent, progress, events)
	res.CallID = req.CallID
	res.DurationMs = time.Since(start).Milliseconds()
	if res.ApprovedBy == "" {
		res.ApprovedBy = "none"
	}
	name := req.Name
	if tool != nil {
		name = tool.Name
	}
	res.Tool = name
	if args == nil {
		args = req.Arguments
	}
	if checkOutputs && tool != nil {
		if err := checkOutput(tool, res); err != nil {
			*res = *failure(&Error{Code: Internal, Message: err.Error()})
			res.CallID, res.Tool, res.ApprovedBy = req.CallID, name, "none"
		}
	}
	r.finish(env, res, args, time.Since(start), events)
	return res
}

// checkOutputs turns on checkOutput for every call: the test suites set
// AGENTLS_CHECK_OUTPUTS=1 (scripts/test.sh), so that a tool whose result
// breaks its own output schema fails whatever test calls it.
var checkOutputs = os.Getenv("AGENTLS_CHECK_OUTPUTS") == "1"

// checkOutput validates a successful result's structured part against the
// tool's output schema.
func checkOutput(t *Tool, res *Result) error {
	if res.Status != StatusSuccess || len(t.OutputSchema) == 0 {
		return nil
	}
	s, err := schema.Compile(t.OutputSchema)
	if err != nil {
		return fmt.Errorf("tool %s: output schema: %w", t.Name, err)
	}
	b, err := json.Marshal(res.Structured)
	if err != nil {
		return fmt.Errorf("tool %s: structured result: %w", t.Name, err)
	}
	v, err := schema.Decode(b)
	if err != nil {
		return fmt.Errorf("tool %s: structured result: %w", t.Name, err)
	}
	if vs := s.Validate(v); vs != nil {
		msgs := make([]string, len(vs))
		for i, v := range vs {
			msgs[i] = v.String()
		}
		return fmt.Errorf("tool %s: the structured result breaks the tool's output schema: %s", t.Name, strings.Join(msgs, "; "))
	}
	return nil
}

func (r *Runner) finish(env *Env, res *Result, args json.RawMessage, d time.Duration, events *redactingEvents) {
	if _, ok := r.lookup(env.Workspace.Config(), res.Tool); ok {
		r.Metrics.Record(res.Tool, res.Status, d)
	}
	if env.History != nil && env.Workspace.Config().History.Enabled {
		if !json.Valid(args) {
			b, _ := json.Marshal(string(args))
			args = b
		}
		err := env.History.appendRedacted(LogEntry{
			CallID: res.CallID, Tool: res.Tool, Arguments: events.args(args), Status: res.Status, Error: res.Error,
			DurationMs: res.DurationMs, Timestamp: time.Now().UTC(), ApprovedBy: res.ApprovedBy,
			Summary: summarize(res.Content), Cached: res.Cached,
		})
		if err != nil {
			r.logger().Warn("execution log", "err", err)
		}
	}
	events.Event(Event{CallID: res.CallID, Tool: res.Tool, Kind: "result", Status: res.Status, Cached: res.Cached})
	if log := r.logger(); log.Enabled(context.Background(), slog.LevelInfo) { // its arguments cost allocations
		log.Info("tool call", "callId", res.CallID, "tool", res.Tool, "status", res.Status,
			"approvedBy", res.ApprovedBy, "ms", res.DurationMs)
	}
}

func (r *Runner) run(ctx context.Context, env *Env, req Request, agent string, progress Progress, events Events) (*Result, json.RawMessage, *Tool) {
	cfg := env.Workspace.Config()
	tool, ok := r.lookup(cfg, req.Name)
	if !ok {
		return failure(r.unknown(req.Name, cfg, agent)), nil, nil
	}
	if why := allowed(cfg, agent, tool.Name); why != "" {
		e := &Error{Code: NotAllowed, Message: why + "; the configuration keeps it from this caller: use the tools tool/list offers"}
		return &Result{Status: StatusRejected, Content: "rejected: " + e.Message, Message: why, Error: e}, nil, tool
	}
	args, typed, verr := prepare(tool, req.Arguments, cfg)
	if verr != nil {
		return failure(verr), refusedArgs(req.Arguments), tool
	}
	c := &Call{
		Ctx: ctx, ID: req.CallID, Tool: tool, Reason: req.Reason, Agent: agent,
		Workspace: env.Workspace, Session: env.Session, Model: env.Model,
		Approver: env.Approver, Progress: progress, Log: r.logger().With("tool", tool.Name, "callId", req.CallID),
		Events: events, Editor: env.Editor,
	}
	var gen uint64
	if env.Session != nil && env.Session.edits != nil {
		gen = env.Session.edits.generation()
	}
	a, err := assess(c, typed)
	// A file this call read may have been changed meanwhile by another edit
	// of the session, which is no staleness: plan again while edits end.
	for tries := 0; err != nil && tries < 8 && env.Session != nil && env.Session.edits != nil; tries++ {
		e, ok := AsError(err)
		if !ok || e.Code != StaleFile || env.Session.edits.generation() == gen {
			break
		}
		gen = env.Session.edits.generation()
		a, err = assess(c, typed)
	}
	if err != nil {
		return r.errorResult(c, err), args, tool
	}
	if a.Edit != nil && env.Session != nil && env.Session.edits != nil {
		// One edit of a file at a time in a session: when another ended
		// since this one planned, plan again on the text it left
		// (editqueue.go).
		release, replan, err := env.Session.edits.hold(ctx, planPaths(a.Edit), gen)
		if err != nil {
			return cancelled(ctx), args, tool
		}
		defer release()
		if replan {
			if a, err = assess(c, typed); err != nil {
				return r.errorResult(c, err), args, tool
			}
		}
	}
	d := approval.Decide(cfg, env.Memory, tool.policyTool(), a.Assessment)
	need := d.Action == approval.Ask
	events.Event(Event{CallID: c.ID, Tool: tool.Name, Kind: "call", Arguments: args, NeedsApproval: &need, Agent: c.Agent})
	if c.Log.Enabled(ctx, slog.LevelDebug) {
		c.Log.Debug("approval policy", "action", d.Action.String(), "reason", d.Reason)
	}
	switch d.Action {
	case approval.Deny:
		if d.Blocked {
			return failure(Errorf(CommandBlocked, "%s", strings.TrimPrefix(d.Reason, "blocked: "))), args, tool
		}
		res := &Result{Status: StatusRejected, Content: "rejected: " + d.Reason, Message: d.Reason,
			Error: &Error{Code: Rejected, Message: d.Reason}}
		return res, args, tool
	case approval.Ask:
		if a.Edit != nil && env.Editor != nil && env.Editor.ConfirmsEdits() && env.Editor.CanApply(a.Edit) {
			// The editor's own preview asks: applying the edit is the question.
			events.Event(Event{CallID: c.ID, Tool: tool.Name, Kind: "awaitingApproval", Risk: string(d.Risk)})
			c.ConfirmInEditor = true
		} else {
			var res *Result
			args, typed, a, d, res = r.ask(c, env, args, typed, a, d, events)
			if res != nil {
				return res, args, tool
			}
		}
		d.By = "user"
	}
	c.Decision = d
	c.Assessed = a
	return r.executeCached(c, env, cfg, args, typed, d.By), args, tool
}

// ask asks the person. It returns the arguments to run with, their
// assessment and the policy's decision, or a final result when the call must
// not run. Arguments the person edited are judged again (validation,
// assessment, policy) and, when they differ from what was shown, asked about
// again with their own preview and risk before anything runs.
func (r *Runner) ask(c *Call, env *Env, args json.RawMessage, typed any, a Assessment, d approval.Decision, events Events) (json.RawMessage, any, Assessment, approval.Decision, *Result) {
	if env.Approver == nil {
		return args, typed, a, d, &Result{Status: StatusRejected, Content: "rejected: approval needed and nobody to ask",
			Error: &Error{Code: Rejected, Message: "approval needed and nobody to ask"}}
	}
	for round := 1; ; round++ {
		resp, res := r.askOnce(c, env, args, typed, a, d, events)
		if res != nil {
			return args, typed, a, d, res
		}
		if len(resp.ModifiedArguments) > 0 && string(resp.ModifiedArguments) != "null" {
			margs, mtyped, verr := prepare(c.Tool, resp.ModifiedArguments, env.Workspace.Config())
			if verr != nil {
				verr.Message = "modified arguments: " + verr.Message
				return args, typed, a, d, failure(verr)
			}
			if string(margs) != string(args) {
				ma, err := assess(c, mtyped)
				if err != nil {
					return margs, mtyped, a, d, r.errorResult(c, err)
				}
				md := approval.Decide(env.Workspace.Config(), env.Memory, c.Tool.policyTool(), ma.Assessment)
				c.Log.Debug("approval policy, edited arguments", "action", md.Action.String(), "reason", md.Reason, "round", round)
				if md.Action == approval.Deny {
					if md.Blocked {
						return margs, mtyped, ma, md, failure(Errorf(CommandBlocked, "%s", strings.TrimPrefix(md.Reason, "blocked: ")))
					}
					return margs, mtyped, ma, md, &Result{Status: StatusRejected, Content: "rejected: " + md.Reason, Message: md.Reason,
						Error: &Error{Code: Rejected, Message: md.Reason}}
				}
				if md.Action == approval.Auto {
					// The person wrote these arguments; the question is still
					// theirs to answer, with the edited call's own preview.
					md.Action, md.By = approval.Ask, ""
					if md.Risk == approval.RiskNone {
						md.Risk = approval.AskRisk(c.Tool.policyTool())
					}
				}
				args, typed, a, d = margs, mtyped, ma, md
				continue // the person sees the edited call before it runs
			}
		}
		if resp.Decision == approval.Always {
			key := a.AlwaysKey
			if key == "" {
				key = c.Tool.Name
			}
			if err := env.Memory.Remember(key); err != nil {
				c.Log.Warn("remember always", "err", err)
			}
		}
		return args, typed, a, d, nil
	}
}

// askOnce sends one approval request and returns an approving answer, or
// the result of a call that must not run.
func (r *Runner) askOnce(c *Call, env *Env, args json.RawMessage, typed any, a Assessment, d approval.Decision, events Events) (approval.Response, *Result) {
	events.Event(Event{CallID: c.ID, Tool: c.Tool.Name, Kind: "awaitingApproval", Risk: string(d.Risk)})
	secs := env.Workspace.Config().Approval.TimeoutSeconds
	timeout := time.Duration(secs) * time.Second
	now := time.Now()
	actx, cancel := context.WithDeadline(c.Ctx, now.Add(timeout))
	defer cancel()
	req := approval.Request{
		CallID: c.ID, Tool: c.Tool.Name, Arguments: args, Reason: c.Reason,
		Risk: d.Risk, Warning: d.Warning, Preview: a.Preview, Options: approval.OptionsFor(d.Risk),
		Agent: c.Agent, Cwd: commandDir(c, typed),
	}
	req.Expire(now, timeout) // the same instant as actx's deadline
	if req.Offers(approval.Always) {
		key := a.AlwaysKey
		if key == "" {
			key = c.Tool.Name
		}
		req.AlwaysLabel = approval.RuleFor(key).Label
	}
	resp, err := env.Approver.Ask(actx, req)
	if c.Ctx.Err() != nil {
		return resp, cancelled(c.Ctx)
	}
	if err != nil {
		msg := fmt.Sprintf("approval failed: %v", err)
		if errors.Is(err, context.DeadlineExceeded) {
			msg = fmt.Sprintf("no answer within %s (approval.timeoutSeconds)", timeout)
		}
		return resp, &Result{Status: StatusRejected, Content: "rejected: " + msg, Message: msg,
			Error: &Error{Code: Rejected, Message: msg}}
	}
	switch {
	case resp.Decision == approval.Approve, resp.Decision == approval.Always && req.Offers(approval.Always):
		return resp, nil
	case resp.Decision == approval.Always:
		msg := fmt.Sprintf("the client answered %q, which this request did not offer", resp.Decision)
		return resp, &Result{Status: StatusRejected, Content: "rejected: " + msg, Message: msg,
			Error: &Error{Code: Rejected, Message: msg}}
	}
	msg := resp.Message
	content := "rejected by the user"
	if msg != "" {
		content += ": " + msg
	}
	return resp, &Result{Status: StatusRejected, Content: content, Message: msg,
		Error: &Error{Code: Rejected, Message: content}}
}

// commandArgs are the arguments of a tool that runs a command in a folder
// of the workspace (shell_exec, shell_background, run_code).
type commandArgs interface {
	// commandCwd is the cwd argument as the model gave it.
	commandCwd() string
}

// commandDir is the absolute folder the command of a call runs in, or "" for
// a tool that runs none.
func commandDir(c *Call, typed any) string {
	a, ok := typed.(commandArgs)
	if !ok {
		return ""
	}
	dir, err := shellDir(c, a.commandCwd())
	if err != nil {
		return ""
	}
	return dir
}

// execute runs the tool under its time limit. It returns as soon as the call
// is cancelled or times out, even if Execute has not returned yet; a call
// cancelled before it starts never starts.
// retryWaits are the pauses before the retries of a call that failed in a
// way worth retrying (retryable).
var retryWaits = []time.Duration{300 * time.Millisecond, time.Second}

// retryable: a read-only call (so running it again changes nothing) that
// failed for a passing reason: the network (a connection refused or cut,
// rate limiting) or another git holding the repository's lock.
func retryable(t *Tool, res *Result) bool {
	if !t.Annotations.ReadOnly || res.Status != StatusError || res.Error == nil || !res.Error.Recoverable {
		return false
	}
	switch res.Error.Code {
	case NetworkError:
		return true
	case ExecutionError:
		return strings.Contains(res.Error.Message, ".lock': File exists") || strings.Contains(res.Error.Message, "Another git process seems to be running")
	}
	return false
}

// execute runs the call, again after a pause while it fails in a way
// worth retrying (retryable), as long as the call is not cancelled.
func (r *Runner) execute(c *Call, cfg *workspace.Config, args any, by string) *Result {
	try := *c
	res := r.executeOnce(&try, cfg, args, by)
	for _, wait := range retryWaits {
		if !retryable(c.Tool, res) {
			break
		}
		select {
		case <-time.After(wait):
		case <-c.Ctx.Done():
			return res
		}
		c.Log.Info("retrying a call that failed for a passing reason", "code", res.Error.Code, "err", res.Error.Message)
		try = *c
		res = r.executeOnce(&try, cfg, args, by)
	}
	return res
}

func (r *Runner) executeOnce(c *Call, cfg *workspace.Config, args any, by string) *Result {
	if c.Ctx.Err() != nil {
		return cancelled(c.Ctx)
	}
	limit := c.Tool.Timeout
	if limit == 0 {
		limit = time.Duration(cfg.Tools.TimeoutSeconds) * time.Second
	}
	ctx := c.Ctx
	if !c.Tool.Instant { // an instant tool returns long before any limit
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(c.Ctx, limit)
		defer cancel()
	}
	outer := c.Ctx
	c.Ctx = ctx
	type outcome struct {
		res *Result
		err error
	}
	run := func() (o outcome) {
		defer func() {
			if p := recover(); p != nil {
				r.logger().Error("tool panicked", "tool", c.Tool.Name, "panic", p)
				o = outcome{err: fmt.Errorf("tool %s panicked: %v", c.Tool.Name, p)}
			}
		}()
		res, err := c.Tool.fns.execute(c, args)
		return outcome{res, err}
	}
	var o outcome
	if c.Tool.Instant {
		o = run() // it returns at once: no goroutine to bound it (Tool.Instant)
	} else {
		done := make(chan outcome, 1)
		go func() { done <- run() }()
		select {
		case o = <-done:
		case <-ctx.Done():
			// Give the tool a moment to return its partial result.
			select {
			case o = <-done:
			case <-time.After(2 * time.Second):
			}
		}
	}
	var res *Result
	switch {
	case outer.Err() != nil:
		res = cancelled(outer)
		if o.res != nil && o.res.Structured != nil {
			res.Structured = o.res.Structured
		}
	case ctx.Err() != nil && o.res == nil && !isCoded(o.err):
		res = failure(Errorf(Timeout, "%s timed out after %s", c.Tool.Name, limit))
	case o.err != nil:
		res = r.errorResult(c, o.err)
	default:
		res = o.res
		if res.Status == "" {
			res.Status = StatusSuccess
		}
	}
	res.ApprovedBy = by
	if res.Status == StatusRejected {
		res.ApprovedBy = "none"
	}
	return res
}

func isCoded(err error) bool {
	_, ok := AsError(err)
	return ok
}

func cancelled(ctx context.Context) *Result {
	return &Result{Status: StatusCancelled, Content: "cancelled",
		Error: &Error{Code: Cancelled, Message: fmt.Sprintf("the call was cancelled: %v", context.Cause(ctx))}}
}

func (r *Runner) errorResult(c *Call, err error) *Result {
	if e, ok := AsError(err); ok {
		return failure(e)
	}
	c.Log.Error("tool infrastructure failed", "err", err)
	return failure(&Error{Code: Internal, Message: err.Error()})
}

func assess(c *Call, args any) (Assessment, error) {
	if c.Tool.fns.assess == nil {
		return Assessment{}, nil
	}
	return c.Tool.fns.assess(c, args)
}

// prepare validates raw arguments against the tool's schema, applies the
// schema's defaults, decodes them into the tool's argument type and runs the
// tool's own check. It returns the arguments as JSON (what the person and
// the log see) and decoded (what the tool's functions receive). Sizes are
// checked first, on the raw bytes, before anything decodes them (bounds.go).
func prepare(t *Tool, raw json.RawMessage, cfg *workspace.Config) (json.RawMessage, any, *Error) {
	raw, e := objectArgs(raw)
	if e != nil {
		return nil, nil, e
	}
	if v, limit := checkBounds(raw, t.bounds, cfg.Limits.MaxFileBytes); v != nil {
		return nil, nil, Errorf(InvalidParams, "invalid arguments for %s: %s", t.Name, v).
			WithDetails(map[string]any{"violations": []schema.Violation{*v}, "limit": limit})
	}
	if t.emptyArgs != nil && emptyObject(raw) {
		// No arguments, the usual call of a trivial tool: what the schema
		// makes of {} was worked out once (Tool.emptyArgs).
		if args, ok := t.emptyArgs(); ok {
			return decodeArgs(t, slices.Clone(args))
		}
	}
	v, err := schema.Decode(raw)
	if err != nil {
		return nil, nil, Errorf(InvalidParams, "arguments are not valid JSON: %v", err).
			WithDetails(map[string]any{"violations": []schema.Violation{{Pointer: "", Reason: "not valid JSON"}}})
	}
	if obj, ok := v.(map[string]any); ok {
		canonicalArgs(t, obj)
	}
	input, err := t.input()
	if err != nil {
		return nil, nil, &Error{Code: Internal, Message: err.Error()}
	}
	if vs := input.Validate(v); vs != nil {
		msgs := make([]string, len(vs))
		for i, v := range vs {
			msgs[i] = v.String()
		}
		return nil, nil, Errorf(InvalidParams, "invalid arguments for %s: %s", t.Name, strings.Join(msgs, "; ")).
			WithDetails(map[string]any{"violations": vs})
	}
	input.ApplyDefaults(v)
	args, err := json.Marshal(v)
	if err != nil {
		return nil, nil, Errorf(InvalidParams, "arguments: %v", err)
	}
	return decodeArgs(t, args)
}

// emptyObject reports whether raw is the JSON object {} (spaces allowed).
func emptyObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) >= 2 && t[0] == '{' && t[len(t)-1] == '}' && len(bytes.TrimSpace(t[1:len(t)-1])) == 0
}

// decodeArgs decodes arguments the schema passed, defaults applied, into
// the tool's type and runs the tool's own check.
func decodeArgs(t *Tool, args json.RawMessage) (json.RawMessage, any, *Error) {
	typed, err := t.fns.decode(args)
	if err != nil {
		return nil, nil, Errorf(InvalidParams, "arguments: %v", err)
	}
	if t.fns.validate != nil {
		if err := t.fns.validate(typed); err != nil {
			if e, ok := AsError(err); ok {
				return nil, nil, e
			}
			return nil, nil, Errorf(InvalidParams, "%v", err)
		}
	}
	return args, typed, nil
}

// argAliases are argument spellings of other tool systems, each with the
// names it may stand for (the first the tool declares wins). A camelCase
// name also stands for its snake_case spelling (numResults: num_results).
var argAliases = map[string][]string{
	"filePath": {"path"}, "file_path": {"path"}, "directoryPath": {"path"}, "dirPath": {"path"},
	"baseDir": {"path"}, "old": {"old_string"}, "new": {"new_string"}, "col": {"column"},
	"timeout": {"timeout_ms"}, "caseInsensitive": {"case_insensitive"}, "ignoreCase": {"case_insensitive"},
	"numResults": {"max_results", "limit"}, "maxResults": {"max_results", "limit"},
}

// canonicalArgs renames, in place, the arguments a tool does not declare
// but knows under another name (argAliases), when that name is not given
// too. Schemas advertise the canonical names only; anything else is left
// for the schema to refuse.
func canonicalArgs(t *Tool, args map[string]any) {
	for name, v := range args {
		if t.props[name] {
			continue
		}
		for _, to := range append(argAliases[name], snakeCase(name)) {
			if _, given := args[to]; t.props[to] && !given {
				args[to] = v
				delete(args, name)
				break
			}
		}
	}
}

// snakeCase spells a camelCase name in snake_case.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if 'A' <= r && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// objectArgs takes arguments as they come: a JSON object, nothing (no
// arguments), or a JSON string holding an object, as OpenAI's function
// calling delivers them. The string's content is then the arguments, and
// every check that follows (sizes, schema) applies to it.
func objectArgs(raw json.RawMessage) (json.RawMessage, *Error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return json.RawMessage("{}"), nil
	}
	if t[0] != '"' {
		return raw, nil
	}
	var s string
	if err := json.Unmarshal(t, &s); err != nil {
		return nil, Errorf(InvalidParams, "arguments are not valid JSON: %v", err).
			WithDetails(map[string]any{"violations": []schema.Violation{{Pointer: "", Reason: "not valid JSON"}}})
	}
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("{}"), nil
	}
	if !json.Valid([]byte(s)) {
		return nil, Errorf(InvalidParams, "arguments are a string that does not hold JSON: pass an object, or a string holding a JSON object").
			WithDetails(map[string]any{"violations": []schema.Violation{{Pointer: "", Reason: "a string that does not hold JSON"}}})
	}
	return json.RawMessage(s), nil
}

// maxLoggedArgs is the size of refused arguments kept in the history.
const maxLoggedArgs = 64 << 10

// refusedArgs is what the history keeps of arguments that were refused:
// themselves when small, else a marker, so that an oversize value never
// reaches the log.
func refusedArgs(raw json.RawMessage) json.RawMessage {
	if len(raw) <= maxLoggedArgs {
		return nil // the request's own arguments are logged
	}
	b, _ := json.Marshal(map[string]string{"_refused": fmt.Sprintf("%d bytes of arguments, not logged", len(raw))})
	return b
}

// unknown builds UNKNOWN_TOOL with the closest names as a hint.
func (r *Runner) unknown(name string, cfg *workspace.Config, agent string) *Error {
	var names []string
	for _, t := range r.Available(cfg, agent) {
		names = append(names, t.Name)
	}
	sort.Slice(names, func(i, j int) bool { return distance(name, names[i]) < distance(name, names[j]) })
	hint := names
	if len(hint) > 3 {
		hint = hint[:3]
	}
	return Errorf(UnknownTool, "unknown tool %q; did you mean %s?", name, strings.Join(hint, ", ")).
		WithDetails(map[string]any{"available": names})
}

// distance is the Levenshtein distance, case-insensitive.
func distance(a, b string) int {
	a, b = strings.ToLower(a), strings.ToLower(b)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
