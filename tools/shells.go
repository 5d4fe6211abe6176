// The tools' side of package process: a session's process.Store, and the
// engine's errors as coded tool errors.

package tools

import (
	"errors"
	"strings"

	"github.com/agentls/agentls/process"
)

// shellsOf returns the session's process store.
func shellsOf(s *Session) (*process.Store, error) {
	if s == nil {
		return nil, Errorf(Internal, "the call has no session to keep its output in")
	}
	return s.Shells, nil
}

// shellOf returns the shell of the call's session with the given id.
func shellOf(c *Call, id string) (*process.Proc, error) {
	if err := keepsShells(c); err != nil {
		return nil, err
	}
	st, err := shellsOf(c.Session)
	if err != nil {
		return nil, err
	}
	p, ok := st.Get(id)
	if !ok {
		return nil, Errorf(InvalidParams, "no shell %q in this session (shells: %s)", id, strings.Join(st.IDs(), ", "))
	}
	return p, nil
}

// startShell starts a process in the session's store; the engine's errors
// the model should see become coded tool errors.
func startShell(st *process.Store, sp process.Spec, sink func(process.Stream, []byte)) (*process.Proc, error) {
	p, err := st.Start(sp, sink)
	if err == nil {
		return p, nil
	}
	var (
		tooMany *process.TooManyError
		noBox   *process.SandboxError
		start   *process.StartError
	)
	switch {
	case errors.Is(err, process.ErrClosed):
		return nil, Errorf(Cancelled, "the session has ended")
	case errors.As(err, &tooMany):
		return nil, Errorf(TooLarge, "%d background shells are running; end one with shell_kill first", tooMany.Running)
	case errors.As(err, &noBox):
		return nil, Errorf(NotConfigured, "%v", noBox.Err)
	case errors.As(err, &start):
		return nil, Errorf(ExecutionError, "cannot start %s: %v", start.Program, start.Err)
	}
	return nil, err
}

// keepsShells refuses, with NOT_AVAILABLE, the shell tools a one-shot
// session cannot serve: it ends, and every process with it, when its one
// call returns.
func keepsShells(c *Call) error {
	if c.Session == nil || !c.Session.oneShot {
		return nil
	}
	return Errorf(NotAvailable, "%s needs a session that lives on (the editor's, `agentls serve` or `agentls mcp`): "+
		"this one-shot `agentls call` ends its processes when it returns; run the command with shell_exec instead", c.Tool.Name)
}
