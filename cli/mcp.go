package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/agentls/agentls/mcp"
)

// mcpCommand parses `agentls mcp [--root DIR] [--agent NAME]` and serves
// MCP on stdio (docs/protocol.md, "MCP").
func mcpCommand(ctx context.Context, g *globals, fs *flag.FlagSet, args []string, stdio IO) int {
	root := fs.String("root", "", "workspace root (default: the current directory)")
	agent := fs.String("agent", "", "the agent whose tool filter applies (config agents.NAME)")
	if pos, err := parse(fs, args); err != nil || len(pos) > 0 {
		return usageError(stdio, err, pos)
	}
	log, closeLog, err := g.logger(stdio.Stderr)
	if err != nil {
		return usageError(stdio, err, nil)
	}
	defer closeLog()
	if *root == "" {
		if *root, err = os.Getwd(); err != nil {
			return usageError(stdio, err, nil)
		}
	}
	if fi, err := os.Stat(*root); err != nil || !fi.IsDir() {
		return usageError(stdio, fmt.Errorf("--root %s is not a directory", *root), nil)
	}
	backend, errs, closeSession, err := mcp.Standalone(mcp.StandaloneOptions{Root: *root, UserConfig: g.config, Agent: *agent, Log: log})
	if err != nil {
		return usageError(stdio, err, nil)
	}
	defer closeSession()
	for _, e := range errs {
		fmt.Fprintf(stdio.Stderr, "agentls: %v (using the last valid configuration)\n", e)
	}
	// A signal ends the calls, their processes and the server.
	ctx, stop := stopOnSignal(ctx, stdio.Stderr, func() { closeSession(); closeLog() })
	defer stop()
	err = mcp.Serve(ctx, mcp.Options{Backend: backend, Agent: *agent, Version: Version, Log: log},
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
func (r stdinCloser) Close() error {
	if c, ok := r.stdio.Stdin.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

type stdoutCloser struct{ stdio IO }

func (w stdoutCloser) Write(p []byte) (int, error) { return w.stdio.Stdout.Write(p) }
func (w stdoutCloser) Close() error {
	if c, ok := w.stdio.Stdout.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}
