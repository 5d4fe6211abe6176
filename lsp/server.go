package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/redact"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// Options configure a server.
type Options struct {
	Runner  *tools.Runner
	Log     *slog.Logger
	Version string
	// DefaultRoot is the workspace root for clients that name none.
	DefaultRoot string
	// ConfigFile replaces the user config file (the --config flag).
	ConfigFile string
	// Token, when set, gates every connection: its first message must be
	// initialize with initializationOptions.token equal to Token; anything
	// else closes the connection unanswered. Listeners set it; stdio does not.
	Token string
}

// Serve speaks LSP on rwc until the client sends exit or the connection
// ends, and returns the exit code the LSP specification asks for: 0 after
// shutdown, 1 otherwise.
func Serve(ctx context.Context, rwc io.ReadWriteCloser, opts Options) int {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	opts.Log = redact.Logger(opts.Log) // the debug log never holds a secret it can recognise
	go redact.Load()                   // the rules, before the first call needs them
	s := newSession(ctx, rwc, opts)
	defer s.stop()
	select {
	case <-s.conn.Done():
	case <-ctx.Done():
		s.conn.Close()
		<-s.conn.Done()
	}
	if err := s.conn.Err(); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.ErrClosedPipe) {
		opts.Log.Info("connection ended", "err", err)
	}
	return s.exitCode()
}

// ListenAndServe serves one session per connection on l until ctx ends.
// opts.Token is required: every connection must present it (see the
// internal/listen package for the listener and its token).
func ListenAndServe(ctx context.Context, l net.Listener, opts Options) error {
	if opts.Token == "" {
		return errors.New("listen: a listening server needs a token")
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			remote := "?"
			if a := c.RemoteAddr(); a != nil {
				remote = a.Network() + ":" + a.String()
			}
			log := opts.Log.With("remote", remote)
			o := opts
			o.Log = log
			log.Info("session start")
			code := Serve(ctx, c, o)
			log.Info("session end", "exit", code)
		}()
	}
}

type state int

const (
	stateNew state = iota
	stateRunning
	stateShutdown
	stateExited
)

// session is one client connection.
type session struct {
	opts Options
	log  *slog.Logger
	conn jsonrpc2.Conn
	// ctx is the context of calls: it ends at shutdown or when the client
	// goes away, which cancels every running call.
	ctx    context.Context
	cancel context.CancelFunc

	ws      *workspace.Workspace
	configs workspace.ConfigStack
	env     *tools.Env

	mu       sync.Mutex
	state    state
	shutSeen bool // shutdown was received: exit code 0
	caps     clientCaps
	inflight map[string]context.CancelCauseFunc // request id (%q form) -> cancel
	calls    sync.WaitGroup
}

func newSession(ctx context.Context, rwc io.ReadWriteCloser, opts Options) *session {
	sctx, cancel := context.WithCancel(ctx)
	ws, _ := workspace.New()
	s := &session{
		opts: opts, log: opts.Log, ctx: sctx, cancel: cancel, ws: ws,
		inflight: map[string]context.CancelCauseFunc{},
	}
	s.configs.UserFile = opts.ConfigFile
	st := newStream(rwc, opts.Log)
	if opts.Token != "" {
		st.requireToken(opts.Token)
	}
	st.early = s.earlyAnswer
	s.conn = jsonrpc2.NewConn(st)
	s.conn.Go(ctx, s.handle)
	go func() {
		<-s.conn.Done()
		cancel() // a client that disconnects cancels its running calls
	}()
	return s
}

// stop cancels every running call and waits for them to finish.
func (s *session) stop() {
	s.cancel()
	s.calls.Wait()
	s.mu.Lock()
	env := s.env
	s.mu.Unlock()
	if env != nil {
		tools.CloseSession(env.Session) // background shells end with the session
	}
}

func (s *session) exitCode() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutSeen {
		return 0
	}
	return 1
}

// clientCaps returns what the client declared in initialize.
func (s *session) clientCaps() clientCaps {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

func (s *session) getState() state {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// handle dispatches one message. It always replies to a call and returns nil.
func (s *session) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	method := req.Method()
	_, isCall := req.(*jsonrpc2.Call)
	if method == "exit" {
		s.exit()
		return nil
	}
	switch st := s.getState(); {
	case st == stateNew && method != "initialize":
		if isCall {
			return reply(ctx, nil, jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "the server is not initialized: send initialize first"))
		}
		return nil // notifications before initialize are dropped
	case st >= stateShutdown:
		if isCall {
			return reply(ctx, nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "the server is shutting down: only exit is accepted"))
		}
		return nil
	}
	if !isCall {
		s.notification(ctx, req)
		return nil
	}
	switch method {
	case "initialize":
		return s.initialize(ctx, reply, req.Params())
	case "shutdown":
		return s.shutdown(ctx, reply)
	}
	h, ok := s.requestHandler(method)
	if !ok {
		return reply(ctx, nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, "method not found: "+method))
	}
	// Requests run on their own goroutine so that none waits for another.
	id := idKey(req.(*jsonrpc2.Call).ID())
	rctx, cancel := context.WithCancelCause(s.ctx)
	s.mu.Lock()
	s.inflight[id] = cancel
	s.mu.Unlock()
	s.calls.Add(1)
	go func() {
		defer s.calls.Done()
		defer func() {
			s.mu.Lock()
			delete(s.inflight, id)
			s.mu.Unlock()
			cancel(nil)
		}()
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("handler panicked", "method", method, "panic", p)
				_ = reply(context.Background(), nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "internal error in %s: %v", method, p))
			}
		}()
		result, err := h(rctx, req.Params())
		if rctx.Err() != nil && errors.Is(context.Cause(rctx), errCancelled) {
			result, err = nil, jsonrpc2.NewError(requestCancelled, "request cancelled")
		}
		if rerr := reply(context.Background(), result, err); rerr != nil {
			s.log.Warn("reply", "method", method, "err", rerr)
		}
	}()
	return nil
}

// requestCancelled is LSP's RequestCancelled error code.
const requestCancelled jsonrpc2.Code = -32800

var errCancelled = errors.New("cancelled by the client ($/cancelRequest)")

type handlerFunc func(ctx context.Context, params json.RawMessage) (any, error)

func (s *session) requestHandler(method string) (handlerFunc, bool) {
	switch method {
	case "tool/list":
		return s.toolList, true
	case "tool/call":
		return s.toolCall, true
	case "tool/metrics":
		return s.toolMetrics, true
	case "tool/history":
		return s.toolHistory, true
	case "approval/rules":
		return s.approvalRules, true
	}
	return s.featureHandler(method)
}

// notification handles a notification in order, on the reading goroutine.
func (s *session) notification(ctx context.Context, req jsonrpc2.Request) {
	p := req.Params()
	var err error
	switch req.Method() {
	case "initialized":
		s.initialized()
	case "$/cancelRequest":
		s.cancelRequest(p)
	case "textDocument/didOpen":
		err = s.didOpen(p)
	case "textDocument/didChange":
		err = s.didChange(p)
	case "textDocument/didClose":
		err = s.didClose(p)
	case "textDocument/didSave":
		err = s.didSave(p)
	case "workspace/didChangeWorkspaceFolders":
		err = s.didChangeWorkspaceFolders(p)
	case "workspace/didChangeConfiguration":
		err = s.didChangeConfiguration(p)
	case "workspace/didChangeWatchedFiles":
		err = s.didChangeWatchedFiles(p)
	default:
		s.log.Debug("notification ignored", "method", req.Method())
	}
	if err != nil {
		s.log.Warn("notification failed", "method", req.Method(), "err", err)
	}
}

// idKey is the id's unambiguous form: #5 for a number, "x" for a string.
func idKey(id jsonrpc2.ID) string { return fmt.Sprintf("%q", id) }

// cancelRequest cancels a running request. Numeric ids arrive as JSON
// numbers of any form; they are matched by value.
func (s *session) cancelRequest(params json.RawMessage) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.ID) == 0 {
		return
	}
	var id jsonrpc2.ID
	var n float64
	var str string
	switch {
	case json.Unmarshal(p.ID, &str) == nil:
		id = jsonrpc2.NewStringID(str)
	case json.Unmarshal(p.ID, &n) == nil:
		id = jsonrpc2.NewNumberID(int32(n))
	default:
		return
	}
	s.mu.Lock()
	cancel := s.inflight[idKey(id)]
	s.mu.Unlock()
	if cancel != nil {
		cancel(errCancelled)
	}
}

func (s *session) shutdown(ctx context.Context, reply jsonrpc2.Replier) error {
	s.mu.Lock()
	s.state = stateShutdown
	s.shutSeen = true
	s.mu.Unlock()
	s.cancel() // running calls end now; their replies go out before ours
	s.calls.Wait()
	return reply(ctx, nil, nil)
}

func (s *session) exit() {
	s.mu.Lock()
	s.state = stateExited
	s.mu.Unlock()
	s.conn.Close()
}
