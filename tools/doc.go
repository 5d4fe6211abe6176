// Package tools holds the tool model, the registry, argument validation,
// the execution pipeline every entry point shares (LSP, the call command),
// the execution log and metrics, and the tools themselves, one file each.
//
// A tool is one file: a Def of its argument type, given to builtin, which
// defines it and adds it to Builtins; its scenario tests are txtar files
// under testdata. Arguments are checked against the input schema, the
// schema's defaults applied, and then decoded into the argument type once
// per call: Validate, Assess and Execute all receive that value. Engines
// (search, process supervision, the code index, git, HTML) live in packages
// of their own; a tool's file turns their results into a Result.
//
// A session may answer a repeated call of a read-only tool from its result
// cache while what the answer was read from is unchanged (resultcache.go).
//
// Two error paths: a failure the model should see (a missing file, a bad
// argument) is a Result with status "error", made by returning a *Error (or
// any error with an ErrorCode() method, and optionally ErrorDetails(), as
// the engines' errors have) from Execute; any other error from
// Execute means the infrastructure broke and becomes INTERNAL.
package tools
