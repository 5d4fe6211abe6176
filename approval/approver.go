package approval

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Request is the approval/request of PROTOCOL.md section 5.
type Request struct {
	CallID    string          `json:"callId"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Reason    string          `json:"reason,omitempty"`
	Risk      Risk            `json:"risk"`
	Warning   string          `json:"warning,omitempty"`
	Preview   *Preview        `json:"preview,omitempty"`
	Options   []string        `json:"options"`
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

// Options is what every request offers.
var Options = []string{Approve, Reject, Always}

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
	fmt.Fprintf(t.out, "\nagentls: %s wants to run (risk: %s)\n", req.Tool, req.Risk)
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
	for {
		fmt.Fprint(t.out, "approve? [y]es / [n]o / [a]lways: ")
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
			return Response{Decision: Always}, nil
		case "n", "no":
			return Response{Decision: Reject, Message: "rejected on the terminal"}, nil
		}
		if a.err != nil {
			return Response{}, fmt.Errorf("read answer: %w", a.err)
		}
	}
}
