// The tools' side of package process: a session's process.Store, and the
// engine's errors as coded tool errors.

package tools

import (
	"errors"
	"strings"

	"github.com/agentls/agentls/process"
)

var shellStoreKey = NewKey[*process.Store]("shells")

// shellsOf returns the session's process store, made on first use.
func shellsOf(s *Session) (*process.Store, error) {
	if s == nil {
		return nil, Errorf(Internal, "the call has no session to keep its output in")
	}
	return Update(s, shellStoreKey, func(old *process.Store, ok bool) *process.Store {
		if ok && old != nil {
			return old
		}
		return process.NewStore()
	}), nil
}

// shellByID returns a shell of the session's store by id.
func shellByID(st *process.Store, id string) (*process.Proc, error) {
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

// CloseSession ends every shell of the session (background shells and
// running commands: their whole process groups) and deletes their output.
// The LSP layer calls it when a session ends; later calls that start a
// shell in the session fail.
func CloseSession(s *Session) {
	if s == nil {
		return
	}
	if st, ok := Get(s, shellStoreKey); ok && st != nil {
		st.Close()
	}
}
