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
// long-lived session (cache.go, index.go, indexed.go: a trigram index of
// every root with posting lists in segments and the walked file set, kept
// current by a directory watcher, so that a search reads only the files
// that may match and neither walks nor stats; persist.go keeps an on-disk
// copy of each index, so that a restart reads only the files changed
// since, and diskindex.go lets a search without a cache, the one-shot
// call's, skip the files such a copy vouches cannot match). Queries are
// the searches the
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
// (paths.sensitive) are never read, and Options.Cache never indexes them.
// The cache's index is built with the same walk, under the same ignore,
// size and sensitive rules; a search it answers reads each file beneath
// the root's open directory without following any symlink (openat2, in
// batches through io_uring where the kernel has it: a file is read only
// once its fstat says it is a regular file within the size limit), and
// nothing it holds is ever a path outside the root.
//
// Concurrency: Run may be called from many goroutines at once, with or
// without the same Cache; one search runs on GOMAXPROCS workers and calls
// Options.Partial one batch at a time. A Cache's methods are safe for
// concurrent use; its background work (the builds, following the watcher)
// runs on a goroutine that Close stops and waits for. A cached search
// returns exactly what an uncached one does (cache.go says how: the
// watcher's queue is drained before each search; without a watcher the
// search walks and an index entry vouches for a file only while its stat
// is the one it was indexed under).
//
// What it does not do: it never writes into the workspace (a Cache writes
// only its indexes' on-disk copies, in the user's private cache directory:
// persist.go), never follows a symlinked
// directory, never runs an external program (ripgrep is only the reference
// the tests compare with), never keeps file contents, and holds no state
// between calls other than a Cache, a pool of read buffers and a few
// io_uring instances with their buffers.
package search
