package lsp

import (
	"context"
	"time"
)

// registerWatchers asks a client that supports dynamic registration to send
// workspace/didChangeWatchedFiles for every file of the workspace, so that
// what the server learned (the index, the configuration files) follows
// changes made outside the editor's buffers. It runs on its own goroutine:
// the reply is read by the goroutine that called it.
func (s *server) registerWatchers() {
	if !s.clientCaps().WatchedFilesDyn {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
		defer cancel()
		params := map[string]any{"registrations": []any{map[string]any{
			"id": "agentls-watched-files", "method": "workspace/didChangeWatchedFiles",
			"registerOptions": map[string]any{"watchers": []any{map[string]any{"globPattern": "**/*"}}},
		}}}
		if _, err := s.conn.Call(ctx, "client/registerCapability", params, nil); err != nil {
			s.log.Warn("register didChangeWatchedFiles", "err", err)
		}
	}()
}
