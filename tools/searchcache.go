package tools

import (
	"context"

	"github.com/agentls/agentls/search"
	"github.com/agentls/agentls/workspace"
)

// A long-lived session (the LSP server's) keeps a search cache that grep
// passes to the search engine (search.Cache); sessions without one search
// the plain way. These functions reach it through the session.

var searchCacheKey = NewKey[*search.Cache]("search cache")

// EnableSearchCache gives the session a search cache (a long-lived server
// session calls it once; calling it again keeps the one it has).
func EnableSearchCache(s *Session) {
	if s == nil {
		return
	}
	Update(s, searchCacheKey, func(old *search.Cache, ok bool) *search.Cache {
		if ok && old != nil {
			return old
		}
		return search.NewCache()
	})
}

// searchCacheOf returns the session's search cache, or nil.
func searchCacheOf(s *Session) *search.Cache {
	if s == nil {
		return nil
	}
	c, _ := Get(s, searchCacheKey)
	return c
}

// SearchCacheChanged tells the session's search cache that the file at the
// absolute path changed (saved, seen by the client's watcher, written by a
// tool).
func SearchCacheChanged(s *Session, path string) {
	if c := searchCacheOf(s); c != nil {
		c.Changed(path)
	}
}

// SearchCacheReset empties the session's search cache (workspace folders or
// configuration changed).
func SearchCacheReset(s *Session) {
	if c := searchCacheOf(s); c != nil {
		c.Reset()
	}
}

// WarmSearchCache fills the session's search cache in the background
// (search.Cache.Warm); it returns at once.
func WarmSearchCache(ctx context.Context, s *Session, ws *workspace.Workspace) {
	if c := searchCacheOf(s); c != nil {
		c.Warm(ctx, ws)
	}
}
