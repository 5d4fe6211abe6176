package process

import (
	"errors"
	"fmt"
)

// ErrClosed is the error of Start on a closed Store.
var ErrClosed = errors.New("the session has ended")

// TooManyError is the error of Start when MaxBackground background
// processes of the Store are running.
type TooManyError struct{ Running int }

func (e *TooManyError) Error() string {
	return fmt.Sprintf("%d background processes are running", e.Running)
}

// SandboxError is the error of Start when the Spec asks for a sandbox and
// bwrap cannot run here; Err is sandbox.Find's.
type SandboxError struct{ Err error }

func (e *SandboxError) Error() string { return e.Err.Error() }
func (e *SandboxError) Unwrap() error { return e.Err }

// StartError is the error of Start when the program cannot be started (not
// found, not executable).
type StartError struct {
	Program string
	Err     error
}

func (e *StartError) Error() string { return fmt.Sprintf("cannot start %s: %v", e.Program, e.Err) }
func (e *StartError) Unwrap() error { return e.Err }
