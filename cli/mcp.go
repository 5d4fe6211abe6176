package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"

	"github.com/agentls/agentls/attach"
	"github.com/agentls/agentls/mcp"
)

// mcpCommand parses `agentls mcp [--root DIR] [--agent NAME] [--session
// ID] [--standalone]` and serves MCP on stdio (docs/protocol.md, "MCP"):
// attached to the editor session that holds the root when there is one
// (package attach), else standalone.
func mcpCommand(ctx context.Context, g *globals, fs *flag.FlagSet, args []string, stdio IO) int {
	root := fs.String("root", "", "workspace root (default: the current directory)")
	agent := fs.String("agent", "", "the agent whose tool filter applies (config agents.NAME)")
	sessionID := fs.String("session", "", "attach to this editor session (agentls sessions lists them)")
	standalone := fs.Bool("standalone", false, "never attach to an editor session")
	if pos, err := parse(fs, args); err != nil || len(pos) > 0 {
		return usageError(stdio, err, pos)
	}
	log, end, err := g.start(stdio.Stderr)
	if err != nil {
		return usageError(stdio, err, nil)
	}
	defer end()
	if *root == "" {
		if *root, err = os.Getwd(); err != nil {
			return usageError(stdio, err, nil)
		}
	}
	if fi, err := os.Stat(*root); err != nil || !fi.IsDir() {
		return usageError(stdio, fmt.Errorf("--root %s is not a directory", *root), nil)
	}
	if *standalone && *sessionID != "" {
		return usageError(stdio, errors.New("--session and --standalone exclude each other"), nil)
	}
	if !*standalone {
		a, err := mcp.Attach(ctx, mcp.AttachOptions{Dir: *root, Session: *sessionID, Agent: *agent, Log: log})
		switch {
		case err == nil:
			defer a.Close()
			d := a.Session()
			log.Info("attached to an editor session", "id", d.ID, "editor", d.Editor, "roots", d.Roots)
			in, polled := pollableStdin(stdio)
			tuneProxy(polled)
			return serveMCP(ctx, a, *agent, log, in, func() { a.Close(); end() })
		case errors.Is(err, attach.ErrRuntimeDir) && *sessionID == "":
			fmt.Fprintf(stdio.Stderr, "agentls: mcp: no editor session can be found (%v); serving standalone\n", err)
		case !errors.Is(err, attach.ErrNoSession):
			fmt.Fprintf(stdio.Stderr, "agentls: mcp: attach to the editor session: %v (--standalone serves without it)\n", err)
			return 1
		}
	}
	serverHeap() // it holds a session (heap.go)
	backend, errs, closeSession, err := mcp.Standalone(mcp.StandaloneOptions{Root: *root, UserConfig: g.config, Agent: *agent, Log: log})
	if err != nil {
		return usageError(stdio, err, nil)
	}
	defer closeSession()
	for _, e := range errs {
		fmt.Fprintf(stdio.Stderr, "agentls: %v (using the last valid configuration)\n", e)
	}
	in, _ := pollableStdin(stdio)
	return serveMCP(ctx, backend, *agent, log, in, func() { closeSession(); end() })
}

// attachedGCPercent is the collector's pacing in an attached `agentls mcp`
// (runtime/debug.SetGCPercent). Its live heap is small, little more than
// the tool list, and the default pacing starts a collection each time the
// heap doubles from 4 MiB, while the MCP SDK allocates 32 KiB for each
// message it decodes: a collection every few dozen calls, a tenth of the
// process's time. The heap stays a few MiB either way. (A standalone
// server's heap holds a session: serverHeap paces it.)
const attachedGCPercent = 400

// tuneProxy sets the runtime of an attached `agentls mcp`, a proxy that
// waits on its client and on the editor's session in turn: collections
// spaced out (attachedGCPercent), and, when stdin is read through the
// poller (polled), one processor: each message then runs on the thread
// that received it, instead of waking a second thread to look for work
// that one alone does. (With a stdin read by a blocking system call, the
// one processor could wait for the runtime to take it back from that
// read.) GOGC and GOMAXPROCS, when set, decide.
func tuneProxy(polled bool) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(attachedGCPercent)
	}
	if polled && os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// serveMCP serves backend on stdio until the client goes or a signal comes
// (which ends the calls, their processes and the server after cleanup).
func serveMCP(ctx context.Context, backend mcp.Backend, agent string, log *slog.Logger, stdio IO, cleanup func()) int {
	ctx, stop := stopOnSignal(ctx, stdio.Stderr, cleanup)
	defer stop()
	err := mcp.Serve(ctx, mcp.Options{Backend: backend, Agent: agent, Version: Version, Log: log},
		readCloser(stdio), writeCloser(stdio))
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stdio.Stderr, "agentls: mcp: %v\n", err)
		return 1
	}
	return exitOK
}

func readCloser(stdio IO) stdinCloser   { return stdinCloser{stdio} }
func writeCloser(stdio IO) stdoutCloser { return stdoutCloser{stdio} }

// stdinCloser and stdoutCloser are the process's stdin and stdout;
// closing them closes the files when they are files.
type stdinCloser struct{ stdio IO }

func (r stdinCloser) Read(p []byte) (int, error) { return r.stdio.Stdin.Read(p) }
func (r stdinCloser) Close() error               { return closeIfCloser(r.stdio.Stdin) }

type stdoutCloser struct{ stdio IO }

func (w stdoutCloser) Write(p []byte) (int, error) { return w.stdio.Stdout.Write(p) }
func (w stdoutCloser) Close() error                { return closeIfCloser(w.stdio.Stdout) }

// closeIfCloser closes v when it has a Close method.
func closeIfCloser(v any) error {
	if c, ok := v.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// pollableStdin is stdio with a Stdin that is a pipe or a socket read
// through the runtime's network poller: a server that waits for its next
// message then holds no thread in a system call, and the runtime goes
// fully idle (its monitor thread, which polls every 20 µs while a thread
// is blocked in a read, sleeps). A pipe is opened again (/proc/self/fd/N):
// the non-blocking mode is set on a file description of its own, never on
// the one the process was given, which others may share. A socket, which
// cannot be opened again, is put in non-blocking mode, unless it is
// stdout's too. Anything else (a terminal, a file), or a failure, leaves
// Stdin as it is (polled false); closing the result closes both.
func pollableStdin(stdio IO) (_ IO, polled bool) {
	f, ok := stdio.Stdin.(*os.File)
	if !ok {
		return stdio, false
	}
	fi, err := f.Stat()
	if err != nil {
		return stdio, false
	}
	var r io.ReadCloser
	switch fi.Mode().Type() {
	case fs.ModeNamedPipe:
		fd := -1
		if raw, err := f.SyscallConn(); err == nil { // (f.Fd would change the mode)
			_ = raw.Control(func(d uintptr) { fd = int(d) })
		}
		if fd < 0 {
			return stdio, false
		}
		p, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(fd), os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return stdio, false
		}
		r = p
	case fs.ModeSocket:
		if o, ok := stdio.Stdout.(*os.File); ok {
			if fo, err := o.Stat(); err != nil || os.SameFile(fi, fo) {
				return stdio, false // one socket both ways: stdout's writes must block
			}
		}
		c, err := net.FileConn(f)
		if err != nil {
			return stdio, false
		}
		r = c
	default:
		return stdio, false
	}
	stdio.Stdin = bothCloser{r, f}
	return stdio, true
}

// bothCloser reads from its ReadCloser and closes it and c.
type bothCloser struct {
	io.ReadCloser
	c io.Closer
}

func (b bothCloser) Close() error {
	err := b.ReadCloser.Close()
	b.c.Close()
	return err
}
