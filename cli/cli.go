// Package cli is the agentls command line (docs/protocol.md, "Starting a
// session"): serve (stdio, a Unix socket or TCP), tools, call, mcp,
// sessions (the editor sessions mcp can attach to) and version. Each front
// end it starts opens its session with session.New. cmd/agentls only
// calls Main.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/attach"
	"github.com/agentls/agentls/internal/listen"
	"github.com/agentls/agentls/lsp"
	"github.com/agentls/agentls/redact"
	"github.com/agentls/agentls/search"
	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// Version and Commit are set at build time (-ldflags -X).
var (
	Version = "0.1.0-dev"
	Commit  = ""
)

// Exit codes of the call command.
const (
	exitOK       = 0
	exitToolErr  = 1
	exitUsage    = 2
	exitRejected = 3
)

// IO is the process's standard streams.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// StdinIsTerminal decides the call command's default --approve.
	StdinIsTerminal bool
}

const usage = `agentls: a language server that gives an agent's tools a home in the editor

usage:
  agentls [serve]                          LSP on stdio
  agentls serve --listen ADDR [--token-file FILE] [--allow-remote]
                                           LSP on ADDR (unix:PATH, or HOST:PORT on loopback
                                           unless --allow-remote), one session per connection;
                                           each must open with initialize carrying
                                           initializationOptions.token (from FILE, or generated
                                           into a 0600 file named on stderr)
  agentls tools [--format F] [--root DIR] [--agent NAME]
                                           tool definitions as JSON (F: agentls, openai, anthropic, mcp),
                                           with the custom tools of DIR's configuration
  agentls call TOOL [JSON] [--root DIR] [--approve ask|yes|no]
                                           run one tool and print its ToolResult
  agentls mcp [--root DIR] [--agent NAME] [--session ID]
                                           MCP server on stdio: attached to the editor's session
                                           on the workspace when there is one, else standalone
                                           (approvals by elicitation)
  agentls sessions [--json]                the editor sessions agentls mcp can attach to
  agentls version

global flags: --config FILE (user config), --log FILE, --log-level debug|info|warn|error,
  --cpuprofile FILE (serve, call and mcp: a CPU profile of the run, for go tool pprof)
call exit codes: 0 success, 1 tool error, 2 usage error, 3 rejected
`

// boolFlag names the flags that take no value.
var boolFlag = map[string]bool{"h": true, "help": true, "stdio": true, "allow-remote": true, "json": true, "standalone": true}

// globals are the flags every command takes.
type globals struct {
	config, logFile, logLevel, cpuProfile string
}

func (g *globals) register(fs *flag.FlagSet) {
	fs.StringVar(&g.config, "config", "", "user config file")
	fs.StringVar(&g.logFile, "log", "", "log file (default: stderr)")
	fs.StringVar(&g.logLevel, "log-level", "warn", "debug, info, warn or error")
	fs.StringVar(&g.cpuProfile, "cpuprofile", "", "serve, call and mcp: write a CPU profile of the run to this file (go tool pprof)")
}

// start opens the log and, with --cpuprofile, starts the CPU profile of
// the run; end stops the profile and closes the log (once, however often
// it is called).
func (g *globals) start(stderr io.Writer) (log *slog.Logger, end func(), err error) {
	log, closeLog, err := g.logger(stderr)
	if err != nil {
		return nil, nil, err
	}
	stopProfile := func() {}
	if g.cpuProfile != "" {
		f, err := os.Create(g.cpuProfile)
		if err == nil {
			if err = pprof.StartCPUProfile(f); err != nil {
				f.Close()
			}
		}
		if err != nil {
			closeLog()
			return nil, nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		stopProfile = func() {
			pprof.StopCPUProfile()
			f.Close()
		}
	}
	var once sync.Once
	return log, func() { once.Do(func() { stopProfile(); closeLog() }) }, nil
}

// logger opens the log. It never writes to stdout.
func (g *globals) logger(stderr io.Writer) (*slog.Logger, func(), error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(g.logLevel)); err != nil {
		return nil, nil, fmt.Errorf("--log-level: %w", err)
	}
	w, closer := stderr, func() {}
	if g.logFile != "" {
		f, err := os.OpenFile(g.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("--log: %w", err)
		}
		w, closer = f, func() { f.Close() }
	}
	// Every line goes through package redact: no secret it can recognise,
	// no string over redact.Cap.
	return slog.New(redact.NewHandler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))), closer, nil
}

// parse parses flags that may come before, between or after positional
// arguments, and returns the positional ones.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdio IO) int {
	// The command is the first argument that is not a flag or a flag's
	// value, so that global flags may come before it.
	cmd := "serve"
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			cmd = a
			args = append(append([]string(nil), args[:i]...), args[i+1:]...)
			break
		}
		if !strings.Contains(a, "=") && !boolFlag[strings.TrimLeft(a, "-")] {
			i++ // skip the flag's value: every flag here takes one
		}
	}
	var g globals
	fs := flag.NewFlagSet("agentls "+cmd, flag.ContinueOnError)
	fs.SetOutput(stdio.Stderr)
	fs.Usage = func() { fmt.Fprint(stdio.Stderr, usage) }
	g.register(fs)
	switch cmd {
	case "serve":
		var lo listenFlags
		fs.StringVar(&lo.addr, "listen", "", "serve on unix:PATH or a loopback HOST:PORT instead of stdio")
		fs.BoolVar(&lo.allowRemote, "allow-remote", false, "with --listen: allow a TCP address that is not loopback")
		fs.StringVar(&lo.tokenFile, "token-file", "", "with --listen: read the token from this file (default: generate one)")
		fs.Bool("stdio", true, "serve on stdio (the default; accepted because clients pass it)")
		if pos, err := parse(fs, args); err != nil || len(pos) > 0 {
			return usageError(stdio, err, pos)
		}
		if lo.addr == "" && (lo.allowRemote || lo.tokenFile != "") {
			return usageError(stdio, errors.New("--allow-remote and --token-file need --listen"), nil)
		}
		return serve(ctx, g, lo, stdio)
	case "tools":
		format := fs.String("format", "agentls", "agentls, openai, anthropic or mcp")
		root := fs.String("root", "", "workspace root whose configuration adds custom tools and filters (default: the current directory)")
		agent := fs.String("agent", "", "list the tools this agent may call (agents.NAME.tools)")
		if pos, err := parse(fs, args); err != nil || len(pos) > 0 {
			return usageError(stdio, err, pos)
		}
		return listTools(g, *format, *root, *agent, stdio)
	case "call":
		root := fs.String("root", "", "workspace root (default: the current directory)")
		approve := fs.String("approve", "", "ask, yes or no (default: ask on a terminal, else no)")
		pos, err := parse(fs, args)
		if err != nil || len(pos) < 1 || len(pos) > 2 {
			if err == nil {
				err = errors.New("call takes a tool name and optional JSON arguments")
			}
			return usageError(stdio, err, nil)
		}
		return call(ctx, g, pos, *root, *approve, stdio)
	case "mcp":
		return mcpCommand(ctx, &g, fs, args, stdio)
	case "sessions":
		return sessionsCommand(fs, args, stdio)
	case "version":
		fmt.Fprintln(stdio.Stdout, versionString())
		return exitOK
	case "help", "-h", "--help":
		fmt.Fprint(stdio.Stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stdio.Stderr, "agentls: unknown command %q\n\n%s", cmd, usage)
	return exitUsage
}

func usageError(stdio IO, err error, extra []string) int {
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case err != nil:
		fmt.Fprintf(stdio.Stderr, "agentls: %v\n", err)
	case len(extra) > 0:
		fmt.Fprintf(stdio.Stderr, "agentls: unexpected arguments %q\n", extra)
	}
	return exitUsage
}

func versionString() string {
	commit := Commit
	if commit == "" {
		commit = "unknown"
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					commit = s.Value
				}
			}
		}
	}
	return fmt.Sprintf("agentls %s (%s, commit %s)", Version, runtime.Version(), commit)
}

// NewRunner returns the runner of the built-in tools.
func NewRunner(log *slog.Logger) *tools.Runner {
	return tools.NewRunner(tools.NewBuiltinRegistry(), log)
}

func serve(ctx context.Context, g globals, lo listenFlags, stdio IO) int {
	log, end, err := g.start(stdio.Stderr)
	if err != nil {
		return usageError(stdio, err, nil)
	}
	defer end()
	serverHeap() // a process that holds sessions (heap.go)
	// A signal exits the process from its handler: the socket and the
	// generated token file go first. The handler is in place before they
	// exist, and waits while they are being made (mu).
	var mu sync.Mutex
	var l *listen.Listener
	ctx, stop := stopOnSignal(ctx, stdio.Stderr, func() {
		mu.Lock()
		if l != nil {
			l.Close()
		}
		mu.Unlock()
		attach.CloseAll() // the published session, if any
		end()
	})
	defer stop()
	if lo.addr != "" {
		mu.Lock()
		l, err = lo.open(log, stdio.Stderr)
		mu.Unlock()
		if err != nil {
			fmt.Fprintf(stdio.Stderr, "agentls: %v\n", err)
			return 1
		}
		defer l.Close()
	}
	cwd, _ := os.Getwd()
	opts := lsp.Options{Runner: NewRunner(log), Log: log, Version: Version, DefaultRoot: cwd, ConfigFile: g.config}
	if l != nil {
		opts.Token = l.Token
		if err := lsp.ListenAndServe(ctx, l, opts); err != nil {
			fmt.Fprintf(stdio.Stderr, "agentls: %v\n", err)
			return 1
		}
		return 0
	}
	opts.Publish = true // an editor's session: `agentls mcp` may attach to it
	in, _ := pollableStdin(stdio)
	return lsp.Serve(ctx, stdioConn{in.Stdin, stdio.Stdout}, opts)
}

// stdioConn joins stdin and stdout into one connection.
type stdioConn struct {
	io.Reader
	io.Writer
}

func (c stdioConn) Close() error {
	if cl, ok := c.Reader.(io.Closer); ok {
		cl.Close()
	}
	if cl, ok := c.Writer.(io.Closer); ok {
		cl.Close()
	}
	return nil
}

// listTools prints the tools a session on root offers agent: the built-in
// ones and the configuration's custom tools, filtered by tools.enabled and
// the agent's list, as tool/list gives them.
func listTools(g globals, format, root, agent string, stdio IO) int {
	if _, err := tools.Export(nil, format); err != nil {
		return usageError(stdio, err, nil)
	}
	log, closeLog, err := g.logger(stdio.Stderr)
	if err != nil {
		return usageError(stdio, err, nil)
	}
	defer closeLog()
	sess, code := openSession(g, root, approval.Fixed(approval.Reject, "agentls tools runs no tool"), log, stdio)
	if sess == nil {
		return code
	}
	defer sess.Close()
	defs, err := tools.Export(sess.Tools(agent), format)
	if err != nil {
		return usageError(stdio, err, nil)
	}
	if !writeJSON(stdio, defs) {
		return 1
	}
	return exitOK
}

// writeJSON prints v on stdout as indented JSON; it says on stderr why it
// could not.
func writeJSON(stdio IO, v any) bool {
	if err := writeIndented(stdio.Stdout, v); err != nil {
		fmt.Fprintf(stdio.Stderr, "agentls: %v\n", err)
		return false
	}
	return true
}

// openSession opens the session of `agentls call` and `agentls tools` on
// root (default: the current directory), saying on stderr what was wrong
// with the configuration. On failure it returns nil and the exit code.
func openSession(g globals, root string, approver approval.Approver, log *slog.Logger, stdio IO) (*session.Session, int) {
	if root == "" {
		var err error
		if root, err = os.Getwd(); err != nil {
			return nil, usageError(stdio, err, nil)
		}
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, usageError(stdio, fmt.Errorf("--root %s is not a directory", root), nil)
	}
	sess, errs, err := session.New(session.Options{
		Folders: []workspace.Folder{{Path: root}}, UserConfig: g.config,
		Approver: approver, Runner: NewRunner(log), Log: log, OneShot: true,
	})
	if err != nil {
		return nil, usageError(stdio, err, nil)
	}
	for _, e := range errs {
		fmt.Fprintf(stdio.Stderr, "agentls: %v (using the last valid configuration)\n", e)
	}
	return sess, exitOK
}

// absRoot returns the workspace root that the directory root (default: the
// current one) makes, as workspace.Workspace.SetFolders makes it; "" when
// there is none.
func absRoot(root string) string {
	if root == "" {
		root = "."
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return ""
	}
	return filepath.Clean(abs)
}

// prefetchGrep starts loading the copy of root's index that a server left,
// which the one-shot grep of args may skip files by (search/diskindex.go):
// the copy is mapped and decoded beside opening the session, as under the
// default size cap (under another one the search loads it itself). The
// pattern is the tool's (tools.GrepPattern); it decides only whether the
// copy is loaded ahead, not what the search does. It returns the release
// of the copy.
func prefetchGrep(root string, args json.RawMessage) (release func()) {
	p, ok := tools.GrepPattern(args)
	if !ok {
		return func() {}
	}
	return search.PrefetchCopy(absRoot(root), int64(workspace.DefaultConfig().Limits.MaxFileBytes), p)
}

func call(ctx context.Context, g globals, pos []string, root, approve string, stdio IO) int {
	oneShotHeap() // a process of one call (heap.go)
	// The redaction rules are not loaded whole (redact.Load, about 100 ms):
	// the history entry's few strings compile the few rules their words
	// call for (redact/gitleaks.go). The first of them, the call's id (its
	// call event), is redacted on a goroutine of its own while the session
	// opens: reading the rules' catalog is then off the call's path.
	id := tools.NewCallID()
	go redact.String(id)
	log, end, err := g.start(stdio.Stderr)
	if err != nil {
		return usageError(stdio, err, nil)
	}
	defer end()
	args := json.RawMessage("{}")
	if len(pos) == 2 {
		if !json.Valid([]byte(pos[1])) {
			return usageError(stdio, fmt.Errorf("arguments are not valid JSON: %s", pos[1]), nil)
		}
		args = json.RawMessage(pos[1])
	}
	var approver approval.Approver
	switch approve {
	case "":
		if stdio.StdinIsTerminal {
			approver = approval.NewTerminal(stdio.Stdin, stdio.Stderr)
		} else {
			approver = approval.Fixed(approval.Reject, "needs approval; run with --approve yes, or on a terminal")
		}
	case "ask":
		approver = approval.NewTerminal(stdio.Stdin, stdio.Stderr)
	case "yes":
		approver = approval.Fixed(approval.Approve, "")
	case "no":
		approver = approval.Fixed(approval.Reject, "rejected by --approve no")
	default:
		return usageError(stdio, fmt.Errorf("--approve must be ask, yes or no, not %q", approve), nil)
	}
	if pos[0] == "grep" {
		defer prefetchGrep(root, args)()
	}
	sess, code := openSession(g, root, approver, log, stdio)
	if sess == nil {
		return code
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	res := sess.Run(ctx, tools.Request{Name: pos[0], Arguments: args, CallID: id}, nil)
	sess.Close() // a shell started by this call ends with it
	if !writeJSON(stdio, res) {
		return exitToolErr
	}
	switch res.Status {
	case tools.StatusSuccess:
		return exitOK
	case tools.StatusRejected:
		return exitRejected
	}
	return exitToolErr
}
