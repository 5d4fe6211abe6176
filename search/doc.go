// Package search is the engine of the grep tool: ripgrep's search, with
// ripgrep's defaults, run in process over a workspace.
//
// It holds the matcher (match.go: the literals every match must contain,
// pulled out of the parsed regular expression, found through their rarest
// byte or byte pair, with ASCII case folding; the pair scanner in
// pair_amd64.s), a lazy DFA that finds matching lines without running the
// regexp (dfa.go), the walk and the result collection (search.go,
// collect.go: ignore files, hidden and binary files, globs and ripgrep's
// file types in filter.go and types.go, unsaved buffers, the first Limit
// results in path order, or streamed), and the search cache of a
// long-lived session (cache.go: a trigram Bloom filter per file, so that a
// search reads only the files that may match). Queries are the searches the
// benchmarks and the comparison with ripgrep run.
//
// Run is the entry point; it takes plain values (a workspace, a Pattern,
// Options) and returns a Result or an error: an *ArgError for a bad pattern
// or file type, the workspace's *workspace.PathError for a path it refuses,
// a *FileError when the path cannot be read or walked, the context's error
// when it ends. Turning these into a tool's result is the caller's
// (tools/grep.go).
//
// Confinement: Run resolves Options.Path with the workspace's path rules
// and walks through the workspace's confined walker (Workspace.Walk: the
// walked directory is opened beneath the workspace's roots and no symlinked
// directory below it is entered); files the workspace calls sensitive
// (paths.sensitive) are never read, and Options.Cache never learns of them.
// Cache.Warm walks the workspace's roots themselves with workspace.Walk,
// under the same ignore, size and sensitive rules.
//
// Concurrency: Run may be called from many goroutines at once, with or
// without the same Cache; one search runs on GOMAXPROCS workers and calls
// Options.Partial one batch at a time. A Cache's methods are safe for
// concurrent use; its background work (Warm, the sweep of stale entries
// when it is full) runs on goroutines that Close stops and waits for. A
// cached search returns exactly what an uncached one does: an entry vouches
// for a file only while the file's stat is the one it was read under
// (cache.go says how, and how a racy write is caught).
//
// What it does not do: it never writes, never follows a symlinked
// directory, never runs an external program (ripgrep is only the reference
// the tests compare with), and holds no state between calls other than a
// Cache and a pool of read buffers.
package search
