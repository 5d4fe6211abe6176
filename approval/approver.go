package approval

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Request is the approval/request of docs/protocol.md ("Approval").
type Request struct {
	CallID    string          `json:"callId"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Reason    string          `json:"reason,omitempty"`
	Risk      Risk            `json:"risk"`
	Warning   string          `json:"warning,omitempty"`
	Preview   *Preview        `json:"preview,omitempty"`
	// Options are the answers the person may give: OptionsFor the risk.
	Options []string `json:"options"`
	// AlwaysLabel says in words what "always" would cover; set exactly when
	// Options holds Always.
	AlwaysLabel string `json:"alwaysLabel,omitempty"`
	// Agent names who asks (the call's agent), when known.
	Agent string `json:"agent,omitempty"`
	// Cwd is the absolute folder a command runs in (shell_exec,
	// shell_background, run_code).
	Cwd string `json:"cwd,omitempty"`
	// ExpiresAt (RFC 3339, UTC, milliseconds) is when the server rejects
	// the request by itself; TimeoutMs is how long that was from the moment
	// the request was sent (Stamp), for clients whose clock disagrees with
	// the server's. Both are set by Expire.
	ExpiresAt string `json:"expiresAt,omitempty"`
	TimeoutMs *int64 `json:"timeoutMs,omitempty"`
	// Deadline (ExpiresAt to the second) and TimeoutSeconds (the configured
	// approval.timeoutSeconds) are the older spelling of the same deadline,
	// kept for clients that read them.
	Deadline       string `json:"deadline,omitempty"`
	TimeoutSeconds int    `json:"timeoutSeconds,omitempty"`
}

// expiresAtLayout is RFC 3339 in UTC with milliseconds.
const expiresAtLayout = "2006-01-02T15:04:05.000Z07:00"

// Expire sets the deadline fields: the server rejects the request by
// itself timeout after now. TimeoutMs is the whole timeout until Stamp
// says how much of it is left when the request is sent.
func (r *Request) Expire(now time.Time, timeout time.Duration) {
	at := now.Add(timeout).UTC()
	r.ExpiresAt = at.Format(expiresAtLayout)
	r.Deadline = at.Format(time.RFC3339)
	r.TimeoutSeconds = int(timeout / time.Second)
	r.Stamp(now)
}

// Stamp sets TimeoutMs to what is left of the deadline at now (never
// below zero): a channel calls it right before the request leaves. It does
// nothing to a request without ExpiresAt.
func (r *Request) Stamp(now time.Time) {
	at, err := time.Parse(time.RFC3339Nano, r.ExpiresAt)
	if err != nil {
		return
	}
	left := max(at.Sub(now).Milliseconds(), 0)
	r.TimeoutMs = &left
}

// Offers reports whether the request offers decision.
func (r Request) Offers(decision string) bool {
	for _, o := range r.Options {
		if o == decision {
			return true
		}
	}
	return false
}

// Preview shows a person what an edit would change.
type Preview struct {
	UnifiedDiff string        `json:"unifiedDiff"`
	Files       []FilePreview `json:"files"`
}

// FilePreview is one file of a Preview.
type FilePreview struct {
	Path      string  `json:"path"` // relative to the first root
	URI       string  `json:"uri"`
	NewPath   string  `json:"newPath,omitempty"` // rename only
	Operation string  `json:"operation"`         // create, modify, delete, rename
	OldText   *string `json:"oldText,omitempty"`
	NewText   *string `json:"newText,omitempty"`
}

// The decisions a person can give.
const (
	Approve = "approve"
	Reject  = "reject"
	Always  = "always"
)

// OptionsFor returns the answers a request of that risk offers: approve,
// reject and always, except for a dangerous call, which is never remembered
// (a person approves each one).
func OptionsFor(risk Risk) []string {
	if risk == RiskDangerous {
		return []string{Approve, Reject}
	}
	return []string{Approve, Reject, Always}
}

// Response is the person's answer.
type Response struct {
	Decision          string          `json:"decision"`
	Message           string          `json:"message,omitempty"`
	ModifiedArguments json.RawMessage `json:"modifiedArguments,omitempty"`
}

// Approver asks a person. Ask blocks until the person answers or ctx ends;
// it returns an error only when the channel to the person broke, and the
// caller then treats the call as rejected. Implementations must be safe for
// concurrent use: several calls may wait at once.
type Approver interface {
	Ask(ctx context.Context, req Request) (Response, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, req Request) (Response, error)

// Ask implements Approver.
func (f ApproverFunc) Ask(ctx context.Context, req Request) (Response, error) { return f(ctx, req) }

var _ Approver = ApproverFunc(nil)

// Fixed answers every request with the same decision: the call command's
// --approve yes and --approve no.
func Fixed(decision, message string) Approver {
	return ApproverFunc(func(context.Context, Request) (Response, error) {
		return Response{Decision: decision, Message: message}, nil
	})
}

// Terminal asks on a terminal: it prints the request to out and reads an
// answer line from in. One question is on screen at a time.
type Terminal struct {
	mu  sync.Mutex
	in  *bufio.Reader
	out io.Writer
}

// NewTerminal returns a terminal approver.
func NewTerminal(in io.Reader, out io.Writer) *Terminal {
	return &Terminal{in: bufio.NewReader(in), out: out}
}

// Ask implements Approver.
func (t *Terminal) Ask(ctx context.Context, req Request) (Response, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	who := "the agent"
	if req.Agent != "" {
		who = req.Agent
	}
	fmt.Fprintf(t.out, "\nagentls: %s wants to run %s (risk: %s)\n", who, req.Tool, req.Risk)
	if req.Cwd != "" {
		fmt.Fprintf(t.out, "in: %s\n", req.Cwd)
	}
	if req.Reason != "" {
		fmt.Fprintf(t.out, "reason: %s\n", req.Reason)
	}
	if req.Warning != "" {
		fmt.Fprintf(t.out, "WARNING: %s\n", req.Warning)
	}
	fmt.Fprintf(t.out, "arguments: %s\n", req.Arguments)
	if req.Preview != nil && req.Preview.UnifiedDiff != "" {
		fmt.Fprintf(t.out, "%s\n", strings.TrimRight(req.Preview.UnifiedDiff, "\n"))
	}
	type answer struct {
		line string
		err  error
	}
	always := req.Offers(Always)
	prompt := "approve? [y]es / [n]o: "
	if always {
		label := req.AlwaysLabel
		if label == "" {
			label = "always"
		}
		prompt = fmt.Sprintf("approve? [y]es / [n]o / [a] %s: ", label)
	}
	for {
		fmt.Fprint(t.out, prompt)
		ch := make(chan answer, 1)
		go func() {
			line, err := t.in.ReadString('\n')
			ch <- answer{line, err}
		}()
		var a answer
		select {
		case <-ctx.Done():
			return Response{}, ctx.Err()
		case a = <-ch:
		}
		switch strings.ToLower(strings.TrimSpace(a.line)) {
		case "y", "yes":
			return Response{Decision: Approve}, nil
		case "a", "always":
			if always {
				return Response{Decision: Always}, nil
			}
		case "n", "no":
			return Response{Decision: Reject, Message: "rejected on the terminal"}, nil
		}
		if errors.Is(a.err, io.EOF) {
			return Response{Decision: Reject, Message: "nobody answered: the terminal's input ended before an answer (run with --approve yes or no)"}, nil
		}
		if a.err != nil {
			return Response{}, fmt.Errorf("read answer: %w", a.err)
		}
	}
}
