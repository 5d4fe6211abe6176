package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentls/agentls/process"
)

// shutdownGrace bounds how long the server takes to stop after SIGTERM or
// SIGINT: every call and process ends, and the process exits, within it
// (docs/protocol.md promises 2 s).
const shutdownGrace = 1500 * time.Millisecond

// stopOnSignal returns a context that is cancelled on SIGTERM or SIGINT.
// The signal also ends every process the tools started (process.EndAll: whole
// process trees) and then exits the server with 128 + the signal's number,
// whatever the session is blocked on (a read of stdin that would otherwise
// wait until the client closes it). cleanup runs before the exit (flushing
// the log). stop undoes the signal handling.
func stopOnSignal(ctx context.Context, stderr io.Writer, cleanup func()) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	stopping := make(chan struct{}) // closed when a signal arrived
	go func() {
		select {
		case <-done:
			return
		case sig := <-ch:
			close(stopping)
			cancel()
			fmt.Fprintf(stderr, "agentls: %v: ending every command and stopping\n", sig)
			process.EndAll(shutdownGrace)
			if cleanup != nil {
				cleanup()
			}
			code := 1
			if s, ok := sig.(syscall.Signal); ok {
				code = 128 + int(s)
			}
			os.Exit(code)
		}
	}()
	return ctx, func() {
		select {
		case <-stopping:
			// The session returned because the signal cancelled it: the
			// handler is ending the processes and exits the server with
			// the signal's code. Wait for it rather than exit first.
			for {
				time.Sleep(time.Hour)
			}
		default:
		}
		signal.Stop(ch)
		close(done)
		cancel()
	}
}
