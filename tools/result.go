package tools

import (
	"errors"
	"fmt"
)

// Status is a ToolResult's status.
type Status string

// The statuses of a ToolResult (docs/protocol.md, ToolResult).
const (
	StatusSuccess   Status = "success"
	StatusError     Status = "error"
	StatusRejected  Status = "rejected"
	StatusCancelled Status = "cancelled"
)

// Code is a ToolResult error code.
type Code string

// The error codes of a ToolResult (docs/protocol.md, ToolResult).
const (
	UnknownTool      Code = "UNKNOWN_TOOL"
	InvalidParams    Code = "INVALID_PARAMS"
	InvalidPath      Code = "INVALID_PATH"
	SensitivePath    Code = "SENSITIVE_PATH"
	FileNotFound     Code = "FILE_NOT_FOUND"
	NotAFile         Code = "NOT_A_FILE"
	NotADirectory    Code = "NOT_A_DIRECTORY"
	AlreadyExists    Code = "ALREADY_EXISTS"
	PermissionDenied Code = "PERMISSION_DENIED"
	BinaryFile       Code = "BINARY_FILE"
	TooLarge         Code = "TOO_LARGE"
	NoMatch          Code = "NO_MATCH"
	AmbiguousMatch   Code = "AMBIGUOUS_MATCH"
	StaleFile        Code = "STALE_FILE"
	PatchFailed      Code = "PATCH_FAILED"
	CommandBlocked   Code = "COMMAND_BLOCKED"
	Timeout          Code = "TIMEOUT"
	ExecutionError   Code = "EXECUTION_ERROR"
	NotConfigured    Code = "NOT_CONFIGURED"
	NetworkError     Code = "NETWORK_ERROR"
	Rejected         Code = "REJECTED"
	Cancelled        Code = "CANCELLED"
	Internal         Code = "INTERNAL"
	// NotApplied: an approved edit did not land, or only in part (the
	// person declined it in the editor, or the editor did not apply it).
	NotApplied Code = "NOT_APPLIED"
	// UnsavedInEditor: the server would have to write a file the editor
	// holds with unsaved changes, which it never does.
	UnsavedInEditor Code = "UNSAVED_IN_EDITOR"
	// NotAllowed: the configuration keeps the tool from this caller
	// (tools.enabled, or the agent's agents.NAME.tools); status rejected.
	NotAllowed Code = "NOT_ALLOWED"
	// NotAvailable: the tool cannot serve in this kind of session (a
	// one-shot `agentls call` keeps nothing after it returns, so it has no
	// background shells to start or read).
	NotAvailable Code = "NOT_AVAILABLE"
)

// Result is the ToolResult of docs/protocol.md.
type Result struct {
	CallID     string `json:"callId"`
	Tool       string `json:"tool"`
	Status     Status `json:"status"`
	Content    string `json:"content"`
	Display    string `json:"display,omitempty"`
	Structured any    `json:"structured,omitempty"`
	Error      *Error `json:"error,omitempty"`
	Message    string `json:"message,omitempty"`
	ApprovedBy string `json:"approvedBy"`
	DurationMs int64  `json:"durationMs"`
	// Cached: the answer is one the session kept from an earlier call
	// (resultcache.go), the same a fresh call would give.
	Cached bool `json:"cached,omitempty"`
	// structuredJSON, when set, is Structured as json.Marshal encodes it
	// (the result cache encoded it to keep it): AppendJSON (resultjson.go)
	// copies it rather than encoding Structured again. It is set only once
	// the result is final; code that changes the Structured of a Result
	// that has it must clear it.
	structuredJSON []byte
}

// Error is a failure the model should see.
type Error struct {
	Code        Code   `json:"code"`
	Message     string `json:"message"`
	Recoverable bool   `json:"recoverable"`
	Details     any    `json:"details,omitempty"`
	// Structured, when set, becomes the Result's structured field (a failed
	// command still reports its exit code and output).
	Structured any `json:"-"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Errorf returns a recoverable *Error.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Recoverable: true}
}

// WithDetails sets the error's details and returns it.
func (e *Error) WithDetails(d any) *Error { e.Details = d; return e }

// Success returns a successful result.
func Success(content string, structured any) *Result {
	return &Result{Status: StatusSuccess, Content: content, Structured: structured}
}

// codedError is any error that carries a ToolResult code, such as
// workspace.PathError or git.Error. One that also has an ErrorDetails()
// method gives the details of the *Error it becomes.
type codedError interface{ ErrorCode() string }

// detailedError is a codedError with details.
type detailedError interface{ ErrorDetails() any }

// AsError turns an error from Execute into the *Error the model sees, and
// reports whether it is one (false: the infrastructure broke).
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	var c codedError
	if errors.As(err, &c) {
		e := &Error{Code: Code(c.ErrorCode()), Message: err.Error(), Recoverable: true}
		if d, ok := c.(detailedError); ok {
			e.Details = d.ErrorDetails()
		}
		return e, true
	}
	return nil, false
}

// failure builds an error result.
func failure(e *Error) *Result {
	return &Result{Status: StatusError, Content: "error: " + e.Message, Error: e, Structured: e.Structured}
}
