package lsp

import (
	"context"
	"fmt"
	"time"
)

// The session's search index (search.Cache) is built in the background
// after initialized, and again when the roots or the configuration change;
// each build of a root is reported with $/progress on a server-created
// token ("agentls/search-index/N") when the client supports it: begin,
// reports of the files indexed so far, end. The end of a build is logged,
// with a warning when searches cannot answer from the index (no watcher:
// the inotify watches ran out).

// searchProgress is one progress report of the search index's build.
type searchProgress struct {
	root  string
	files int
	done  bool
}

// searchIndexProgress makes the search index report its builds, before
// WarmUp starts the first.
func (s *server) searchIndexProgress() {
	c := s.sess.SearchCache()
	if c == nil {
		return
	}
	withProgress := s.clientCaps().WorkDoneProgress
	ch := make(chan searchProgress, 64)
	c.SetProgress(func(root string, files int, done bool) {
		if done {
			s.idx.searchBuilt.closeOnce()
			st := c.Status()
			s.log.Info("search index built", "root", root, "files", files, "watching", st.Watching)
			if st.Degraded != "" {
				s.log.Warn("search index: searches walk and stat the files", "reason", st.Degraded)
			}
		}
		if !withProgress {
			return
		}
		select {
		case ch <- searchProgress{root, files, done}:
		default: // a report is dropped rather than the build held up
			if done {
				go func() {
					select {
					case ch <- searchProgress{root, files, done}:
					case <-s.ctx.Done():
					}
				}()
			}
		}
	})
	if !withProgress {
		return
	}
	go func() {
		tokens := map[string]string{} // by root: the open progress
		seq := 0
		for {
			var p searchProgress
			select {
			case <-s.ctx.Done():
				return
			case p = <-ch:
			}
			tok, open := tokens[p.root]
			if !open {
				if !s.awaitInitialized() {
					return
				}
				seq++
				tok = fmt.Sprintf("agentls/search-index/%d", seq)
				ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
				_, err := s.conn.Call(ctx, "window/workDoneProgress/create", map[string]any{"token": tok}, nil)
				cancel()
				if err != nil {
					s.log.Debug("workDoneProgress/create", "err", err)
					continue
				}
				tokens[p.root] = tok
				s.notifyProgress(tok, map[string]any{"kind": "begin", "title": "agentls: indexing for search", "cancellable": false})
			}
			if p.done {
				delete(tokens, p.root)
				s.notifyProgress(tok, map[string]any{"kind": "end", "message": fmt.Sprintf("%d files indexed for search", p.files)})
				continue
			}
			s.notifyProgress(tok, map[string]any{"kind": "report", "message": fmt.Sprintf("%d files", p.files)})
		}
	}()
}

// notifyProgress sends one $/progress notification.
func (s *server) notifyProgress(token string, value map[string]any) {
	if err := s.conn.Notify(context.Background(), "$/progress", map[string]any{"token": token, "value": value}); err != nil {
		s.log.Debug("$/progress", "err", err)
	}
}
