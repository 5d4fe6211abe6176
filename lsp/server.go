package lsp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/redact"
	"github.com/agentls/agentls/session"
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
	// Publish lets other programs of the user's attach to the session
	// (lsp/attach.go): `agentls serve` on stdio sets it.
	Publish bool

	host    *server           // the editor's server, for an attached client's server
	methods map[string]method // replaces the method table (tests)
}

// Serve speaks LSP on rwc until the client sends exit or the connection
// ends, and returns the exit code the LSP specification asks for: 0 after
// shutdown, 1 otherwise.
func Serve(ctx context.Context, rwc io.ReadWriteCloser, opts Options) int {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	opts.Log = redact.Logger(opts.Log) // the debug log never holds a secret it can recognise
	s := newServer(ctx, rwc, opts)
	go s.loadRedaction() // the rules, before the first call needs them
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

// server is one client connection and its session.
type server struct {
	opts Options
	log  *slog.Logger
	conn jsonrpc2.Conn
	// ctx is the context of calls: it ends at shutdown or when the client
	// goes away, which cancels every running call.
	ctx    context.Context
	cancel context.CancelFunc

	// sess is the agentls session, made at initialize; ws is its workspace.
	// Both are set once, before the state becomes running.
	sess *session.Session
	ws   *workspace.Workspace
	st   *stream    // the connection's stream
	idx  indexState // the index's build and the diagnostics
	// answering holds the call ids of the tool/calls this connection runs
	// (tool.go): the result event of one goes out with its answer.
	answering sync.Map
	pub       *publication  // the published session (lsp/attach.go), or nil
	reg       registrations // what was registered with the client (registration.go)

	mu       sync.Mutex
	state    state
	shutSeen bool // shutdown was received: exit code 0
	caps     clientCaps
	inflight map[string]context.CancelCauseFunc // request id (%q form) -> cancel
	calls    sync.WaitGroup

	// work hands a request to a goroutine that waits for one; idle counts
	// them (dispatch.go, goAsync).
	work chan func()
	idle atomic.Int32
}

func newServer(ctx context.Context, rwc io.ReadWriteCloser, opts Options) *server {
	sctx, cancel := context.WithCancel(ctx)
	s := &server{
		opts: opts, log: opts.Log, ctx: sctx, cancel: cancel,
		inflight: map[string]context.CancelCauseFunc{}, work: make(chan func()),
	}
	st := newStream(rwc, opts.Log)
	if opts.Token != "" {
		st.requireToken(opts.Token)
	}
	st.early = s.earlyAnswer
	s.st = st
	s.conn = jsonrpc2.NewConn(st)
	s.conn.Go(ctx, s.handle)
	go func() {
		<-s.conn.Done()
		cancel() // a client that disconnects cancels its running calls
	}()
	return s
}

// stop cancels every running call and waits for them to finish.
func (s *server) stop() {
	s.cancel()
	s.calls.Wait()
	s.unpublish()
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess != nil && s.opts.host == nil { // an attached server's is its host's
		sess.Close() // background shells, the index and the cache end with it
	}
}

func (s *server) exitCode() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutSeen {
		return 0
	}
	return 1
}

// clientCaps returns what the client declared in initialize.
func (s *server) clientCaps() clientCaps {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

func (s *server) getState() state {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// shutdown ends every running call (their replies go out before its own)
// and lets in nothing but exit.
func (s *server) shutdown(context.Context, ignored) (any, error) {
	s.mu.Lock()
	s.state = stateShutdown
	s.shutSeen = true
	s.mu.Unlock()
	s.cancel() // running calls end now; their replies go out before ours
	s.calls.Wait()
	s.unpublish()
	return nil, nil
}

// exit ends the connection; Serve then returns the exit code.
func (s *server) exit(context.Context, ignored) error {
	s.mu.Lock()
	s.state = stateExited
	s.mu.Unlock()
	s.conn.Close()
	return nil
}
