// Package tools holds the tool model, the registry, argument validation,
// the execution pipeline every entry point shares (LSP, the call command),
// the execution log and metrics, and the tools themselves, one file each.
//
// Two error paths: a failure the model should see (a missing file, a bad
// argument) is a Result with status "error", made by returning a *Error (or
// any error with an ErrorCode() method) from Execute; any other error from
// Execute means the infrastructure broke and becomes INTERNAL.
package tools
