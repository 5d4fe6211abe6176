package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/schema"
	"github.com/agentls/agentls/workspace"
)

// Annotations describe a tool's effects.
type Annotations struct {
	ReadOnly    bool   `json:"readOnly"`
	Destructive bool   `json:"destructive"`
	Dangerous   bool   `json:"dangerous"`
	Approval    string `json:"approval"` // "auto", "ask" or "conditional"
}

// Categories are the values of Tool.Category.
var Categories = []string{"fs", "git", "code", "shell", "web", "system", "custom"}

// Spec describes a tool: what the registry lists and the policy reads.
type Spec struct {
	Name string
	// Category groups tools for people and agents: fs, git, code (code
	// intelligence), shell, web, system, custom (Categories).
	Category     string
	Title        string
	Description  string
	InputSchema  json.RawMessage // a JSON Schema object with additionalProperties: false
	OutputSchema json.RawMessage // optional: the shape of Result.Structured
	Annotations  Annotations
	Aliases      []string
	// Risk is the call's usual risk when it asks (write, execute, network).
	Risk approval.Risk
	// Timeout bounds Execute; zero means the configured tools.timeoutSeconds.
	Timeout time.Duration
	// Cacheable marks a read-only, idempotent tool whose answers the
	// session's result cache may keep (resultcache.go): Execute declares
	// what its answer depends on (Call.dependsOnFile, dependsOnBuffer), and
	// an answer that declares nothing is not kept.
	Cacheable bool
	// Instant marks a tool whose Execute returns at once, without blocking
	// or waiting on anything (it reads the session's state, the clock): the
	// runner calls it on the call's own goroutine, without the deadline
	// of Timeout, instead of starting one to bound it by Timeout (runner.go,
	// executeOnce). A tool that reads the workspace's files, runs processes
	// or waits on the network is never Instant.
	Instant bool
}

// Tool is one tool, as the registry holds it: its Spec and its functions.
// Make one with Define. A Tool is immutable once registered; its functions
// may run concurrently for several calls.
type Tool struct {
	Spec

	// fns are the definition's functions with the arguments' type erased.
	fns funcs
	// input compiles InputSchema once, on first use: a one-shot `agentls
	// call` pays only for the tool it runs.
	input func() (*schema.Schema, error)
	// emptyArgs is what prepare makes of the arguments {}, computed once:
	// the same for every call (schema.go's checks and defaults).
	emptyArgs func() (json.RawMessage, bool)
	// bounds are the size caps of the arguments (bounds.go).
	bounds *bounds
	// props are the top-level argument names InputSchema declares.
	props map[string]bool
}

// Def is the definition of a tool whose arguments decode into A. The
// arguments are checked against InputSchema, the schema's defaults are
// applied, and then they are decoded into A once per call: Validate, Assess
// and Execute all receive that value.
type Def[A any] struct {
	Spec

	// Validate, when set, checks the arguments after the schema did. It
	// returns a *Error (usually INVALID_PARAMS). It runs before anything is
	// asked, and again on arguments the person edited.
	Validate func(a A) error
	// Assess, when set, describes one call before approval: whether a
	// conditional tool's call needs approval, its risk, a warning, a preview.
	// It must not change anything. An error is reported like Execute's.
	Assess func(c *Call, a A) (Assessment, error)
	// Execute does the work. It is required.
	Execute func(c *Call, a A) (*Result, error)
}

// funcs are a definition's functions on decoded arguments of any type.
type funcs struct {
	decode   func(raw json.RawMessage) (any, error)
	validate func(a any) error
	assess   func(c *Call, a any) (Assessment, error)
	execute  func(c *Call, a any) (*Result, error)
}

// Define makes a Tool of d; Registry.Register checks it.
func Define[A any](d Def[A]) *Tool {
	t := &Tool{Spec: d.Spec}
	t.fns.decode = func(raw json.RawMessage) (any, error) {
		var a A
		err := json.Unmarshal(raw, &a)
		return a, err
	}
	if d.Validate != nil {
		t.fns.validate = func(a any) error { return d.Validate(a.(A)) }
	}
	if d.Assess != nil {
		t.fns.assess = func(c *Call, a any) (Assessment, error) { return d.Assess(c, a.(A)) }
	}
	if d.Execute != nil {
		t.fns.execute = func(c *Call, a any) (*Result, error) { return d.Execute(c, a.(A)) }
	}
	return t
}

// Assessment is a tool's description of one call before it runs.
type Assessment struct {
	approval.Assessment
	// Preview shows the person what the call would change.
	Preview *approval.Preview
	// Edit is the edit plan of a tool that changes files; the runner may
	// let the editor's own preview ask for it.
	Edit *workspace.Plan
}

// compile checks the definition; its schemas are compiled on first use
// (checkSchemas compiles them now).
func (t *Tool) compile() error {
	if t.Name == "" || t.fns.execute == nil {
		return fmt.Errorf("tool %q: name and Execute are required", t.Name)
	}
	if t.Category != "" && !slices.Contains(Categories, t.Category) {
		return fmt.Errorf("tool %s: category %q is not one of %v", t.Name, t.Category, Categories)
	}
	switch t.Annotations.Approval {
	case "auto", "ask", "conditional":
	default:
		return fmt.Errorf("tool %s: approval %q is not auto, ask or conditional", t.Name, t.Annotations.Approval)
	}
	if t.Cacheable && !t.Annotations.ReadOnly {
		return fmt.Errorf("tool %s: only a read-only tool may be cacheable", t.Name)
	}
	if len(t.InputSchema) == 0 {
		t.InputSchema = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	}
	if !json.Valid(t.InputSchema) || len(t.OutputSchema) > 0 && !json.Valid(t.OutputSchema) {
		return fmt.Errorf("tool %s: a schema is not valid JSON", t.Name)
	}
	// Every string gets a cap the schema states (bounds.go).
	bounded, b, err := boundSchema(t.InputSchema)
	if err != nil {
		return fmt.Errorf("tool %s: input schema: %w", t.Name, err)
	}
	t.InputSchema, t.bounds = bounded, b
	var decl struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(t.InputSchema, &decl) // valid JSON, checked above
	t.props = map[string]bool{}
	for name := range decl.Properties {
		t.props[name] = true
	}
	raw, name := t.InputSchema, t.Name
	t.input = sync.OnceValues(func() (*schema.Schema, error) {
		s, err := schema.Compile(raw)
		if err != nil {
			return nil, fmt.Errorf("tool %s: input schema: %w", name, err)
		}
		return s, nil
	})
	compiled := t.input
	t.emptyArgs = sync.OnceValues(func() (json.RawMessage, bool) {
		input, err := compiled()
		if err != nil {
			return nil, false
		}
		v := map[string]any{}
		if input.Validate(v) != nil {
			return nil, false // the slow path reports the violations
		}
		input.ApplyDefaults(v)
		b, err := json.Marshal(v)
		return b, err == nil
	})
	return nil
}

// checkSchemas compiles the tool's input and output schemas now.
func (t *Tool) checkSchemas() error {
	if _, err := t.input(); err != nil {
		return err
	}
	if len(t.OutputSchema) > 0 {
		if _, err := schema.Compile(t.OutputSchema); err != nil {
			return fmt.Errorf("tool %s: output schema: %w", t.Name, err)
		}
	}
	return nil
}

func (t *Tool) policyTool() approval.Tool {
	return approval.Tool{
		Name: t.Name, ReadOnly: t.Annotations.ReadOnly, Dangerous: t.Annotations.Dangerous,
		Approval: t.Annotations.Approval, Risk: t.Risk,
	}
}

// Model is the model the client declared in initializationOptions
// (model: {name, provider}); a tool that adapts to the model reads it
// from its Call. Empty when the client did not say.
type Model struct {
	Name     string `json:"name"`
	Provider string `json:"provider,omitempty"` // e.g. anthropic, openai, google
}

// Progress reports on a running call. Implementations must be safe for
// concurrent use and must not block for long.
type Progress interface {
	// Report sends a message and, when percent >= 0, a percentage.
	Report(message string, percent int)
	// Partial sends a batch of partial results (grep matches), when the
	// client gave a partialResultToken.
	Partial(v any)
}

type noProgress struct{}

func (noProgress) Report(string, int) {}
func (noProgress) Partial(any)        {}

// Call is the context a tool executes in.
type Call struct {
	// Ctx ends when the call is cancelled or times out.
	Ctx       context.Context
	ID        string
	Tool      *Tool
	Reason    string
	Agent     string
	Workspace *workspace.Workspace
	Session   *Session
	Model     Model
	// Approver asks the person; tools that apply edits use it with their
	// own transport (see approval).
	Approver approval.Approver
	// Decision is how this call was approved.
	Decision approval.Decision
	// Assessed is what Assess said of the call (its edit plan, preview).
	Assessed Assessment
	// Editor applies edits in the person's editor; nil without one.
	Editor Editor
	// ConfirmInEditor is set when the approval was left to the editor's own
	// preview of the edit: applying it is asking.
	ConfirmInEditor bool
	Progress        Progress
	Log             *slog.Logger
	// Events reports fileChanged and other events of the call.
	Events Events

	// deps collects what the answer depends on, when the session's result
	// cache may keep it (resultcache.go); nil otherwise.
	deps *cacheDeps
}

// FileChanged reports a change a tool made.
func (c *Call) FileChanged(path, operation string) {
	c.Events.Event(Event{CallID: c.ID, Tool: c.Tool.Name, Kind: "fileChanged", Path: c.Workspace.Rel(path), Operation: operation})
}
