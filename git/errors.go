package git

import "fmt"

// The ToolResult error codes an *Error carries.
const (
	// CodeExecution: git is missing or failed, or there is no repository.
	CodeExecution = "EXECUTION_ERROR"
	// CodeInvalid: a value given to git was refused (an option, not a
	// commit, not a branch name).
	CodeInvalid = "INVALID_PARAMS"
)

// Error is a failure the model should see: a refused value, git missing
// or failing, no repository. Its Message is what the model reads (git's
// own message included, URL credentials redacted); Code is the ToolResult
// error code (CodeExecution or CodeInvalid) and Details, when set, the
// error's details (a failed command's exit code, stderr and arguments; the
// violations of a refused value). Any other error from this package means
// the machinery broke (or the context ended).
type Error struct {
	Code    string
	Message string
	Details map[string]any
	// NoRepository: Open found no repository for the workspace root.
	NoRepository bool
}

func (e *Error) Error() string { return e.Message }

// ErrorCode returns the ToolResult error code.
func (e *Error) ErrorCode() string { return e.Code }

// ErrorDetails returns the error's details, or nil.
func (e *Error) ErrorDetails() any {
	if e.Details == nil {
		return nil
	}
	return e.Details
}

func execf(format string, args ...any) *Error {
	return &Error{Code: CodeExecution, Message: fmt.Sprintf(format, args...)}
}

func invalidf(format string, args ...any) *Error {
	return &Error{Code: CodeInvalid, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) withDetails(d map[string]any) *Error { e.Details = d; return e }
