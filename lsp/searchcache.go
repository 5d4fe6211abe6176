package lsp

import "github.com/agentls/agentls/tools"

// The server's session keeps a search cache (tools.EnableSearchCache) that
// lets grep skip the files that cannot match; grep validates every entry
// against the file's stat before use, and these hooks drop entries as soon
// as the server hears of a change: saves, watched-file events, files our
// own tools wrote, and (all entries) workspace folder and config changes.

// searchCacheChanged drops the cache entry of the file at the absolute path.
func (s *session) searchCacheChanged(path string) {
	if env := s.environment(); env != nil {
		tools.SearchCacheChanged(env.Session, path)
	}
}

// searchCacheReset drops every entry and fills the cache again in the
// background (clients send didChangeConfiguration right after initialized).
func (s *session) searchCacheReset() {
	if env := s.environment(); env != nil {
		tools.SearchCacheReset(env.Session)
		tools.WarmSearchCache(s.ctx, env.Session, s.ws)
	}
}

// searchCacheToolEvent drops the entry of a file a tool changed (the event's
// path is relative to the workspace).
func (s *session) searchCacheToolEvent(e tools.Event) {
	if e.Kind != "fileChanged" || e.Path == "" {
		return
	}
	if p, err := s.ws.Resolve(e.Path); err == nil {
		s.searchCacheChanged(p)
	}
}

func (s *session) environment() *tools.Env {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.env
}

// warmSearchCache fills the cache in the background after initialized.
func (s *session) warmSearchCache() {
	if env := s.environment(); env != nil {
		tools.WarmSearchCache(s.ctx, env.Session, s.ws)
	}
}
