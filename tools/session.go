package tools

import (
	"context"
	"sync"

	"github.com/agentls/agentls/codeindex"
	"github.com/agentls/agentls/process"
	"github.com/agentls/agentls/search"
	"github.com/agentls/agentls/workspace"
)

// Session is the state the calls of one session share: the services the
// session owns (the code index, the search cache, the processes the tools
// started) and what the calls read (for STALE_FILE). Each service follows
// the workspace's changes by itself; Close ends them all. A Session is safe
// for concurrent use.
type Session struct {
	// Index is the code index: built on the first query, or when the front
	// end starts it (Index.Start).
	Index *codeindex.Index
	// Search keeps what grep learned of files between searches; nil: grep
	// reads every file (a one-shot call needs no cache).
	Search *search.Cache
	// Shells holds the processes the tools started: background shells,
	// and the output of recent foreground commands (shell_output).
	Shells *process.Store

	ws     *workspace.Workspace
	ctx    context.Context // ends at Close: the services' background work
	cancel context.CancelFunc

	readsMu sync.Mutex
	reads   map[string]readRecord // by absolute path: what the model last read
	landing map[string]string     // by absolute path: the hash of what an edit of the session is writing

	edits *editQueue // one edit of a file at a time (editqueue.go)

	results  *resultCache // nil: none (resultcache.go)
	unfollow func()       // ends the result cache's subscriptions

	oneShot bool // SessionOptions.OneShot
}

// SessionOptions choose a session's services.
type SessionOptions struct {
	// SearchCache gives the session a search cache (a long-lived server).
	SearchCache bool
	// ResultCache gives the session a result cache (resultcache.go): a
	// repeated call of a Cacheable tool is answered from it while what the
	// answer depends on is unchanged.
	ResultCache bool
	// OneShot marks a session that ends with its one call (`agentls
	// call`): what the tools start ends with it, so they hand out nothing
	// to come back to (background shells, output kept for a later read).
	OneShot bool
}

// NewSession returns the state of a new session of ws.
func NewSession(ws *workspace.Workspace, o SessionOptions) *Session {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Session{
		Index: codeindex.New(ws), Shells: process.NewStore(), ws: ws, ctx: ctx, cancel: cancel,
		reads: map[string]readRecord{}, landing: map[string]string{}, edits: newEditQueue(),
		oneShot: o.OneShot,
	}
	if o.SearchCache {
		s.Search = search.NewCache()
		s.Search.Follow(ctx, ws)
	}
	if o.ResultCache {
		s.results = newResultCache()
		s.unfollow = s.results.follow(ws)
	}
	return s
}

// WarmUp starts the background work a long-lived session wants done before
// its first search: filling the search cache.
func (s *Session) WarmUp() {
	if s.Search != nil {
		s.Search.Warm(s.ctx, s.ws)
	}
}

// Close ends the services: the processes the tools started (background
// shells too), the index's goroutines and the search cache. Queries of the
// index still answer from what it holds.
func (s *Session) Close() {
	s.cancel()
	if s.unfollow != nil {
		s.unfollow()
	}
	s.Shells.Close()
	s.Index.Close()
	if s.Search != nil {
		s.Search.Close()
	}
}
