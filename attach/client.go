package attach

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/listen"
	"github.com/agentls/agentls/tools"
)

// ErrStale says that a session's socket refused the connection: its files
// were removed.
var ErrStale = errors.New("the editor session is gone (its socket refuses connections); its entry was removed")

// dialTimeout bounds connecting and the answer to initialize: a session
// that does not answer in time is an error, never a hang.
var dialTimeout = 10 * time.Second

// Tool is a tool as an attached session lists it: the agentls definition
// and the tool's usual risk.
type Tool struct {
	tools.Definition
	Risk approval.Risk `json:"risk,omitempty"`
}

// AsTool is t as a tools.Tool (its definition only: it cannot run here).
func (t Tool) AsTool() *tools.Tool {
	return &tools.Tool{
		Spec: tools.Spec{
			Name: t.Name, Title: t.Title, Description: t.Description,
			InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
			Annotations: t.Annotations, Aliases: t.Aliases, Risk: t.Risk,
		},
	}
}

// Client is a connection to a published session. Its calls run in the
// session; it is safe for concurrent use.
type Client struct {
	Session Descriptor
	rpc     *rpc

	next     atomic.Int64
	progress table[string, tools.Progress] // workDoneToken -> the call's progress
	changed  chan struct{}                 // tool/listChanged came; one pending at most
}

// Dial connects to d's socket, checks that the process there is the user's,
// and initializes with the token from d's token file; client names the
// connecting program. A socket that refuses the connection is stale: its
// files are removed and the error is ErrStale.
func Dial(ctx context.Context, d Descriptor, client string) (*Client, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	// Only the descriptor in Dir, checked by readDescriptor, is used,
	// whatever the caller holds.
	if !validID(d.ID) {
		return nil, fmt.Errorf("%q is not a session id", d.ID)
	}
	if d, err = readDescriptor(dir, filepath.Join(dir, d.ID+".json")); err != nil {
		return nil, fmt.Errorf("session %s: %w", d.ID, err)
	}
	token, err := listen.ReadToken(d.TokenFile)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", d.ID, err)
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := dialUser(ctx, d.Socket)
	if err != nil {
		if isRefused(err) {
			removeStale(dir, d)
			return nil, fmt.Errorf("session %s: %w", d.ID, ErrStale)
		}
		return nil, fmt.Errorf("session %s: %w", d.ID, err)
	}
	cl := &Client{Session: d, changed: make(chan struct{}, 1)}
	cl.rpc = newRPC(c, cl.handle)
	params := map[string]any{
		"processId":             os.Getpid(),
		"clientInfo":            map[string]string{"name": client},
		"capabilities":          map[string]any{},
		"initializationOptions": map[string]string{"token": token},
	}
	var res json.RawMessage
	if err := cl.rpc.call(ctx, "initialize", params, &res); err != nil {
		cl.rpc.close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("session %s did not answer within %s", d.ID, dialTimeout)
		}
		return nil, fmt.Errorf("session %s refused the connection: %w", d.ID, err)
	}
	return cl, nil
}

// dialUser connects to the Unix socket at path and checks that the process
// there runs as this user (SO_PEERCRED).
func dialUser(ctx context.Context, path string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	if uid, err := listen.PeerUID(c); err != nil || uid != os.Getuid() {
		c.Close()
		if err == nil {
			err = fmt.Errorf("the socket's process runs as uid %d, not as this user (uid %d)", uid, os.Getuid())
		}
		return nil, fmt.Errorf("refused: %w", err)
	}
	return c, nil
}

// Connect finds the session for cwd (Find) and dials it; a stale session
// found on the way is removed and the search goes on.
func Connect(ctx context.Context, cwd, id, client string) (*Client, string, error) {
	for {
		d, root, err := Find(cwd, id)
		if err != nil {
			return nil, "", err
		}
		c, err := Dial(ctx, d, client)
		if errors.Is(err, ErrStale) {
			continue
		}
		return c, root, err
	}
}

// Tools lists the tools agent may call in the session ("" for the
// session's default agent).
func (c *Client) Tools(ctx context.Context, agent string) ([]Tool, error) {
	var res struct {
		Tools []Tool `json:"tools"`
	}
	if err := c.rpc.call(ctx, "tool/list", map[string]string{"agent": agent}, &res); err != nil {
		return nil, err
	}
	return res.Tools, nil
}

// Call runs one call in the session. Progress reports the session sends
// reach p (may be nil). An error means the call's result never came: the
// connection ended, or ctx did (then the session is told to cancel it).
//
// The arguments go to the session as they are, byte for byte, when they
// are valid JSON. The result's structured part stays as the session
// encoded it (a json.RawMessage), not decoded into maps.
func (c *Client) Call(ctx context.Context, req tools.Request, p tools.Progress) (*tools.Result, error) {
	params := callParams{Name: req.Name, CallID: req.CallID, Reason: req.Reason, Agent: req.Agent}
	if p != nil {
		tok := "p" + strconv.FormatInt(c.next.Add(1), 10)
		params.WorkDoneToken = tok
		defer c.progress.put(tok, p)()
	}
	body, err := params.encode(req.Arguments)
	if err != nil {
		return nil, err
	}
	var a callAnswer
	if err := c.rpc.callRaw(ctx, "tool/call", body, &a); err != nil {
		return nil, err
	}
	res := a.Result
	if len(a.Structured) > 0 && string(a.Structured) != "null" {
		res.Structured = a.Structured
	}
	return &res, nil
}

// callParams are tool/call's params as an attached client sends them,
// but for the arguments (encode).
type callParams struct {
	Name          string `json:"name"`
	CallID        string `json:"callId,omitempty"`
	Reason        string `json:"reason,omitempty"`
	Agent         string `json:"agent,omitempty"`
	WorkDoneToken string `json:"workDoneToken,omitempty"`
}

// encode is p's JSON with args as its member arguments: args as they are
// when they are valid JSON, else what json.Marshal makes of them (an
// error, or null for none).
func (p callParams) encode(args json.RawMessage) ([]byte, error) {
	rest, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 || !json.Valid(args) {
		if args, err = json.Marshal(args); err != nil {
			return nil, err
		}
	}
	// rest is {"name":…}: never empty, name has no omitempty.
	b := make([]byte, 0, len(`{"arguments":,`)+len(args)+len(rest))
	b = append(append(append(b, `{"arguments":`...), args...), ',')
	return append(b, rest[1:]...), nil
}

// callAnswer is tool/call's result as Call decodes it.
type callAnswer struct {
	tools.Result
	Structured json.RawMessage `json:"structured,omitempty"`
}

// ErrEnded says that the connection to the session ended (the editor
// session closed) before the answer came.
var ErrEnded = errors.New("the editor session ended")

// ToolsChanged receives a value after the session said that the list of
// tools may have changed (its configuration changed): Tools lists the new
// one. Changes that come before the value is taken make one value.
func (c *Client) ToolsChanged() <-chan struct{} { return c.changed }

// handle takes the session's notifications: $/progress of a call, and
// tool/listChanged.
func (c *Client) handle(method string, params json.RawMessage) {
	if method == "tool/listChanged" {
		select {
		case c.changed <- struct{}{}:
		default:
		}
		return
	}
	if method != "$/progress" {
		return
	}
	var p struct {
		Token string `json:"token"`
		Value struct {
			Kind       string `json:"kind"`
			Message    string `json:"message"`
			Percentage *int   `json:"percentage"`
		} `json:"value"`
	}
	if json.Unmarshal(params, &p) != nil || p.Value.Kind != "report" {
		return
	}
	if pr := c.progress.get(p.Token); pr != nil {
		pct := -1
		if p.Value.Percentage != nil {
			pct = *p.Value.Percentage
		}
		pr.Report(p.Value.Message, pct)
	}
}

// Done is closed when the connection ends (the editor session ended).
func (c *Client) Done() <-chan struct{} { return c.rpc.done }

// Close ends the connection.
func (c *Client) Close() error {
	c.rpc.close()
	return nil
}
