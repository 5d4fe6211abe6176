// Package codeindex is the code index of a workspace: the symbols of its
// source files, and definitions, references, hover text and diagnostics
// computed from them. The tools symbols, definition, references, hover and
// diagnostics and the matching LSP features answer from it; docs/index.md
// describes what they promise.
//
// # What it knows
//
// Go is read with the standard library's go/parser and go/types. Outlines
// are the parser's (with function bodies and literals cut out first, lines
// and columns kept; golang.go), read by a lexer and a parser of
// declarations that builds no syntax tree (goscan.go) and hands go/parser
// any file it is unsure of. Definition, references, hover and diagnostics
// of Go files come from packages type-checked from source (check.go,
// typecheck.go, load.go, nav.go, hover.go, diag.go), plus a few
// of go vet's cheap checks (vet.go). Such answers carry PrecisionType.
//
// Python, JavaScript and TypeScript, Rust, Java, C and C++, shell and
// Markdown are read by heuristics: line-based extractors nested by braces,
// indentation or heading levels (lang.go). Their definitions, references
// and hover text are found by name (whole words, same language family) and
// carry PrecisionName; so does a Go query the type checker cannot place
// (a file excluded by build constraints, a package that does not load),
// with a Note saying why. Other files are not indexed.
//
// Positions are 1-based lines and 1-based byte columns, as go/token and
// grep report them; Locations are absolute paths, which callers make
// relative.
//
// # Reading files
//
// The index reads files only through its *workspace.Workspace: the editor's
// overlay when the file is open, otherwise the workspace's confined
// operations (ReadLimited, ReadDiskAny, StatAny, OpenAny), so a symlink
// swapped in below a root cannot lead a read outside it or to a sensitive
// file. Files outside the roots that Go answers need (GOROOT, the module
// cache) are read through the same *Any operations, which use the os
// package there. Resolving an import path that is neither in the importing
// file's module nor in the standard library asks go/build, which runs `go
// list`.
//
// # Concurrency and freshness
//
// An Index is safe for concurrent use. New subscribes it to the
// workspace's overlays; Start builds it once in the background (Wait waits
// for that build); Close stops its goroutines and the subscription, after
// which queries still answer from what was indexed.
//
// Queries answer while the index builds, and say so (Partial, or the
// partial result of Search and Diagnostics); so does a build stopped at
// MaxFiles. Every overlay open and change reaches Changed through the
// subscription; the caller reports saves and files changed on disk with
// Changed too (Update and Flush re-index at once). Changed debounces
// bursts and never blocks. When the workspace's roots change, the next
// query drops the files of removed roots and starts a rebuild. Outline
// reads its file again, so it is current even without a notification.
//
// Type-checked Go packages are cached: imported packages without function
// bodies, and the last few fully checked packages with their syntax. A
// change to a Go file or a go.mod drops the workspace's packages (the
// standard library and module dependencies stay); files changed on disk
// without a notification are caught by their sizes and modification
// times. The checker serialises its work: one check at a time. A
// references query stops after ReferencesBudget and answers partially.
//
// # What it does not do
//
// It never writes a file, never runs the code it reads, and keeps no
// syntax trees of the whole workspace (only symbols). It does not rename,
// complete or format; answers by name never cross a language family (C
// with C++, JavaScript with TypeScript); diagnostics are Go's only. It does
// not decide whether a path argument may be used: callers resolve
// arguments with Workspace.Resolve first.
package codeindex
